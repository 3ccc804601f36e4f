// Simplification of index arithmetic and constant bounds of integer
// expressions (ir/simplify.h): the canonical forms lowering relies on, and the
// bounds the backends use to emit floor division as plain division.
#include <gtest/gtest.h>

#include "ir/simplify.h"

namespace loom {
namespace {

TEST(ConstIntBound, VarsConstantsAndArithmetic) {
  Var i = make_var("i", 10), u = make_var("u");
  IntBound b = const_int_bound(i * 4 + 3);
  EXPECT_EQ(b.min, 3);
  EXPECT_EQ(b.max, 39);
  b = const_int_bound(make_binary(ExprKind::kSub, i, int_imm(5)));
  EXPECT_EQ(b.min, -5);
  EXPECT_EQ(b.max, 4);
  EXPECT_LE(const_int_bound(u).min, IntBound::kNegInf);
  EXPECT_GE(const_int_bound(u).max, IntBound::kPosInf);
  b = const_int_bound(min(i, Expr(3)));
  EXPECT_EQ(b.max, 3);
}

TEST(ConstIntBound, FloorDivAndModOfNegativeRange) {
  Var i = make_var("i", 10);
  Expr x = make_binary(ExprKind::kSub, i, int_imm(5));  // [-5, 4]
  IntBound d = const_int_bound(make_binary(ExprKind::kDiv, x, int_imm(2)));
  EXPECT_EQ(d.min, -3);
  EXPECT_EQ(d.max, 2);
  IntBound m = const_int_bound(make_binary(ExprKind::kMod, x, int_imm(4)));
  EXPECT_EQ(m.min, 0);
  EXPECT_EQ(m.max, 3);
  EXPECT_FALSE(provably_non_negative(x));
  EXPECT_TRUE(provably_non_negative(make_binary(ExprKind::kMod, x, int_imm(4))));
  IntBound one_period = const_int_bound(make_binary(ExprKind::kMod, i + 20, int_imm(32)));
  EXPECT_EQ(one_period.min, 20);
  EXPECT_EQ(one_period.max, 29);
}

TEST(ConstIntBound, DivisionAndModuloByABoundedVariable) {
  Var i = make_var("i", 100), d = make_var("d", 8);  // d in [0, 8): not positive
  Expr pos = d + 1;                                      // [1, 8]
  IntBound q = const_int_bound(make_binary(ExprKind::kDiv, i, pos));
  EXPECT_EQ(q.min, 0);
  EXPECT_EQ(q.max, 99);
  IntBound r = const_int_bound(make_binary(ExprKind::kMod, i, pos));
  EXPECT_EQ(r.min, 0);
  EXPECT_EQ(r.max, 7);
  EXPECT_FALSE(const_int_bound(make_binary(ExprKind::kDiv, i, d)).bounded()) << "d may be 0";
}

TEST(ConstIntBound, ComparisonsAreBoolsAndFloatsAreUnbounded) {
  Var i = make_var("i", 10);
  IntBound c = const_int_bound(i < Expr(int64_t{3}));
  EXPECT_EQ(c.min, 0);
  EXPECT_EQ(c.max, 1);
  EXPECT_FALSE(const_int_bound(Expr(1.5f)).bounded());
}

TEST(Simplify, LongIndexSumsCollapseToOneCanonicalForm) {
  Var i = make_var("i", 4), j = make_var("j", 16), k = make_var("k", 64);
  // ((i*16 + j)*64 + k) - i*1024 - j*64 == k, however the sum is nested.
  Expr e = make_binary(ExprKind::kSub,
                       make_binary(ExprKind::kSub, (i * 16 + j) * 64 + k, i * 1024), j * 64);
  Expr s = simplify(e);
  EXPECT_TRUE(structural_equal(s, k)) << to_string(s);
  // (x / 8) * 8 + x % 8 folds to x inside a longer sum.
  Expr x = i * 16 + j;
  Expr folded = simplify(make_binary(ExprKind::kDiv, x, int_imm(8)) * 8 + k + make_binary(ExprKind::kMod, x, int_imm(8)));
  EXPECT_FALSE(to_string(folded).find('%') != std::string::npos) << to_string(folded);
  EXPECT_TRUE(structural_equal(simplify(make_binary(ExprKind::kSub, folded, x + k)), int_imm(0)))
      << to_string(folded);
}

TEST(Simplify, ASimplifiedExpressionIsReturnedAsIs) {
  Var j = make_var("j", 8), u = make_var("u");
  Expr s = simplify(make_binary(ExprKind::kDiv, u * 8 + j, int_imm(8)));
  EXPECT_TRUE(simplify(s).same_as(s)) << to_string(s);
}

TEST(Simplify, ASubstitutionIntoASimplifiedExpressionIsSimplifiedAfresh) {
  Var i = make_var("i", 8), j = make_var("j", 8), u = make_var("u");
  Expr s = simplify(make_binary(ExprKind::kDiv, u * 8 + j, int_imm(8)));
  // u := i * 8: (i*64 + j) / 8 folds to i*8 (j < 8).
  Expr t = simplify(substitute(s, {{u, i * 8}}));
  EXPECT_TRUE(structural_equal(t, i * 8)) << to_string(t);
}

TEST(Simplify, AComparisonOfAQuotientWithAConstantComparesTheDividend) {
  Var f = make_var("f", 64);
  // The guard of a fused 3 x 5 loop split by 4: f / 5 < 3 is f < 15.
  Expr lt = simplify(make_binary(ExprKind::kLT, make_binary(ExprKind::kDiv, f, int_imm(5)), int_imm(3)));
  EXPECT_TRUE(structural_equal(lt, make_binary(ExprKind::kLT, f, int_imm(15)))) << to_string(lt);
  Expr ge = simplify(make_binary(ExprKind::kGE, make_binary(ExprKind::kDiv, f, int_imm(5)), int_imm(2)));
  EXPECT_TRUE(structural_equal(ge, make_binary(ExprKind::kGE, f, int_imm(10)))) << to_string(ge);
}

}  // namespace
}  // namespace loom
