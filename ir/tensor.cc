#include "ir/tensor.h"

#include "ir/error.h"

namespace loom {

Expr Tensor::operator()(std::vector<Expr> indices) const {
  if (indices.size() != op_->shape.size())
    throw LoomError("tensor " + op_->name + " has " + std::to_string(op_->shape.size()) +
                    " dimensions, indexed with " + std::to_string(indices.size()));
  for (auto& i : indices)
    if (i->dtype != DType::kInt) throw LoomError("tensor " + op_->name + " indexed with a non-integer");
  return load(op_->name, std::move(indices), op_);
}

Tensor placeholder(std::vector<int64_t> shape, const std::string& name) {
  for (int64_t d : shape)
    if (d <= 0) throw LoomError("placeholder " + name + ": dimensions must be positive");
  auto op = std::make_shared<OpNode>();
  op->name = name;
  op->is_placeholder = true;
  op->shape = std::move(shape);
  return Tensor(op);
}

Var reduce_axis(int64_t extent, const std::string& name) {
  if (extent <= 0) throw LoomError("reduce axis " + name + ": extent must be positive");
  return make_var(name, extent);
}

namespace {
std::vector<Var> top_level_reduce_axes(const Expr& body) {
  if (body->kind == ExprKind::kReduce) return body->reduce_axes;
  bool nested = false;
  visit(body, [&](const Expr& e) { nested |= e->kind == ExprKind::kReduce; });
  if (nested) throw LoomError("a reduction must be the whole body of its compute op");
  return {};
}
}  // namespace

Tensor compute_with_axes(std::vector<int64_t> shape,
                         const std::function<Expr(const std::vector<Var>&)>& body,
                         const std::string& name) {
  static const char* axis_names[] = {"i", "j", "k", "l", "m", "n", "o", "p"};
  auto op = std::make_shared<OpNode>();
  op->name = name;
  op->shape = shape;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] <= 0) throw LoomError("compute " + name + ": dimensions must be positive");
    op->axes.push_back(make_var(d < 8 ? axis_names[d] : "ax" + std::to_string(d), shape[d]));
  }
  op->body = cast(DType::kFloat, body(op->axes));
  op->reduce_axes = top_level_reduce_axes(op->body);
  return Tensor(op);
}

bool op_reads(const Op& op, const std::string& tensor) {
  if (op->is_placeholder) return false;
  bool r = false;
  visit(op->body, [&](const Expr& e) { r |= e->kind == ExprKind::kLoad && e->name == tensor; });
  return r;
}

Op rebuild_op(const Op& op, const std::string& name, Expr body) {
  auto n = std::make_shared<OpNode>(*op);
  n->name = name;
  n->body = std::move(body);
  n->reduce_axes = top_level_reduce_axes(n->body);
  return n;
}

}  // namespace loom
