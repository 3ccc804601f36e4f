// The tensor-expression DSL: placeholders, computes and reduce axes.
//
//   Tensor A = placeholder({M, K}, "A");
//   Var k = reduce_axis(K, "k");
//   Tensor C = compute({M, N}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
//
// An operation is immutable and shared; a Tensor is the (single) output of one.
// Loads name their tensor, so a schedule can swap an operation (cache stages)
// without touching its consumers.
#pragma once

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "ir/expr.h"

namespace loom {

struct OpNode {
  std::string name;
  bool is_placeholder = false;
  std::vector<int64_t> shape;     // output shape
  std::vector<Var> axes;          // compute: one spatial var per output dim
  std::vector<Var> reduce_axes;   // compute: axes of the top-level reduction
  Expr body;                      // compute: value at `axes` (maybe a kReduce)
};
using Op = std::shared_ptr<const OpNode>;

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Op op) : op_(std::move(op)) {}
  const Op& op() const { return op_; }
  const std::string& name() const { return op_->name; }
  const std::vector<int64_t>& shape() const { return op_->shape; }
  size_t ndim() const { return op_->shape.size(); }

  Expr operator()(std::vector<Expr> indices) const;
  template <typename... Args>
  Expr operator()(Args... args) const {
    return (*this)(std::vector<Expr>{Expr(args)...});
  }

 private:
  Op op_;
};

Tensor placeholder(std::vector<int64_t> shape, const std::string& name);
Var reduce_axis(int64_t extent, const std::string& name);

// Generic form: the body receives one var per output dimension.
Tensor compute_with_axes(std::vector<int64_t> shape,
                         const std::function<Expr(const std::vector<Var>&)>& body,
                         const std::string& name);

template <typename F>
Tensor compute(std::vector<int64_t> shape, F f, const std::string& name) {
  return compute_with_axes(
      std::move(shape),
      [&](const std::vector<Var>& v) -> Expr {
        if constexpr (std::is_invocable_v<F, const std::vector<Var>&>) {
          return f(v);
        } else if constexpr (std::is_invocable_v<F, Var>) {
          return f(v.at(0));
        } else if constexpr (std::is_invocable_v<F, Var, Var>) {
          return f(v.at(0), v.at(1));
        } else if constexpr (std::is_invocable_v<F, Var, Var, Var>) {
          return f(v.at(0), v.at(1), v.at(2));
        } else if constexpr (std::is_invocable_v<F, Var, Var, Var, Var>) {
          return f(v.at(0), v.at(1), v.at(2), v.at(3));
        } else if constexpr (std::is_invocable_v<F, Var, Var, Var, Var, Var>) {
          return f(v.at(0), v.at(1), v.at(2), v.at(3), v.at(4));
        } else {
          return f(v.at(0), v.at(1), v.at(2), v.at(3), v.at(4), v.at(5));
        }
      },
      name);
}

// A new compute op equal to `op` but with another body (and reduce axes
// re-derived from it). Used by schedule transforms that rewrite the DAG.
Op rebuild_op(const Op& op, const std::string& name, Expr body);

// The operation's body loads `tensor` (never for a placeholder).
bool op_reads(const Op& op, const std::string& tensor);

}  // namespace loom
