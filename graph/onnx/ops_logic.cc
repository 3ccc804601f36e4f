// ONNX comparisons, logic and integer arithmetic: Equal, Less, Greater,
// LessOrEqual, GreaterOrEqual, And, Or, Not, Where, Mod, Range, and Neg,
// Abs, Max and Min on known values. Exporters emit most of them as shape
// logic on static shapes (a ViT's class-token expand, a Swin's window
// arithmetic): on known values they fold here, with numpy broadcasting. On
// data they become Loom's element-wise ops, booleans as 1.0 / 0.0 floats.
#include <climits>
#include <cmath>

#include "graph/onnx/importer.h"
#include "graph/ops.h"
#include "ir/error.h"

namespace loom::graph::onnx_detail {

Known fold_broadcast(const std::vector<const Known*>& in, bool result_float, const FoldFn& f) {
  Shape shape;
  for (const Known* k : in) shape = op_detail::broadcast_shapes(shape, k->shape);
  std::vector<std::vector<int64_t>> strides;
  for (const Known* k : in) strides.push_back(strides_of(k->shape));
  Known out;
  out.is_float = result_float;
  out.shape = shape;
  std::vector<long double> args(in.size());
  for_each_index(shape, [&](const std::vector<int64_t>& idx) {
    for (size_t a = 0; a < in.size(); ++a) {
      const Shape& s = in[a]->shape;
      int64_t j = 0;
      for (size_t d = 0; d < s.size(); ++d) {
        const size_t od = shape.size() - s.size() + d;
        if (s[d] != 1) j += idx[od] * strides[a][d];
      }
      args[a] = in[a]->is_float ? static_cast<long double>(in[a]->f[j]) : static_cast<long double>(in[a]->i[j]);
    }
    const long double v = f(args);
    if (result_float) out.f.push_back(static_cast<float>(v));
    else out.i.push_back(static_cast<int64_t>(v));
  });
  return out;
}

namespace {

using Fn = FoldFn;

const std::map<std::string, std::pair<std::string, Fn>>& comparisons() {
  static const std::map<std::string, std::pair<std::string, Fn>> table = {
      {"Equal", {"equal", [](const std::vector<long double>& v) { return static_cast<long double>(v[0] == v[1]); }}},
      {"Less", {"less", [](const std::vector<long double>& v) { return static_cast<long double>(v[0] < v[1]); }}},
      {"LessOrEqual", {"less_equal", [](const std::vector<long double>& v) { return static_cast<long double>(v[0] <= v[1]); }}},
      {"Greater", {"greater", [](const std::vector<long double>& v) { return static_cast<long double>(v[0] > v[1]); }}},
      {"GreaterOrEqual", {"greater_equal", [](const std::vector<long double>& v) { return static_cast<long double>(v[0] >= v[1]); }}},
      {"And", {"and", [](const std::vector<long double>& v) { return static_cast<long double>(v[0] != 0 && v[1] != 0); }}},
      {"Or", {"or", [](const std::vector<long double>& v) { return static_cast<long double>(v[0] != 0 || v[1] != 0); }}},
  };
  return table;
}

}  // namespace

// Output 0 of a node whose ONNX type need not be float (a comparison's
// bool, an ArgMax's or an integer Cast's int64): Loom carries every value on
// data as a float tensor, so the type is not checked.
std::string Importer::float_carried_output() {
  for (int k = 1; k < node_->output_size(); ++k)
    if (output_used(k)) throw LoomError("output " + std::to_string(k) + " is not supported");
  return node_->output(0);
}

void Importer::compare() {
  allow_attrs({});
  require_inputs(2, 2);
  const auto& [op, fn] = comparisons().at(node_->op_type());
  const Known* a = known(in(0));
  const Known* b = known(in(1));
  if (a && b) {
    set_known(node_->output(0), fold_broadcast({a, b}, false, fn));
    return;
  }
  emit(op, {data(in(0)), data(in(1))}, json::object(), float_carried_output());
}

void Importer::logical_not() {
  allow_attrs({});
  require_inputs(1, 1);
  if (const Known* k = known(in(0))) {
    set_known(node_->output(0), fold_broadcast({k}, false, [](const std::vector<long double>& v) { return static_cast<long double>(v[0] == 0); }));
    return;
  }
  emit("not", {data(in(0))}, json::object(), float_carried_output());
}

void Importer::where() {
  allow_attrs({});
  require_inputs(3, 3);
  const Known* c = known(in(0));
  const Known* a = known(in(1));
  const Known* b = known(in(2));
  if (c && a && b) {
    set_known(node_->output(0), fold_broadcast({c, a, b}, a->is_float || b->is_float,
                                               [](const std::vector<long double>& v) { return v[0] != 0 ? v[1] : v[2]; }));
    return;
  }
  const int32_t t = elem_type(node_->output(0));
  const bool float_out = t == onnx::TensorProto::FLOAT || t == onnx::TensorProto::UNDEFINED ||
                         t == onnx::TensorProto::BOOL;
  if (!float_out) throw LoomError("Where of " + type_name(t) + " data is not supported (only float32 tensors)");
  emit("where", {data(in(0)), data(in(1)), data(in(2))}, json::object(), float_carried_output());
}

// Folded on known values (integer shape arithmetic); on data the mod op.
void Importer::mod() {
  allow_attrs({"fmod"});
  require_inputs(2, 2);
  const bool fmod = attr_int("fmod", 0) != 0;
  const Known* a = known(in(0));
  const Known* b = known(in(1));
  if (!a || !b) {
    emit("mod", {data(in(0)), data(in(1))}, {{"fmod", fmod ? 1 : 0}}, float_carried_output());
    return;
  }
  set_known(node_->output(0), fold_broadcast({a, b}, a->is_float || b->is_float, [&](const std::vector<long double>& v) {
              if (v[1] == 0) throw LoomError("a modulo by zero");
              long double r = std::fmod(v[0], v[1]);
              if (!fmod && r != 0 && ((r < 0) != (v[1] < 0))) r += v[1];  // the divisor's sign, as Python's %
              return r;
            }));
}

// Folded: start, limit and delta are known scalars.
void Importer::range() {
  allow_attrs({});
  require_inputs(3, 3);
  const Known& s = const_input(0, "the start");
  const double start = const_scalar(0, "the start"), limit = const_scalar(1, "the limit"),
               delta = const_scalar(2, "the delta");
  if (delta == 0) throw LoomError("a delta of 0");
  const int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((limit - start) / delta)));
  checked_elements({n}, "the range");
  Known out;
  out.is_float = s.is_float;
  out.shape = {n};
  for (int64_t k = 0; k < n; ++k) {
    const double v = start + k * delta;
    if (s.is_float) out.f.push_back(static_cast<float>(v));
    else out.i.push_back(static_cast<int64_t>(v));
  }
  set_known(node_->output(0), std::move(out));
}

// Neg and Abs of known integers fold (shape arithmetic); else element-wise ops.
bool Importer::fold_unary(const std::string& op) {
  const Known* k = known(in(0));
  if (!k || k->is_float) return false;
  set_known(node_->output(0), fold_broadcast({k}, false, [&](const std::vector<long double>& v) {
              return op == "neg" ? -v[0] : std::fabs(v[0]);
            }));
  return true;
}

// Max and Min of known integers fold.
bool Importer::fold_variadic(const std::string& op) {
  std::vector<const Known*> parts;
  for (int i = 0; i < num_inputs(); ++i) {
    const Known* k = known(in(i));
    if (!k || k->is_float) return false;
    parts.push_back(k);
  }
  set_known(node_->output(0), fold_broadcast(parts, false, [&](const std::vector<long double>& v) {
              long double r = v[0];
              for (long double x : v) r = op == "max" ? std::max(r, x) : std::min(r, x);
              return r;
            }));
  return true;
}

}  // namespace loom::graph::onnx_detail
