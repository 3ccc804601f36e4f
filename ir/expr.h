// Expressions of the tensor-expression language and of lowered loop nests.
//
// One fat, immutable node type keeps visitors short: every pass is a switch on
// `kind`. Integer division and modulo are *floor* division/modulo (as in TVM's
// floordiv/floormod), so index algebra stays valid for negative values that
// appear under conv padding guards.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace loom {

enum class DType : uint8_t { kInt, kFloat, kBool };

enum class ExprKind : uint8_t {
  kIntImm, kFloatImm, kVar,
  kAdd, kSub, kMul, kDiv, kMod, kMin, kMax,
  kEQ, kNE, kLT, kLE, kGT, kGE, kAnd, kOr, kNot,
  kSelect, kCast, kCall, kLoad, kReduce,
};

enum class ReduceKind : uint8_t { kSum, kMax, kMin };

struct ExprNode;
struct OpNode;

// Handle to an immutable expression node (cheap to copy).
class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> n) : n_(std::move(n)) {}
  Expr(int v);      // NOLINT: integer literal
  Expr(int64_t v);  // NOLINT
  Expr(float v);    // NOLINT: float literal
  Expr(double v);   // NOLINT

  const ExprNode* operator->() const { return n_.get(); }
  const ExprNode& operator*() const { return *n_; }
  const ExprNode* get() const { return n_.get(); }
  bool defined() const { return n_ != nullptr; }
  bool same_as(const Expr& o) const { return n_ == o.n_; }

 private:
  std::shared_ptr<const ExprNode> n_;
};

// A variable: a loop/axis variable with a known extent [0, extent) or, with
// extent <= 0, an unbounded one. Identity is the id, not the name.
using Var = Expr;

struct ExprNode {
  ExprKind kind = ExprKind::kIntImm;
  DType dtype = DType::kInt;
  int64_t int_value = 0;      // kIntImm
  double float_value = 0.0;   // kFloatImm
  std::string name;           // kVar name, kCall function, kLoad tensor
  int64_t var_id = 0;         // kVar
  int64_t extent = 0;         // kVar: iteration extent (0 = unknown)
  ReduceKind reduce_kind = ReduceKind::kSum;  // kReduce
  std::vector<Expr> args;     // operands / load indices / call args / reduce source
  std::vector<Var> reduce_axes;  // kReduce
  // kLoad made by the DSL: the producing op (lets ComputeDAG find the graph).
  std::shared_ptr<const OpNode> producer;
  mutable size_t cached_hash = 0;
  // Set by simplify() on the nodes it returns: simplify(e) of such a node is
  // e itself (the simplifier depends only on the node and the extents of its
  // vars), so re-simplifying an expression built from simplified parts walks
  // only the new nodes. Any copy of a node that changes it clears the mark.
  mutable bool simplified = false;
};

// ---- constructors ------------------------------------------------------
Expr int_imm(int64_t v);
Expr float_imm(double v);
Expr bool_imm(bool v);
Var make_var(const std::string& name, int64_t extent = 0);
Expr make_binary(ExprKind kind, Expr a, Expr b);  // no simplification
Expr make_not(Expr a);
Expr select(Expr cond, Expr t, Expr f);
Expr cast(DType to, Expr a);
Expr call(const std::string& func, std::vector<Expr> args);
Expr load(const std::string& tensor, std::vector<Expr> indices,
          std::shared_ptr<const OpNode> producer = nullptr);
Expr reduce(ReduceKind kind, Expr source, std::vector<Var> axes);
Expr with_args(const Expr& e, std::vector<Expr> args);  // same node, new operands
// A mutable copy of a node to change, its cached hash and simplified mark
// cleared (they describe the original).
std::shared_ptr<ExprNode> copy_node(const Expr& e);

// Operators build nodes and fold constants (full simplification: simplify.h).
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);  // floor division for integers
Expr operator%(Expr a, Expr b);  // floor modulo for integers
Expr operator-(Expr a);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
// Math calls understood by every backend and the reference evaluator.
Expr exp(Expr a);
Expr log(Expr a);
Expr sqrt(Expr a);
Expr tanh(Expr a);
Expr erf(Expr a);
Expr sigmoid(Expr a);
Expr fabs(Expr a);
Expr pow(Expr a, Expr b);
// Reductions over reduce axes (made by reduce_axis in tensor.h).
Expr sum(Expr source, std::vector<Var> axes);
Expr max_reduce(Expr source, std::vector<Var> axes);
Expr min_reduce(Expr source, std::vector<Var> axes);

// ---- queries -----------------------------------------------------------
bool is_const_int(const Expr& e, int64_t* value = nullptr);
bool is_const_value(const Expr& e, int64_t value);  // an int constant equal to value
bool is_binary(ExprKind k);
// The C infix operator of a binary expression kind ("+", "<=", "&&", ...),
// as the printer and the C/CUDA backends write it; nullptr for kinds that
// are not infix operators (min, max, ...).
const char* infix_symbol(ExprKind k);
bool is_comparison(ExprKind k);
const char* reduce_kind_name(ReduceKind k);
size_t structural_hash(const Expr& e);
bool structural_equal(const Expr& a, const Expr& b);
// Total order consistent with structural_equal (for canonical term order).
int structural_compare(const Expr& a, const Expr& b);

// Rewrites: `fn` returns a replacement or an undefined Expr to recurse.
Expr mutate(const Expr& e, const std::function<Expr(const Expr&)>& fn);
void visit(const Expr& e, const std::function<void(const Expr&)>& fn);  // pre-order
// Replace variables by id.
Expr substitute(const Expr& e, const std::vector<std::pair<Var, Expr>>& map);
bool uses_var(const Expr& e, const Var& v);

std::string to_string(const Expr& e);
const char* math_function_check(const std::string& name, size_t nargs);  // error or null

}  // namespace loom
