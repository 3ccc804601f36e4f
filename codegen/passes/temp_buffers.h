// Where the CPU backends (C source and LLVM) put a kernel's temp buffers: up
// to this many bytes an array on the stack (the worker threads' stacks hold
// it, and it stays in L1/L2 with its users), larger ones a 64-byte aligned
// heap block freed at the end of its scope.
#pragma once

#include <cstdint>

namespace loom {

constexpr int64_t kMaxStackTempBytes = 64 * 1024;

}  // namespace loom
