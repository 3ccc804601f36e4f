// Loop nest -> native code through LLVM 14 (ORC LLJIT), for the host CPU.
//
// Plain interface: no LLVM headers here (only codegen/llvm/*.cc see LLVM).
//
//   auto k = compile_llvm(lowered, {/*num_threads=*/1});
//   (*k)({A.data(), B.data(), C.data()});   // LoweredFunc::args order
//
// What the backend does with the loop annotations:
//  - kVectorized: explicit vector code in chunks of the native width (16 floats
//    with AVX-512; a narrower last chunk for the remainder). Indices that are
//    contiguous across the lanes (stride 1, also through floor div/mod of
//    fused loops) become vector loads/stores, indices constant within a chunk
//    scalar loads + broadcast, others gathers/scatters; guards and selects
//    whose condition varies become masks (masked loads never touch inactive
//    lanes). a*b+c becomes llvm.fmuladd (FMA). exp/log/tanh/erf/sigmoid
//    and pow with a small constant exponent are inline code
//    (vector_math.h); other pow calls glibc's libmvec when present. Loops that cannot be vectorized safely
//    (a store several lanes would make to one element, an allocation inside,
//    an inner vectorized loop) fall back to scalar loops.
//  - Buffers: arguments are distinct (alias-scope metadata per buffer); temps
//    up to kMaxStackTempBytes (64 KiB, codegen/passes/temp_buffers.h) are stack
//    arrays, larger ones 64-byte aligned heap blocks.
//  - Integers are i64 with floor division/modulo (shifts/unsigned ops when
//    int_bound proves the operands non-negative; a possibly-zero divisor is
//    replaced by 1 where it is zero, so untaken select arms cannot trap).
//  - kUnrolled: fully unrolled at emission; `auto_unroll_max_step` unrolls the
//    serial loops below it whose nest has at most that many steps.
//  - kParallel: the body is outlined and run by loom_parallel_for
//    (codegen/runtime/thread_pool.h) with opts.num_threads threads; nested
//    parallel loops run serially.
// Other loop kinds (GPU bindings, vthread) are emitted as serial loops.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/stmt.h"

namespace loom {

struct LLVMCompileOptions {
  int num_threads = 1;
  // Keep the textual IR (before and after optimization) and the assembly of
  // the kernel; read them with CompiledKernel::ir_text()/asm_text().
  bool dump_ir = false;
  // LLVM optimization level of the IR pipeline (0..3).
  int opt_level = 3;
  // Vector width in floats for kVectorized loops; 0 = native
  // (host_vector_width(): 16 with AVX-512, 8 with AVX, else 4).
  int vector_width = 0;
};

// A compiled kernel; its machine code is freed with it.
class CompiledKernel {
 public:
  virtual ~CompiledKernel();
  // Runs the kernel; args are buffer pointers in LoweredFunc::args order.
  // Throws LoomError when the count does not match.
  virtual void operator()(const std::vector<float*>& args) const = 0;
  // Raw entry: `void entry(float** args)`.
  virtual void run(float* const* args) const = 0;
  // Wall-clock seconds of IR emission + optimization + machine-code generation.
  virtual double compile_seconds() const = 0;
  virtual size_t num_args() const = 0;
  // Empty unless LLVMCompileOptions::dump_ir was set.
  virtual const std::string& ir_text() const = 0;
  virtual const std::string& asm_text() const = 0;
};

// Compiles `f` for the host CPU. Throws LoomError with a one-line message when
// the program cannot be compiled (unknown buffer, reduction left in the loop
// nest, LLVM failure). Thread-safe.
std::unique_ptr<CompiledKernel> compile_llvm(const LoweredFunc& f,
                                             const LLVMCompileOptions& opts = {});

// The same kernel as compile_llvm(f, opts) builds (same IR, CPU, features
// and optimization pipeline), as a position-independent ELF object file for
// the host: it defines `void NAME_packed(float** args)` and
// `void NAME(float* a0, ..., float* aN)` (LoweredFunc::args order; the C
// backend's unit has the same two). It calls loom_parallel_for when
// opts.num_threads > 1 (a runtime: codegen/runtime/c_runtime.h), and may call
// powf, aligned_alloc, free, memset/memcpy and glibc's libmvec: link with
// -lmvec -lm. Throws LoomError as compile_llvm does.
std::string compile_llvm_object(const LoweredFunc& f, const std::string& name,
                                const LLVMCompileOptions& opts = {});

// Host CPU as LLVM sees it, e.g. "znver3 (+avx512f,...)": for logs.
std::string llvm_host_cpu_description();
// Native vector width in floats used for kVectorized loops.
int llvm_native_vector_width();

}  // namespace loom
