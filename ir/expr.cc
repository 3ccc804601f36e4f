#include "ir/expr.h"

#include <atomic>
#include <cmath>
#include <sstream>

#include "ir/error.h"

namespace loom {

namespace {

std::shared_ptr<ExprNode> new_node(ExprKind kind, DType dtype) {
  auto n = std::make_shared<ExprNode>();
  n->kind = kind;
  n->dtype = dtype;
  return n;
}

std::atomic<int64_t> g_next_var_id{1};

DType binary_result_type(ExprKind k, const Expr& a, const Expr& b) {
  if (is_comparison(k) || k == ExprKind::kAnd || k == ExprKind::kOr) return DType::kBool;
  if (a->dtype == DType::kFloat || b->dtype == DType::kFloat) return DType::kFloat;
  return DType::kInt;
}

// Promotes an int operand to float when mixed with a float one.
void promote(Expr& a, Expr& b) {
  if (a->dtype == DType::kFloat && b->dtype == DType::kInt) b = cast(DType::kFloat, b);
  if (b->dtype == DType::kFloat && a->dtype == DType::kInt) a = cast(DType::kFloat, a);
}

int64_t floordiv_i(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t floormod_i(int64_t a, int64_t b) { return a - floordiv_i(a, b) * b; }

// Folds a binary op over two constants; returns undefined if not both constant.
Expr fold(ExprKind k, const Expr& a, const Expr& b) {
  bool ai = a->kind == ExprKind::kIntImm, bi = b->kind == ExprKind::kIntImm;
  bool af = a->kind == ExprKind::kFloatImm, bf = b->kind == ExprKind::kFloatImm;
  if (ai && bi && a->dtype != DType::kBool && b->dtype != DType::kBool) {
    int64_t x = a->int_value, y = b->int_value;
    switch (k) {
      case ExprKind::kAdd: return int_imm(x + y);
      case ExprKind::kSub: return int_imm(x - y);
      case ExprKind::kMul: return int_imm(x * y);
      case ExprKind::kDiv: if (y != 0) return int_imm(floordiv_i(x, y)); break;
      case ExprKind::kMod: if (y != 0) return int_imm(floormod_i(x, y)); break;
      case ExprKind::kMin: return int_imm(std::min(x, y));
      case ExprKind::kMax: return int_imm(std::max(x, y));
      case ExprKind::kEQ: return bool_imm(x == y);
      case ExprKind::kNE: return bool_imm(x != y);
      case ExprKind::kLT: return bool_imm(x < y);
      case ExprKind::kLE: return bool_imm(x <= y);
      case ExprKind::kGT: return bool_imm(x > y);
      case ExprKind::kGE: return bool_imm(x >= y);
      default: break;
    }
  }
  if (af && bf) {
    double x = a->float_value, y = b->float_value;
    switch (k) {
      case ExprKind::kAdd: return float_imm(x + y);
      case ExprKind::kSub: return float_imm(x - y);
      case ExprKind::kMul: return float_imm(x * y);
      case ExprKind::kDiv: return float_imm(x / y);
      case ExprKind::kMin: return float_imm(std::min(x, y));
      case ExprKind::kMax: return float_imm(std::max(x, y));
      default: break;
    }
  }
  if (a->dtype == DType::kBool && b->dtype == DType::kBool && ai && bi) {
    if (k == ExprKind::kAnd) return bool_imm(a->int_value && b->int_value);
    if (k == ExprKind::kOr) return bool_imm(a->int_value || b->int_value);
  }
  return Expr();
}

}  // namespace

Expr::Expr(int v) : Expr(int_imm(v)) {}
Expr::Expr(int64_t v) : Expr(int_imm(v)) {}
Expr::Expr(float v) : Expr(float_imm(v)) {}
Expr::Expr(double v) : Expr(float_imm(v)) {}

namespace {
Expr make_int_imm(int64_t v) {
  auto n = new_node(ExprKind::kIntImm, DType::kInt);
  n->int_value = v;
  return Expr(std::move(n));
}
}  // namespace

Expr int_imm(int64_t v) {
  // Small constants are shared (nodes are immutable): lowering and the
  // simplifier create them by the million.
  constexpr int64_t kLo = -64, kHi = 4096;
  static const std::vector<Expr> cache = [] {
    std::vector<Expr> c;
    for (int64_t x = kLo; x <= kHi; ++x) c.push_back(make_int_imm(x));
    return c;
  }();
  if (v >= kLo && v <= kHi) return cache[static_cast<size_t>(v - kLo)];
  return make_int_imm(v);
}
Expr float_imm(double v) {
  auto n = new_node(ExprKind::kFloatImm, DType::kFloat);
  n->float_value = static_cast<float>(v);  // all tensors are fp32
  return Expr(std::move(n));
}
Expr bool_imm(bool v) {
  auto n = new_node(ExprKind::kIntImm, DType::kBool);
  n->int_value = v ? 1 : 0;
  return Expr(std::move(n));
}
Var make_var(const std::string& name, int64_t extent) {
  auto n = new_node(ExprKind::kVar, DType::kInt);
  n->name = name;
  n->extent = extent;
  n->var_id = g_next_var_id.fetch_add(1);
  return Expr(std::move(n));
}

bool is_binary(ExprKind k) { return k >= ExprKind::kAdd && k <= ExprKind::kOr; }
bool is_comparison(ExprKind k) { return k >= ExprKind::kEQ && k <= ExprKind::kGE; }

Expr make_binary(ExprKind kind, Expr a, Expr b) {
  if (!a.defined() || !b.defined()) throw LoomError("binary expression with an undefined operand");
  if (kind != ExprKind::kAnd && kind != ExprKind::kOr) promote(a, b);
  auto n = new_node(kind, binary_result_type(kind, a, b));
  // Moved in, not copied from an initializer list: the simplifier makes
  // binary nodes by the million and every copy is an atomic reference count.
  n->args.reserve(2);
  n->args.push_back(std::move(a));
  n->args.push_back(std::move(b));
  return Expr(std::move(n));
}

Expr make_not(Expr a) {
  auto n = new_node(ExprKind::kNot, DType::kBool);
  n->args = {std::move(a)};
  return Expr(std::move(n));
}

Expr select(Expr cond, Expr t, Expr f) {
  if (cond->kind == ExprKind::kIntImm) return cond->int_value ? t : f;
  promote(t, f);
  auto n = new_node(ExprKind::kSelect, t->dtype);
  n->args = {std::move(cond), std::move(t), std::move(f)};
  return Expr(std::move(n));
}

Expr cast(DType to, Expr a) {
  if (a->dtype == to) return a;
  if (a->kind == ExprKind::kIntImm && to == DType::kFloat) return float_imm(static_cast<double>(a->int_value));
  if (a->kind == ExprKind::kFloatImm && to == DType::kInt) return int_imm(static_cast<int64_t>(a->float_value));
  auto n = new_node(ExprKind::kCast, to);
  n->args = {std::move(a)};
  return Expr(std::move(n));
}

const char* math_function_check(const std::string& name, size_t nargs) {
  static const char* unary[] = {"exp", "log", "sqrt", "tanh", "erf", "sigmoid", "fabs"};
  for (const char* u : unary)
    if (name == u) return nargs == 1 ? nullptr : "expects one argument";
  if (name == "pow") return nargs == 2 ? nullptr : "expects two arguments";
  return "unknown math function";
}

Expr call(const std::string& func, std::vector<Expr> args) {
  if (const char* err = math_function_check(func, args.size()))
    throw LoomError("call " + func + ": " + err);
  auto n = new_node(ExprKind::kCall, DType::kFloat);
  n->name = func;
  for (auto& a : args) a = cast(DType::kFloat, a);
  n->args = std::move(args);
  return Expr(std::move(n));
}

Expr load(const std::string& tensor, std::vector<Expr> indices,
          std::shared_ptr<const OpNode> producer) {
  auto n = new_node(ExprKind::kLoad, DType::kFloat);
  n->name = tensor;
  n->producer = std::move(producer);
  n->args = std::move(indices);
  return Expr(std::move(n));
}

Expr reduce(ReduceKind kind, Expr source, std::vector<Var> axes) {
  for (const auto& a : axes)
    if (!a.defined() || a->kind != ExprKind::kVar || a->extent <= 0)
      throw LoomError("reduction over something that is not a reduce axis");
  auto n = new_node(ExprKind::kReduce, DType::kFloat);
  n->reduce_kind = kind;
  n->args = {cast(DType::kFloat, std::move(source))};
  n->reduce_axes = std::move(axes);
  return Expr(std::move(n));
}

std::shared_ptr<ExprNode> copy_node(const Expr& e) {
  auto n = std::make_shared<ExprNode>(*e);
  n->cached_hash = 0;
  n->simplified = false;
  return n;
}

Expr with_args(const Expr& e, std::vector<Expr> args) {
  auto n = copy_node(e);
  n->args = std::move(args);
  return Expr(std::move(n));
}

Expr operator+(Expr a, Expr b) {
  if (Expr f = fold(ExprKind::kAdd, a, b); f.defined()) return f;
  if (is_const_value(a, 0) && a->dtype == DType::kInt) return b;
  if (is_const_value(b, 0) && b->dtype == DType::kInt) return a;
  return make_binary(ExprKind::kAdd, a, b);
}
Expr operator-(Expr a, Expr b) {
  if (Expr f = fold(ExprKind::kSub, a, b); f.defined()) return f;
  if (is_const_value(b, 0) && b->dtype == DType::kInt) return a;
  return make_binary(ExprKind::kSub, a, b);
}
Expr operator*(Expr a, Expr b) {
  if (Expr f = fold(ExprKind::kMul, a, b); f.defined()) return f;
  if (a->dtype == DType::kInt && b->dtype == DType::kInt) {
    if (is_const_value(a, 1)) return b;
    if (is_const_value(b, 1)) return a;
    if (is_const_value(a, 0) || is_const_value(b, 0)) return int_imm(0);
  }
  return make_binary(ExprKind::kMul, a, b);
}
Expr operator/(Expr a, Expr b) {
  if (Expr f = fold(ExprKind::kDiv, a, b); f.defined()) return f;
  if (a->dtype == DType::kInt && is_const_value(b, 1)) return a;
  return make_binary(ExprKind::kDiv, a, b);
}
Expr operator%(Expr a, Expr b) {
  if (Expr f = fold(ExprKind::kMod, a, b); f.defined()) return f;
  if (a->dtype == DType::kInt && is_const_value(b, 1)) return int_imm(0);
  return make_binary(ExprKind::kMod, a, b);
}
Expr operator-(Expr a) {
  if (a->kind == ExprKind::kIntImm) return int_imm(-a->int_value);
  if (a->kind == ExprKind::kFloatImm) return float_imm(-a->float_value);
  if (a->dtype == DType::kFloat) return make_binary(ExprKind::kSub, float_imm(0.0), a);
  return make_binary(ExprKind::kSub, int_imm(0), a);
}
#define LOOM_CMP(OP, KIND)                                     \
  Expr operator OP(Expr a, Expr b) {                           \
    if (Expr f = fold(ExprKind::KIND, a, b); f.defined()) return f; \
    return make_binary(ExprKind::KIND, a, b);                  \
  }
LOOM_CMP(<, kLT)
LOOM_CMP(<=, kLE)
LOOM_CMP(>, kGT)
LOOM_CMP(>=, kGE)
LOOM_CMP(==, kEQ)
LOOM_CMP(!=, kNE)
#undef LOOM_CMP

Expr operator&&(Expr a, Expr b) {
  if (a->kind == ExprKind::kIntImm) return a->int_value ? b : bool_imm(false);
  if (b->kind == ExprKind::kIntImm) return b->int_value ? a : bool_imm(false);
  return make_binary(ExprKind::kAnd, a, b);
}
Expr operator||(Expr a, Expr b) {
  if (a->kind == ExprKind::kIntImm) return a->int_value ? bool_imm(true) : b;
  if (b->kind == ExprKind::kIntImm) return b->int_value ? bool_imm(true) : a;
  return make_binary(ExprKind::kOr, a, b);
}
Expr operator!(Expr a) {
  if (a->kind == ExprKind::kIntImm) return bool_imm(!a->int_value);
  return make_not(a);
}
Expr min(Expr a, Expr b) {
  if (Expr f = fold(ExprKind::kMin, a, b); f.defined()) return f;
  return make_binary(ExprKind::kMin, a, b);
}
Expr max(Expr a, Expr b) {
  if (Expr f = fold(ExprKind::kMax, a, b); f.defined()) return f;
  return make_binary(ExprKind::kMax, a, b);
}
Expr exp(Expr a) { return call("exp", {a}); }
Expr log(Expr a) { return call("log", {a}); }
Expr sqrt(Expr a) { return call("sqrt", {a}); }
Expr tanh(Expr a) { return call("tanh", {a}); }
Expr erf(Expr a) { return call("erf", {a}); }
Expr sigmoid(Expr a) { return call("sigmoid", {a}); }
Expr fabs(Expr a) { return call("fabs", {a}); }
Expr pow(Expr a, Expr b) { return call("pow", {a, b}); }
Expr sum(Expr source, std::vector<Var> axes) { return reduce(ReduceKind::kSum, source, axes); }
Expr max_reduce(Expr source, std::vector<Var> axes) { return reduce(ReduceKind::kMax, source, axes); }
Expr min_reduce(Expr source, std::vector<Var> axes) { return reduce(ReduceKind::kMin, source, axes); }

bool is_const_int(const Expr& e, int64_t* value) {
  if (!e.defined() || e->kind != ExprKind::kIntImm) return false;
  if (value) *value = e->int_value;
  return true;
}
bool is_const_value(const Expr& e, int64_t value) {
  return e.defined() && e->kind == ExprKind::kIntImm && e->int_value == value;
}

const char* reduce_kind_name(ReduceKind k) {
  switch (k) {
    case ReduceKind::kSum: return "sum";
    case ReduceKind::kMax: return "max";
    case ReduceKind::kMin: return "min";
  }
  return "?";
}

size_t structural_hash(const Expr& e) {
  // The cache may be filled by several threads at once (feature extraction
  // is parallel); they all store the same value, atomically.
  if (size_t cached = __atomic_load_n(&e->cached_hash, __ATOMIC_RELAXED)) return cached;
  size_t h = static_cast<size_t>(e->kind) * 0x9e3779b97f4a7c15ULL + static_cast<size_t>(e->dtype);
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  switch (e->kind) {
    case ExprKind::kIntImm: mix(std::hash<int64_t>()(e->int_value)); break;
    case ExprKind::kFloatImm: mix(std::hash<double>()(e->float_value)); break;
    case ExprKind::kVar: mix(std::hash<int64_t>()(e->var_id)); break;
    default: break;
  }
  if (!e->name.empty()) mix(std::hash<std::string>()(e->name));
  mix(static_cast<size_t>(e->reduce_kind));
  for (const auto& a : e->args) mix(structural_hash(a));
  for (const auto& a : e->reduce_axes) mix(structural_hash(a));
  if (h == 0) h = 1;
  __atomic_store_n(&e->cached_hash, h, __ATOMIC_RELAXED);
  return h;
}

int structural_compare(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return 0;
  if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
  if (a->dtype != b->dtype) return a->dtype < b->dtype ? -1 : 1;
  switch (a->kind) {
    case ExprKind::kIntImm:
      if (a->int_value != b->int_value) return a->int_value < b->int_value ? -1 : 1;
      return 0;
    case ExprKind::kFloatImm:
      if (a->float_value != b->float_value) return a->float_value < b->float_value ? -1 : 1;
      return 0;
    case ExprKind::kVar:
      if (a->var_id != b->var_id) return a->var_id < b->var_id ? -1 : 1;
      return 0;
    default: break;
  }
  if (int c = a->name.compare(b->name)) return c < 0 ? -1 : 1;
  if (a->reduce_kind != b->reduce_kind) return a->reduce_kind < b->reduce_kind ? -1 : 1;
  if (a->args.size() != b->args.size()) return a->args.size() < b->args.size() ? -1 : 1;
  for (size_t i = 0; i < a->args.size(); ++i)
    if (int c = structural_compare(a->args[i], b->args[i])) return c;
  if (a->reduce_axes.size() != b->reduce_axes.size())
    return a->reduce_axes.size() < b->reduce_axes.size() ? -1 : 1;
  for (size_t i = 0; i < a->reduce_axes.size(); ++i)
    if (int c = structural_compare(a->reduce_axes[i], b->reduce_axes[i])) return c;
  return 0;
}

bool structural_equal(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (structural_hash(a) != structural_hash(b)) return false;
  return structural_compare(a, b) == 0;
}

Expr mutate(const Expr& e, const std::function<Expr(const Expr&)>& fn) {
  if (Expr r = fn(e); r.defined()) return r;
  if (e->args.empty()) return e;
  std::vector<Expr> args;
  args.reserve(e->args.size());
  bool changed = false;
  for (const auto& a : e->args) {
    args.push_back(mutate(a, fn));
    changed |= !args.back().same_as(a);
  }
  if (!changed) return e;
  return with_args(e, std::move(args));
}

void visit(const Expr& e, const std::function<void(const Expr&)>& fn) {
  fn(e);
  for (const auto& a : e->args) visit(a, fn);
}

Expr substitute(const Expr& e, const std::vector<std::pair<Var, Expr>>& map) {
  if (map.empty()) return e;
  return mutate(e, [&](const Expr& x) -> Expr {
    if (x->kind != ExprKind::kVar) return Expr();
    for (const auto& [v, r] : map)
      if (v->var_id == x->var_id) return r;
    return x;
  });
}

bool uses_var(const Expr& e, const Var& v) {
  bool found = false;
  visit(e, [&](const Expr& x) {
    if (x->kind == ExprKind::kVar && x->var_id == v->var_id) found = true;
  });
  return found;
}

const char* infix_symbol(ExprKind k) {
  switch (k) {
    case ExprKind::kAdd: return "+";
    case ExprKind::kSub: return "-";
    case ExprKind::kMul: return "*";
    case ExprKind::kDiv: return "/";
    case ExprKind::kMod: return "%";
    case ExprKind::kEQ: return "==";
    case ExprKind::kNE: return "!=";
    case ExprKind::kLT: return "<";
    case ExprKind::kLE: return "<=";
    case ExprKind::kGT: return ">";
    case ExprKind::kGE: return ">=";
    case ExprKind::kAnd: return "&&";
    case ExprKind::kOr: return "||";
    default: return nullptr;
  }
}

namespace {
void print(std::ostream& os, const Expr& e) {
  switch (e->kind) {
    case ExprKind::kIntImm:
      if (e->dtype == DType::kBool) os << (e->int_value ? "true" : "false");
      else os << e->int_value;
      return;
    case ExprKind::kFloatImm: {
      std::ostringstream s;
      s.precision(9);
      s << e->float_value;
      std::string t = s.str();
      if (t.find_first_of(".eEn") == std::string::npos) t += ".0";
      os << t << "f";
      return;
    }
    case ExprKind::kVar: os << e->name; return;
    case ExprKind::kMin:
    case ExprKind::kMax:
      os << (e->kind == ExprKind::kMin ? "min(" : "max(");
      print(os, e->args[0]);
      os << ", ";
      print(os, e->args[1]);
      os << ")";
      return;
    case ExprKind::kNot: os << "!("; print(os, e->args[0]); os << ")"; return;
    case ExprKind::kSelect:
      os << "select(";
      for (size_t i = 0; i < 3; ++i) { if (i) os << ", "; print(os, e->args[i]); }
      os << ")";
      return;
    case ExprKind::kCast:
      os << (e->dtype == DType::kFloat ? "float(" : e->dtype == DType::kInt ? "int(" : "bool(");
      print(os, e->args[0]);
      os << ")";
      return;
    case ExprKind::kCall:
    case ExprKind::kLoad:
      os << e->name << (e->kind == ExprKind::kLoad ? "[" : "(");
      for (size_t i = 0; i < e->args.size(); ++i) { if (i) os << ", "; print(os, e->args[i]); }
      os << (e->kind == ExprKind::kLoad ? "]" : ")");
      return;
    case ExprKind::kReduce:
      os << reduce_kind_name(e->reduce_kind) << "(";
      print(os, e->args[0]);
      os << ", axis=[";
      for (size_t i = 0; i < e->reduce_axes.size(); ++i)
        os << (i ? ", " : "") << e->reduce_axes[i]->name;
      os << "])";
      return;
    default:
      os << "(";
      print(os, e->args[0]);
      if (const char* op = infix_symbol(e->kind)) {
        const bool tight = e->kind == ExprKind::kMul || e->kind == ExprKind::kDiv;
        os << (tight ? "" : " ") << op << (tight ? "" : " ");
      } else {
        os << "?";
      }
      print(os, e->args[1]);
      os << ")";
      return;
  }
}
}  // namespace

std::string to_string(const Expr& e) {
  if (!e.defined()) return "<undef>";
  std::ostringstream os;
  print(os, e);
  return os.str();
}

}  // namespace loom
