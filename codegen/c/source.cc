#include "codegen/c/source.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>
#include <unordered_map>

#include "codegen/c/emitter.h"
#include "codegen/passes/lane_analysis.h"
#include "codegen/passes/unrolling.h"
#include "codegen/passes/cpu_loop_passes.h"
#include "ir/error.h"
#include "ir/simplify.h"

namespace loom {

namespace {

// The C unit's headers and the definition of LOOM_HELPER, before the helpers.
const char* kPrelude = R"C(#define _POSIX_C_SOURCE 200112L
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define LOOM_HELPER static inline __attribute__((unused))
#if defined(__clang__)
#define LOOM_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#else
#define LOOM_IVDEP _Pragma("GCC ivdep")
#endif

)C";

const char* kAlloc = R"C(LOOM_HELPER void* loom_alloc(size_t bytes) {
  void* p = NULL;
  if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) abort();
  return p;
}
)C";

}  // namespace

namespace c_backend {

const std::set<std::string>& reserved_identifiers() {
  static const std::set<std::string> kReserved = {
      // C99 keywords
      "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
      "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
      "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
      "union", "unsigned", "void", "volatile", "while", "_Bool", "_Complex", "_Imaginary",
      // names the emitted code relies on
      "args", "int64_t", "int32_t", "size_t", "NULL", "INFINITY", "NAN", "INT64_MIN", "INT64_C", "free",
      "abort", "posix_memalign", "expf", "logf", "sqrtf", "tanhf", "erff", "fabsf", "powf",
      "floorf", "ceilf", "fmaf", "main", "bool", "true", "false", "LOOM_HELPER", "LOOM_VHELPER",
      "LOOM_IVDEP"};
  return kReserved;
}

namespace {

// True if the (int) expression has no variable or load leaf: C would then
// evaluate it in `int`, which may overflow.
bool is_constant_tree(const Expr& e) {
  bool constant = true;
  visit(e, [&](const Expr& x) {
    if (x->kind == ExprKind::kVar || x->kind == ExprKind::kLoad || x->kind == ExprKind::kCall ||
        x->kind == ExprKind::kCast)
      constant = false;
  });
  return constant;
}

}  // namespace

// Scalar math the vector-code C writes as its own helpers (c_scalar_math_helpers):
// the vector math's algorithms, and sqrt without errno (sqrtf may set errno,
// so a compiler without -fno-math-errno neither hoists nor vectorizes it; the
// JIT's sqrt intrinsic is hoisted out of the loops that do not change it).
bool has_inline_math(const std::string& fn) {
  return fn == "exp" || fn == "log" || fn == "tanh" || fn == "erf" || fn == "sigmoid" || fn == "sqrt";
}

std::string math_call(const std::string& fn, const std::vector<std::string>& a, bool inline_math) {
  if (inline_math && has_inline_math(fn) && a.size() == 1) return "loom_f32_" + fn + "(" + a[0] + ")";
  static const std::unordered_map<std::string, std::string> kUnary = {
      {"exp", "expf"}, {"log", "logf"}, {"sqrt", "sqrtf"}, {"tanh", "tanhf"}, {"erf", "erff"},
      {"fabs", "fabsf"}, {"sigmoid", "loom_sigmoidf"}, {"floor", "floorf"}, {"ceil", "ceilf"}};
  auto it = kUnary.find(fn);
  if (it != kUnary.end() && a.size() == 1) return it->second + "(" + a[0] + ")";
  if (fn == "pow" && a.size() == 2) return "powf(" + a[0] + ", " + a[1] + ")";
  throw LoomError("C backend: unsupported call " + fn + " with " + std::to_string(a.size()) +
                  " argument(s)");
}

std::string int_literal(int64_t v) {
  if (v == INT64_MIN) return "INT64_MIN";
  std::string s = std::to_string(v);
  if (v > INT32_MAX || v < INT32_MIN) s = "INT64_C(" + s + ")";
  return v < 0 ? "(" + s + ")" : s;
}

std::string float_literal(double d) {
  float v = static_cast<float>(d);
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "(-INFINITY)";
  char buf[64];
  std::string s;
  for (int prec = 1; prec <= 9 && s.empty(); ++prec) {
    std::snprintf(buf, sizeof(buf), "%.*g", prec, static_cast<double>(v));
    for (char* c = buf; *c; ++c)
      if (*c == ',') *c = '.';  // a non-C locale's decimal point
    float back = std::strtof(buf, nullptr);
    if (std::memcmp(&back, &v, sizeof(float)) == 0) s = buf;
  }
  if (s.empty()) {
    std::snprintf(buf, sizeof(buf), "%a", static_cast<double>(v));
    s = buf;
  } else if (s.find_first_of(".eE") == std::string::npos) {
    s += ".0";
  }
  s += "f";
  return std::signbit(v) ? "(" + s + ")" : s;
}

std::string ExprPrinter::print(const Expr& e) {
  if (!e.defined()) throw LoomError("C backend: undefined expression");
  const ExprNode& n = *e;
  switch (n.kind) {
    case ExprKind::kIntImm:
      return n.dtype == DType::kBool ? (n.int_value ? "1" : "0") : int_literal(n.int_value);
    case ExprKind::kFloatImm: return float_literal(n.float_value);
    case ExprKind::kVar:
      return names_.var ? names_.var(e) : sanitize_c_identifier(n.name) + "_" + std::to_string(n.var_id);
    case ExprKind::kDiv:
    case ExprKind::kMod: return print_div_mod(n);
    case ExprKind::kMin:
    case ExprKind::kMax: {
      bool is_min = n.kind == ExprKind::kMin;
      const char* fn = n.dtype == DType::kFloat ? (is_min ? "loom_minf" : "loom_maxf")
                                                : (is_min ? "loom_mini" : "loom_maxi");
      return std::string(fn) + "(" + print(n.args[0]) + ", " + print(n.args[1]) + ")";
    }
    case ExprKind::kNot: return "(!" + print(n.args[0]) + ")";
    case ExprKind::kSelect:
      return "(" + print(n.args[0]) + " ? " + print(n.args[1]) + " : " + print(n.args[2]) + ")";
    case ExprKind::kCast: {
      std::string a = print(n.args[0]);
      if (n.dtype == DType::kFloat) return "((float)" + a + ")";
      if (n.dtype == DType::kInt) return "((int64_t)" + a + ")";
      return "(" + a + " != 0)";
    }
    case ExprKind::kCall: {
      std::vector<std::string> a;
      for (const auto& x : n.args) a.push_back(print(x));
      return math_call(n.name, a, inline_math_);
    }
    case ExprKind::kLoad:
      if (n.args.size() != 1)
        throw LoomError("C backend: load of " + n.name + " must have one flat index, has " +
                        std::to_string(n.args.size()));
      if (load_) return load_(n, buffer(n.name), print(n.args[0]));
      return buffer(n.name) + "[" + print(n.args[0]) + "]";
    case ExprKind::kReduce:
      throw LoomError("C backend: reduction left in a lowered expression: " + to_string(e));
    default: break;
  }
  const char* op = infix_symbol(n.kind);
  if (!op || n.args.size() != 2) throw LoomError("C backend: unsupported expression " + to_string(e));
  std::string a = print(n.args[0]), b = print(n.args[1]);
  // Keep all-constant int arithmetic in 64 bits.
  if (n.dtype == DType::kInt && is_constant_tree(n.args[0]) && is_constant_tree(n.args[1]))
    a = "((int64_t)" + a + ")";
  return "(" + a + " " + op + " " + b + ")";
}

std::string ExprPrinter::buffer(const std::string& name) {
  return names_.buffer ? names_.buffer(name) : sanitize_c_identifier(name);
}

std::string ExprPrinter::print_div_mod(const ExprNode& n) {
  bool is_div = n.kind == ExprKind::kDiv;
  std::string a = print(n.args[0]), b = print(n.args[1]);
  if (n.dtype == DType::kFloat)
    return is_div ? "(" + a + " / " + b + ")" : "loom_floormodf(" + a + ", " + b + ")";
  if (provably_non_negative(n.args[0]) && const_int_bound(n.args[1]).min > 0)
    return "(" + a + (is_div ? " / " : " % ") + b + ")";
  return std::string(is_div ? "loom_floordiv(" : "loom_floormod(") + a + ", " + b + ")";
}

}  // namespace c_backend

std::string sanitize_c_identifier(const std::string& name) {
  std::string s;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    s += ok ? c : '_';
  }
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) s = "v" + s;
  if (s.compare(0, 5, "loom_") == 0) s = "u_" + s;  // helper namespace
  if (s[0] == '_') s = "u" + s;  // reserved-ish names (__x, _X) are the implementation's
  if (c_backend::reserved_identifiers().count(s)) s += "_";
  return s;
}

const char* c_helper_functions() {
  // Integer min/max/floordiv are functions, not macros, so operands are
  // evaluated once; float min/max follow std::min / std::max (which the
  // constant folder and the reference evaluator use).
  return R"C(LOOM_HELPER int64_t loom_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return ((a % b != 0) && ((a < 0) != (b < 0))) ? q - 1 : q;
}
LOOM_HELPER int64_t loom_floormod(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
LOOM_HELPER int64_t loom_mini(int64_t a, int64_t b) { return b < a ? b : a; }
LOOM_HELPER int64_t loom_maxi(int64_t a, int64_t b) { return a < b ? b : a; }
LOOM_HELPER float loom_minf(float a, float b) { return b < a ? b : a; }
LOOM_HELPER float loom_maxf(float a, float b) { return a < b ? b : a; }
LOOM_HELPER float loom_floormodf(float a, float b) { return a - floorf(a / b) * b; }
LOOM_HELPER float loom_sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }
)C";
}

std::string c_function_name(const LoweredFunc& f) {
  return f.name.empty() ? std::string("loom_func") : sanitize_c_identifier(f.name);
}

std::string to_c_expr(const Expr& e, const CNames& names) { return c_backend::ExprPrinter(names).print(e); }

std::string emit_c_source(const LoweredFunc& f, const CSourceOptions& opts) {
  // With vector code, the loop rewrites of the JIT (codegen/passes/cpu_loop_passes.h).
  if (opts.vector_width > 0) return c_backend::CEmitter(prepare_cpu_loops(f, opts.vector_width), opts).run();
  return c_backend::CEmitter(f, opts).run();
}

namespace c_backend {

namespace {

// Loop steps of a nest (for auto-unroll decisions): stores count 1, loops
// multiply by their extent.
int64_t nest_steps(const Stmt& s) {
  if (!s) return 0;
  switch (s->kind) {
    case StmtKind::kStore: return 1;
    case StmtKind::kFor: {
      int64_t b = nest_steps(s->body[0]);
      return (b > 0 && s->extent > INT64_MAX / b) ? INT64_MAX : s->extent * b;
    }
    default: {
      int64_t total = 0;
      for (const auto& c : s->body) {
        int64_t x = nest_steps(c);
        total = (x > INT64_MAX - total) ? INT64_MAX : total + x;
      }
      return total;
    }
  }
}

}  // namespace

CEmitter::CEmitter(const LoweredFunc& f, const CSourceOptions& opts) : f_(f), opts_(opts) {
  const int w = opts.vector_width;
  if (w != 0 && w != 2 && w != 4 && w != 8 && w != 16)
    throw LoomError("C backend: vector_width must be 0, 2, 4, 8 or 16, not " + std::to_string(w));
  fn_name_ = c_function_name(f);
  used_ = reserved_identifiers();
  used_.insert(fn_name_);
  used_.insert(fn_name_ + "_packed");
  for (const auto& b : f.args) declare_buffer_name(b.name);
  for (const auto& b : f.temps) declare_buffer_name(b.name);
  names_.var = [this](const Expr& v) {
    auto it = var_names_.find(v->var_id);
    if (it == var_names_.end() || !bound_.count(v->var_id))
      throw LoomError("C backend: variable " + v->name + " (id " + std::to_string(v->var_id) +
                      ") is not bound by an enclosing loop");
    return it->second;
  };
  names_.buffer = [this](const std::string& b) {
    auto it = buffer_names_.find(b);
    if (it == buffer_names_.end() || !live_buffers_.count(b))
      throw LoomError("C backend: buffer " + b + " is neither an argument nor allocated here");
    return it->second;
  };
}

std::string CEmitter::run() {
  std::ostringstream sig;
  sig << "void " << fn_name_ << "(";
  for (size_t i = 0; i < f_.args.size(); ++i) {
    sig << (i ? ", " : "") << "float* restrict " << buffer_names_.at(f_.args[i].name);
    live_buffers_.insert(f_.args[i].name);
  }
  if (f_.args.empty()) sig << "void";
  sig << ")";
  indent_ = 1;
  if (f_.body) stmt(f_.body);

  std::ostringstream head;
  head << "// Generated by Loom (C backend): " << f_.name << "\n";
  for (const auto& b : f_.args) head << "//   arg  " << describe(b) << "\n";
  for (const auto& b : f_.temps) head << "//   temp " << describe(b) << "\n";
  bool scalar_math = false;
  if (opts_.vector_width > 0) {
    visit_stmt(f_.body, [&](const Stmt& s) {
      for (const Expr* e : {&s->index, &s->value, &s->cond})
        if (e->defined())
          visit(*e, [&](const Expr& x) { scalar_math |= x->kind == ExprKind::kCall && has_inline_math(x->name); });
    });
  }
  head << kPrelude;
  if (!vector_widths_.empty() || scalar_math || loop_hints_) head << c_vector_prelude();
  if (loop_hints_) head << c_loop_hint(opts_.vector_width);
  head << c_helper_functions() << kAlloc << "\n";
  if (scalar_math) head << c_scalar_math_helpers() << "\n";
  for (int w : vector_widths_) head << c_vector_helpers(w, math_widths_.count(w) > 0) << "\n";
  if (opts_.parallel == CParallel::kRuntime)
    head << "void loom_parallel_for(int64_t extent, void (*body)(int64_t, int64_t, void*), void* closure,\n"
            "                       int32_t num_threads);\n\n";
  for (const auto& fn : outlined_) head << fn << "\n";
  head << sig.str() << " {\n" << body_.str() << "}\n\n";
  head << "void " << fn_name_ << "_packed(float** args) {\n";
  if (f_.args.empty()) head << "  (void)args;\n";
  head << "  " << fn_name_ << "(";
  for (size_t i = 0; i < f_.args.size(); ++i) head << (i ? ", " : "") << "args[" << i << "]";
  head << ");\n}\n";
  return head.str();
}

std::string CEmitter::describe(const Buffer& b) {
  std::string s = b.name + " [";
  for (size_t i = 0; i < b.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(b.shape[i]);
  return s + "] " + buffer_scope_name(b.scope);
}

std::string CEmitter::unique(const std::string& base, int64_t id) {
  std::string s = base;
  if (used_.count(s)) s = base + "_" + std::to_string(id);
  for (int k = 2; used_.count(s); ++k) s = base + "_" + std::to_string(id) + "_" + std::to_string(k);
  used_.insert(s);
  return s;
}

std::string CEmitter::fresh(const std::string& what) { return "loom_" + what + std::to_string(num_fresh_++); }

void CEmitter::declare_buffer_name(const std::string& name) {
  if (buffer_names_.count(name)) return;
  buffer_names_[name] = unique(sanitize_c_identifier(name), static_cast<int64_t>(buffer_names_.size()));
}

const std::string& CEmitter::var_name(const Var& v) {
  auto it = var_names_.find(v->var_id);
  if (it != var_names_.end()) return it->second;
  return var_names_[v->var_id] = unique(sanitize_c_identifier(v->name), v->var_id);
}

Expr CEmitter::bound(const Expr& e) const {
  if (!e.defined()) return e;
  Expr r = e;
  if (chunk_ && chunk_->source.defined()) r = substitute(r, {{chunk_->source, chunk_->var}});
  if (consts_.empty()) return r;
  return mutate(substitute(r, consts_), [](const Expr& x) -> Expr {
    if (x->kind != ExprKind::kLoad || x->args.size() != 1) return Expr();
    return with_args(x, {simplify(x->args[0])});
  });
}

std::string CEmitter::expr(const Expr& e) { return printer(names_).print(bound(e)); }

void CEmitter::stmt(const Stmt& s) {
  if (!s) return;
  switch (s->kind) {
    case StmtKind::kSeq:
      for (const auto& c : s->body) stmt(c);
      return;
    case StmtKind::kStore: store(s); return;
    case StmtKind::kIf: if_stmt(s); return;
    case StmtKind::kAllocate: allocate(s); return;
    case StmtKind::kFor: loop(s); return;
  }
  throw LoomError("C backend: unknown statement kind");
}

void CEmitter::block(const Stmt& s) {
  ++indent_;
  stmt(s);
  --indent_;
}

void CEmitter::store(const Stmt& s) {
  if (chunk_) {
    vstore(s);
    return;
  }
  const Expr index = consts_.empty() ? s->index : simplify(bound(s->index));
  const std::string buf = names_.buffer(s->buffer);
  const std::string text = printer(names_).print(index);
  const std::string value = expr(s->value);
  const std::string slot = access(s->buffer, index, text, 1, true, true);
  line((slot.empty() ? buf + "[" + text + "]" : slot) + " = " + value + ";");
}

void CEmitter::if_stmt(const Stmt& s) {
  if (chunk_) {
    CVal c = vconvert(vexpr(bound(s->cond)), s->cond->dtype, DType::kBool);
    if (c.vec) {
      vif(s, c.c);
      return;
    }
    line("if (" + c.c + ") {");
  } else {
    line("if (" + expr(s->cond) + ") {");
  }
  block(s->body.empty() ? nullptr : s->body[0]);
  if (s->body.size() > 1 && s->body[1]) {
    line("} else {");
    block(s->body[1]);
  }
  line("}");
}

void CEmitter::allocate(const Stmt& s) {
  const Buffer* buf = nullptr;
  for (const auto& t : f_.temps)
    if (t.name == s->buffer) buf = &t;
  if (!buf) throw LoomError("C backend: allocation of unknown temp buffer " + s->buffer);
  int64_t n = std::max<int64_t>(buf->size(), 1);
  bool on_stack = n * static_cast<int64_t>(sizeof(float)) <= opts_.max_stack_bytes;
  if (opts_.unroll_at_emission && on_stack && !rec_) {
    // A small temp accessed only in whole parts at constant indices (a
    // register tile whose loops unroll): variables, as LLVM's SROA makes it.
    std::vector<CSlot> slots = plan_variables(s, *buf);
    if (!slots.empty()) {
      temp_as_variables(s, *buf, std::move(slots));
      return;
    }
  }
  const std::string& name = buffer_names_.at(buf->name);
  bool was_live = live_buffers_.count(buf->name) > 0;
  line("{  // allocate " + describe(*buf));
  ++indent_;
  if (on_stack) {
    line("float " + name + "[" + std::to_string(n) + "] __attribute__((aligned(64)));");
  } else {
    line("float* restrict " + name + " = (float*)loom_alloc(sizeof(float) * (size_t)" +
         int_literal(n) + ");");
  }
  live_buffers_.insert(buf->name);
  if (!s->body.empty()) stmt(s->body[0]);
  if (!on_stack) line("free(" + name + ");");
  if (!was_live) live_buffers_.erase(buf->name);
  --indent_;
  line("}");
}

void CEmitter::loop(const Stmt& s) {
  const Var& v = s->loop_var;
  if (!v.defined() || v->kind != ExprKind::kVar) throw LoomError("C backend: loop without a variable");
  int64_t saved_unroll = unroll_budget_;
  if (s->auto_unroll_max_step > 0) unroll_budget_ = s->auto_unroll_max_step;
  int64_t ext = s->extent;
  if (transposing_copy(s)) {
    unroll_budget_ = saved_unroll;
    return;
  }
  switch (s->for_kind) {
    case ForKind::kParallel:
      // Nested parallel loops and those inside a vector chunk run serially.
      if (chunk_ || in_parallel_ || rec_ || opts_.parallel == CParallel::kSerial) {
        serial_loop(s, "/* parallel (emitted serial) */");
      } else if (opts_.parallel == CParallel::kOpenMP) {
        openmp_loop(s);
      } else {
        outlined_loop(s);
      }
      break;
    case ForKind::kVectorized:
      if (opts_.vector_width > 0 && !chunk_) {
        vectorized_loop(s);
      } else {
        serial_loop(s, opts_.ivdep ? "LOOM_IVDEP" : "/* vectorized */");
      }
      break;
    default: {
      std::string note = s->for_kind == ForKind::kSerial || s->for_kind == ForKind::kUnrolled
                             ? ""
                             : std::string("/* bound to ") + for_kind_name(s->for_kind) + " (emitted serial) */";
      if (opts_.unroll_at_emission && (force_unroll_ || unrolled_at_emission(s, unroll_budget_))) {
        unrolled_loop(s);
      } else if (opts_.vector_width > 0 && !chunk_ && iterations_independent(s)) {
        vectorized_loop(s);  // as the JIT's LLVM vectorizes it
      } else if (opts_.unroll_at_emission) {
        serial_loop(s, note);
      } else if (s->for_kind == ForKind::kUnrolled) {
        serial_loop(s, "#pragma GCC unroll " + std::to_string(std::max<int64_t>(1, std::min<int64_t>(ext, 65534))));
      } else if (s->for_kind == ForKind::kSerial && unroll_budget_ > 0 && ext > 1 &&
                 nest_steps(s) <= unroll_budget_) {
        serial_loop(s, "#pragma GCC unroll " + std::to_string(std::min<int64_t>(ext, 65534)));
      } else {
        serial_loop(s, note);
      }
    }
  }
  unroll_budget_ = saved_unroll;
}

void CEmitter::serial_loop(const Stmt& s, const std::string& pragma) {
  const Var& v = s->loop_var;
  if (opts_.unroll_at_emission && s->extent == 1) {
    // As the LLVM backend: a one-iteration loop is its body with var = 0.
    consts_.push_back({v, int_imm(0)});
    stmt(s->body.empty() ? nullptr : s->body[0]);
    consts_.pop_back();
    return;
  }
  if (rec_) rec_->loop = true;
  if (opts_.unroll_at_emission && !rec_ && s->extent > 1) {
    // A register tile: small inner loops unrolled, the accumulators they
    // update kept in variables across this loop. The JIT gets the same from
    // LLVM's loop unroller and LICM; C compilers do not reliably find it.
    const int64_t steps = s->body.empty() ? 0 : nest_steps_vectorized(s->body[0]);
    const bool force = steps <= kMaxTileSteps;
    std::vector<CSlot> slots = plan_slots(s, force);
    if (!slots.empty()) {
      promoted_loop(s, pragma, std::move(slots), force);
      return;
    }
  }
  plain_loop(s, pragma);
}

void CEmitter::plain_loop(const Stmt& s, const std::string& pragma) {
  const Var& v = s->loop_var;
  const std::string& name = var_name(v);
  if (!pragma.empty()) line(pragma);
  if (pragma.empty() && opts_.vector_width > 0 && !chunk_ && innermost(s)) {
    line("LOOM_VECTORIZE_LOOP");
    loop_hints_ = true;
  }
  line("for (int64_t " + name + " = 0; " + name + " < " + int_literal(s->extent) + "; ++" + name + ") {");
  bool was_bound = bound_.count(v->var_id) > 0;
  bound_.insert(v->var_id);
  block(s->body.empty() ? nullptr : s->body[0]);
  if (!was_bound) bound_.erase(v->var_id);
  line("}");
}

bool CEmitter::innermost(const Stmt& loop) {
  bool inner_loop = false;
  visit_stmt(loop->body.empty() ? nullptr : loop->body[0], [&](const Stmt& x) { inner_loop |= x->kind == StmtKind::kFor; });
  return !inner_loop;
}

void CEmitter::unrolled_loop(const Stmt& s) {
  for (int64_t i = 0; i < s->extent; ++i) {
    consts_.push_back({s->loop_var, int_imm(i)});
    stmt(s->body.empty() ? nullptr : s->body[0]);
    consts_.pop_back();
  }
}
}  // namespace c_backend
}  // namespace loom
