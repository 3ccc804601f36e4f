// Transposing copies in register tiles, in the LLVM backend
// (codegen/llvm/transpose.cc) and the C backend's vector form
// (codegen/c/transpose.cc), checked against the scalar C form on the same
// inputs.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "codegen/c/compile.h"
#include "codegen/c/source.h"
#include "codegen/llvm/llvm_jit.h"
#include "llvm_test_util.h"

namespace loom {
namespace {

using namespace llvm_test;

std::string ir_before_opt(const CompiledKernel& k) {
  return k.ir_text().substr(0, k.ir_text().find("after optimization"));
}

// value_T[h, d, l] = value[l, h, d] (attention's transposed keys) over
// H heads, d in 0..D, l in 0..L: the store contiguous along l, the load
// along d. `store_axis_inside` puts l inside d (else d inside l).
LoweredFunc head_transpose(int64_t H, int64_t D, int64_t L, bool store_axis_inside, ForKind inner_kind) {
  Var h = make_var("h", H), d = make_var("d", D), l = make_var("l", L);
  Stmt store = make_store("value_T", (Expr(h) * D + d) * L + l, ld("value", (Expr(l) * H + h) * D + d));
  Stmt nest = store_axis_inside ? make_for(d, D, ForKind::kSerial, make_for(l, L, inner_kind, store))
                                : make_for(l, L, ForKind::kSerial, make_for(d, D, inner_kind, store));
  return func("transpose", {buf("value", {L, H, D}), buf("value_T", {H, D, L})},
              make_for(h, H, ForKind::kSerial, nest));
}

// The C backend's vector form of f computes what its scalar form does; its
// source comes back.
std::string expect_c_vector_form_like_scalar(const LoweredFunc& f, int width) {
  CSourceOptions o;
  o.vector_width = width;
  o.unroll_at_emission = true;
  auto vector_form = CompiledCModule::from_func(f, o);
  auto scalar_form = CompiledCModule::from_func(f);
  auto a = random_args(f), b = random_args(f);
  vector_form.run(ptrs(a));
  scalar_form.run(ptrs(b));
  EXPECT_EQ(a, b);
  return emit_c_source(f, o);
}

// ... and emits register transposes.
void expect_c_transposes_like_scalar(const LoweredFunc& f, int width) {
  EXPECT_NE(expect_c_vector_form_like_scalar(f, width).find("__builtin_shufflevector(loom_row"), std::string::npos);
}

// (D, L, store axis inside, inner loop kind, vector width)
class TransposeTiles : public ::testing::TestWithParam<std::tuple<int64_t, int64_t, bool, ForKind, int>> {};

TEST_P(TransposeTiles, InLLVMMatchTheElementwiseCopy) {
  const auto [D, L, store_inside, kind, width] = GetParam();
  LoweredFunc f = head_transpose(3, D, L, store_inside, kind);
  LLVMCompileOptions o;
  o.vector_width = width;
  o.dump_ir = true;
  auto k = compile_llvm(f, o);
  EXPECT_NE(ir_before_opt(*k).find("shufflevector"), std::string::npos) << "no register transpose";
  expect_matches_c(f, o, 0.f);
}

TEST_P(TransposeTiles, InTheCVectorFormMatchTheElementwiseCopy) {
  const auto [D, L, store_inside, kind, width] = GetParam();
  expect_c_transposes_like_scalar(head_transpose(3, D, L, store_inside, kind), width);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, TransposeTiles,
    ::testing::Values(std::make_tuple(16, 16, true, ForKind::kSerial, 16),
                      std::make_tuple(64, 128, true, ForKind::kVectorized, 16),
                      std::make_tuple(17, 35, true, ForKind::kSerial, 16),   // tails on both sides
                      std::make_tuple(35, 17, false, ForKind::kSerial, 16),  // the other loop order
                      std::make_tuple(40, 24, false, ForKind::kUnrolled, 8),
                      std::make_tuple(13, 9, true, ForKind::kVectorized, 4)));

// conv[c, h, w] = local[h, w, c] over C channels, H rows, W columns: a
// channels-last accumulator tile written out as NCHW, the rows loop between
// the two axes.
LoweredFunc channels_last_out(int64_t C, int64_t H, int64_t W) {
  Var c = make_var("c", C), h = make_var("h", H), x = make_var("x", W);
  return func("out", {buf("local", {H, W, C}), buf("conv", {C, H, W})},
              make_for(c, C, ForKind::kSerial,
                       make_for(h, H, ForKind::kSerial,
                                make_for(x, W, ForKind::kVectorized,
                                         make_store("conv", (Expr(c) * H + h) * W + x,
                                                    ld("local", (Expr(h) * W + x) * C + c))))));
}

TEST(LLVMTranspose, AChannelsLastTileWrittenOutAsNCHW) {
  for (auto [C, H, W] : {std::make_tuple(16, 7, 56), std::make_tuple(32, 3, 20), std::make_tuple(17, 2, 16)}) {
    LoweredFunc f = channels_last_out(C, H, W);
    LLVMCompileOptions o;
    o.dump_ir = true;
    auto k = compile_llvm(f, o);
    EXPECT_NE(ir_before_opt(*k).find("shufflevector"), std::string::npos);
    expect_matches_c(f, o, 0.f);
  }
}

TEST(CTranspose, AChannelsLastTileWrittenOutAsNCHW) {
  for (auto [C, H, W] : {std::make_tuple(16, 7, 56), std::make_tuple(32, 3, 20), std::make_tuple(17, 2, 16)}) {
    expect_c_transposes_like_scalar(channels_last_out(C, H, W), 16);
  }
}

// relu[c, h, w] = max(local[h, w, c] + bias[c], 0): a conv + bias + ReLU's
// channels-last accumulator written out as NCHW.
LoweredFunc channels_last_bias_relu_out(int64_t C, int64_t H, int64_t W) {
  Var c = make_var("c", C), h = make_var("h", H), x = make_var("x", W);
  Expr value = max(ld("local", (Expr(h) * W + x) * C + c) + ld("bias", Expr(c)), Expr(0.0f));
  return func("out", {buf("local", {H, W, C}), buf("bias", {C}), buf("relu", {C, H, W})},
              make_for(c, C, ForKind::kSerial,
                       make_for(h, H, ForKind::kSerial,
                                make_for(x, W, ForKind::kVectorized,
                                         make_store("relu", (Expr(c) * H + h) * W + x, value)))));
}

TEST(LLVMTranspose, AChannelsLastTileWithBiasAndReLUWrittenOutAsNCHW) {
  // 56 = 3 tiles of 16 and one of 8; 14 = 8 + 4 + 2; 8 alone; 17 channels
  // leave a row of each tile element by element.
  for (auto [C, H, W] : {std::make_tuple(64, 1, 56), std::make_tuple(32, 7, 14), std::make_tuple(32, 7, 8),
                         std::make_tuple(17, 2, 28)}) {
    LoweredFunc f = channels_last_bias_relu_out(C, H, W);
    LLVMCompileOptions o;
    o.dump_ir = true;
    auto k = compile_llvm(f, o);
    const std::string ir = ir_before_opt(*k);
    EXPECT_NE(ir.find("shufflevector"), std::string::npos) << C << " " << H << " " << W;
    EXPECT_EQ(ir.find("gather"), std::string::npos) << C << " " << H << " " << W;
    expect_matches_c(f, o, 0.f);
  }
}

TEST(CTranspose, AnEpilogueStaysElementwiseInC) {
  // The C backend transposes copies only; it computes the same values.
  const std::string source = expect_c_vector_form_like_scalar(channels_last_bias_relu_out(32, 2, 16), 16);
  EXPECT_EQ(source.find("__builtin_shufflevector(loom_row"), std::string::npos);
}

TEST(LLVMTranspose, ALoadRunningBackwardsAcrossRows) {
  // B[k, l] = A[(n - 1 - l), k]: the rows of the tile are read last to first.
  const int64_t m = 32, n = 20;
  Var k = make_var("k", m), l = make_var("l", n);
  auto f = func("backwards", {buf("A", {n, m}), buf("B", {m, n})},
                make_for(k, m, ForKind::kSerial,
                         make_for(l, n, ForKind::kSerial,
                                  make_store("B", Expr(k) * n + l, ld("A", (Expr(n - 1) - l) * m + k)))));
  expect_matches_c(f, {}, 0.f);
}

TEST(LLVMTranspose, NestsBelowOneTileStayElementwise) {
  LoweredFunc f = head_transpose(2, 5, 7, true, ForKind::kSerial);
  LLVMCompileOptions o;
  o.dump_ir = true;
  auto k = compile_llvm(f, o);
  EXPECT_EQ(ir_before_opt(*k).find("shufflevector"), std::string::npos);
  expect_matches_c(f, o, 0.f);
}

}  // namespace
}  // namespace loom
