// Float math emitted inline as LLVM IR — range reduction and polynomials, no
// calls — on a float or a <N x float> value alike, so element-wise stages
// vectorize at the native width and scalar tails compute the same values.
// Accuracy against the correctly rounded result (max ulp over every float,
// measured by tests/codegen/test_vector_math.cc, table in the README): exp,
// log, sigmoid, tanh, erf within a few ulp; inf, nan, -0 and denormals as
// libm gives them.
#pragma once

#include <llvm/IR/IRBuilder.h>

namespace loom {
namespace llvm_backend {

llvm::Value* emit_exp(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emit_log(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emit_tanh(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emit_sigmoid(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emit_erf(llvm::IRBuilder<>& b, llvm::Value* x);
// x^y for a constant y in 0, 0.5, 1, ..., 4 or y = -1, -0.5 (x*x*x, 1/x,
// 1/sqrt(x), ...: products of x, its square and its square root); false for
// other exponents (the caller uses powf).
bool emit_pow_constant(llvm::IRBuilder<>& b, llvm::Value* x, double y, llvm::Value** out);

}  // namespace llvm_backend
}  // namespace loom
