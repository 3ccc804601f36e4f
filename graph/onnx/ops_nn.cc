// ONNX neural-network ops onto Loom ops: Conv, ConvTranspose and pooling
// (2-D windows with pads or auto_pad), BatchNormalization (inference form),
// Softmax and LayerNormalization.
#include <algorithm>

#include "graph/onnx/importer.h"
#include "graph/ops.h"
#include "ir/error.h"

namespace loom::graph::onnx_detail {

// pads [top, left, bottom, right] from `pads` or `auto_pad` (SAME_*: the
// output is ceil(input / stride); SAME_UPPER puts the odd pixel at the end).
std::vector<int64_t> Importer::window_pads(const Shape& x, const std::vector<int64_t>& kernel,
                                           const std::vector<int64_t>& strides,
                                           const std::vector<int64_t>& dilations) {
  const std::string auto_pad = attr_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    auto pads = attr_ints("pads", {0, 0, 0, 0});
    if (pads.size() != 4) throw LoomError("attribute pads has " + std::to_string(pads.size()) + " values, expected 4");
    for (int64_t p : pads)
      if (p < 0) throw LoomError("attribute pads=" + ints_string(pads) + " must be non-negative");
    return pads;
  }
  if (auto_pad == "VALID") return {0, 0, 0, 0};
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    throw LoomError("attribute auto_pad=" + auto_pad + " is not supported");
  std::vector<int64_t> pads(4);
  for (int d = 0; d < 2; ++d) {
    const int64_t in = x[2 + d], out = (in + strides[d] - 1) / strides[d];
    const int64_t total = std::max<int64_t>(0, (out - 1) * strides[d] + (kernel[d] - 1) * dilations[d] + 1 - in);
    pads[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    pads[d + 2] = total - pads[d];
  }
  return pads;
}

// A per-spatial-dim attribute of a 2-D window (strides, dilations), default 1.
std::vector<int64_t> Importer::pair_attr(const std::string& name) {
  auto v = attr_ints(name, {1, 1});
  if (v.size() != 2) throw LoomError("attribute " + name + " has " + std::to_string(v.size()) + " values, expected 2 (2-D only)");
  for (int64_t s : v)
    if (s < 1) throw LoomError("attribute " + name + "=" + ints_string(v) + " must be positive");
  return v;
}

void Importer::conv() {
  allow_attrs({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  require_inputs(2, 3);
  const auto strides = pair_attr("strides"), dilations = pair_attr("dilations");
  const int64_t group = attr_int("group", 1);
  if (group < 1) throw LoomError("attribute group=" + std::to_string(group) + " must be positive");
  const Shape x = shape_of(in(0)), w = shape_of(in(1));
  if (x.size() != 4 || w.size() != 4)
    throw LoomError("only 2-D convolution is supported (data " + shape_string(x) + ", weight " + shape_string(w) + ")");
  const std::vector<int64_t> kernel = {w[2], w[3]};
  if (attr("kernel_shape") && attr_ints("kernel_shape", {}) != kernel)
    throw LoomError("attribute kernel_shape=" + ints_string(attr_ints("kernel_shape", {})) + " differs from the weight's " +
                    ints_string(kernel));
  const auto pads = window_pads(x, kernel, strides, dilations);
  std::vector<std::string> inputs = {data(in(0)), data(in(1))};
  if (has_in(2)) inputs.push_back(data(in(2)));
  emit("conv2d", inputs,
       {{"strides", strides}, {"pads", pads}, {"dilations", dilations}, {"group", group}},
       main_output());
}

// ConvTranspose as TVM lowers it on CPU: the input dilated by the strides
// and padded (dilate), then a stride-1 conv2d with the kernel flipped and
// its in/out channels swapped per group (the weight transformed here, once).
// The conv is then tuned like any other.
void Importer::conv_transpose() {
  allow_attrs({"auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape", "pads", "strides"});
  require_inputs(2, 3);
  const auto strides = pair_attr("strides"), dilations = pair_attr("dilations");
  const int64_t group = attr_int("group", 1);
  const Shape x = shape_of(in(0)), w = shape_of(in(1));
  if (x.size() != 4 || w.size() != 4)
    throw LoomError("only 2-D transposed convolution is supported (data " + shape_string(x) + ", weight " +
                    shape_string(w) + ")");
  if (group < 1 || x[1] % group != 0 || w[0] != x[1])
    throw LoomError("weight " + shape_string(w) + " does not fit data " + shape_string(x) + " with group " +
                    std::to_string(group));
  const Known* wk = constant_data(in(1));
  if (!wk || !wk->is_float) throw LoomError("the weight (input 1) must be a float constant");
  const std::vector<int64_t> kernel = {w[2], w[3]};
  if (attr("kernel_shape") && attr_ints("kernel_shape", {}) != kernel)
    throw LoomError("attribute kernel_shape=" + ints_string(attr_ints("kernel_shape", {})) + " differs from the weight's " +
                    ints_string(kernel));
  auto output_padding = attr_ints("output_padding", {0, 0});
  if (output_padding.size() != 2) throw LoomError("attribute output_padding must have 2 values");
  for (int d = 0; d < 2; ++d)
    if (output_padding[d] < 0 || output_padding[d] >= std::max(strides[d], dilations[d]))
      throw LoomError("attribute output_padding=" + ints_string(output_padding) + " must be below the stride or dilation");
  // pads [top, left, bottom, right]: given, or from output_shape / auto_pad.
  std::vector<int64_t> pads = attr_ints("pads", {0, 0, 0, 0});
  const std::string auto_pad = attr_string("auto_pad", "NOTSET");
  std::vector<int64_t> out_shape = attr_ints("output_shape", {});
  if (out_shape.size() > 2) out_shape.erase(out_shape.begin(), out_shape.end() - 2);
  if (!out_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (int d = 0; d < 2; ++d) {
      const int64_t target = out_shape.empty() ? x[2 + d] * strides[d] : out_shape[d];
      const int64_t total =
          strides[d] * (x[2 + d] - 1) + output_padding[d] + (kernel[d] - 1) * dilations[d] + 1 - target;
      const bool upper = auto_pad != "SAME_LOWER";
      pads[d] = upper ? total / 2 : total - total / 2;
      pads[d + 2] = total - pads[d];
    }
  } else if (auto_pad != "NOTSET" && auto_pad != "VALID") {
    throw LoomError("attribute auto_pad=" + auto_pad + " is not supported");
  }
  if (pads.size() != 4) throw LoomError("attribute pads has " + std::to_string(pads.size()) + " values, expected 4");
  // The dilated input's pads: (kernel - 1) * dilation - pad, plus the output padding at the end.
  std::vector<int64_t> dpads(8, 0);
  for (int d = 0; d < 2; ++d) {
    const int64_t reach = (kernel[d] - 1) * dilations[d];
    dpads[2 + d] = reach - pads[d];
    dpads[6 + d] = reach - pads[d + 2] + output_padding[d];
  }
  // W [C, K/g, R, S] -> W' [K, C/g, R, S], W'[g*Kg + k, c, r, s] = W[g*Cg + c, k, R-1-r, S-1-s].
  const int64_t C = w[0], Kg = w[1], R = w[2], S = w[3], Cg = C / group, K = Kg * group;
  Known flipped;
  flipped.shape = {K, Cg, R, S};
  flipped.f.resize(static_cast<size_t>(K * Cg * R * S));
  for (int64_t g = 0; g < group; ++g)
    for (int64_t k = 0; k < Kg; ++k)
      for (int64_t c = 0; c < Cg; ++c)
        for (int64_t r = 0; r < R; ++r)
          for (int64_t s = 0; s < S; ++s)
            flipped.f[(((g * Kg + k) * Cg + c) * R + r) * S + s] =
                wk->f[(((g * Cg + c) * Kg + k) * R + (R - 1 - r)) * S + (S - 1 - s)];
  const std::string weight = fresh_value(resolve(in(1)) + "_flipped");
  set_known(weight, std::move(flipped));
  const std::string dilated =
      emit("dilate", {data(in(0))}, {{"strides", {1, 1, strides[0], strides[1]}}, {"pads", dpads}}, "", "dilate");
  std::vector<std::string> inputs = {dilated, data(weight)};
  if (has_in(2)) inputs.push_back(data(in(2)));
  emit("conv2d", inputs, {{"strides", {1, 1}}, {"pads", {0, 0, 0, 0}}, {"dilations", dilations}, {"group", group}},
       main_output());
}

void Importer::pool(const std::string& op) {
  const bool max = op == "max_pool2d";
  if (max) allow_attrs({"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"});
  else allow_attrs({"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape", "pads", "strides"});
  require_inputs(1, 1);
  if (max && output_used(1)) throw LoomError("the Indices output is not supported");
  if (!attr("kernel_shape")) throw LoomError("attribute kernel_shape is missing");
  const auto kernel = attr_ints("kernel_shape", {});
  const auto strides = pair_attr("strides"), dilations = pair_attr("dilations");
  const Shape x = shape_of(in(0));
  if (x.size() != 4 || kernel.size() != 2)
    throw LoomError("only 2-D pooling is supported (data " + shape_string(x) + ", kernel_shape " + ints_string(kernel) + ")");
  for (int64_t k : kernel)
    if (k < 1) throw LoomError("attribute kernel_shape=" + ints_string(kernel) + " must be positive");
  const auto pads = window_pads(x, kernel, strides, dilations);
  // With auto_pad the output size is fixed by the padding rule, not rounded.
  const int64_t ceil_mode = attr_string("auto_pad", "NOTSET") == "NOTSET" ? attr_int("ceil_mode", 0) : 0;
  json attrs = {{"kernel", kernel},       {"strides", strides},     {"pads", pads},
                {"dilations", dilations}, {"ceil_mode", ceil_mode}, {"count_include_pad", attr_int("count_include_pad", 0)}};
  emit(op, {data(in(0))}, attrs, main_output());
}

void Importer::global_avg_pool() {
  allow_attrs({});
  require_inputs(1, 1);
  emit("global_avg_pool2d", {data(in(0))}, json::object(), main_output());
}

// Inference form only: the training outputs (running statistics) are refused.
void Importer::batch_norm() {
  allow_attrs({"epsilon", "momentum", "spatial", "training_mode", "is_test"});
  require_inputs(5, 5);
  if (attr_int("training_mode", 0) != 0) throw LoomError("attribute training_mode=1 is not supported (inference only)");
  if (attr_int("spatial", 1) != 1) throw LoomError("attribute spatial=0 is not supported");
  std::vector<std::string> inputs;
  for (int i = 0; i < 5; ++i) inputs.push_back(data(in(i)));
  emit("batch_norm", inputs, {{"epsilon", attr_float("epsilon", 1e-5f)}}, main_output());
}

// Before opset 13 Softmax flattens the input to 2-D at `axis` and normalizes
// over everything from `axis` on, which matches Loom's per-axis softmax only
// at the last axis.
void Importer::softmax() {
  allow_attrs({"axis"});
  require_inputs(1, 1);
  const int64_t rank = static_cast<int64_t>(shape_of(in(0)).size());
  const int64_t axis = attr_int("axis", opset_ < 13 ? 1 : -1);
  const int64_t a = op_detail::normalize_axis(axis, rank);
  if (opset_ < 13 && a != rank - 1)
    throw LoomError("axis=" + std::to_string(axis) + " of a " + std::to_string(rank) + "-D input under opset " +
                    std::to_string(opset_) + " normalizes over the flattened dims from the axis on (not supported; only the last axis)");
  emit("softmax", {data(in(0))}, {{"axis", axis}}, main_output());
}

// Y is layer_norm; the optional Mean and InvStdDev outputs are spelled with
// reductions when something reads them.
void Importer::layer_norm() {
  allow_attrs({"axis", "epsilon", "stash_type"});
  require_inputs(2, 3);
  const int64_t axis = attr_int("axis", -1);
  const float epsilon = attr_float("epsilon", 1e-5f);
  const std::string x = data(in(0));
  std::vector<std::string> inputs = {x, data(in(1))};
  if (has_in(2)) inputs.push_back(data(in(2)));
  emit("layer_norm", inputs, {{"axis", axis}, {"epsilon", epsilon}}, output0());
  if (!output_used(1) && !output_used(2)) return;
  const int64_t rank = static_cast<int64_t>(shape_of(in(0)).size());
  std::vector<int64_t> axes;
  for (int64_t d = op_detail::normalize_axis(axis, rank); d < rank; ++d) axes.push_back(d);
  const json reduce_attrs = {{"axes", axes}, {"keepdims", 1}};
  const std::string mean = emit("reduce_mean", {x}, reduce_attrs, output_used(1) ? node_->output(1) : "", "mean");
  if (!output_used(2)) return;
  const std::string centred = emit("sub", {x, mean}, json::object(), "", "centred");
  const std::string square = emit("mul", {centred, centred}, json::object(), "", "square");
  const std::string var = emit("reduce_mean", {square}, reduce_attrs, "", "var");
  const std::string eps = fresh_value(node_name_ + "_epsilon");
  out_.constants[eps] = Constant{{}, {epsilon}};
  defined_.insert(eps);
  const std::string padded = emit("add", {var, eps}, json::object(), "", "var_eps");
  emit("pow_scalar", {padded}, {{"exponent", -0.5}}, node_->output(2), "inv_std_dev");
}

}  // namespace loom::graph::onnx_detail
