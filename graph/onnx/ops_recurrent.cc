// ONNX LSTM and GRU, unrolled over their static sequence into Loom ops.
//
// Why unrolled rather than one recurrence task: each step is a small GEMM
// (the hidden state times the recurrent weight) plus element-wise gate
// math — exactly what Loom's fused subgraph tasks already tune — and every
// step of a layer is the same subgraph, so the steps share one task. The
// input projection of all steps is one large GEMM up front. The cost is a
// graph that grows with the sequence (a few hundred nodes for 32 steps),
// which only the import and task extraction see.
//
// Supported: directions forward, reverse and bidirectional; layouts 0 and 1;
// the default activations; biases and initial states (constant or data);
// sequence_lens absent or all equal to the sequence; GRU's
// linear_before_reset both ways. Refused, naming the attribute: clip,
// input_forget, peepholes, other activations.
#include <climits>

#include "graph/onnx/importer.h"
#include "graph/ops.h"
#include "ir/error.h"

namespace loom::graph::onnx_detail {

namespace {

struct RecurrentShape {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  bool batch_first = false;
};

}  // namespace

// A float constant made by the importer, as a graph value.
std::string Importer::new_constant(const std::string& base, Shape shape, std::vector<float> values) {
  Known k;
  k.shape = std::move(shape);
  k.f = std::move(values);
  const std::string name = fresh_value(base);
  set_known(name, std::move(k));
  return data(name);
}

// One emitted helper node of the current ONNX node.
std::string Importer::step_node(const std::string& op, std::vector<std::string> inputs, json attrs) {
  return emit(op, std::move(inputs), std::move(attrs), "", "step");
}

std::string Importer::slice_cols(const std::string& value, int64_t rows, int64_t first, int64_t count) {
  return step_node("slice", {value}, {{"starts", {0, first}}, {"steps", {1, 1}}, {"sizes", {rows, count}}});
}

void Importer::recurrent(bool lstm) {
  allow_attrs({"activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size",
               "input_forget", "layout", "linear_before_reset"});
  require_inputs(3, lstm ? 8 : 6);
  const int64_t gates = lstm ? 4 : 3;
  if (attr("clip")) throw LoomError("attribute clip is not supported");
  if (attr_int("input_forget", 0) != 0) throw LoomError("attribute input_forget=1 is not supported");
  if (attr("activation_alpha") || attr("activation_beta"))
    throw LoomError("attributes activation_alpha/activation_beta are not supported");
  const std::string direction = attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    throw LoomError("attribute direction=" + direction + " is not supported");
  if (const auto* a = attr("activations")) {
    const std::vector<std::string> defaults =
        lstm ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"} : std::vector<std::string>{"Sigmoid", "Tanh"};
    for (int k = 0; k < a->strings_size(); ++k)
      if (a->strings(k) != defaults[k % defaults.size()])
        throw LoomError("attribute activations: " + a->strings(k) + " is not supported (only the defaults)");
  }
  if (lstm && has_in(7)) throw LoomError("peephole weights (input 7) are not supported");

  RecurrentShape s;
  s.batch_first = attr_int("layout", 0) != 0;
  const Shape x = shape_of(in(0));
  if (x.size() != 3) throw LoomError("input X has shape " + shape_string(x) + ", expected 3 dims");
  s.seq = s.batch_first ? x[1] : x[0];
  s.batch = s.batch_first ? x[0] : x[1];
  s.input = x[2];
  s.dirs = direction == "bidirectional" ? 2 : 1;
  const Known* w = constant_data(in(1));
  const Known* r = constant_data(in(2));
  if (!w || !r || !w->is_float || !r->is_float) throw LoomError("the weights W and R must be float constants");
  s.hidden = attr_int("hidden_size", r->shape.size() == 3 ? r->shape[2] : 0);
  const int64_t H = s.hidden, G = gates * H, B = s.batch;
  if (w->shape != Shape{s.dirs, G, s.input} || r->shape != Shape{s.dirs, G, H})
    throw LoomError("W " + shape_string(w->shape) + " and R " + shape_string(r->shape) + " do not fit " +
                    std::to_string(s.dirs) + " direction(s), hidden size " + std::to_string(H) + ", input size " +
                    std::to_string(s.input));
  std::vector<float> bias(static_cast<size_t>(s.dirs * 2 * G), 0.0f);
  if (has_in(3)) {
    const Known* b = constant_data(in(3));
    if (!b || !b->is_float || b->shape != Shape{s.dirs, 2 * G}) throw LoomError("the bias B must be a float constant of shape " +
                                                                              shape_string({s.dirs, 2 * G}));
    bias = b->f;
  }
  if (has_in(4)) {
    const Known* lens = constant_data(in(4));
    if (!lens) throw LoomError("sequence_lens must be a constant");
    for (int64_t j = 0; j < lens->size(); ++j)
      if (static_cast<int64_t>(lens->at(j)) != s.seq)
        throw LoomError("sequence_lens other than the full sequence (" + std::to_string(s.seq) + ") are not supported");
  }
  const bool linear_before_reset = !lstm && attr_int("linear_before_reset", 0) != 0;

  // X as [seq * batch, input], step-major.
  std::string xs = data(in(0));
  if (s.batch_first) xs = step_node("transpose", {xs}, {{"perm", {1, 0, 2}}});
  xs = step_node("reshape", {xs}, {{"shape", {s.seq * B, s.input}}});

  // An initial state (input k: initial_h or initial_c) of direction d, [B, H].
  auto initial = [&](int k, int64_t d) -> std::string {
    if (!has_in(k)) return new_constant(node_name_ + "_zero_state", {B, H}, std::vector<float>(B * H, 0.0f));
    const std::string v = data(in(k));
    std::string t = step_node("slice", {v}, {{"starts", {d, 0, 0}}, {"steps", {1, 1, 1}}, {"sizes", {1, B, H}}});
    return step_node("reshape", {t}, {{"shape", {B, H}}});
  };

  std::vector<std::vector<std::string>> hs(s.dirs);  // per direction, h at each time
  std::vector<std::string> last_h(s.dirs), last_c(s.dirs);
  for (int64_t d = 0; d < s.dirs; ++d) {
    const bool backward = direction == "reverse" || d == 1;
    auto rows = [&](const Known& k, int64_t first, int64_t count, int64_t width) {
      return std::vector<float>(k.f.begin() + (d * G + first) * width, k.f.begin() + (d * G + first + count) * width);
    };
    // The input projection of every step at once, with the biases that add there.
    std::vector<float> xb(G), hb(G, 0.0f);
    for (int64_t j = 0; j < G; ++j) {
      const float wb = bias[d * 2 * G + j], rb = bias[d * 2 * G + G + j];
      const bool recurrent_bias = linear_before_reset && j >= 2 * H;  // GRU's Rbh stays inside r * (...)
      xb[j] = wb + (recurrent_bias ? 0.0f : rb);
      if (recurrent_bias) hb[j] = rb;
    }
    const std::string wd = new_constant(node_name_ + "_W", {G, s.input}, rows(*w, 0, G, s.input));
    const std::string xw = step_node("gemm", {xs, wd, new_constant(node_name_ + "_Wb", {G}, xb)}, {{"trans_b", 1}});
    const std::string rd = new_constant(node_name_ + "_R", {G, H}, rows(*r, 0, G, H));
    const std::string rh = lstm || linear_before_reset ? "" : new_constant(node_name_ + "_Rh", {H, H}, rows(*r, 2 * H, H, H));
    const std::string hbias = linear_before_reset ? new_constant(node_name_ + "_Rb", {G}, hb) : "";

    std::string h = initial(5, d), c = lstm ? initial(6, d) : "";
    hs[d].resize(s.seq);
    for (int64_t step = 0; step < s.seq; ++step) {
      const int64_t t = backward ? s.seq - 1 - step : step;
      const std::string xt = step_node("slice", {xw}, {{"starts", {t * B, 0}}, {"steps", {1, 1}}, {"sizes", {B, G}}});
      std::vector<std::string> rin = {h, rd};
      if (!hbias.empty()) rin.push_back(hbias);
      const std::string hr = step_node("gemm", rin, {{"trans_b", 1}});
      if (lstm) {
        const std::string g = step_node("add", {xt, hr}, json::object());
        const std::string i = step_node("sigmoid", {slice_cols(g, B, 0, H)}, json::object());
        const std::string o = step_node("sigmoid", {slice_cols(g, B, H, H)}, json::object());
        const std::string f = step_node("sigmoid", {slice_cols(g, B, 2 * H, H)}, json::object());
        const std::string cand = step_node("tanh", {slice_cols(g, B, 3 * H, H)}, json::object());
        c = step_node("add", {step_node("mul", {f, c}, json::object()), step_node("mul", {i, cand}, json::object())},
                      json::object());
        h = step_node("mul", {o, step_node("tanh", {c}, json::object())}, json::object());
      } else {
        auto gate = [&](int64_t k) {
          return step_node("sigmoid",
                           {step_node("add", {slice_cols(xt, B, k * H, H), slice_cols(hr, B, k * H, H)}, json::object())},
                           json::object());
        };
        const std::string z = gate(0), rg = gate(1);
        std::string inner;
        if (linear_before_reset) {
          inner = step_node("mul", {rg, slice_cols(hr, B, 2 * H, H)}, json::object());
        } else {
          inner = step_node("gemm", {step_node("mul", {rg, h}, json::object()), rh}, {{"trans_b", 1}});
        }
        const std::string cand =
            step_node("tanh", {step_node("add", {slice_cols(xt, B, 2 * H, H), inner}, json::object())}, json::object());
        // h = cand + z * (h_prev - cand)
        h = step_node("add", {cand, step_node("mul", {z, step_node("sub", {h, cand}, json::object())}, json::object())},
                      json::object());
      }
      hs[d][t] = h;
    }
    last_h[d] = h;
    last_c[d] = c;
  }

  // Outputs: Y [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs,
  // hidden]), Y_h and Y_c [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]).
  // Per-direction values [B, H] stacked along a new axis 0: [dirs, B, H].
  auto stack_dirs = [&](const std::vector<std::string>& parts) {
    std::vector<std::string> reshaped;
    for (const auto& p : parts) reshaped.push_back(step_node("reshape", {p}, {{"shape", {1, B, H}}}));
    return reshaped.size() == 1 ? reshaped[0] : step_node("concat", reshaped, {{"axis", 0}});
  };
  auto finish = [&](const std::string& value, const std::string& output, const std::vector<int64_t>& perm) {
    if (perm.empty()) alias(output, value);
    else emit("transpose", {value}, {{"perm", perm}}, output, "out");
  };
  if (output_used(0)) {
    check_float(node_->output(0));
    std::vector<std::string> per_time;
    for (int64_t t = 0; t < s.seq; ++t) {
      std::vector<std::string> dirs;
      for (int64_t d = 0; d < s.dirs; ++d) dirs.push_back(hs[d][t]);
      per_time.push_back(step_node("reshape", {stack_dirs(dirs)}, {{"shape", {1, s.dirs, B, H}}}));
    }
    const std::string y = per_time.size() == 1 ? per_time[0] : step_node("concat", per_time, {{"axis", 0}});
    finish(y, node_->output(0), s.batch_first ? std::vector<int64_t>{2, 0, 1, 3} : std::vector<int64_t>{});
  }
  for (int k = 1; k <= (lstm ? 2 : 1); ++k) {
    if (!output_used(k)) continue;
    check_float(node_->output(k));
    const std::string v = stack_dirs(k == 1 ? last_h : last_c);
    finish(v, node_->output(k), s.batch_first ? std::vector<int64_t>{1, 0, 2} : std::vector<int64_t>{});
  }
}

}  // namespace loom::graph::onnx_detail
