// The LLVM backend's inline float math (codegen/llvm/vector_math.h) against
// the correctly rounded result (libm in double precision), in ulp of the
// float result, on every vector width and in scalar code. The default run
// sweeps 2^22 floats spread evenly over all 2^32 bit patterns plus the
// special values; DISABLED_VectorMathLong (ctest label long) checks every float on 16 lanes (the
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
#include "vector_math_cases.h"

namespace loom {
namespace {

using namespace llvm_test;
using namespace math_cases;

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

// Every function on `width` lanes within its ulp bound: over 2^22 floats
// spread across all bit patterns, or (`exhaustive`) over every float.
void check_ulp_bounds(int width, bool exhaustive) {
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

class VectorMath : public ::testing::TestWithParam<int> {};

TEST_P(VectorMath, EveryFunctionIsWithinItsUlpBoundOverTheFloatRange) { check_ulp_bounds(GetParam(), false); }

// ctest label long (a run by hand: --gtest_also_run_disabled_tests): every
// float, on the native width.
TEST(DISABLED_VectorMathLong, EveryFunctionIsWithinItsUlpBoundOnEveryFloat) { check_ulp_bounds(16, true); }

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
