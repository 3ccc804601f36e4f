#include "codegen/llvm/vector_math.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "codegen/vector_math_coefficients.h"

namespace loom {
namespace llvm_backend {

namespace {

namespace vm = vector_math;

// Builds float expressions of one shape (scalar or vector) with splatted
// constants.
struct Math {
  llvm::IRBuilder<>& b;
  llvm::Type* ty;   // float or <N x float>
  llvm::Type* ity;  // i32 of the same shape

  Math(llvm::IRBuilder<>& builder, llvm::Value* x) : b(builder), ty(x->getType()) {
    ity = b.getInt32Ty();
    if (auto* v = llvm::dyn_cast<llvm::VectorType>(ty)) ity = llvm::VectorType::get(ity, v->getElementCount());
  }
  llvm::Value* c(double v) { return llvm::ConstantFP::get(ty, v); }
  llvm::Value* ci(int32_t v) { return llvm::ConstantInt::get(ity, static_cast<uint64_t>(static_cast<int64_t>(v)), true); }
  llvm::Value* add(llvm::Value* x, llvm::Value* y) { return b.CreateFAdd(x, y); }
  llvm::Value* sub(llvm::Value* x, llvm::Value* y) { return b.CreateFSub(x, y); }
  llvm::Value* mul(llvm::Value* x, llvm::Value* y) { return b.CreateFMul(x, y); }
  llvm::Value* div(llvm::Value* x, llvm::Value* y) { return b.CreateFDiv(x, y); }
  llvm::Value* fma(llvm::Value* x, llvm::Value* y, llvm::Value* z) {
    return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {ty}, {x, y, z});
  }
  llvm::Value* un(llvm::Intrinsic::ID id, llvm::Value* x) { return b.CreateUnaryIntrinsic(id, x); }
  llvm::Value* bin(llvm::Intrinsic::ID id, llvm::Value* x, llvm::Value* y) { return b.CreateBinaryIntrinsic(id, x, y); }
  llvm::Value* is_nan(llvm::Value* x) { return b.CreateFCmpUNO(x, x); }
  // max(x, lo) and min(x, hi) that keep a NaN (one vmaxps / vminps each).
  llvm::Value* at_least(llvm::Value* x, double lo) { return b.CreateSelect(b.CreateFCmpOLT(x, c(lo)), c(lo), x); }
  llvm::Value* at_most(llvm::Value* x, double hi) { return b.CreateSelect(b.CreateFCmpOGT(x, c(hi)), c(hi), x); }
  llvm::Value* sel(llvm::Value* cond, llvm::Value* x, llvm::Value* y) { return b.CreateSelect(cond, x, y); }
  llvm::Value* as_int(llvm::Value* x) { return b.CreateBitCast(x, ity); }
  llvm::Value* as_float(llvm::Value* i) { return b.CreateBitCast(i, ty); }
  // Horner: coefs highest degree first.
  template <size_t N>
  llvm::Value* poly(llvm::Value* t, const double (&coefs)[N]) {
    llvm::Value* acc = nullptr;
    for (double k : coefs) acc = acc ? fma(acc, t, c(k)) : c(k);
    return acc;
  }
  // 2^n for i32 n in [-126, 127].
  llvm::Value* pow2(llvm::Value* n) { return as_float(b.CreateShl(b.CreateAdd(n, ci(127)), ci(23))); }
};

// x = n ln2 + r, |r| <= ln2/2 (Cody-Waite: ln2 in two parts, the first with
// trailing zero bits so that n * hi is exact), and q = e^r - 1 = r + r^2 P(r),
// P a Chebyshev fit of degree 4 (error below 0.1 ulp of e^r). n is rounded
// by adding 1.5 * 2^23, whose bits then hold it: no conversion, and a NaN
// stays a NaN through every step. For |x| < 2^21. The constants are
// codegen/vector_math_coefficients.h's, as are all below.
struct ExpParts {
  llvm::Value* n;  // i32
  llvm::Value* q;
};

ExpParts exp_parts(Math& m, llvm::Value* x) {
  llvm::Value* t = m.fma(x, m.c(vm::kLog2e), m.c(vm::kRoundShift));
  llvm::Value* nf = m.sub(t, m.c(vm::kRoundShift));
  llvm::Value* r = m.fma(nf, m.c(-vm::kLn2Hi), x);
  r = m.fma(nf, m.c(-vm::kLn2Lo), r);
  llvm::Value* p = m.poly(r, vm::kExpPoly);
  llvm::Value* q = m.fma(m.mul(r, r), p, r);
  return {m.b.CreateSub(m.as_int(t), m.ci(vm::kRoundShiftBits)), q};
}

llvm::Value* exp_of(Math& m, llvm::Value* x) {
  // e^x overflows above 88.72 and is below half the smallest denormal under
  // -103.97: clamped there, n stays in [-150, 128], and 2^n is applied as
  // two normal factors so that denormal results round once.
  ExpParts e = exp_parts(m, m.at_most(m.at_least(x, vm::kExpMin), vm::kExpMax));
  llvm::Value* n1 = m.b.CreateAShr(e.n, m.ci(1));
  llvm::Value* n2 = m.b.CreateSub(e.n, n1);
  llvm::Value* s1 = m.pow2(n1);
  return m.mul(m.fma(e.q, s1, s1), m.pow2(n2));
}

}  // namespace

llvm::Value* emit_exp(llvm::IRBuilder<>& b, llvm::Value* x) {
  Math m(b, x);
  return exp_of(m, x);
}

llvm::Value* emit_log(llvm::IRBuilder<>& b, llvm::Value* x) {
  Math m(b, x);
  // Denormals are scaled by 2^23 first.
  llvm::Value* denormal = b.CreateFCmpOLT(x, m.c(std::ldexp(1.0, -126)));
  llvm::Value* xs = m.sel(denormal, m.mul(x, m.c(std::ldexp(1.0, 23))), x);
  llvm::Value* bits = m.as_int(xs);
  llvm::Value* e = b.CreateSub(b.CreateLShr(bits, m.ci(23)), m.sel(denormal, m.ci(127 + 23), m.ci(127)));
  // x = 2^e * mant, mant in [sqrt(1/2), sqrt(2)): f = mant - 1 is exact.
  llvm::Value* mant = m.as_float(b.CreateOr(b.CreateAnd(bits, m.ci(0x7fffff)), m.ci(0x3f800000)));
  llvm::Value* big = b.CreateFCmpOGT(mant, m.c(vm::kSqrt2));
  mant = m.sel(big, m.mul(mant, m.c(0.5)), mant);
  e = b.CreateAdd(e, b.CreateZExt(big, m.ity));
  llvm::Value* f = m.sub(mant, m.c(1.0));
  // log(1 + f) = f - (f^2/2 - s (f^2/2 + R)), s = f / (2 + f), R = 2 atanh(s)
  // - 2s in s^2 (|s| < 0.1716: the series to s^9 is within 2e-9).
  llvm::Value* s = m.div(f, m.add(m.c(2.0), f));
  llvm::Value* z = m.mul(s, s);
  llvm::Value* R = m.mul(z, m.poly(z, vm::kLogPoly));
  llvm::Value* hfsq = m.mul(m.c(0.5), m.mul(f, f));
  llvm::Value* ef = b.CreateSIToFP(e, m.ty);
  llvm::Value* lo = m.fma(ef, m.c(vm::kLn2Lo), m.mul(s, m.add(hfsq, R)));
  llvm::Value* y = m.fma(ef, m.c(vm::kLn2Hi), m.sub(f, m.sub(hfsq, lo)));
  const double inf = std::numeric_limits<double>::infinity();
  y = m.sel(b.CreateFCmpOEQ(x, m.c(inf)), x, y);
  y = m.sel(b.CreateFCmpOEQ(x, m.c(0.0)), m.c(-inf), y);
  y = m.sel(b.CreateFCmpOLT(x, m.c(0.0)), m.c(std::numeric_limits<double>::quiet_NaN()), y);
  return m.sel(m.is_nan(x), x, y);
}

llvm::Value* emit_tanh(llvm::IRBuilder<>& b, llvm::Value* x) {
  Math m(b, x);
  // tanh|x| = em / (em + 2), em = e^(2|x|) - 1 = 2^n q + (2^n - 1) without
  // the cancellation of e^(2|x|) - 1 near 0; from |x| = 10 on it rounds to 1.
  llvm::Value* a = m.at_most(m.un(llvm::Intrinsic::fabs, x), vm::kTanhSaturation);
  ExpParts e = exp_parts(m, m.add(a, a));
  llvm::Value* s = m.pow2(e.n);
  llvm::Value* em = m.fma(e.q, s, m.sub(s, m.c(1.0)));
  llvm::Value* t = m.div(em, m.add(em, m.c(2.0)));
  return m.bin(llvm::Intrinsic::copysign, t, x);
}

llvm::Value* emit_sigmoid(llvm::IRBuilder<>& b, llvm::Value* x) {
  Math m(b, x);
  // 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below: e^-|x| never
  // overflows, so denormal results for x < -87 stay exact to a few ulp.
  llvm::Value* e = exp_of(m, m.b.CreateFNeg(m.un(llvm::Intrinsic::fabs, x)));
  llvm::Value* num = m.sel(b.CreateFCmpOGE(x, m.c(0.0)), m.c(1.0), e);
  return m.div(num, m.add(m.c(1.0), e));
}

llvm::Value* emit_erf(llvm::IRBuilder<>& b, llvm::Value* x) {
  Math m(b, x);
  llvm::Value* a = m.un(llvm::Intrinsic::fabs, x);
  // |x| < 1: erf(x) = x P(x^2), P the Taylor series to x^20 (within 1e-9).
  llvm::Value* u = m.mul(x, x);
  llvm::Value* small = m.mul(x, m.poly(u, vm::kErfSmallPoly));
  // 1 <= |x| <= 4: erf|x| = 1 - e^(-x^2) g(|x|), g = erfc e^(x^2) fitted by a
  // Chebyshev polynomial of degree 12 in t = (|x| - 2.5) / 1.5 (relative
  // error 1.3e-8); x^2 in two parts (hi + lo exact) so that e^(-x^2) keeps
  // its accuracy. Beyond 4, erf rounds to +-1.
  llvm::Value* ac = m.at_least(m.at_most(a, vm::kErfLargeMax), vm::kErfLargeMin);
  llvm::Value* t = m.mul(m.sub(ac, m.c(vm::kErfLargeCenter)), m.c(vm::kErfLargeScale));
  llvm::Value* g = m.poly(t, vm::kErfLargePoly);
  llvm::Value* hi = m.mul(ac, ac);
  llvm::Value* lo = b.CreateIntrinsic(llvm::Intrinsic::fma, {m.ty}, {ac, ac, b.CreateFNeg(hi)});
  llvm::Value* ex = m.mul(exp_of(m, b.CreateFNeg(hi)), m.sub(m.c(1.0), lo));
  llvm::Value* large = m.bin(llvm::Intrinsic::copysign, m.sub(m.c(1.0), m.mul(ex, g)), x);
  return m.sel(b.CreateFCmpOLT(a, m.c(vm::kErfLargeMin)), small, large);
}

bool emit_pow_constant(llvm::IRBuilder<>& b, llvm::Value* x, double y, llvm::Value** out) {
  const double twice = 2 * y;
  // Inline: y in 0..4 by halves, -1 and -0.5. A larger negative power of a
  // small x overflows before its inverse is taken (and of a large x, the
  // inverse underflows before the power): those go to powf.
  if (!(y >= -1 && y <= 4) || twice != std::floor(twice)) return false;
  Math m(b, x);
  const double inf = std::numeric_limits<double>::infinity();
  if (y == -1) {
    *out = m.div(m.c(1.0), x);
    return true;
  }
  const bool half = std::fmod(std::fabs(twice), 2.0) == 1.0;
  int64_t n = static_cast<int64_t>(std::floor(std::fabs(y)));
  // sqrt(x) |x|^n for a half-integer (powf's +0 at -0 and +inf at -inf;
  // negative x is NaN through the root), x^n otherwise, by repeated
  // squaring: at most 3 products, each rounded once.
  llvm::Value* base = x;
  llvm::Value* result = nullptr;
  if (half) {
    base = m.un(llvm::Intrinsic::fabs, x);
    result = m.un(llvm::Intrinsic::sqrt, x);
    result = m.sel(b.CreateFCmpOEQ(x, m.c(0.0)), m.c(0.0), result);
    result = m.sel(b.CreateFCmpOEQ(x, m.c(-inf)), m.c(inf), result);
  }
  for (; n > 0; n >>= 1) {
    if (n & 1) result = result ? m.mul(result, base) : base;
    if (n > 1) base = m.mul(base, base);
  }
  if (!result) result = m.c(1.0);
  if (y < 0) result = m.div(m.c(1.0), result);  // y = -0.5
  *out = result;
  return true;
}

}  // namespace llvm_backend
}  // namespace loom
