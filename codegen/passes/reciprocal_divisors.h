// Division by a loop invariant as a multiplication, for both CPU backends.
// In an innermost loop, `a / b` whose divisor b does not change inside the
// loop (a row's norm, a softmax's sum, a constant) becomes `a * (1 / b)`:
// the compilers hoist `1 / b` out of the loop (they may not turn a division
// into a multiplication themselves without fast-math), and a vector divide
// (about 10 cycles per 16 lanes) becomes a multiply, as oneDNN's and
// PyTorch's softmax do. The result differs from the quotient by the
// rounding of the reciprocal (about 1 ulp), except for a divisor below
// 2^-128 in magnitude (a denormal), whose reciprocal overflows to infinity.
#pragma once

#include "ir/stmt.h"

namespace loom {

LoweredFunc multiply_by_reciprocals(const LoweredFunc& f);

}  // namespace loom
