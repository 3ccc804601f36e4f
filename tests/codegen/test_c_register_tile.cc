// C backend, unrolling at emission (CSourceOptions::unroll_at_emission):
// loops unrolled where the LLVM backend unrolls them, and register tiles —
// the accumulators a reduction loop updates kept in variables.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "codegen/c/compile.h"
#include "codegen/c/source.h"
#include "llvm_test_util.h"

namespace loom {
namespace {

using namespace llvm_test;

CSourceOptions unrolled(int vector_width) {
  CSourceOptions o;
  o.vector_width = vector_width;
  o.unroll_at_emission = true;
  return o;
}

// The text of the block that opens with the first '{' at or after `at`.
std::string block_at(const std::string& src, size_t at) {
  size_t open = src.find('{', at), depth = 0, k = open;
  for (; k < src.size(); ++k) {
    if (src[k] == '{') ++depth;
    if (src[k] == '}' && --depth == 0) break;
  }
  return src.substr(open, k + 1 - open);
}

// The C backend (form `o`) and the LLVM backend leave the same values.
void expect_matches_jit(const LoweredFunc& f, const CSourceOptions& o) {
  auto k = compile_llvm(f);
  auto m = CompiledCModule::from_func(f, o);
  auto a = random_args(f), b = random_args(f);
  (*k)(ptrs(a));
  m.run(ptrs(b));
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t e = 0; e < a[i].size(); ++e)
      ASSERT_NEAR(b[i][e], a[i][e], 1e-5f * (1.f + std::fabs(a[i][e]))) << f.args[i].name << "[" << e << "]";
}

TEST(CUnroll, LoopsAreUnrolledWhereTheJitUnrollsThem) {
  // Under auto_unroll_max_step 16: the unroll-annotated u (4 steps) and the
  // 8-step v disappear; the 32-step k and the enclosing i stay loops.
  const int64_t n = 8;
  Var i = make_var("i", n), u = make_var("u", 4), v = make_var("v", 8), k = make_var("k", 32);
  Stmt body = make_seq({make_for(u, 4, ForKind::kUnrolled, make_store("C", Expr(i) * 4 + u, cast(DType::kFloat, u))),
                        make_for(v, 8, ForKind::kSerial, make_store("D", Expr(i) * 8 + v, ld("A", Expr(i) * 32 + v))),
                        make_for(k, 32, ForKind::kSerial, make_store("E", Expr(i) * 32 + k, ld("A", Expr(i) * 32 + k)))});
  auto f = func("unroll", {buf("A", {n * 32}), buf("C", {n * 4}), buf("D", {n * 8}), buf("E", {n * 32})},
                make_for(i, n, ForKind::kSerial, body, /*auto_unroll=*/16));
  std::string src = emit_c_source(f, unrolled(0));
  EXPECT_EQ(src.find("int64_t u ="), std::string::npos) << src;
  EXPECT_EQ(src.find("int64_t v ="), std::string::npos) << src;
  EXPECT_NE(src.find("int64_t k ="), std::string::npos) << src;
  EXPECT_NE(src.find("int64_t i ="), std::string::npos) << src;
  EXPECT_NE(src.find("C[((i * 4) + 3)] = ((float)3);"), std::string::npos) << src;  // u = 3 in its last copy
  expect_matches_jit(f, unrolled(0));
}

// C[i, j] = sum_k A[i, k] B[k, j] through a local accumulator T of 4 rows of
// N (a cache-write stage): T is zeroed, updated over k, written to C. With
// `guarded`, the update runs only while k < K - i.
LoweredFunc tiled_matmul(int64_t N, int64_t K, bool guarded) {
  const int64_t M = 8;
  Var io = make_var("io", M / 4), ii = make_var("ii", 4), j = make_var("j", N), k = make_var("k", K);
  Var ii2 = make_var("ii", 4), j2 = make_var("j", N), ii3 = make_var("ii", 4), j3 = make_var("j", N);
  Expr t = Expr(ii) * N + j, row = Expr(io) * 4 + ii;
  Stmt update = make_store("T", t, ld("T", t) + ld("A", row * K + k) * ld("B", Expr(k) * N + j));
  if (guarded) update = make_if(Expr(k) < K - row, update);
  Stmt zero = make_for(ii2, 4, ForKind::kSerial,
                       make_for(j2, N, ForKind::kVectorized, make_store("T", Expr(ii2) * N + j2, Expr(0.0f))));
  Stmt reduce = make_for(k, K, ForKind::kSerial,
                         make_for(ii, 4, ForKind::kSerial, make_for(j, N, ForKind::kVectorized, update)));
  Stmt out = make_for(ii3, 4, ForKind::kSerial,
                      make_for(j3, N, ForKind::kVectorized,
                               make_store("C", (Expr(io) * 4 + ii3) * N + j3, ld("T", Expr(ii3) * N + j3))));
  return func("tile", {buf("A", {M, K}), buf("B", {K, N}), buf("C", {M, N})},
              make_for(io, M / 4, ForKind::kSerial, make_allocate("T", make_seq({zero, reduce, out}))),
              {buf("T", {4, N}, BufferScope::kLocal)});
}

// K = 96: too long a loop to unroll; K = 8: the whole allocation unrolls.
TEST(CRegisterTile, AccumulatorsOfAReductionLoopAreVariables) {
  auto f = tiled_matmul(32, 96, false);
  std::string src = emit_c_source(f, unrolled(16));
  // 4 rows x 2 vectors of 16, loaded before the k loop and stored after it.
  EXPECT_NE(src.find("register tile"), std::string::npos) << src;
  EXPECT_NE(src.find("loom_f32x16 loom_acc"), std::string::npos) << src;
  const std::string loop = block_at(src, src.find("for (int64_t k = 0;"));
  EXPECT_EQ(loop.find("T + "), std::string::npos) << loop;  // T is not accessed in memory
  EXPECT_NE(loop.find("loom_acc"), std::string::npos) << loop;
  expect_matches_jit(f, unrolled(16));
}

TEST(CRegisterTile, ScalarAccumulatorsAreVariablesToo) {
  // S[i] = sum_k A[i, k] for 4 rows at a time, through a local T[4].
  const int64_t M = 8, K = 16;
  Var io = make_var("io", M / 4), ii = make_var("ii", 4), k = make_var("k", K);
  Var ii2 = make_var("ii", 4), ii3 = make_var("ii", 4);
  Expr row = Expr(io) * 4 + ii;
  Stmt zero = make_for(ii2, 4, ForKind::kSerial, make_store("T", ii2, Expr(0.0f)));
  Stmt reduce = make_for(k, K, ForKind::kSerial,
                         make_for(ii, 4, ForKind::kSerial, make_store("T", ii, ld("T", ii) + ld("A", row * K + k))));
  Stmt out = make_for(ii3, 4, ForKind::kSerial, make_store("S", Expr(io) * 4 + ii3, ld("T", ii3)));
  auto f = func("rowsum", {buf("A", {M, K}), buf("S", {M})},
                make_for(io, M / 4, ForKind::kSerial, make_allocate("T", make_seq({zero, reduce, out}))),
                {buf("T", {4}, BufferScope::kLocal)});
  std::string src = emit_c_source(f, unrolled(0));
  EXPECT_NE(src.find("float loom_acc"), std::string::npos) << src;
  expect_matches_jit(f, unrolled(0));
}

TEST(CRegisterTile, AccumulatorsOfAMaskedTailAreVariables) {
  // 14 columns: one 16-lane chunk with 2 lanes masked off, loaded and
  // stored back masked.
  auto f = tiled_matmul(14, 96, false);
  std::string src = emit_c_source(f, unrolled(16));
  EXPECT_NE(src.find("register tile"), std::string::npos) << src;
  EXPECT_NE(src.find("loom_f32x16_mload(T + "), std::string::npos) << src;
  expect_matches_jit(f, unrolled(16));
}

TEST(CRegisterTile, SmallTempAccessedAtConstantIndicesIsVariables) {
  auto f = tiled_matmul(32, 8, false);
  std::string src = emit_c_source(f, unrolled(16));
  EXPECT_NE(src.find("allocate T [4, 32] local, held in variables"), std::string::npos) << src;
  EXPECT_EQ(src.find("float T["), std::string::npos) << src;
  expect_matches_jit(f, unrolled(16));
}

TEST(CRegisterTile, LoadsInsideAStoredPartAreItsLanes) {
  // P[r, 0..16) stored whole; read at P + r*16 + s for 14 lanes (a padded
  // row read at three shifts): lanes of the row's variable, no memory.
  const int64_t rows = 3;
  Var r = make_var("r", rows), x = make_var("x", 16), r2 = make_var("r", rows), sh = make_var("s", 3),
      y = make_var("y", 14);
  Stmt fill = make_for(r, rows, ForKind::kSerial,
                       make_for(x, 16, ForKind::kVectorized, make_store("P", Expr(r) * 16 + x, ld("A", Expr(r) * 16 + x))));
  Expr out = (Expr(r2) * 3 + sh) * 14 + y;
  Stmt use = make_for(r2, rows, ForKind::kSerial,
                      make_for(sh, 3, ForKind::kSerial,
                               make_for(y, 14, ForKind::kVectorized,
                                        make_store("B", out, ld("P", Expr(r2) * 16 + sh + y) * 2.0f))));
  auto f = func("views", {buf("A", {rows * 16}), buf("B", {rows * 3 * 14})},
                make_allocate("P", make_seq({fill, use})), {buf("P", {rows, 16}, BufferScope::kLocal)});
  std::string src = emit_c_source(f, unrolled(16));
  EXPECT_NE(src.find("held in variables"), std::string::npos) << src;
  EXPECT_EQ(src.find("(P + "), std::string::npos) << src;
  expect_matches_jit(f, unrolled(16));
}

TEST(CRegisterTile, AccumulatorsUpdatedUnderAGuardStayInMemory) {
  auto f = tiled_matmul(32, 96, true);
  std::string src = emit_c_source(f, unrolled(16));
  EXPECT_EQ(src.find("register tile"), std::string::npos) << src;
  expect_matches_jit(f, unrolled(16));
}

TEST(CRegisterTile, NotFormedWithoutUnrollAtEmission) {
  CSourceOptions o;
  o.vector_width = 16;
  std::string src = emit_c_source(tiled_matmul(32, 96, false), o);
  EXPECT_EQ(src.find("register tile"), std::string::npos) << src;
  EXPECT_EQ(src.find("held in variables"), std::string::npos) << src;
}

}  // namespace
}  // namespace loom
