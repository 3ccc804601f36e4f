#include "graph/ops.h"

#include <algorithm>

#include "ir/error.h"

namespace loom::graph {

const std::vector<OpDef>& op_registry() {
  static const std::vector<OpDef> ops = [] {
    std::vector<OpDef> out;
    op_detail::register_elementwise_ops(out);
    op_detail::register_nn_ops(out);
    op_detail::register_linalg_ops(out);
    op_detail::register_shape_ops(out);
    op_detail::register_indexing_ops(out);
    op_detail::register_resize_ops(out);
    op_detail::register_reduce_ops(out);
    std::sort(out.begin(), out.end(), [](const OpDef& a, const OpDef& b) { return a.name < b.name; });
    return out;
  }();
  return ops;
}

const OpDef* find_op(const std::string& name) {
  for (const auto& op : op_registry())
    if (op.name == name) return &op;
  return nullptr;
}

std::string op_names() {
  std::string s;
  for (const auto& op : op_registry()) s += (s.empty() ? "" : ", ") + op.name;
  return s;
}

namespace {

// Same JSON kind, with integers accepted where numbers are expected.
bool same_kind(const nlohmann::json& value, const nlohmann::json& like) {
  if (like.is_number_integer()) return value.is_number_integer();
  if (like.is_number()) return value.is_number();
  if (like.is_array()) {
    if (!value.is_array()) return false;
    const bool integers = !like.empty() && like[0].is_number_integer();
    for (const auto& v : value)
      if (integers ? !v.is_number_integer() : !v.is_number()) return false;
    return true;
  }
  return value.type() == like.type();
}

}  // namespace

nlohmann::json resolve_attrs(const OpDef& op, const nlohmann::json& attrs) {
  if (!attrs.is_null() && !attrs.is_object()) throw LoomError("attrs: expected an object");
  nlohmann::json out = nlohmann::json::object();
  const nlohmann::json given = attrs.is_null() ? nlohmann::json::object() : attrs;
  for (const auto& item : given.items()) {
    const std::string& k = item.key();
    const nlohmann::json& v = item.value();
    auto it = std::find_if(op.attrs.begin(), op.attrs.end(), [&](const OpAttr& a) { return a.name == k; });
    if (it == op.attrs.end()) {
      std::string known;
      for (const auto& a : op.attrs) known += (known.empty() ? "" : ", ") + a.name;
      throw LoomError("attribute '" + k + "' is not one of " + op.name + "'s (" + (known.empty() ? "none" : known) + ")");
    }
    const nlohmann::json& like = it->like.is_null() ? it->default_value : it->like;
    if (!same_kind(v, like))
      throw LoomError("attribute '" + k + "': expected a value like " + like.dump() + ", got " + v.dump());
    if (!it->choices.empty() && std::find(it->choices.begin(), it->choices.end(), v.get<std::string>()) == it->choices.end()) {
      std::string allowed;
      for (size_t c = 0; c < it->choices.size(); ++c)
        allowed += (c == 0 ? "" : c + 1 == it->choices.size() ? " or " : ", ") + nlohmann::json(it->choices[c]).dump();
      throw LoomError("attribute '" + k + "': expected " + allowed + ", got " + v.dump());
    }
    out[k] = v;
  }
  for (const auto& a : op.attrs) {
    if (out.contains(a.name)) continue;
    if (a.default_value.is_null()) throw LoomError("attribute '" + a.name + "' is required");
    out[a.name] = a.default_value;
  }
  return out;
}

namespace op_detail {

OpDef make_op(const std::string& name, const std::string& doc, int min_inputs, int max_inputs, OpPattern pattern,
              std::vector<OpAttr> attrs, decltype(OpDef::infer_shape) infer_shape, decltype(OpDef::lower) lower) {
  OpDef op;
  op.name = name;
  op.doc = doc;
  op.min_inputs = min_inputs;
  op.max_inputs = max_inputs;
  op.pattern = pattern;
  op.attrs = std::move(attrs);
  op.infer_shape = std::move(infer_shape);
  op.lower = std::move(lower);
  return op;
}

OpDef injective(const std::string& name, const std::string& doc, std::vector<OpAttr> attrs,
                decltype(OpDef::infer_shape) shape, decltype(OpDef::lower) lower) {
  return make_op(name, doc, 1, 1, OpPattern::kInjective, std::move(attrs), std::move(shape), std::move(lower));
}

std::vector<int64_t> ir_shape(const Shape& s) { return s.empty() ? std::vector<int64_t>{1} : s; }

int64_t normalize_axis(int64_t axis, size_t ndim) {
  const int64_t n = static_cast<int64_t>(ndim);
  if (axis < -n || axis >= n)
    throw LoomError("axis " + std::to_string(axis) + " is out of range for " + std::to_string(n) + " dims");
  return axis < 0 ? axis + n : axis;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw LoomError("shapes " + shape_string(a) + " and " + shape_string(b) + " do not broadcast");
    out[i] = std::max(da, db);
  }
  return out;
}

std::vector<Expr> broadcast_indices(const Tensor& t, const std::vector<Var>& out_axes) {
  const size_t n = t.ndim(), m = out_axes.size();
  std::vector<Expr> idx;
  for (size_t i = 0; i < n; ++i) {
    // A scalar lowered as [1] against a rank-0 output, or a broadcast dim.
    // A dim of 1 against an output dim of 1 keeps its axis: the access is
    // then element-wise, which the sketch rules need to fuse a producer
    // into its consumer (a batch-1 residual add).
    if (n > m || (t.shape()[i] == 1 && out_axes[m - n + i]->extent != 1)) {
      idx.push_back(int_imm(0));
      continue;
    }
    idx.push_back(out_axes[m - n + i]);
  }
  return idx;
}

}  // namespace op_detail

}  // namespace loom::graph
