// The C text of the vector types and helpers of a vector unit, per lane
// count: GCC/Clang vector extensions, with x86 intrinsics where a generic
// form would not compile to the one instruction the LLVM backend emits
// (masked loads/stores that never touch inactive lanes, FMA, min/max with
// their NaN rules, rounding). The generic forms keep the unit portable.
//
// The vector math is a C port of codegen/llvm/vector_math.cc (the same
// range reductions and polynomials, the constants of
// codegen/vector_math_coefficients.h, the same order of operations) so that
// the unit's results match the JIT's to an ulp or so; see there for why
// each step is as it is.
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "codegen/c/emitter.h"
#include "codegen/vector_math_coefficients.h"

namespace loom {
namespace c_backend {

namespace {

namespace vm = vector_math;

// Replaces every $F$ / $I$ / $L$ / $W$ in `text`.
std::string fill(std::string text, int w) {
  const std::vector<std::pair<std::string, std::string>> subs = {
      {"$F$", c_vector_type(DType::kFloat, w)},
      {"$I$", c_vector_type(DType::kBool, w)},
      {"$L$", c_vector_type(DType::kInt, w)},
      {"$W$", std::to_string(w)}};
  for (const auto& [from, to] : subs) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  }
  return text;
}

// `pattern` once per lane with every '#' replaced by the lane number.
std::string per_lane(int w, const std::string& pattern, const std::string& sep) {
  std::string out;
  for (int k = 0; k < w; ++k) {
    std::string p = pattern;
    for (size_t at = p.find('#'); at != std::string::npos; at = p.find('#', at))
      p.replace(at, 1, std::to_string(k));
    out += (k ? sep : "") + p;
  }
  return out;
}

// A function body with an intrinsic form under `cond` (none when empty).
std::string alt(const std::string& cond, const std::string& fast, const std::string& generic) {
  if (cond.empty() || fast.empty()) return generic;
  return "#if " + cond + "\n" + fast + "#else\n" + generic + "#endif\n";
}

// The x86 forms of one lane count.
struct Isa {
  std::string ps, si;           // __m512 / __m512i ...
  std::string base;             // condition for most intrinsics
  std::string fma;              // condition for FMA
  std::string round;            // condition for floor/ceil
  std::string any_cond, masked; // conditions for the mask test and masked access
  std::string prefix;           // _mm512 / _mm256 / _mm
};

Isa isa_of(int w) {
  switch (w) {
    case 16: {
      const std::string c = "defined(__AVX512F__)";
      return {"__m512", "__m512i", c, c, c, c, c, "_mm512"};
    }
    case 8: {
      const std::string c = "defined(__AVX__)";
      return {"__m256", "__m256i", c, "defined(__FMA__)", c, c, c, "_mm256"};
    }
    case 4:
      return {"__m128", "__m128i", "defined(__SSE__)", "defined(__FMA__)", "defined(__SSE4_1__)",
              "defined(__SSE4_1__)", "defined(__AVX__)", "_mm"};
    default: return {};
  }
}

std::string core_helpers(int w) {
  const Isa x = isa_of(w);
  const std::string kmask = "_mm512_test_epi32_mask((__m512i)m, (__m512i)m)";
  std::string s =
      "typedef float $F$ __attribute__((vector_size(" + std::to_string(4 * w) + ")));\n"
      "typedef int32_t $I$ __attribute__((vector_size(" + std::to_string(4 * w) + ")));\n"
      "typedef int64_t $L$ __attribute__((vector_size(" + std::to_string(8 * w) + ")));\n"
      "LOOM_VHELPER $F$ $F$_splat(float x) { return ($F$){" + per_lane(w, "x", ", ") + "}; }\n"
      "LOOM_VHELPER $L$ $L$_splat(int64_t x) { return ($L$){" + per_lane(w, "x", ", ") + "}; }\n"
      "LOOM_VHELPER $I$ $I$_bool(int c) {\n  const int32_t x = c ? -1 : 0;\n  return ($I$){" +
      per_lane(w, "x", ", ") + "};\n}\n"
      "LOOM_VHELPER $L$ $L$_lanes(int64_t base) { return $L$_splat(base) + ($L$){" + per_lane(w, "#", ", ") +
      "}; }\n"
      "/* Int values proven to fit in int32 use $I$ lanes too. */\n"
      "LOOM_VHELPER $I$ $I$_splat(int32_t x) { return ($I$){" + per_lane(w, "x", ", ") + "}; }\n"
      "LOOM_VHELPER $I$ $I$_lanes(int64_t base) { return $I$_splat((int32_t)base) + ($I$){" + per_lane(w, "#", ", ") +
      "}; }\n";
  // Lane tests and memory.
  s += "LOOM_VHELPER int $I$_any($I$ m) {\n" +
       alt(x.any_cond,
           w == 16 ? "  return " + kmask + " != 0;\n"
                   : "  return !" + x.prefix + "_testz_si" + std::to_string(32 * w) + "((" + x.si + ")m, (" +
                         x.si + ")m);\n",
           "  return (" + per_lane(w, "m[#]", " | ") + ") != 0;\n") +
       "}\n";
  s += "LOOM_VHELPER $F$ $F$_load(const float* p) {\n  $F$ v;\n  __builtin_memcpy(&v, p, sizeof v);\n  return v;\n}\n"
       "LOOM_VHELPER void $F$_store(float* p, $F$ v) { __builtin_memcpy(p, &v, sizeof v); }\n";
  const std::string mload_fast = w == 16 ? "  return ($F$)_mm512_maskz_loadu_ps(" + kmask + ", p);\n"
                                         : "  return ($F$)" + x.prefix + "_maskload_ps(p, (" + x.si + ")m);\n";
  const std::string mstore_fast = w == 16 ? "  _mm512_mask_storeu_ps(p, " + kmask + ", (__m512)v);\n"
                                          : "  " + x.prefix + "_maskstore_ps(p, (" + x.si + ")m, (" + x.ps + ")v);\n";
  s += "/* Masked accesses never touch the memory of inactive lanes. */\n"
       "LOOM_VHELPER $F$ $F$_mload(const float* p, $I$ m) {\n" +
       alt(x.masked, mload_fast, "  return ($F$){" + per_lane(w, "m[#] ? p[#] : 0.0f", ", ") + "};\n") + "}\n";
  s += "LOOM_VHELPER void $F$_mstore(float* p, $F$ v, $I$ m) {\n" +
       alt(x.masked, mstore_fast, per_lane(w, "  if (m[#]) p[#] = v[#];\n", "")) + "}\n";
  // Every other element, as the JIT's wide load and shuffle: the second
  // half's last lane is masked off, so nothing past p[2(w-1)] is read.
  std::string all_but_last, evens;
  for (int k = 0; k < w; ++k) {
    all_but_last += std::string(k ? ", " : "") + (k + 1 < w ? "-1" : "0");
    evens += (k ? ", " : "") + std::to_string(2 * k);
  }
  s += "LOOM_VHELPER $F$ $F$_load_stride2(const float* p) {\n  const $F$ lo = $F$_load(p), hi = $F$_mload(p + " +
       std::to_string(w) + ", ($I$){" + all_but_last + "});\n  return __builtin_shufflevector(lo, hi, " + evens +
       ");\n}\n";
  s += "LOOM_VHELPER $F$ $F$_gather(const float* p, $L$ i) { return ($F$){" + per_lane(w, "p[i[#]]", ", ") +
       "}; }\n"
       "LOOM_VHELPER $F$ $F$_mgather(const float* p, $L$ i, $I$ m) {\n  return ($F$){" +
       per_lane(w, "m[#] ? p[i[#]] : 0.0f", ", ") + "};\n}\n"
       "/* Lane order, as a scatter: the last lane to store to an element wins. */\n"
       "LOOM_VHELPER void $F$_scatter(float* p, $L$ i, $F$ v) {\n" + per_lane(w, "  p[i[#]] = v[#];\n", "") + "}\n"
       "LOOM_VHELPER void $F$_mscatter(float* p, $L$ i, $F$ v, $I$ m) {\n" +
       per_lane(w, "  if (m[#]) p[i[#]] = v[#];\n", "") + "}\n";
  // The same with int32 indices.
  s += "LOOM_VHELPER $F$ $F$_gather32(const float* p, $I$ i) { return ($F$){" + per_lane(w, "p[i[#]]", ", ") +
       "}; }\n"
       "LOOM_VHELPER $F$ $F$_mgather32(const float* p, $I$ i, $I$ m) {\n  return ($F$){" +
       per_lane(w, "m[#] ? p[i[#]] : 0.0f", ", ") + "};\n}\n"
       "LOOM_VHELPER void $F$_scatter32(float* p, $I$ i, $F$ v) {\n" + per_lane(w, "  p[i[#]] = v[#];\n", "") + "}\n"
       "LOOM_VHELPER void $F$_mscatter32(float* p, $I$ i, $F$ v, $I$ m) {\n" +
       per_lane(w, "  if (m[#]) p[i[#]] = v[#];\n", "") + "}\n";
  // Selection (masks are -1/0 per lane).
  s += "LOOM_VHELPER $F$ $F$_blend($I$ m, $F$ t, $F$ f) { return ($F$)((($I$)t & m) | (($I$)f & ~m)); }\n"
       "LOOM_VHELPER $I$ $I$_blend($I$ m, $I$ t, $I$ f) { return (t & m) | (f & ~m); }\n"
       "LOOM_VHELPER $L$ $L$_blend($I$ m, $L$ t, $L$ f) {\n"
       "  const $L$ wide = __builtin_convertvector(m, $L$);\n  return (t & wide) | (f & ~wide);\n}\n";
  // Comparisons of int64 lanes, to -1/0 int32 lanes. GCC compiles those of
  // vectors wider than 512 bits lane by lane: 16 lanes compare as two halves.
  if (w == 16)
    s += "typedef int64_t loom_i64x16_half __attribute__((vector_size(64)));\n"
         "typedef int32_t loom_i32x16_half __attribute__((vector_size(32)));\n";
  const std::pair<const char*, const char*> comparisons[] = {{"lt", "<"}, {"le", "<="}, {"gt", ">"},
                                                             {"ge", ">="}, {"eq", "=="}, {"ne", "!="}};
  for (const auto& [name, op] : comparisons) {
    const std::string o = op;
    s += "LOOM_VHELPER $I$ $L$_" + std::string(name) + "($L$ a, $L$ b) {\n";
    if (w == 16) {
      const std::string compare =
          "  const loom_i32x16_half lo = __builtin_convertvector(a0 " + o + " b0, loom_i32x16_half);\n"
          "  const loom_i32x16_half hi = __builtin_convertvector(a1 " + o + " b1, loom_i32x16_half);\n";
      // Halves through memory stall store forwarding: shuffles where possible.
      s += alt("defined(LOOM_HAS_SHUFFLEVECTOR)",
               "  const loom_i64x16_half a0 = __builtin_shufflevector(a, a, 0, 1, 2, 3, 4, 5, 6, 7);\n"
               "  const loom_i64x16_half a1 = __builtin_shufflevector(a, a, 8, 9, 10, 11, 12, 13, 14, 15);\n"
               "  const loom_i64x16_half b0 = __builtin_shufflevector(b, b, 0, 1, 2, 3, 4, 5, 6, 7);\n"
               "  const loom_i64x16_half b1 = __builtin_shufflevector(b, b, 8, 9, 10, 11, 12, 13, 14, 15);\n" +
                   compare + "  return __builtin_shufflevector(lo, hi, " + per_lane(16, "#", ", ") + ");\n",
               "  loom_i64x16_half a0, a1, b0, b1;\n"
               "  __builtin_memcpy(&a0, &a, 64);\n  __builtin_memcpy(&a1, (char*)&a + 64, 64);\n"
               "  __builtin_memcpy(&b0, &b, 64);\n  __builtin_memcpy(&b1, (char*)&b + 64, 64);\n" + compare +
                   "  $I$ r;\n  __builtin_memcpy(&r, &lo, 32);\n  __builtin_memcpy((char*)&r + 32, &hi, 32);\n"
                   "  return r;\n");
    } else {
      s += "  return __builtin_convertvector(a " + o + " b, $I$);\n";
    }
    s += "}\n";
  }
  s += "LOOM_VHELPER $L$ $L$_wide($I$ m) { return __builtin_convertvector(m, $L$); }\n";
  // Arithmetic.
  const std::string fma_fast =
      w == 2 ? "  return ($F$){" + per_lane(w, "__builtin_fmaf(a[#], b[#], c[#])", ", ") + "};\n"
             : "  return ($F$)" + x.prefix + "_fmadd_ps((" + x.ps + ")a, (" + x.ps + ")b, (" + x.ps + ")c);\n";
  const std::string fma_cond = w == 2 ? "defined(__FMA__)" : x.fma;
  s += "/* a * b + c, fused where the CPU has FMA (as llvm.fmuladd). */\n"
       "LOOM_VHELPER $F$ $F$_fma($F$ a, $F$ b, $F$ c) {\n" + alt(fma_cond, fma_fast, "  return a * b + c;\n") + "}\n";
  s += "/* min(a, b) = b < a ? b : a and max(a, b) = a < b ? b : a (NaN rules included). */\n"
       "LOOM_VHELPER $F$ $F$_min($F$ a, $F$ b) {\n" +
       alt(x.base, "  return ($F$)" + x.prefix + "_min_ps((" + x.ps + ")b, (" + x.ps + ")a);\n",
           "  return $F$_blend(($I$)(b < a), b, a);\n") + "}\n"
       "LOOM_VHELPER $F$ $F$_max($F$ a, $F$ b) {\n" +
       alt(x.base, "  return ($F$)" + x.prefix + "_max_ps((" + x.ps + ")b, (" + x.ps + ")a);\n",
           "  return $F$_blend(($I$)(a < b), b, a);\n") + "}\n"
       "LOOM_VHELPER $L$ $L$_min($L$ a, $L$ b) { return $L$_blend($L$_lt(b, a), b, a); }\n"
       "LOOM_VHELPER $L$ $L$_max($L$ a, $L$ b) { return $L$_blend($L$_lt(a, b), b, a); }\n"
       "LOOM_VHELPER $I$ $I$_min($I$ a, $I$ b) { return $I$_blend(($I$)(b < a), b, a); }\n"
       "LOOM_VHELPER $I$ $I$_max($I$ a, $I$ b) { return $I$_blend(($I$)(a < b), b, a); }\n";
  s += "/* Floor division and modulo; a zero divisor (a lane whose result is unused)\n"
       "   divides by 1 instead of trapping. */\n"
       "LOOM_VHELPER $L$ $L$_floordiv($L$ a, $L$ b) {\n"
       "  const $L$ zero = $L$_splat(0);\n  b -= $L$_wide($L$_eq(b, zero));\n"
       "  const $L$ q = a / b, r = a % b;\n"
       "  return q + $L$_wide($L$_ne(r, zero) & $L$_lt(r ^ b, zero));\n}\n"
       "LOOM_VHELPER $L$ $L$_floormod($L$ a, $L$ b) {\n"
       "  const $L$ zero = $L$_splat(0);\n  b -= $L$_wide($L$_eq(b, zero));\n"
       "  const $L$ r = a % b;\n"
       "  return r + ($L$_wide($L$_ne(r, zero) & $L$_lt(r ^ b, zero)) & b);\n}\n"
       "LOOM_VHELPER $I$ $I$_floordiv($I$ a, $I$ b) {\n"
       "  const $I$ zero = $I$_splat(0);\n  b -= ($I$)(b == zero);\n"
       "  const $I$ q = a / b, r = a % b;\n"
       "  return q + (($I$)(r != zero) & ($I$)((r ^ b) < zero));\n}\n"
       "LOOM_VHELPER $I$ $I$_floormod($I$ a, $I$ b) {\n"
       "  const $I$ zero = $I$_splat(0);\n  b -= ($I$)(b == zero);\n"
       "  const $I$ r = a % b;\n"
       "  return r + (($I$)(r != zero) & ($I$)((r ^ b) < zero) & b);\n}\n";
  // Rounding and the simple calls.
  const std::string imm = "_MM_FROUND_NO_EXC | ";
  auto rounding = [&](const std::string& name, const std::string& libm, const std::string& mode) {
    std::string fast = w == 16 ? "  return ($F$)_mm512_roundscale_ps((__m512)x, " + imm + mode + ");\n"
                               : "  return ($F$)" + x.prefix + "_" + name + "_ps((" + x.ps + ")x);\n";
    return "LOOM_VHELPER $F$ $F$_" + name + "($F$ x) {\n" +
           alt(x.round, fast, "  return ($F$){" + per_lane(w, libm + "(x[#])", ", ") + "};\n") + "}\n";
  };
  s += rounding("floor", "floorf", "_MM_FROUND_TO_NEG_INF") + rounding("ceil", "ceilf", "_MM_FROUND_TO_POS_INF");
  s += "LOOM_VHELPER $F$ $F$_sqrt($F$ x) {\n" +
       alt(x.base, "  return ($F$)" + x.prefix + "_sqrt_ps((" + x.ps + ")x);\n",
           "  return ($F$){" + per_lane(w, "sqrtf(x[#])", ", ") + "};\n") + "}\n"
       "LOOM_VHELPER $F$ $F$_fabs($F$ x) { return ($F$)(($I$)x & 0x7fffffff); }\n"
       "LOOM_VHELPER $F$ $F$_floormod($F$ a, $F$ b) { return a - $F$_floor(a / b) * b; }\n"
       "LOOM_VHELPER $F$ $F$_pow($F$ a, $F$ b) { return ($F$){" + per_lane(w, "powf(a[#], b[#])", ", ") + "}; }\n";
  return s;
}

// Horner's rule, highest degree first, declaring `out`: on vectors ($F$
// helpers) or, with `scalar`, on floats.
template <size_t N>
std::string horner(const std::string& out, const std::string& t, const double (&coefs)[N], bool scalar = false) {
  auto k = [&](double c) { return scalar ? float_literal(c) : "$F$_splat(" + float_literal(c) + ")"; };
  const std::string fma = scalar ? "loom_f32_fma(" : "$F$_fma(";
  std::string s = "  " + std::string(scalar ? "float " : "$F$ ") + out + " = " + k(coefs[0]) + ";\n";
  for (size_t i = 1; i < N; ++i) s += "  " + out + " = " + fma + out + ", " + t + ", " + k(coefs[i]) + ");\n";
  return s;
}

// An int32 constant as C hex text.
std::string hex_literal(int32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", static_cast<unsigned>(v));
  return buf;
}

// A constant of the scalar helpers: whole numbers (below 2^24, exact in a
// float) as "10.0f", the form these helpers have always been written in,
// where float_literal's shortest text would be "1e+01f"; others as
// float_literal writes them.
std::string scalar_literal(double d) {
  if (d != std::trunc(d) || std::fabs(d) >= 16777216.0) return float_literal(d);
  const std::string s = std::to_string(static_cast<long long>(std::fabs(d))) + ".0f";
  return std::signbit(d) ? "(-" + s + ")" : s;
}

std::string math_helpers(int w) {
  auto c = [](double d) { return "$F$_splat(" + float_literal(d) + ")"; };
  const double inf = std::numeric_limits<double>::infinity();
  const Isa x = isa_of(w);
  std::string s;
  // An exact fma even without FMA hardware (erf's x^2 in two parts).
  const std::string fma_fast =
      w == 2 ? "  return ($F$){" + per_lane(w, "__builtin_fmaf(a[#], b[#], c[#])", ", ") + "};\n"
             : "  return ($F$)" + x.prefix + "_fmadd_ps((" + x.ps + ")a, (" + x.ps + ")b, (" + x.ps + ")c);\n";
  s += "LOOM_VHELPER $F$ $F$_fma_exact($F$ a, $F$ b, $F$ c) {\n" +
       alt(w == 2 ? "defined(__FMA__)" : x.fma, fma_fast,
           "  return ($F$){" + per_lane(w, "fmaf(a[#], b[#], c[#])", ", ") + "};\n") + "}\n";
  s += "LOOM_VHELPER $F$ $F$_copysign($F$ t, $F$ x) {\n"
       "  return ($F$)((($I$)t & 0x7fffffff) | (($I$)x & INT32_MIN));\n}\n"
       "/* 2^n for n in [-126, 127]. */\n"
       "LOOM_VHELPER $F$ $F$_pow2($I$ n) { return ($F$)((n + 127) << 23); }\n";
  s += "/* x = n ln2 + r, |r| <= ln2/2 and q = e^r - 1 (as vector_math.cc's exp_parts). */\n"
       "typedef struct {\n  $I$ n;\n  $F$ q;\n} $F$_expparts;\n"
       "LOOM_VHELPER $F$_expparts $F$_exp_parts($F$ x) {\n"
       "  const $F$ shift = " + c(vm::kRoundShift) + ";\n"
       "  const $F$ t = $F$_fma(x, " + c(vm::kLog2e) + ", shift);\n"
       "  const $F$ nf = t - shift;\n"
       "  $F$ r = $F$_fma(nf, " + c(-vm::kLn2Hi) + ", x);\n"
       "  r = $F$_fma(nf, " + c(-vm::kLn2Lo) + ", r);\n" +
       horner("p", "r", vm::kExpPoly) +
       "  $F$_expparts e;\n  e.q = $F$_fma(r * r, p, r);\n  e.n = ($I$)t - " + hex_literal(vm::kRoundShiftBits) +
       ";\n  return e;\n}\n";
  s += "LOOM_VHELPER $F$ $F$_exp($F$ x) {\n"
       "  const $F$_expparts e = $F$_exp_parts($F$_min($F$_max(x, " + c(vm::kExpMin) + "), " + c(vm::kExpMax) +
       "));\n"
       "  const $I$ n1 = e.n >> 1, n2 = e.n - n1;\n"
       "  const $F$ s1 = $F$_pow2(n1);\n"
       "  return $F$_fma(e.q, s1, s1) * $F$_pow2(n2);\n}\n";
  s += "LOOM_VHELPER $F$ $F$_log($F$ x) {\n"
       "  const $I$ denormal = ($I$)(x < " + c(std::ldexp(1.0, -126)) + ");\n"
       "  const $I$ bits = ($I$)$F$_blend(denormal, x * " + c(std::ldexp(1.0, 23)) + ", x);\n"
       "  $I$ e = ((bits >> 23) & 0x1ff) - ((denormal & 150) | (~denormal & 127));\n"
       "  $F$ mant = ($F$)((bits & 0x7fffff) | 0x3f800000);\n"
       "  const $I$ big = ($I$)(mant > " + c(vm::kSqrt2) + ");\n"
       "  mant = $F$_blend(big, mant * " + c(0.5) + ", mant);\n"
       "  e -= big;\n"
       "  const $F$ f = mant - " + c(1.0) + ";\n"
       "  const $F$ s = f / (" + c(2.0) + " + f);\n"
       "  const $F$ z = s * s;\n" +
       horner("p", "z", vm::kLogPoly) +
       "  const $F$ R = z * p;\n"
       "  const $F$ hfsq = " + c(0.5) + " * (f * f);\n"
       "  const $F$ ef = __builtin_convertvector(e, $F$);\n"
       "  const $F$ lo = $F$_fma(ef, " + c(vm::kLn2Lo) + ", s * (hfsq + R));\n"
       "  $F$ y = $F$_fma(ef, " + c(vm::kLn2Hi) + ", f - (hfsq - lo));\n"
       "  y = $F$_blend(($I$)(x == " + c(inf) + "), x, y);\n"
       "  y = $F$_blend(($I$)(x == " + c(0.0) + "), " + c(-inf) + ", y);\n"
       "  y = $F$_blend(($I$)(x < " + c(0.0) + "), " + c(std::numeric_limits<double>::quiet_NaN()) + ", y);\n"
       "  return $F$_blend(($I$)(x != x), x, y);\n}\n";
  s += "LOOM_VHELPER $F$ $F$_tanh($F$ x) {\n"
       "  const $F$ a = $F$_min($F$_fabs(x), " + c(vm::kTanhSaturation) + ");\n"
       "  const $F$_expparts e = $F$_exp_parts(a + a);\n"
       "  const $F$ s = $F$_pow2(e.n);\n"
       "  const $F$ em = $F$_fma(e.q, s, s - " + c(1.0) + ");\n"
       "  return $F$_copysign(em / (em + " + c(2.0) + "), x);\n}\n";
  s += "LOOM_VHELPER $F$ $F$_sigmoid($F$ x) {\n"
       "  const $F$ e = $F$_exp(-$F$_fabs(x));\n"
       "  const $F$ num = $F$_blend(($I$)(x >= " + c(0.0) + "), " + c(1.0) + ", e);\n"
       "  return num / (" + c(1.0) + " + e);\n}\n";
  s += "LOOM_VHELPER $F$ $F$_erf($F$ x) {\n"
       "  const $F$ a = $F$_fabs(x);\n"
       "  const $F$ u = x * x;\n" +
       horner("ps", "u", vm::kErfSmallPoly) +
       "  const $F$ small = x * ps;\n"
       "  const $F$ ac = $F$_max($F$_min(a, " + c(vm::kErfLargeMax) + "), " + c(vm::kErfLargeMin) + ");\n"
       "  const $F$ t = (ac - " + c(vm::kErfLargeCenter) + ") * " + c(vm::kErfLargeScale) + ";\n" +
       horner("g", "t", vm::kErfLargePoly) +
       "  const $F$ hi = ac * ac;\n"
       "  const $F$ lo = $F$_fma_exact(ac, ac, -hi);\n"
       "  const $F$ ex = $F$_exp(-hi) * (" + c(1.0) + " - lo);\n"
       "  const $F$ large = $F$_copysign(" + c(1.0) + " - ex * g, x);\n"
       "  return $F$_blend(($I$)(a < " + c(vm::kErfLargeMin) + "), small, large);\n}\n";
  return s;
}

}  // namespace

std::string c_scalar_math_helpers() {
  auto c = scalar_literal;
  std::string s =
      "/* Floats: the vector math's algorithms one lane at a time. */\n"
      "LOOM_VHELPER int32_t loom_f32_bits(float x) {\n  int32_t i;\n  __builtin_memcpy(&i, &x, 4);\n  return i;\n}\n"
      "LOOM_VHELPER float loom_f32_of_bits(int32_t i) {\n  float x;\n  __builtin_memcpy(&x, &i, 4);\n  return x;\n}\n"
      "LOOM_VHELPER float loom_f32_fma(float a, float b, float c) {\n"
      "#if defined(__FMA__)\n  return __builtin_fmaf(a, b, c);\n#else\n  return a * b + c;\n#endif\n}\n"
      "LOOM_VHELPER float loom_f32_min(float a, float b) { return b < a ? b : a; }\n"
      "LOOM_VHELPER float loom_f32_max(float a, float b) { return a < b ? b : a; }\n"
      "LOOM_VHELPER float loom_f32_sqrt(float x) {\n"
      "#if defined(__SSE__)\n  return _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(x)));\n"
      "#else\n  return __builtin_sqrtf(x);\n#endif\n}\n"
      "LOOM_VHELPER float loom_f32_pow2(int32_t n) { return loom_f32_of_bits((n + 127) << 23); }\n"
      "typedef struct {\n  int32_t n;\n  float q;\n} loom_f32_expparts;\n"
      "LOOM_VHELPER loom_f32_expparts loom_f32_exp_parts(float x) {\n"
      "  const float shift = " + c(vm::kRoundShift) + ";\n"
      "  const float t = loom_f32_fma(x, " + c(vm::kLog2e) + ", shift);\n"
      "  const float nf = t - shift;\n"
      "  float r = loom_f32_fma(nf, " + c(-vm::kLn2Hi) + ", x);\n"
      "  r = loom_f32_fma(nf, " + c(-vm::kLn2Lo) + ", r);\n" +
      horner("p", "r", vm::kExpPoly, true) +
      "  loom_f32_expparts e;\n  e.q = loom_f32_fma(r * r, p, r);\n  e.n = loom_f32_bits(t) - " +
      hex_literal(vm::kRoundShiftBits) + ";\n"
      "  return e;\n}\n"
      "LOOM_VHELPER float loom_f32_exp(float x) {\n"
      "  const loom_f32_expparts e = loom_f32_exp_parts(loom_f32_min(loom_f32_max(x, " + c(vm::kExpMin) + "), " +
      c(vm::kExpMax) + "));\n"
      "  const int32_t n1 = e.n >> 1, n2 = e.n - n1;\n"
      "  const float s1 = loom_f32_pow2(n1);\n"
      "  return loom_f32_fma(e.q, s1, s1) * loom_f32_pow2(n2);\n}\n"
      "LOOM_VHELPER float loom_f32_log(float x) {\n"
      "  const int denormal = x < " + c(std::ldexp(1.0, -126)) + ";\n"
      "  const int32_t bits = loom_f32_bits(denormal ? x * " + c(std::ldexp(1.0, 23)) + " : x);\n"
      "  int32_t e = ((bits >> 23) & 0x1ff) - (denormal ? 150 : 127);\n"
      "  float mant = loom_f32_of_bits((bits & 0x7fffff) | 0x3f800000);\n"
      "  const int big = mant > " + c(vm::kSqrt2) + ";\n"
      "  mant = big ? mant * 0.5f : mant;\n"
      "  e += big;\n"
      "  const float f = mant - 1.0f;\n"
      "  const float s = f / (2.0f + f);\n"
      "  const float z = s * s;\n" +
      horner("p", "z", vm::kLogPoly, true) +
      "  const float R = z * p;\n"
      "  const float hfsq = 0.5f * (f * f);\n"
      "  const float ef = (float)e;\n"
      "  const float lo = loom_f32_fma(ef, " + c(vm::kLn2Lo) + ", s * (hfsq + R));\n"
      "  float y = loom_f32_fma(ef, " + c(vm::kLn2Hi) + ", f - (hfsq - lo));\n"
      "  y = x == INFINITY ? x : y;\n"
      "  y = x == 0.0f ? -INFINITY : y;\n"
      "  y = x < 0.0f ? NAN : y;\n"
      "  return x != x ? x : y;\n}\n"
      "LOOM_VHELPER float loom_f32_tanh(float x) {\n"
      "  const float a = loom_f32_min(fabsf(x), " + c(vm::kTanhSaturation) + ");\n"
      "  const loom_f32_expparts e = loom_f32_exp_parts(a + a);\n"
      "  const float s = loom_f32_pow2(e.n);\n"
      "  const float em = loom_f32_fma(e.q, s, s - 1.0f);\n"
      "  return copysignf(em / (em + 2.0f), x);\n}\n"
      "LOOM_VHELPER float loom_f32_sigmoid(float x) {\n"
      "  const float e = loom_f32_exp(-fabsf(x));\n"
      "  return (x >= 0.0f ? 1.0f : e) / (1.0f + e);\n}\n"
      "LOOM_VHELPER float loom_f32_erf(float x) {\n"
      "  const float a = fabsf(x);\n"
      "  const float u = x * x;\n" +
      horner("ps", "u", vm::kErfSmallPoly, true) +
      "  const float small = x * ps;\n"
      "  const float ac = loom_f32_max(loom_f32_min(a, " + c(vm::kErfLargeMax) + "), " + c(vm::kErfLargeMin) + ");\n"
      "  const float t = (ac - " + c(vm::kErfLargeCenter) + ") * " + c(vm::kErfLargeScale) + ";\n" +
      horner("g", "t", vm::kErfLargePoly, true) +
      "  const float hi = ac * ac;\n"
      "  const float lo = __builtin_fmaf(ac, ac, -hi);\n"
      "  const float ex = loom_f32_exp(-hi) * (1.0f - lo);\n"
      "  const float large = copysignf(1.0f - ex * g, x);\n"
      "  return a < " + c(vm::kErfLargeMin) + " ? small : large;\n}\n";
  return s;
}

std::string c_vector_type(DType t, int width) {
  const char* lanes = t == DType::kFloat ? "loom_f32x" : t == DType::kInt ? "loom_i64x" : "loom_i32x";
  return lanes + std::to_string(width);
}

const char* c_vector_prelude() {
  return R"C(#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#if defined(__GNUC__) && !defined(__clang__)
/* Vectors wider than the compile target's registers are passed in memory
   between functions; all helpers are inlined, so GCC's note is moot. */
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
#define LOOM_VHELPER static inline __attribute__((unused, always_inline))
#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define LOOM_HAS_SHUFFLEVECTOR 1
#endif
#endif

)C";
}

std::string c_loop_hint(int width) {
  // The JIT's LLVM vectorizes plain innermost loops preferring vectors of the
  // target's width; clang's default preference may be narrower (256 bits on
  // AVX-512 CPUs), GCC's follows -march. A loop clang cannot vectorize stays
  // as it is (not a warning).
  return "#if defined(__clang__)\n#pragma clang diagnostic ignored \"-Wpass-failed\"\n"
         "#define LOOM_VECTORIZE_LOOP _Pragma(\"clang loop vectorize_width(" + std::to_string(width) +
         ") interleave_count(1)\")\n#else\n#define LOOM_VECTORIZE_LOOP\n#endif\n\n";
}

std::string c_vector_helpers(int width, bool math) {
  std::string s = "/* Vectors of " + std::to_string(width) + " lanes. */\n" + core_helpers(width);
  if (math) s += math_helpers(width);
  return fill(s, width);
}

}  // namespace c_backend
}  // namespace loom
