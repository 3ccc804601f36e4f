// The float math functions every backend inlines, with their reference
// (libm in double precision) and the ulp bound each implementation is held
// to; and the ulp error measure. Shared by the LLVM backend's and the C
// backend's vector math tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "ir/expr.h"

namespace loom::math_cases {

struct MathCase {
  const char* name;
  std::function<Expr(Expr)> expr;
  std::function<double(double)> reference;
  double max_ulp;  // the bound the implementation is held to
};

inline std::vector<MathCase> cases() {
  return {
      {"exp", [](Expr x) { return exp(x); }, [](double x) { return std::exp(x); }, 1.5},
      {"log", [](Expr x) { return log(x); }, [](double x) { return std::log(x); }, 1.5},
      {"tanh", [](Expr x) { return tanh(x); }, [](double x) { return std::tanh(x); }, 3},
      {"sigmoid", [](Expr x) { return sigmoid(x); }, [](double x) { return 1 / (1 + std::exp(-x)); }, 3},
      {"erf", [](Expr x) { return erf(x); }, [](double x) { return std::erf(x); }, 3},
      {"pow(x, 2)", [](Expr x) { return pow(x, Expr(2.0f)); }, [](double x) { return std::pow(x, 2.0); }, 0.5},
      {"pow(x, 3)", [](Expr x) { return pow(x, Expr(3.0f)); }, [](double x) { return std::pow(x, 3.0); }, 1.5},
      {"pow(x, -1)", [](Expr x) { return pow(x, Expr(-1.0f)); }, [](double x) { return std::pow(x, -1.0); }, 0.5},
      {"pow(x, 0.5)", [](Expr x) { return pow(x, Expr(0.5f)); }, [](double x) { return std::pow(x, 0.5); }, 0.5},
      {"pow(x, -0.5)", [](Expr x) { return pow(x, Expr(-0.5f)); }, [](double x) { return std::pow(x, -0.5); }, 2},
      {"pow(x, 1.5)", [](Expr x) { return pow(x, Expr(1.5f)); }, [](double x) { return std::pow(x, 1.5); }, 2},
      {"pow(x, 4)", [](Expr x) { return pow(x, Expr(4.0f)); }, [](double x) { return std::pow(x, 4.0); }, 3},
      {"pow(x, 2.5)", [](Expr x) { return pow(x, Expr(2.5f)); }, [](double x) { return std::pow(x, 2.5); }, 3},
  };
}

inline float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// Error of `got` in ulp of the float nearest to `want`; 0 for matching
// infinities and NaNs, infinity for a NaN or infinity where none belongs.
inline double ulp_error(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
  if (want == 0 && got == 0) return std::signbit(got) == std::signbit(want) ? 0 : INFINITY;
  if (std::isnan(got)) return INFINITY;
  const double max_float = std::numeric_limits<float>::max();
  const double rounds_to_inf = max_float * (1 + std::ldexp(1.0, -25));
  if (std::fabs(want) >= rounds_to_inf) return std::isinf(got) && (got > 0) == (want > 0) ? 0 : INFINITY;
  // An overflow to inf just below the rounding threshold counts from 2^128.
  const double g = std::isinf(got) ? std::copysign(std::ldexp(1.0, 128), got) : got;
  const double a = std::fabs(want);
  const double ulp = a < std::ldexp(1.0, -126) ? std::ldexp(1.0, -149) : std::ldexp(1.0, std::ilogb(a) - 23);
  return std::fabs(g - want) / ulp;
}

// Values where the functions change regime (overflow, denormals, the ends of
// the polynomial ranges) and the IEEE special values.
inline const float kSpecial[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1.0f, -1.0f,
                                 std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(),
                                 std::numeric_limits<float>::min(), std::numeric_limits<float>::max(),
                                 -std::numeric_limits<float>::max(), 88.72283f, 88.7229f, -87.33654f, -103.97f,
                                 -104.5f, -200.0f, 1e-30f, 0.5f, 0.99999994f, 1.0000001f, 3.92f, 4.0f, 9.01f, 10.0f};

}  // namespace loom::math_cases
