// The numbers of the inline float math (exp, log, tanh, sigmoid, erf): the
// range-reduction constants and polynomial coefficients that the LLVM
// backend emits as IR (codegen/llvm/vector_math.cc, which says why each step
// is as it is) and the C backend as C text (codegen/c/vector_helpers.cc), so
// that a JIT kernel and its exported C compute the same values. Plain C++,
// no LLVM. Written as doubles; both emitters round each to float.
// Polynomials are listed highest degree first, the order Horner's rule
// takes them in.
#pragma once

#include <cstdint>

namespace loom {
namespace vector_math {

// ---- exp (also the core of tanh, sigmoid and erf)
// x = n ln2 + r with n = round(x log2e) and |r| <= ln2/2.
inline constexpr double kLog2e = 1.4426950408889634;
// ln2 in two parts (Cody-Waite): kLn2Hi has trailing zero bits, so that
// n * kLn2Hi is exact.
inline constexpr double kLn2Hi = 0.693145751953125;
inline constexpr double kLn2Lo = 1.428606765330187045e-06;
// 1.5 * 2^23: a float of magnitude below 2^22 plus this rounds to an
// integer, which the sum's low bits hold: the sum's bits minus
// kRoundShiftBits (its own bits) are n.
inline constexpr double kRoundShift = 12582912.0;
inline constexpr int32_t kRoundShiftBits = 0x4b400000;
// e^r - 1 = r + r^2 P(r), P a Chebyshev fit of degree 4 on |r| <= ln2/2
// (error below 0.1 ulp of e^r).
inline constexpr double kExpPoly[] = {0.001392617612, 0.008363173075, 0.04166655466, 0.1666657703, 0.5};
// e^x overflows above 88.72 and is below half the smallest denormal under
// -103.97: x is clamped to [kExpMin, kExpMax], which keeps n in [-150, 128].
inline constexpr double kExpMin = -104.0;
inline constexpr double kExpMax = 89.0;

// ---- log
// x = 2^e * mant with mant in [sqrt(1/2), sqrt(2)).
inline constexpr double kSqrt2 = 1.41421356237309504880;
// 2 atanh(s) - 2s = s^2 R(s^2), R(z) = z P(z): the series to s^9
// (|s| < 0.1716: within 2e-9).
inline constexpr double kLogPoly[] = {2.0 / 9, 2.0 / 7, 2.0 / 5, 2.0 / 3};

// ---- tanh
// From |x| = kTanhSaturation on, tanh x rounds to +-1.
inline constexpr double kTanhSaturation = 10.0;

// ---- erf
// |x| < kErfLargeMin: erf(x) = x P(x^2), P the Taylor series to x^20
// (within 1e-9).
inline constexpr double kErfSmallPoly[] = {1.48071928e-08, -1.63658441e-07, 1.64621144e-06, -1.49256502e-05,
                                           0.000120553326, -0.000854832702, 0.00522397785,  -0.0268661715,
                                           0.112837918,    -0.376126379,    1.12837923};
// kErfLargeMin <= |x| <= kErfLargeMax: erf|x| = 1 - e^(-x^2) g(|x|),
// g = erfc e^(x^2) fitted by a Chebyshev polynomial of degree 12 in
// t = (|x| - kErfLargeCenter) * kErfLargeScale, the interval mapped onto
// [-1, 1] (relative error 1.3e-8). Beyond kErfLargeMax, erf rounds to +-1.
inline constexpr double kErfLargeMin = 1.0;
inline constexpr double kErfLargeMax = 4.0;
inline constexpr double kErfLargeCenter = (kErfLargeMin + kErfLargeMax) / 2;
inline constexpr double kErfLargeScale = 2 / (kErfLargeMax - kErfLargeMin);
inline constexpr double kErfLargePoly[] = {1.33658359e-05, -3.68889123e-05, 5.63035755e-05, -0.000144057791,
                                           0.000412986934, -0.00101700891,  0.00240248744,  -0.00556738023,
                                           0.01248952,     -0.0270057172,   0.0561104864,   -0.111521006,
                                           0.21080637};

}  // namespace vector_math
}  // namespace loom
