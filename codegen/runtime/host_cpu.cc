#include "codegen/runtime/host_cpu.h"

namespace loom {

int host_vector_width() {
#if defined(__x86_64__) || defined(__i386__)
  // libgcc's CPU model also checks that the OS saves the registers (XGETBV).
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return 16;
  if (__builtin_cpu_supports("avx")) return 8;
#endif
  return 4;
}

}  // namespace loom
