// The LLVM backend's inline float math (codegen/llvm/vector_math.h) against
// the correctly rounded result (libm in double precision), in ulp of the
// float result, on every vector width and in scalar code. The default run
// sweeps 2^22 floats spread evenly over all 2^32 bit patterns plus the
// special values; LOOM_LONG_TESTS=1 checks every float on 16 lanes (the
// README's table).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "codegen/llvm/llvm_jit.h"
#include "llvm_test_util.h"

namespace loom {
namespace {

using namespace llvm_test;

struct MathCase {
  const char* name;
  std::function<Expr(Expr)> expr;
  std::function<double(double)> reference;
  double max_ulp;  // the bound the implementation is held to
};

std::vector<MathCase> cases() {
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

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// Error of `got` in ulp of the float nearest to `want`; 0 for matching
// infinities and NaNs, infinity for a NaN or infinity where none belongs.
double ulp_error(float got, double want) {
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

// B[i] = f(A[i]), i vectorized in chunks of `width` (1: a serial loop).
std::unique_ptr<CompiledKernel> compile_map(const MathCase& c, int64_t n, int width) {
  Var i = make_var("i", n);
  auto f = func("map", {buf("A", {n}), buf("B", {n})},
                make_for(i, n, width > 1 ? ForKind::kVectorized : ForKind::kSerial,
                         make_store("B", i, c.expr(ld("A", i)))));
  LLVMCompileOptions o;
  o.vector_width = width > 1 ? width : 0;
  return compile_llvm(f, o);
}

struct Worst {
  double ulp = 0;
  float at = 0, got = 0;
};

void check(const MathCase& c, const CompiledKernel& k, std::vector<float>& in, std::vector<float>& out, Worst& w) {
  k({in.data(), out.data()});
  for (size_t j = 0; j < in.size(); ++j) {
    double e = ulp_error(out[j], c.reference(in[j]));
    if (e > w.ulp) w = {e, in[j], out[j]};
  }
}

const float kSpecial[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1.0f, -1.0f,
                          std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(),
                          std::numeric_limits<float>::min(), std::numeric_limits<float>::max(),
                          -std::numeric_limits<float>::max(), 88.72283f, 88.7229f, -87.33654f, -103.97f, -104.5f,
                          -200.0f, 1e-30f, 0.5f, 0.99999994f, 1.0000001f, 3.92f, 4.0f, 9.01f, 10.0f};

class VectorMath : public ::testing::TestWithParam<int> {};

TEST_P(VectorMath, EveryFunctionIsWithinItsUlpBoundOverTheFloatRange) {
  const int width = GetParam();
  // LOOM_LONG_TESTS=1: every float, on the native width only.
  const char* long_tests = std::getenv("LOOM_LONG_TESTS");
  const bool exhaustive = long_tests && std::string(long_tests) == "1" && width == 16;
  const int64_t n = 1 << 20;
  // Not exhaustive: 2^22 floats, bit patterns 1025 apart, cover all 2^32.
  const uint64_t stride = exhaustive ? 1 : 1025, total = uint64_t{1} << 32;
  std::vector<float> in(n), out(n);
  for (const MathCase& c : cases()) {
    auto k = compile_map(c, n, width);
    Worst w;
    for (uint64_t start = 0; start < total; start += n * stride) {
      for (int64_t j = 0; j < n; ++j) in[j] = from_bits(static_cast<uint32_t>(start + j * stride));
      check(c, *k, in, out, w);
    }
    std::vector<float> special(std::begin(kSpecial), std::end(kSpecial)), special_out(special.size());
    auto ks = compile_map(c, static_cast<int64_t>(special.size()), width);
    check(c, *ks, special, special_out, w);
    std::printf("[ info ] %-13s width %2d: max %.3f ulp (at %.9g: %.9g, want %.9g)%s\n", c.name, width, w.ulp,
                w.at, w.got, c.reference(w.at), exhaustive ? ", every float" : "");
    EXPECT_LE(w.ulp, c.max_ulp) << c.name << " at " << w.at << ": " << w.got << ", want " << c.reference(w.at);
  }
}

INSTANTIATE_TEST_SUITE_P(Widths, VectorMath, ::testing::Values(16, 8, 4, 1),
                         [](const auto& info) { return "width" + std::to_string(info.param); });

// The functions are emitted inline: a vectorized exp loop calls nothing.
TEST(VectorMath, VectorLoopsCallNoMathLibrary) {
  for (const MathCase& c : cases()) {
    Var i = make_var("i", 64);
    auto f = func("map", {buf("A", {64}), buf("B", {64})},
                  make_for(i, 64, ForKind::kVectorized, make_store("B", i, c.expr(ld("A", i)))));
    LLVMCompileOptions o;
    o.dump_ir = true;
    auto k = compile_llvm(f, o);
    const std::string ir = k->ir_text().substr(k->ir_text().find("after optimization"));
    EXPECT_EQ(ir.find("call float @"), std::string::npos) << c.name;
    EXPECT_EQ(ir.find("_ZGV"), std::string::npos) << c.name;
  }
}

}  // namespace
}  // namespace loom
