// Loom's network operators: one table entry per op with its inputs, its
// attributes (defaults; unknown keys are errors), its fusion pattern, its
// shape rule and its lowering to the ir/ tensor DSL. The importer maps ONNX
// onto these ops; passes, task extraction, the executor and the reference
// interpreter all go through this table, so an op is defined in one place.
//
// Ops by family (graph/ops/<family>.cc):
//   elementwise.cc  relu, sigmoid, tanh, erf, sqrt, exp, log, neg, abs,
//                   reciprocal, softplus, softsign, not, to_bool,
//                   gelu {approximate: "none"|"tanh"}, clip {min, max},
//                   pow_scalar {exponent}, hard_sigmoid {alpha, beta},
//                   hard_swish, leaky_relu {alpha}, elu {alpha},
//                   selu {alpha, gamma}; add, sub, mul, div, pow, max, min,
//                   prelu, equal, less, less_equal, greater, greater_equal,
//                   and, or, mod {fmod} (numpy broadcasting; comparisons and logic give
//                   1.0 / 0.0); where (cond, a, b)
//   nn.cc           conv2d (data NCHW, weight K x C/group x R x S, optional
//                   bias K) {strides, pads [top, left, bottom, right],
//                   dilations, group}; batch_norm (x, scale, bias, mean, var)
//                   {epsilon}; max_pool2d, avg_pool2d {kernel, strides, pads,
//                   dilations, ceil_mode, count_include_pad};
//                   global_avg_pool2d; softmax {axis}; layer_norm (x, scale,
//                   optional bias) {axis, epsilon}
//   linalg.cc       gemm (a, b, optional c) {alpha, beta, trans_a, trans_b};
//                   matmul (numpy matmul, batch dims broadcast)
//   shape.cc        reshape {shape: -1 and 0 as in ONNX}, flatten {axis},
//                   transpose {perm}, concat {axis} (any number of inputs)
//   indexing.cc     slice {starts, steps, sizes}, pad {pads, mode, value},
//                   dilate {strides, pads},
//                   expand {shape}, tile {repeats}, take {axis, indices}
//   resize.cc       resize {sizes, scale_num, scale_den, mode,
//                   coordinate_transformation_mode, nearest_mode}
//   reduce.cc       reduce_mean, reduce_sum, reduce_max, reduce_min,
//                   reduce_l2 {axes, keepdims}
// Negative axes count from the end, as in ONNX.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "graph/graph.h"
#include "ir/tensor.h"

namespace loom::graph {

// Relay's fusion patterns, in its order (a smaller pattern fuses more
// freely; graph/passes/fuse_ops.cc).
enum class OpPattern {
  kElemWise = 0,         // out[i] = f(in[i])
  kBroadcast = 1,        // element-wise with broadcast inputs
  kInjective = 2,        // each output reads one input element (reshape, transpose, concat)
  kCommReduce = 3,       // commutative reduction
  kOutEWiseFusable = 4,  // contraction or window (conv, dense, matmul, pools): takes element-wise epilogues
  kOpaque = 8,           // fuses with nothing (softmax, layer_norm)
};

struct OpAttr {
  std::string name;
  nlohmann::json default_value;  // null: required
  std::string doc;
  // A value of the expected kind, for required attributes and for lists
  // whose default is empty (e.g. [0]: a list of integers); null: like the
  // default.
  nlohmann::json like = nullptr;
  // A string attribute's allowed values (empty: any).
  std::vector<std::string> choices = {};
};

struct OpDef {
  std::string name;
  std::string doc;
  int min_inputs = 1;
  int max_inputs = 1;  // -1: any number
  std::vector<OpAttr> attrs;
  OpPattern pattern = OpPattern::kOpaque;
  // Output shape from the input shapes and resolved attributes; throws
  // LoomError (the caller prefixes the node).
  std::function<Shape(const std::vector<Shape>&, const nlohmann::json&)> infer_shape;
  // The output as ir/ tensors built from the inputs (one Tensor per input, in
  // order). The final stage is named `name`; helper stages `name` + "_" + a
  // suffix (e.g. "c1_pad"), so every name in a DAG stays unique.
  std::function<Tensor(const std::vector<Tensor>&, const nlohmann::json&, const std::string& name)> lower;
};

// Every op, sorted by name.
const std::vector<OpDef>& op_registry();
const OpDef* find_op(const std::string& name);  // nullptr if unknown
std::string op_names();                         // "abs, add, ..." for messages
// Attributes with defaults filled in; unknown keys, missing required ones and
// values of the wrong JSON type throw LoomError naming the attribute.
nlohmann::json resolve_attrs(const OpDef& op, const nlohmann::json& attrs);

// Helpers shared by the op families.
namespace op_detail {
OpDef make_op(const std::string& name, const std::string& doc, int min_inputs, int max_inputs, OpPattern pattern,
              std::vector<OpAttr> attrs, decltype(OpDef::infer_shape) infer_shape, decltype(OpDef::lower) lower);
// A one-input injective op (data movement: reshape, slice, pad, ...).
OpDef injective(const std::string& name, const std::string& doc, std::vector<OpAttr> attrs,
                decltype(OpDef::infer_shape) shape, decltype(OpDef::lower) lower);
// ir/ tensors have at least one dim: a graph scalar lowers as shape [1].
std::vector<int64_t> ir_shape(const Shape& s);
int64_t normalize_axis(int64_t axis, size_t ndim);  // throws for out of range
Shape broadcast_shapes(const Shape& a, const Shape& b);
// Indices into `t` (right-aligned against the output's `out_axes`, size-1
// dims read at 0): numpy broadcasting.
std::vector<Expr> broadcast_indices(const Tensor& t, const std::vector<Var>& out_axes);
// A reduction of `x` over `axes` (normalized, sorted); reduced dims kept as
// size 1 with `keepdims`, else dropped.
Tensor reduce_over(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims, ReduceKind kind,
                   const std::string& name);
// The axes of an attribute (negative ones from the end), sorted, each once;
// an empty list means every axis.
std::vector<int64_t> normalize_axes(const nlohmann::json& axes, size_t ndim);
void register_elementwise_ops(std::vector<OpDef>& out);
void register_nn_ops(std::vector<OpDef>& out);
void register_linalg_ops(std::vector<OpDef>& out);
void register_shape_ops(std::vector<OpDef>& out);
void register_indexing_ops(std::vector<OpDef>& out);
void register_resize_ops(std::vector<OpDef>& out);
void register_reduce_ops(std::vector<OpDef>& out);
}  // namespace op_detail

}  // namespace loom::graph
