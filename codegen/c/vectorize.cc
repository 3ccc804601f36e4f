// Vectorized loops of the C backend as explicit vector code, with the LLVM
// backend's semantics (codegen/llvm/vectorize.cc, expr_emitter.cc):
//
// A kVectorized loop of extent E that can_vectorize at width W becomes
// floor(E/W) chunks of W lanes (unrolled when at most kMaxUnrolledChunks,
// else a loop over chunks) and one chunk for the remainder. GCC/Clang
// vectors have power-of-two lanes: a remainder of another size is a chunk of
// the next power of two whose extra lanes are masked off (as LLVM widens the
// JIT's <14 x float> to 16 lanes); a one-lane chunk is scalar code. In a
// chunk every expression is uniform (scalar C) or varying (a vector of
// c_vector_type), the loop variable being base + {0, 1, ...}. Loads and
// stores follow classify_index: contiguous lanes -> one unaligned vector
// access at lane 0's index, constant per chunk -> a scalar load, otherwise
// a gather/scatter (a stride-2 load without a mask: two vector loads and a
// shuffle). Varying guards and select conditions become masks, and
// every access under a mask is masked. Int values are int64 lanes, or int32
// lanes where their bounds prove every intermediate value fits.
#include <cmath>
#include <string>

#include "codegen/c/emitter.h"
#include "codegen/passes/lane_analysis.h"
#include "ir/error.h"
#include "ir/simplify.h"

namespace loom {
namespace c_backend {

namespace {

// Chunk loops with at most this many full chunks are unrolled at emission.
constexpr int64_t kMaxUnrolledChunks = 4;

bool is_float_mul(const Expr& e) {
  return e->kind == ExprKind::kMul && e->dtype == DType::kFloat && e->args[0]->dtype == DType::kFloat &&
         e->args[1]->dtype == DType::kFloat;
}

// log2(c) when c is a positive power of two, else -1.
int exact_log2(int64_t c) {
  if (c <= 0 || (c & (c - 1)) != 0) return -1;
  int k = 0;
  while ((int64_t{1} << k) < c) ++k;
  return k;
}

// Whether every value of the int expression fits in int32: vector code may
// then compute it in int32 lanes (half the width, and compares GCC compiles
// well; 16 int64 lanes exceed a 512-bit register).
bool fits_i32(const Expr& e) {
  const IntBound b = const_int_bound(e);
  return b.min >= INT32_MIN && b.max <= INT32_MAX;
}

}  // namespace

// ---------------------------------------------------------------- chunking

void CEmitter::vectorized_loop(const Stmt& s) {
  const int64_t extent = s->extent;
  const int w = opts_.vector_width;
  if (extent == 1 || !can_vectorize(s, w)) {
    serial_loop(s, opts_.ivdep ? "LOOM_IVDEP" : "/* vectorized (emitted scalar) */");
    return;
  }
  if (extent <= w) {
    vector_chunk(s, "0", true, 0, static_cast<int>(extent));
    return;
  }
  const int64_t full = extent / w, tail = extent % w;
  if (full <= kMaxUnrolledChunks) {
    for (int64_t c = 0; c < full; ++c) vector_chunk(s, int_literal(c * w), true, c * w, w);
  } else {
    if (rec_) rec_->loop = true;
    const std::string chunk = fresh("chunk"), base = fresh("base");
    line("for (int64_t " + chunk + " = 0; " + chunk + " < " + int_literal(full) + "; ++" + chunk + ") {");
    ++indent_;
    line("const int64_t " + base + " = " + chunk + " * " + std::to_string(w) + ";");
    vector_chunk(s, base, false, 0, w);
    --indent_;
    line("}");
  }
  if (tail > 0) vector_chunk(s, int_literal(full * w), true, full * w, static_cast<int>(tail));
}

void CEmitter::vector_chunk(const Stmt& s, const std::string& base, bool base_is_const, int64_t base_value,
                            int valid) {
  const Stmt& body = s->body[0];
  // A tail of, say, 14 lanes is one 16-lane chunk with 2 lanes masked off,
  // as the JIT's <14 x float> operations become 16-lane ones: a third of the
  // operations of 8 + 4 + 2 lanes, and no 2-lane vectors.
  const int width = vector_lanes(valid);
  if (width == 1) {  // scalar code for one lane
    if (base_is_const) {
      consts_.push_back({s->loop_var, int_imm(base_value)});
      stmt(body);
      consts_.pop_back();
      return;
    }
    line("{");
    ++indent_;
    line("const int64_t " + var_name(s->loop_var) + " = " + base + ";");
    bound_.insert(s->loop_var->var_id);
    stmt(body);
    bound_.erase(s->loop_var->var_id);
    --indent_;
    line("}");
    return;
  }
  CChunk chunk;
  chunk.var = s->loop_var;
  chunk.width = width;
  chunk.valid = valid;
  chunk.extent = s->extent;
  chunk.vector_width = opts_.vector_width;
  chunk.base = base;
  chunk.base_is_const = base_is_const;
  chunk.base_value = base_value;
  vector_widths_.insert(width);
  if (valid < width) {  // a masked tail (tails start at a constant)
    chunk.tail_mask = fresh("tail");
    chunk.mask = chunk.tail_mask;
    chunk.source = s->loop_var;
    chunk.var = make_var(s->loop_var->name, base_value + width);
  }
  CChunk* saved = chunk_;
  chunk_ = &chunk;
  if (!chunk.tail_mask.empty())
    line("const " + vtype(DType::kBool) + " " + chunk.tail_mask + " __attribute__((unused)) = " +
         lane_prefix_mask(width, valid) + ";");
  stmt(body);
  chunk_ = saved;
}

int vector_lanes(int valid) {
  int lanes = 1;
  while (lanes < valid) lanes *= 2;
  return lanes;
}

std::string lane_prefix_mask(int lanes, int valid) {
  std::string s = "(" + c_vector_type(DType::kBool, lanes) + "){";
  for (int k = 0; k < lanes; ++k) s += std::string(k ? ", " : "") + (k < valid ? "-1" : "0");
  return s + "}";
}

// ---------------------------------------------------------------- helpers

std::string CEmitter::vfn(const std::string& op, DType t) const { return vtype(t) + "_" + op; }

std::string CEmitter::ivfn(const std::string& op, bool narrow) const {
  return vtype(narrow ? DType::kBool : DType::kInt) + "_" + op;
}

std::string CEmitter::wint(const CVal& v, bool narrow) {
  if (!v.vec) return narrow ? ivfn("splat", true) + "((int32_t)" + v.c + ")" : ivfn("splat", false) + "(" + v.c + ")";
  if (v.narrow && !narrow) return vfn("wide", DType::kInt) + "(" + v.c + ")";
  return v.c;
}

std::string CEmitter::widen(const CVal& v, DType t) {
  if (v.vec) return v.c;
  if (t == DType::kBool) return vfn("bool", DType::kBool) + "(" + v.c + ")";
  return vfn("splat", t) + "(" + v.c + ")";
}

CNames CEmitter::lane_base_names() {
  CNames n = names_;
  const int64_t id = chunk_->var->var_id;
  const std::string base = chunk_->base;
  n.var = [this, id, base](const Expr& v) { return v->var_id == id ? base : names_.var(v); };
  return n;
}

std::string CEmitter::vscalar(const Expr& e, Expr* at) {
  if (chunk_->base_is_const) {
    Expr x = simplify(substitute(e, {{chunk_->var, int_imm(chunk_->base_value)}}));
    if (at) *at = x;
    return printer(names_).print(x);
  }
  if (at) *at = e;
  CNames names = lane_base_names();
  return printer(names).print(e);
}

// ---------------------------------------------------------------- expressions

CVal CEmitter::vexpr(const Expr& e) {
  if (!e.defined()) throw LoomError("C backend: undefined expression");
  if (!uses_var_id(e, chunk_->var->var_id)) return {printer(names_).print(e), false};
  const ExprNode& n = *e;
  switch (n.kind) {
    case ExprKind::kVar: {
      const bool narrow = fits_i32(e);
      return {ivfn("lanes", narrow) + "(" + chunk_->base + ")", true, narrow};
    }
    case ExprKind::kNot: {
      CVal a = vconvert(vexpr(n.args[0]), n.args[0]->dtype, DType::kBool);
      return {a.vec ? "(~" + a.c + ")" : "(!" + a.c + ")", a.vec};
    }
    case ExprKind::kSelect: return vselect(n);
    case ExprKind::kCast: return vconvert(vexpr(n.args[0]), n.args[0]->dtype, n.dtype);
    case ExprKind::kCall: return vcall(n);
    case ExprKind::kLoad: return vload(n);
    case ExprKind::kReduce:
      throw LoomError("C backend: reduction left in a lowered expression: " + to_string(e));
    default: break;
  }
  if (is_binary(n.kind) && n.args.size() == 2) return vbinary(e);
  throw LoomError("C backend: unsupported expression " + to_string(e));
}

CVal CEmitter::vconvert(CVal v, DType from, DType to) {
  if (from == to) return v;
  if (!v.vec) {
    if (to == DType::kFloat) return {"((float)" + v.c + ")", false};
    if (to == DType::kInt) return {"((int64_t)" + v.c + ")", false};
    return {"(" + v.c + " != 0)", false};
  }
  const std::string mask = vtype(DType::kBool);
  switch (to) {
    case DType::kFloat:  // bool lanes are -1/0: negated, 1/0
      return {"__builtin_convertvector(" + (from == DType::kBool ? "-(" + v.c + ")" : v.c) + ", " + vtype(to) + ")",
              true};
    case DType::kInt:
      if (from == DType::kBool) return {"(-(" + v.c + "))", true, true};  // int32 lanes 0/1
      return {"__builtin_convertvector(" + v.c + ", " + vtype(to) + ")", true};
    case DType::kBool:
      if (from == DType::kFloat) return {"((" + mask + ")(" + v.c + " != " + vfn("splat") + "(0.0f)))", true};
      if (v.narrow) return {"((" + mask + ")(" + v.c + " != " + ivfn("splat", true) + "(0)))", true};
      return {vfn("ne", DType::kInt) + "(" + v.c + ", " + vfn("splat", DType::kInt) + "(0))", true};
  }
  return v;
}

CVal CEmitter::vbinary(const Expr& e) {
  const ExprNode& n = *e;
  const DType da = n.args[0]->dtype, db = n.args[1]->dtype;
  // Operand type: float if either is float, else int if either is int, else bool.
  DType dt = (da == DType::kFloat || db == DType::kFloat) ? DType::kFloat
             : (da == DType::kInt || db == DType::kInt)   ? DType::kInt
                                                          : DType::kBool;
  const bool logic = n.kind == ExprKind::kAnd || n.kind == ExprKind::kOr;
  if (logic) dt = DType::kBool;
  else if (dt == DType::kBool) dt = DType::kInt;
  if (n.dtype == DType::kFloat && !is_comparison(n.kind)) dt = DType::kFloat;

  // a*b + c and a*b - c as fused multiply-adds.
  if (dt == DType::kFloat && (n.kind == ExprKind::kAdd || n.kind == ExprKind::kSub)) {
    const int mul_side = is_float_mul(n.args[0]) ? 0 : (is_float_mul(n.args[1]) ? 1 : -1);
    if (mul_side >= 0) {
      const Expr& m = n.args[mul_side];
      CVal x = vexpr(m->args[0]), y = vexpr(m->args[1]);
      CVal c = vconvert(vexpr(n.args[1 - mul_side]), n.args[1 - mul_side]->dtype, DType::kFloat);
      const bool sub = n.kind == ExprKind::kSub;
      if (!x.vec && !y.vec && !c.vec) {
        std::string p = "(" + x.c + " * " + y.c + ")";
        return {mul_side == 0 ? "(" + p + (sub ? " - " : " + ") + c.c + ")" : "(" + c.c + (sub ? " - " : " + ") + p + ")",
                false};
      }
      std::string xv = widen(x, DType::kFloat), yv = widen(y, DType::kFloat), cv = widen(c, DType::kFloat);
      if (sub) {
        if (mul_side == 0) cv = "(-" + cv + ")";  // a*b - c
        else xv = "(-" + xv + ")";                // c - a*b
      }
      return {vfn("fma") + "(" + xv + ", " + yv + ", " + cv + ")", true};
    }
  }

  CVal a = vconvert(vexpr(n.args[0]), da, dt);
  CVal b = vconvert(vexpr(n.args[1]), db, dt);
  if (!a.vec && !b.vec) {  // both uniform (e.g. loads constant per chunk)
    const bool f = dt == DType::kFloat;
    switch (n.kind) {
      case ExprKind::kMin: return {std::string(f ? "loom_minf(" : "loom_mini(") + a.c + ", " + b.c + ")", false};
      case ExprKind::kMax: return {std::string(f ? "loom_maxf(" : "loom_maxi(") + a.c + ", " + b.c + ")", false};
      case ExprKind::kDiv:
      case ExprKind::kMod:
        if (!f) return vdiv_mod(e, a, b, false);
        if (n.kind == ExprKind::kMod) return {"loom_floormodf(" + a.c + ", " + b.c + ")", false};
        break;
      default: break;
    }
    const char* op = infix_symbol(n.kind);
    if (!op) throw LoomError("C backend: unsupported binary operator (kind " + std::to_string(int(n.kind)) + ")");
    return {"(" + a.c + " " + op + " " + b.c + ")", false};
  }
  if (dt == DType::kInt) {
    // int32 lanes when both operands and (unless compared) the result fit.
    const bool narrow = (a.vec ? a.narrow : fits_i32(n.args[0])) && (b.vec ? b.narrow : fits_i32(n.args[1])) &&
                        (is_comparison(n.kind) || fits_i32(e));
    if (n.kind == ExprKind::kDiv || n.kind == ExprKind::kMod) return vdiv_mod(e, a, b, narrow);
    const std::string x = wint(a, narrow), y = wint(b, narrow);
    switch (n.kind) {
      case ExprKind::kMin: return {ivfn("min", narrow) + "(" + x + ", " + y + ")", true, narrow};
      case ExprKind::kMax: return {ivfn("max", narrow) + "(" + x + ", " + y + ")", true, narrow};
      default: break;
    }
    const char* op = infix_symbol(n.kind);
    if (!op) throw LoomError("C backend: unsupported binary operator (kind " + std::to_string(int(n.kind)) + ")");
    if (!is_comparison(n.kind)) return {"(" + x + " " + op + " " + y + ")", true, narrow};
    // int32 lanes compare to a mask directly; int64 lanes through helpers.
    if (narrow) return {"((" + vtype(DType::kBool) + ")(" + x + " " + op + " " + y + "))", true};
    const char* name = n.kind == ExprKind::kLT   ? "lt"
                       : n.kind == ExprKind::kLE ? "le"
                       : n.kind == ExprKind::kGT ? "gt"
                       : n.kind == ExprKind::kGE ? "ge"
                       : n.kind == ExprKind::kEQ ? "eq"
                                                 : "ne";
    return {vfn(name, DType::kInt) + "(" + x + ", " + y + ")", true};
  }
  const std::string x = widen(a, dt), y = widen(b, dt);
  switch (n.kind) {
    case ExprKind::kMin: return {vfn("min", dt) + "(" + x + ", " + y + ")", true};
    case ExprKind::kMax: return {vfn("max", dt) + "(" + x + ", " + y + ")", true};
    case ExprKind::kMod: return {vfn("floormod") + "(" + x + ", " + y + ")", true};  // float
    case ExprKind::kAnd: return {"(" + x + " & " + y + ")", true};
    case ExprKind::kOr: return {"(" + x + " | " + y + ")", true};
    default: break;
  }
  const char* op = infix_symbol(n.kind);
  if (!op) throw LoomError("C backend: unsupported binary operator (kind " + std::to_string(int(n.kind)) + ")");
  if (is_comparison(n.kind)) return {"((" + vtype(DType::kBool) + ")(" + x + " " + op + " " + y + "))", true};
  return {"(" + x + " " + op + " " + y + ")", true};
}

// Floor division / modulo of int values, as the LLVM backend: shifts and
// masks for powers of two, plain `/` `%` when both sides are non-negative.
CVal CEmitter::vdiv_mod(const Expr& e, CVal a, CVal b, bool narrow) {
  const ExprNode& n = *e;
  const bool is_div = n.kind == ExprKind::kDiv;
  int64_t c = 0;
  const bool const_divisor = is_const_int(n.args[1], &c);
  if (const_divisor && c == 0) throw LoomError("C backend: integer division by zero");
  const IntBound bx = const_int_bound(n.args[0]), by = const_int_bound(n.args[1]);
  const bool non_negative = bx.min >= 0 && by.min > 0;
  if (!a.vec && !b.vec) {
    if (non_negative) return {"(" + a.c + (is_div ? " / " : " % ") + b.c + ")", false};
    return {std::string(is_div ? "loom_floordiv(" : "loom_floormod(") + a.c + ", " + b.c + ")", false};
  }
  const std::string x = wint(a, narrow), y = wint(b, narrow);
  const int shift = const_divisor ? exact_log2(c) : -1;
  // An arithmetic shift is floor division by a power of two for any sign,
  // and the low bits are the floor modulo.
  if (shift >= 0)
    return {is_div ? "(" + x + " >> " + std::to_string(shift) + ")" : "(" + x + " & " + int_literal(c - 1) + ")", true,
            narrow};
  if (non_negative) return {"(" + x + (is_div ? " / " : " % ") + y + ")", true, narrow};
  return {ivfn(is_div ? "floordiv" : "floormod", narrow) + "(" + x + ", " + y + ")", true, narrow};
}

CVal CEmitter::vselect(const ExprNode& n) {
  CVal c = vconvert(vexpr(n.args[0]), n.args[0]->dtype, DType::kBool);
  const DType dt = n.dtype;
  if (!c.vec) {
    // A uniform condition: C's ?: evaluates the taken arm only.
    CVal t = vconvert(vexpr(n.args[1]), n.args[1]->dtype, dt);
    CVal f = vconvert(vexpr(n.args[2]), n.args[2]->dtype, dt);
    if (!t.vec && !f.vec) return {"(" + c.c + " ? " + t.c + " : " + f.c + ")", false};
    if (dt == DType::kInt) {
      const bool narrow = arms_narrow(n, t, f);
      return {"(" + c.c + " ? " + wint(t, narrow) + " : " + wint(f, narrow) + ")", true, narrow};
    }
    return {"(" + c.c + " ? " + widen(t, dt) + " : " + widen(f, dt) + ")", true};
  }
  // A varying condition: both arms, each under its mask (only loads read the
  // mask, so the masks of arms without loads are not declared).
  const std::string I = vtype(DType::kBool), outer = chunk_->mask;
  const std::string cond = fresh("sel");
  std::string text = "({ const " + I + " " + cond + " = " + c.c + "; ";
  std::string mt = cond, mf;
  if (contains_load(n.args[1]) && !outer.empty()) {
    mt = fresh("mask");
    text += "const " + I + " " + mt + " = " + cond + " & " + outer + "; ";
  }
  if (contains_load(n.args[2])) {
    mf = fresh("mask");
    text += "const " + I + " " + mf + " = ~" + cond + (outer.empty() ? "" : " & " + outer) + "; ";
  }
  chunk_->mask = mt;
  CVal t = vconvert(vexpr(n.args[1]), n.args[1]->dtype, dt);
  chunk_->mask = mf.empty() ? outer : mf;
  CVal f = vconvert(vexpr(n.args[2]), n.args[2]->dtype, dt);
  chunk_->mask = outer;
  if (dt == DType::kInt) {
    const bool narrow = arms_narrow(n, t, f);
    text += ivfn("blend", narrow) + "(" + cond + ", " + wint(t, narrow) + ", " + wint(f, narrow) + "); })";
    return {text, true, narrow};
  }
  text += vfn("blend", dt) + "(" + cond + ", " + widen(t, dt) + ", " + widen(f, dt) + "); })";
  return {text, true};
}

bool CEmitter::arms_narrow(const ExprNode& n, const CVal& t, const CVal& f) {
  return (t.vec ? t.narrow : fits_i32(n.args[1])) && (f.vec ? f.narrow : fits_i32(n.args[2]));
}

CVal CEmitter::vcall(const ExprNode& n) {
  std::vector<CVal> args;
  bool vec = false;
  for (const auto& a : n.args) {
    args.push_back(vconvert(vexpr(a), a->dtype, DType::kFloat));
    vec = vec || args.back().vec;
  }
  const std::string& name = n.name;
  const size_t want = name == "pow" ? 2 : 1;
  if (args.size() != want)
    throw LoomError("C backend: " + name + " expects " + std::to_string(want) + " argument(s)");
  if (!vec) {
    std::vector<std::string> xs;
    for (const auto& a : args) xs.push_back(a.c);
    return {math_call(name, xs, true), false};
  }
  std::vector<std::string> xs;
  for (const auto& a : args) xs.push_back(widen(a, DType::kFloat));
  if (name == "pow") {
    const Expr& y = n.args[1];
    std::string inline_pow;
    if (y->kind == ExprKind::kFloatImm) inline_pow = pow_constant(xs[0], y->float_value);
    if (y->kind == ExprKind::kIntImm) inline_pow = pow_constant(xs[0], static_cast<double>(y->int_value));
    if (!inline_pow.empty()) return {inline_pow, true};
    return {vfn("pow") + "(" + xs[0] + ", " + xs[1] + ")", true};
  }
  static const char* kInline[] = {"exp", "log", "tanh", "erf", "sigmoid"};
  static const char* kSimple[] = {"sqrt", "fabs", "floor", "ceil"};
  for (const char* fn : kInline) {
    if (name != fn) continue;
    math_widths_.insert(chunk_->width);
    return {vfn(name) + "(" + xs[0] + ")", true};
  }
  for (const char* fn : kSimple)
    if (name == fn) return {vfn(name) + "(" + xs[0] + ")", true};
  throw LoomError("C backend: unknown math function " + name);
}

// x^y for a constant y in 0, 0.5, ..., 4, -1 or -0.5, as
// vector_math.cc's emit_pow_constant: products of x, its square and its
// square root, each rounded once; "" for other exponents.
std::string CEmitter::pow_constant(const std::string& x, double y) {
  const double twice = 2 * y;
  if (!(y >= -1 && y <= 4) || twice != std::floor(twice)) return "";
  const std::string F = vtype(DType::kFloat), I = vtype(DType::kBool), one = vfn("splat") + "(1.0f)";
  if (y == 0) return one;
  if (y == -1) return "(" + one + " / " + x + ")";
  const bool half = std::fmod(std::fabs(twice), 2.0) == 1.0;
  int64_t n = static_cast<int64_t>(std::floor(std::fabs(y)));
  const std::string v = fresh("pow");
  std::string s = "({ const " + F + " " + v + " = " + x + "; ";
  std::string base = v, result;
  if (half) {
    // sqrt(x) |x|^n (powf's +0 at -0 and +inf at -inf).
    result = fresh("pow");
    s += F + " " + result + " = " + vfn("sqrt") + "(" + v + "); ";
    s += result + " = " + vfn("blend") + "((" + I + ")(" + v + " == " + vfn("splat") + "(0.0f)), " + vfn("splat") +
         "(0.0f), " + result + "); ";
    s += result + " = " + vfn("blend") + "((" + I + ")(" + v + " == " + vfn("splat") + "(-INFINITY)), " +
         vfn("splat") + "(INFINITY), " + result + "); ";
    if (n > 0) {
      base = fresh("pow");
      s += "const " + F + " " + base + " = " + vfn("fabs") + "(" + v + "); ";
    }
  }
  for (; n > 0; n >>= 1) {
    if (n & 1) {
      if (result.empty()) {
        result = base;
      } else {
        const std::string r = fresh("pow");
        s += "const " + F + " " + r + " = " + result + " * " + base + "; ";
        result = r;
      }
    }
    if (n > 1) {
      const std::string b = fresh("pow");
      s += "const " + F + " " + b + " = " + base + " * " + base + "; ";
      base = b;
    }
  }
  if (y < 0) result = "(" + one + " / " + result + ")";  // y = -0.5
  return s + result + "; })";
}

// ---------------------------------------------------------------- memory

CVal CEmitter::vload(const ExprNode& n) {
  if (n.args.size() != 1)
    throw LoomError("C backend: load of " + n.name + " must have one flat index, has " +
                    std::to_string(n.args.size()));
  const Expr& idx = n.args[0];
  const std::string buf = names_.buffer(n.name);
  const IndexPattern p = classify_index(idx, chunk_->var->var_id, chunk_->extent, chunk_->vector_width);
  const std::string& mask = chunk_->mask;
  Expr at;
  if (p.kind == IndexPattern::kUniform || p.kind == IndexPattern::kChunkUniform) {
    const std::string text = vscalar(idx, &at);
    return {load_element(n.name, at, text), false};
  }
  if (p.kind == IndexPattern::kContiguous) {
    const std::string text = vscalar(idx, &at);
    const std::string slot = access(n.name, at, text, chunk_->valid, false, mask == chunk_->tail_mask);
    if (!slot.empty()) return {slot, true};
    const std::string ptr = buf + " + " + text;
    if (!mask.empty()) return {vfn("mload") + "(" + ptr + ", " + mask + ")", true};
    return {vfn("load") + "(" + ptr + ")", true};
  }
  access(n.name, idx, "", chunk_->valid, false, false);
  int64_t stride = 0;
  if (mask.empty() && linear_stride(idx, chunk_->var->var_id, &stride) && stride == 2) {
    const std::string text = vscalar(idx, &at);
    return {vfn("load_stride2") + "(" + buf + " + " + text + ")", true};
  }
  const CVal lanes = vexpr(idx);
  const bool narrow = lanes.vec && lanes.narrow;
  const std::string fn = narrow ? "gather32" : "gather", i = wint(lanes, narrow);
  if (!mask.empty()) return {vfn("m" + fn) + "(" + buf + ", " + i + ", " + mask + ")", true};
  return {vfn(fn) + "(" + buf + ", " + i + ")", true};
}

void CEmitter::vstore(const Stmt& s) {
  const Expr index = bound(s->index), value = bound(s->value);
  const std::string buf = names_.buffer(s->buffer);
  CVal v = vconvert(vexpr(value), value->dtype, DType::kFloat);
  const std::string& mask = chunk_->mask;
  const int64_t id = chunk_->var->var_id;
  if (!v.vec && !uses_var_id(index, id) && mask.empty()) {
    const Expr at = simplify(index);
    const std::string text = printer(names_).print(at);
    const std::string slot = access(s->buffer, at, text, 1, true, true);
    line((slot.empty() ? buf + "[" + text + "]" : slot) + " = " + v.c + ";");
    return;
  }
  const IndexPattern p = classify_index(index, id, chunk_->extent, chunk_->vector_width);
  if (p.kind == IndexPattern::kUniform || p.kind == IndexPattern::kChunkUniform)
    throw LoomError("C backend: internal error: store to " + s->buffer +
                    " with an index that does not vary in a vectorized loop");
  const std::string val = widen(v, DType::kFloat);
  if (p.kind == IndexPattern::kContiguous) {
    Expr at;
    const std::string text = vscalar(index, &at);
    const std::string slot = access(s->buffer, at, text, chunk_->valid, true, mask == chunk_->tail_mask);
    const std::string ptr = buf + " + " + text;
    if (!slot.empty()) line(slot + " = " + val + ";");
    else if (!mask.empty()) line(vfn("mstore") + "(" + ptr + ", " + val + ", " + mask + ");");
    else line(vfn("store") + "(" + ptr + ", " + val + ");");
    return;
  }
  access(s->buffer, index, "", chunk_->valid, true, false);
  const CVal lanes = vexpr(index);
  const bool narrow = lanes.vec && lanes.narrow;
  const std::string fn = narrow ? "scatter32" : "scatter", i = wint(lanes, narrow);
  if (!mask.empty()) line(vfn("m" + fn) + "(" + buf + ", " + i + ", " + val + ", " + mask + ");");
  else line(vfn(fn) + "(" + buf + ", " + i + ", " + val + ");");
}

// A guard whose condition varies across lanes: each branch runs under its
// mask, and not at all when no lane takes it.
void CEmitter::vif(const Stmt& s, const std::string& cond) {
  const std::string I = vtype(DType::kBool), outer = chunk_->mask;
  line("{");
  ++indent_;
  const std::string c = fresh("cond");
  line("const " + I + " " + c + " = " + cond + ";");
  bool used = false;
  auto branch = [&](const std::string& m_expr, const Stmt& body) {
    if (!body) return;
    used = true;
    std::string m = m_expr;
    if (m != c) {
      m = fresh("mask");
      line("const " + I + " " + m + " = " + m_expr + ";");
    }
    line("if (" + vfn("any", DType::kBool) + "(" + m + ")) {");
    ++indent_;
    chunk_->mask = m;
    stmt(body);
    chunk_->mask = outer;
    --indent_;
    line("}");
  };
  branch(outer.empty() ? c : c + " & " + outer, s->body[0]);
  if (s->body.size() > 1) branch("~" + c + (outer.empty() ? "" : " & " + outer), s->body[1]);
  if (!used) line("(void)" + c + ";");
  --indent_;
  line("}");
}

}  // namespace c_backend
}  // namespace loom
