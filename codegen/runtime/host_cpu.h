// What the host CPU's vectors hold, without LLVM: the sketch rules, the tuner
// and the LLVM JIT all take the native vector width from here, so sketch
// decisions and the emitted code agree.
#pragma once

namespace loom {

// Floats per native vector register: 16 with AVX-512F, 8 with AVX, else 4.
int host_vector_width();

}  // namespace loom
