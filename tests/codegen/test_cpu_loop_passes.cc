// The loop rewrites both CPU backends apply before emission: reduction loops
// as vector lanes plus a halving tree, divisions by loop invariants as
// multiplications. Each rewritten program is run by the JIT and as vector C
// and compared with the scalar C of the program as lowered (the oracle).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "codegen/c/compile.h"
#include "codegen/c/source.h"
#include "codegen/passes/cpu_loop_passes.h"
#include "codegen/passes/reciprocal_divisors.h"
#include "codegen/passes/vector_reductions.h"
#include "llvm_test_util.h"

namespace loom {
namespace {

using namespace llvm_test;

// Serial loops whose body is a single store reading the element it stores:
// the reduction loops left scalar.
int scalar_reduction_loops(const Stmt& body) {
  int n = 0;
  visit_stmt(body, [&](const Stmt& s) {
    if (s->kind != StmtKind::kFor || s->for_kind != ForKind::kSerial) return;
    const Stmt& st = s->body[0];
    if (st->kind != StmtKind::kStore) return;
    bool reads_itself = false;
    visit(st->value, [&](const Expr& e) {
      reads_itself = reads_itself || (e->kind == ExprKind::kLoad && e->name == st->buffer);
    });
    if (reads_itself) ++n;
  });
  return n;
}

int count_divisions(const Stmt& body) {
  int n = 0;
  visit_stmt(body, [&](const Stmt& s) {
    for (const Expr* e : {&s->index, &s->value, &s->cond})
      if (e->defined())
        visit(*e, [&](const Expr& x) { n += x->kind == ExprKind::kDiv && x->dtype == DType::kFloat; });
  });
  return n;
}

// S[i] = S[i] op A[i, k] over k, for rows i: the shape of a row reduction.
LoweredFunc row_reduction(int64_t rows, int64_t extent, ExprKind op) {
  Var i = make_var("i", rows), k = make_var("k", extent);
  Expr acc = ld("S", i);
  Expr term = ld("A", i * int_imm(extent) + k);
  return func("rowred", {buf("A", {rows, extent}), buf("S", {rows})},
              make_for(i, rows, ForKind::kSerial,
                       make_for(k, extent, ForKind::kSerial, make_store("S", i, make_binary(op, acc, term)))));
}

class ReductionLoops : public ::testing::TestWithParam<std::tuple<int64_t, int, ExprKind>> {};

TEST_P(ReductionLoops, BecomeVectorLanesAndATreeThatMatchTheScalarLoop) {
  const auto [extent, width, op] = GetParam();
  LoweredFunc f = row_reduction(3, extent, op);
  LoweredFunc r = vectorize_reduction_loops(f, width);
  EXPECT_EQ(scalar_reduction_loops(r.body), 0) << to_string(r);
  ASSERT_EQ(r.temps.size(), 1u);
  EXPECT_EQ(r.temps[0].scope, BufferScope::kLocal);
  EXPECT_LE(r.temps[0].shape[0], 4 * width);
  expect_rewritten_matches_oracle(f, width, op == ExprKind::kAdd ? 1e-5f * static_cast<float>(extent) : 0.f);
}

std::string reduction_case_name(const ::testing::TestParamInfo<std::tuple<int64_t, int, ExprKind>>& info) {
  const auto [extent, width, op] = info.param;
  const char* name = op == ExprKind::kAdd ? "sum" : op == ExprKind::kMax ? "max" : "min";
  return std::string(name) + "_of_" + std::to_string(extent) + "_in_" + std::to_string(width) + "_lanes";
}

// Extents below one vector, between one and four, past four vectors with
// and without a tail; primes among them.
INSTANTIATE_TEST_SUITE_P(Extents, ReductionLoops,
                         ::testing::Combine(::testing::Values<int64_t>(13, 37, 64, 769), ::testing::Values(16, 4),
                                            ::testing::Values(ExprKind::kAdd, ExprKind::kMax)),
                         reduction_case_name);
INSTANTIATE_TEST_SUITE_P(Min, ReductionLoops,
                         ::testing::Values(std::make_tuple(int64_t{8}, 8, ExprKind::kMin),
                                           std::make_tuple(int64_t{100}, 16, ExprKind::kMin)),
                         reduction_case_name);

TEST(ReductionLoops, AProductReductionFoldsByMultiplication) {
  // Terms near 1 so that the product of 40 stays finite.
  const int64_t e = 40;
  Var k = make_var("k", e);
  LoweredFunc f = func("prod", {buf("A", {e}), buf("P", {1})},
                       make_for(k, e, ForKind::kSerial,
                                make_store("P", 0, ld("P", 0) * (float_imm(1.0) + ld("A", k) * float_imm(0.01)))));
  EXPECT_EQ(scalar_reduction_loops(vectorize_reduction_loops(f, 16).body), 0);
  expect_rewritten_matches_oracle(f, 16, 1e-5f);
}

// S[0] = S[0] + A[stride * k] over 50 terms.
LoweredFunc strided_sum(int64_t stride) {
  const int64_t e = 50;
  Var k = make_var("k", e);
  return func("strided", {buf("A", {stride * e}), buf("S", {1})},
              make_for(k, e, ForKind::kSerial, make_store("S", 0, ld("S", 0) + ld("A", k * int_imm(stride)))));
}

TEST(ReductionLoops, TermsReadWithAStrideOfTwoAreRewritten) {
  LoweredFunc f = strided_sum(2);
  EXPECT_EQ(scalar_reduction_loops(vectorize_reduction_loops(f, 16).body), 0);
  expect_rewritten_matches_oracle(f, 16, 1e-4f);
}

TEST(ReductionLoops, TermsThatWouldGatherStayScalar) {
  EXPECT_EQ(scalar_reduction_loops(vectorize_reduction_loops(strided_sum(8), 16).body), 1);
}

TEST(ReductionLoops, ShortLoopsStayScalar) {
  LoweredFunc f = row_reduction(2, kMinVectorReductionExtent - 1, ExprKind::kAdd);
  EXPECT_EQ(scalar_reduction_loops(vectorize_reduction_loops(f, 16).body), 1);
}

TEST(ReductionLoops, AnAccumulatorThatMovesWithTheLoopIsNoReduction) {
  // S[k] = S[k] + A[k]: independent iterations, left to the vector emitters.
  const int64_t e = 32;
  Var k = make_var("k", e);
  LoweredFunc f = func("acc", {buf("A", {e}), buf("S", {e})},
                       make_for(k, e, ForKind::kSerial, make_store("S", k, ld("S", k) + ld("A", k))));
  LoweredFunc r = vectorize_reduction_loops(f, 16);
  EXPECT_TRUE(r.temps.empty());
  EXPECT_EQ(to_string(r.body), to_string(f.body));
}

TEST(ReductionLoops, ATermReadingTheAccumulatorsBufferStaysScalar) {
  // S[0] = S[0] + S[k]: reordering would read partial sums.
  const int64_t e = 32;
  Var k = make_var("k", e);
  LoweredFunc f = func("self", {buf("S", {e})},
                       make_for(k, e, ForKind::kSerial, make_store("S", 0, ld("S", 0) + ld("S", k))));
  EXPECT_EQ(scalar_reduction_loops(vectorize_reduction_loops(f, 16).body), 1);
}

TEST(ReductionLoops, NoRewriteWithoutVectors) {
  LoweredFunc f = row_reduction(2, 64, ExprKind::kAdd);
  EXPECT_EQ(scalar_reduction_loops(vectorize_reduction_loops(f, 1).body), 1);
}

TEST(ReciprocalDivisors, ADivisionByARowValueBecomesAMultiplication) {
  // Y[i, j] = X[i, j] / S[i]: the divisor is the same for every j.
  const int64_t rows = 3, n = 37;
  Var i = make_var("i", rows), j = make_var("j", n);
  LoweredFunc f = func("scale", {buf("X", {rows, n}), buf("S", {rows}), buf("Y", {rows, n})},
                       make_for(i, rows, ForKind::kSerial,
                                make_for(j, n, ForKind::kVectorized,
                                         make_store("Y", i * int_imm(n) + j,
                                                    ld("X", i * int_imm(n) + j) / (ld("S", i) + float_imm(2.0))))));
  LoweredFunc r = multiply_by_reciprocals(f);
  // One division left: 1 / S[i], which the compilers hoist out of the loop.
  EXPECT_EQ(count_divisions(r.body), 1) << to_string(r);
  EXPECT_NE(to_string(r.body).find("(1.0f/"), std::string::npos) << to_string(r);
  expect_rewritten_matches_oracle(f, 16, 1e-6f);
}

TEST(ReciprocalDivisors, ADivisionByAConstantIsAMultiplicationByItsReciprocal) {
  const int64_t n = 20;
  Var j = make_var("j", n);
  LoweredFunc f = func("third", {buf("X", {n}), buf("Y", {n})},
                       make_for(j, n, ForKind::kSerial, make_store("Y", j, ld("X", j) / float_imm(3.0))));
  EXPECT_EQ(count_divisions(multiply_by_reciprocals(f).body), 0);
  expect_rewritten_matches_oracle(f, 16, 1e-6f);
}

TEST(ReciprocalDivisors, DivisorsThatChangeInTheLoopStayDivisions) {
  const int64_t n = 20;
  Var j = make_var("j", n);
  // By the loop's own variable, and by an element the loop itself stores.
  LoweredFunc f = func("vary", {buf("X", {n}), buf("Y", {n}), buf("Z", {n})},
                       make_for(j, n, ForKind::kSerial,
                                make_seq({make_store("Y", j, ld("X", j) / (ld("X", j) + float_imm(3.0))),
                                          make_store("Z", j, ld("X", j) / ld("Z", 0))})));
  EXPECT_EQ(count_divisions(multiply_by_reciprocals(f).body), 2);
}

TEST(CpuLoopPasses, ARowReductionThenADivisionByItsResult) {
  // Softmax's last two stages: S[i] = sum_k E[i, k]; Y[i, j] = E[i, j] / S[i].
  const int64_t rows = 4, n = 100;
  Var i = make_var("i", rows), k = make_var("k", n), j = make_var("j", n);
  Stmt sum = make_seq({make_store("S", i, float_imm(0.0)),
                       make_for(k, n, ForKind::kSerial,
                                make_store("S", i, ld("S", i) + ld("E", i * int_imm(n) + k)))});
  Stmt scale = make_for(j, n, ForKind::kVectorized,
                        make_store("Y", i * int_imm(n) + j, ld("E", i * int_imm(n) + j) / ld("S", i)));
  LoweredFunc f = func("sm", {buf("E", {rows, n}), buf("S", {rows}), buf("Y", {rows, n})},
                       make_for(i, rows, ForKind::kSerial, make_seq({sum, scale})));
  LoweredFunc r = prepare_cpu_loops(f, 16);
  EXPECT_EQ(scalar_reduction_loops(r.body), 0);
  EXPECT_EQ(count_divisions(r.body), 1);
  expect_rewritten_matches_oracle(f, 16, 1e-4f);
}

}  // namespace
}  // namespace loom
