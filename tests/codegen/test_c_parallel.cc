// C backend, parallel loops (CSourceOptions::parallel): serial, OpenMP, and
// outlined bodies run by loom_parallel_for as the LLVM backend runs them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/c/compile.h"
#include "codegen/c/source.h"
#include "tests/support/loop_nest.h"

namespace loom {
namespace {

using namespace loop_nest;

// B[o, p] = A[o, p] * 2 + o, p parallel inside a serial o: the body reads two
// buffers and the enclosing loop's variable.
LoweredFunc nested_parallel() {
  const int64_t rows = 3, cols = 10;
  Var o = make_var("o", rows), p = make_var("p", cols);
  Expr idx = Expr(o) * cols + p;
  return func("par", {buf("A", {rows, cols}), buf("B", {rows, cols})},
              make_for(o, rows, ForKind::kSerial,
                       make_for(p, cols, ForKind::kParallel,
                                make_store("B", idx, ld("A", idx) * 2.0f + cast(DType::kFloat, o)))));
}

void expect_computes_nested_parallel(const CompiledCModule& m) {
  std::vector<float> a(30), b(30, -1.f);
  for (int k = 0; k < 30; ++k) a[k] = 0.5f * k;
  m.run({a.data(), b.data()});
  for (int k = 0; k < 30; ++k) ASSERT_EQ(b[k], a[k] * 2.f + static_cast<float>(k / 10)) << k;
}

// A runtime for the tests: the body over two halves of the range, in order.
const char* kTwoHalvesRuntime = R"C(
void loom_parallel_for(int64_t extent, void (*body)(int64_t, int64_t, void*), void* closure,
                       int32_t num_threads) {
  (void)num_threads;
  body(0, extent / 2, closure);
  body(extent / 2, extent, closure);
}
)C";

TEST(CParallel, RuntimeModeOutlinesTheBodyWithAClosure) {
  CSourceOptions o;
  o.parallel = CParallel::kRuntime;
  o.num_threads = 2;
  auto f = nested_parallel();
  std::string src = emit_c_source(f, o);
  EXPECT_NE(src.find("void loom_parallel_for(int64_t extent, void (*body)(int64_t, int64_t, void*), void* closure,"),
            std::string::npos) << src;
  EXPECT_NE(src.find("static void par_par0(int64_t loom_begin, int64_t loom_end, void* loom_closure)"),
            std::string::npos) << src;
  EXPECT_NE(src.find("  int64_t o;\n"), std::string::npos) << src;  // the closure holds the outer variable
  EXPECT_NE(src.find("loom_parallel_for(10, par_par0, &"), std::string::npos) << src;
  EXPECT_NE(src.find(", 2);"), std::string::npos) << src;
  expect_computes_nested_parallel(CompiledCModule(src + kTwoHalvesRuntime, "par_packed"));
}

TEST(CParallel, RuntimeModeRunsNestedParallelLoopsSerially) {
  Var p = make_var("p", 4), q = make_var("q", 8);
  auto f = func("nested", {buf("B", {4, 8})},
                make_for(p, 4, ForKind::kParallel,
                         make_for(q, 8, ForKind::kParallel,
                                  make_store("B", Expr(p) * 8 + q, cast(DType::kFloat, Expr(p) * 8 + q)))));
  CSourceOptions o;
  o.parallel = CParallel::kRuntime;
  std::string src = emit_c_source(f, o);
  EXPECT_EQ(src.find("nested_par1"), std::string::npos) << src;
  CompiledCModule m(src + kTwoHalvesRuntime, "nested_packed");
  std::vector<float> b(32);
  m.run({b.data()});
  for (int k = 0; k < 32; ++k) ASSERT_EQ(b[k], k);
}

TEST(CParallel, OpenMPModeWithAThreadCount) {
  CSourceOptions o;
  o.parallel = CParallel::kOpenMP;
  o.num_threads = 2;
  auto f = nested_parallel();
  std::string src = emit_c_source(f, o);
  EXPECT_NE(src.find("#pragma omp parallel for num_threads(2)"), std::string::npos) << src;
  expect_computes_nested_parallel(CompiledCModule::from_func(f, o));
}

TEST(CParallel, SerialModeIgnoresParallelLoops) {
  auto f = nested_parallel();
  std::string src = emit_c_source(f);
  EXPECT_EQ(src.find("#pragma omp"), std::string::npos) << src;
  EXPECT_EQ(src.find("loom_parallel_for"), std::string::npos) << src;
  expect_computes_nested_parallel(CompiledCModule::from_func(f));
}

}  // namespace
}  // namespace loom
