// LLVM backend: parallel loops through loom_parallel_for.
#include <gtest/gtest.h>

#include <vector>

#include "codegen/llvm/llvm_jit.h"
#include "llvm_test_util.h"

namespace loom {
namespace {

using namespace llvm_test;

TEST(LLVMParallel, EveryIterationRunsExactlyOnce) {
  for (int64_t n : {1, 2, 3, 7, 1000}) {
    Var i = make_var("i", n);
    auto f = func("count", {buf("C", {n})},
                  make_for(i, n, ForKind::kParallel, make_store("C", i, ld("C", i) + 1.0f)));
    for (int threads : {1, 2, 3}) {
      LLVMCompileOptions o;
      o.num_threads = threads;
      o.dump_ir = true;
      auto k = compile_llvm(f, o);
      if (threads > 1) EXPECT_NE(k->ir_text().find("loom_parallel_for"), std::string::npos);
      std::vector<float> c(n, 0.f);
      for (int rep = 0; rep < 3; ++rep) (*k)({c.data()});
      for (int64_t x = 0; x < n; ++x) ASSERT_EQ(c[x], 3.f) << "n=" << n << " threads=" << threads << " i=" << x;
    }
  }
}

TEST(LLVMParallel, CapturesOuterVarsAndVectorizesInside) {
  const int64_t outer = 3, n = 37, e = 20;
  Var o = make_var("o", outer), i = make_var("i", n), j = make_var("j", e);
  Expr idx = (Expr(o) * n + i) * e + j;
  Stmt body = make_for(o, outer, ForKind::kSerial,
                       make_for(i, n, ForKind::kParallel,
                                make_for(j, e, ForKind::kVectorized,
                                         make_store("C", idx, ld("A", idx) * cast(DType::kFloat, o) + ld("B", j)))));
  auto f = func("cap", {buf("A", {outer, n, e}), buf("B", {e}), buf("C", {outer, n, e})}, body);
  LLVMCompileOptions opts;
  opts.num_threads = 2;
  expect_matches_c(f, opts);
}

TEST(LLVMParallel, NestedParallelRunsSerially) {
  const int64_t n = 9, m = 11;
  Var i = make_var("i", n), j = make_var("j", m);
  Expr idx = Expr(i) * m + j;
  auto f = func("nested", {buf("C", {n, m})},
                make_for(i, n, ForKind::kParallel,
                         make_for(j, m, ForKind::kParallel, make_store("C", idx, ld("C", idx) + 1.0f))));
  LLVMCompileOptions o;
  o.num_threads = 2;
  auto k = compile_llvm(f, o);
  std::vector<float> c(n * m, 0.f);
  (*k)({c.data()});
  for (float x : c) ASSERT_EQ(x, 1.f);
}

TEST(LLVMParallel, TempBufferInsideParallelBodyIsPerThread) {
  const int64_t n = 64, e = 24;
  Var i = make_var("i", n), j = make_var("j", e), j2 = make_var("j2", e);
  Stmt body = make_allocate(
      "T.local",
      make_seq({make_for(j, e, ForKind::kVectorized, make_store("T.local", j, ld("A", Expr(i) * e + j) * 2.0f)),
                make_for(j2, e, ForKind::kSerial,
                         make_store("B", Expr(i) * e + j2, ld("T.local", Expr(e - 1) - j2) + cast(DType::kFloat, i)))}));
  auto f = func("ptemp", {buf("A", {n, e}), buf("B", {n, e})}, make_for(i, n, ForKind::kParallel, body),
                {buf("T.local", {e}, BufferScope::kLocal)});
  LLVMCompileOptions o;
  o.num_threads = 2;
  for (int rep = 0; rep < 5; ++rep) expect_matches_c(f, o);
}

}  // namespace
}  // namespace loom
