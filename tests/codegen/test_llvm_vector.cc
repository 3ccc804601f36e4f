// LLVM backend: explicit vector code for kVectorized loops.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "codegen/llvm/llvm_jit.h"
#include "ir/error.h"
#include "llvm_test_util.h"

namespace loom {
namespace {

using namespace llvm_test;

std::string ir_before_opt(const CompiledKernel& k) {
  return k.ir_text().substr(0, k.ir_text().find("after optimization"));
}

// C[i, j] = A[i, j] * B[j] + 1 with j vectorized, for several extents.
class VectorExtent : public ::testing::TestWithParam<int64_t> {};

TEST_P(VectorExtent, ElementwiseMatchesExpected) {
  const int64_t rows = 3, e = GetParam();
  Var i = make_var("i", rows), j = make_var("j", e);
  auto f = func("vec", {buf("A", {rows, e}), buf("B", {e}), buf("C", {rows, e})},
                make_for(i, rows, ForKind::kSerial,
                         make_for(j, e, ForKind::kVectorized,
                                  make_store("C", Expr(i) * e + j, ld("A", Expr(i) * e + j) * ld("B", j) + 1.0f))));
  LLVMCompileOptions o;
  o.dump_ir = true;
  auto k = compile_llvm(f, o);
  auto d = random_args(f);
  (*k)(ptrs(d));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < e; ++c)
      ASSERT_FLOAT_EQ(d[2][r * e + c], d[0][r * e + c] * d[1][c] + 1.f) << r << "," << c;
  int w = llvm_native_vector_width();
  if (e >= w) {
    std::string vty = "<" + std::to_string(w) + " x float>";
    EXPECT_NE(ir_before_opt(*k).find("load " + vty), std::string::npos) << ir_before_opt(*k);
    EXPECT_NE(ir_before_opt(*k).find("llvm.fmuladd.v" + std::to_string(w) + "f32"), std::string::npos);
  }
  if (e % w > 1) {  // a one-lane remainder is scalar code
    std::string tail = "<" + std::to_string(e % w) + " x float>";
    EXPECT_NE(ir_before_opt(*k).find(tail), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(Extents, VectorExtent,
                         ::testing::Values(1, 2, 3, 4, 8, 16, 17, 19, 32, 33, 48, 64, 100, 160));

TEST(LLVMVector, NestedVectorizedLoopsVectorizeTheInnerOne) {
  const int64_t n = 4, e = 32;
  Var i = make_var("i", n), j = make_var("j", e);
  Expr idx = Expr(i) * e + j;
  auto f = func("nestvec", {buf("A", {n, e}), buf("B", {n, e})},
                make_for(i, n, ForKind::kVectorized,
                         make_for(j, e, ForKind::kVectorized, make_store("B", idx, ld("A", idx) + 2.0f))));
  LLVMCompileOptions o;
  o.dump_ir = true;
  auto k = compile_llvm(f, o);
  EXPECT_EQ(ir_before_opt(*k).find("llvm.masked.scatter"), std::string::npos);
  expect_matches_c(f);
}

TEST(LLVMVector, FusedLoopIndicesWithDivMod) {
  const int64_t e = 32;
  int w = llvm_native_vector_width();
  Var f1 = make_var("f", e), f2 = make_var("g", e), f3 = make_var("h", e);
  // (f/8)*8 + f%8 is contiguous; (g/8)*10 + g%8 is not; A[h/w] is constant per chunk.
  auto f = func("fused", {buf("A", {4 * 10}), buf("B", {e}), buf("C", {4 * 10}), buf("D", {e})},
                make_seq({make_for(f1, e, ForKind::kVectorized,
                                   make_store("B", (Expr(f1) / 8) * 8 + Expr(f1) % 8, ld("A", f1) + 1.0f)),
                          make_for(f2, e, ForKind::kVectorized,
                                   make_store("C", (Expr(f2) / 8) * 10 + Expr(f2) % 8, ld("A", (Expr(f2) / 8) * 10 + Expr(f2) % 8) * 2.0f)),
                          make_for(f3, e, ForKind::kVectorized,
                                   make_store("D", f3, ld("A", Expr(f3) / w) - 1.0f))}));
  LLVMCompileOptions o;
  o.dump_ir = true;
  auto k = compile_llvm(f, o);
  std::string ir = ir_before_opt(*k);
  if (w == 16) {
    EXPECT_NE(ir.find("store <16 x float>"), std::string::npos);
    EXPECT_NE(ir.find("llvm.masked.gather"), std::string::npos);
  }
  expect_matches_c(f);
}

TEST(LLVMVector, CollidingStoreIndicesFallBackToScalar) {
  const int64_t e = 32;
  Var f1 = make_var("f", e);
  auto f = func("collide", {buf("A", {e}), buf("C", {e / 4})},
                make_for(f1, e, ForKind::kVectorized,
                         make_store("C", Expr(f1) / 4, ld("C", Expr(f1) / 4) + ld("A", f1))));
  LLVMCompileOptions o;
  o.dump_ir = true;
  auto k = compile_llvm(f, o);
  EXPECT_EQ(ir_before_opt(*k).find("scatter"), std::string::npos);
  expect_matches_c(f);
}

TEST(LLVMVector, NarrowerVectorWidthOption) {
  const int64_t e = 37;
  Var j = make_var("j", e);
  auto f = func("w8", {buf("A", {e}), buf("B", {e})},
                make_for(j, e, ForKind::kVectorized, make_store("B", j, ld("A", j) * 3.0f)));
  for (int w : {4, 8}) {
    LLVMCompileOptions o;
    o.vector_width = w;
    expect_matches_c(f, o);
  }
}

TEST(LLVMVector, StridedGatherAndScatter) {
  const int64_t e = 19;
  Var j = make_var("j", e), q = make_var("q", e);
  // B[j] = A[3j + 1]; C[2q] = A[q]; D[(5q) % 19] = A[(7q) % 19] (non-linear)
  auto f = func("gather", {buf("A", {3 * e + 1}), buf("B", {e}), buf("C", {2 * e}), buf("D", {e})},
                make_seq({make_for(j, e, ForKind::kVectorized, make_store("B", j, ld("A", Expr(j) * 3 + 1))),
                          make_for(q, e, ForKind::kVectorized,
                                   make_seq({make_store("C", Expr(q) * 2, ld("A", q)),
                                             make_store("D", (Expr(q) * 5) % 19, ld("A", (Expr(q) * 7) % 19))}))}));
  LLVMCompileOptions o;
  o.dump_ir = true;
  auto k = compile_llvm(f, o);
  EXPECT_NE(ir_before_opt(*k).find("llvm.masked.gather"), std::string::npos);
  EXPECT_NE(ir_before_opt(*k).find("llvm.masked.scatter"), std::string::npos);
  expect_matches_c(f);
}

TEST(LLVMVector, AStrideTwoLoadIsAWideLoadAndAShuffle) {
  // B[j] = A[2j] + A[2j + 1]: A holds exactly the elements read (the last
  // lane's A[2j + 1] is its last), so the wide load must stop there.
  const int64_t e = 37;
  Var j = make_var("j", e);
  auto f = func("stride2", {buf("A", {2 * e}), buf("B", {e})},
                make_for(j, e, ForKind::kVectorized,
                         make_store("B", j, ld("A", Expr(j) * 2) + ld("A", Expr(j) * 2 + 1))));
  LLVMCompileOptions o;
  o.dump_ir = true;
  auto k = compile_llvm(f, o);
  EXPECT_EQ(ir_before_opt(*k).find("llvm.masked.gather"), std::string::npos);
  EXPECT_NE(ir_before_opt(*k).find("shufflevector"), std::string::npos);
  expect_matches_c(f);
}

TEST(LLVMVector, VaryingGuardMasksStores) {
  const int64_t rows = 4, e = 19;
  Var i = make_var("i", rows), j = make_var("j", e);
  Expr idx = Expr(i) * e + j;
  Stmt body = make_if(Expr(j) < 7 + Expr(i), make_store("B", idx, ld("A", idx) * 2.0f),
                      make_if(Expr(j) % 2 == 0, make_store("B", idx, Expr(-1.0f))));
  auto f = func("guard", {buf("A", {rows, e}), buf("B", {rows, e})},
                make_for(i, rows, ForKind::kSerial, make_for(j, e, ForKind::kVectorized, body)));
  LLVMCompileOptions o;
  o.dump_ir = true;
  auto k = compile_llvm(f, o);
  EXPECT_NE(ir_before_opt(*k).find("llvm.masked.store"), std::string::npos);
  auto d = random_args(f);
  std::vector<float> b0 = d[1];
  (*k)(ptrs(d));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < e; ++c) {
      float want = c < 7 + r ? d[0][r * e + c] * 2.f : (c % 2 == 0 ? -1.f : b0[r * e + c]);
      ASSERT_EQ(d[1][r * e + c], want) << r << "," << c;
    }
  expect_matches_c(f);
}

TEST(LLVMVector, UniformGuardBranches) {
  const int64_t rows = 6, e = 32;
  Var i = make_var("i", rows), j = make_var("j", e);
  Expr idx = Expr(i) * e + j;
  Stmt body = make_if(Expr(i) % 2 == 0, make_store("B", idx, ld("A", idx) + 1.0f),
                      make_store("B", idx, ld("A", idx) - 1.0f));
  auto f = func("uguard", {buf("A", {rows, e}), buf("B", {rows, e})},
                make_for(i, rows, ForKind::kSerial, make_for(j, e, ForKind::kVectorized, body)));
  expect_matches_c(f);
}

TEST(LLVMVector, MaskedSelectLoadsStayInBounds) {
  // B[j] = j >= 1 ? A[j-1] : 0, C[j] = j < e-1 ? A[j+1] : 5, with A exactly e long:
  // the vector loads must be masked.
  for (int64_t e : {16, 19, 64}) {
    Var j = make_var("j", e);
    auto f = func("mselect", {buf("A", {e}), buf("B", {e}), buf("C", {e})},
                  make_for(j, e, ForKind::kVectorized,
                           make_seq({make_store("B", j, select(Expr(j) >= 1, ld("A", Expr(j) - 1), Expr(0.0f))),
                                     make_store("C", j, select(Expr(j) < e - 1, ld("A", Expr(j) + 1), Expr(5.0f)))})));
    expect_matches_c(f);
  }
}

TEST(LLVMVector, ReductionIntoOneElementFallsBackToScalar) {
  const int64_t e = 37;
  Var k = make_var("k", e);
  auto f = func("vsum", {buf("A", {e}), buf("S", {1})},
                make_for(k, e, ForKind::kVectorized, make_store("S", 0, ld("S", 0) + ld("A", k))));
  auto kern = compile_llvm(f);
  auto d = random_args(f);
  float want = d[1][0];
  for (int64_t x = 0; x < e; ++x) want += d[0][x];
  (*kern)(ptrs(d));
  EXPECT_NEAR(d[1][0], want, 1e-5f);
}

TEST(LLVMVector, InnerSerialReductionPerLane) {
  const int64_t n = 48, kk = 13;
  Var j = make_var("j", n), k = make_var("k", kk);
  Stmt body = make_seq({make_store("C", j, Expr(0.0f)),
                        make_for(k, kk, ForKind::kSerial,
                                 make_store("C", j, ld("C", j) + ld("A", k) * ld("B", Expr(k) * n + j)))});
  auto f = func("matvec", {buf("A", {kk}), buf("B", {kk, n}), buf("C", {n})},
                make_for(j, n, ForKind::kVectorized, body));
  expect_matches_c(f);
}

TEST(LLVMVector, MathIntegerAndCastsInVectorLoops) {
  const int64_t e = 21;
  Var j = make_var("j", e);
  Expr a = ld("A", j);
  std::vector<Expr> vals = {exp(a), tanh(a), erf(a), sigmoid(a), sqrt(fabs(a)), log(fabs(a) + 1.0f),
                            pow(fabs(a) + 1.0f, Expr(0.5f)),
                            cast(DType::kFloat, (Expr(j) - 8) / 3 + (Expr(j) - 8) % 3 * 100),
                            cast(DType::kFloat, Expr(j) / 4 + Expr(j) % 4 * 10 + min(Expr(j), 5)),
                            max(a, Expr(0.0f)), select(a > 0.0f, a, a * 0.1f)};
  std::vector<Stmt> stores;
  for (size_t r = 0; r < vals.size(); ++r) stores.push_back(make_store("B", Expr(int64_t(r) * e) + j, vals[r]));
  auto f = func("vmath", {buf("A", {e}), buf("B", {int64_t(vals.size()), e})},
                make_for(j, e, ForKind::kVectorized, make_seq(stores)));
  expect_matches_c(f);
}

// pow with an exponent that is not a small constant has no inline form: a
// vector loop calls glibc's vector powf (libmvec) where it exists.
TEST(LLVMVector, PowOfAVaryingExponentUsesLibmvecWhenAvailable) {
  const int64_t e = 64;
  Var j = make_var("j", e);
  Expr a = ld("A", j);
  auto f = func("vpow", {buf("A", {e}), buf("B", {e})},
                make_for(j, e, ForKind::kVectorized, make_store("B", j, pow(fabs(a) + 1.0f, a))));
  LLVMCompileOptions o;
  o.dump_ir = true;
  auto k = compile_llvm(f, o);
  if (llvm_native_vector_width() == 16 && std::getenv("LOOM_NO_LIBMVEC") == nullptr)
    EXPECT_NE(ir_before_opt(*k).find("_ZGVeN16vv_powf"), std::string::npos);
  expect_matches_c(f, {}, 2e-5f);
}

TEST(LLVMVector, BroadcastUniformLoadsAndNestedLoops) {
  const int64_t rows = 5, e = 40, u = 3;
  Var i = make_var("i", rows), j = make_var("j", e), r = make_var("r", u);
  // Vectorized j over an unrolled r and with a uniform load A[i].
  Stmt body = make_for(r, u, ForKind::kUnrolled,
                       make_store("C", (Expr(i) * u + r) * e + j,
                                  ld("A", i) * ld("B", Expr(r) * e + j) + cast(DType::kFloat, r)));
  auto f = func("bcast", {buf("A", {rows}), buf("B", {u, e}), buf("C", {rows, u, e})},
                make_for(i, rows, ForKind::kSerial, make_for(j, e, ForKind::kVectorized, body)));
  expect_matches_c(f);
}

TEST(LLVMVector, VectorizedLoopWithAllocateFallsBack) {
  const int64_t e = 8;
  Var j = make_var("j", e), t = make_var("t", 2);
  Stmt body = make_allocate("T", make_seq({make_for(t, 2, ForKind::kSerial, make_store("T", t, ld("A", j) + cast(DType::kFloat, t))),
                                           make_store("B", j, ld("T", 0) + ld("T", 1))}));
  auto f = func("valloc", {buf("A", {e}), buf("B", {e})}, make_for(j, e, ForKind::kVectorized, body),
                {buf("T", {2}, BufferScope::kLocal)});
  auto k = compile_llvm(f);
  auto d = random_args(f);
  (*k)(ptrs(d));
  for (int64_t x = 0; x < e; ++x) ASSERT_FLOAT_EQ(d[1][x], 2.f * d[0][x] + 1.f) << x;
}

}  // namespace
}  // namespace loom
