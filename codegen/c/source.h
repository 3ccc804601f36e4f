// Loop nest -> standalone C99 source (with GCC/Clang vector extensions for
// vector code).
//
// The C backend is the export format and the correctness oracle for the
// faster backends. By default it favours obviously-right code over speed
// (scalar loops); with CSourceOptions::vector_width and unroll_at_emission it
// emits the vector code and register tiles the LLVM backend would, so that
// `cc -O3 -march=native` of the unit runs about as fast as the JIT's kernel.
// The emitted translation unit defines
//   void NAME(float* restrict A, float* restrict B, ...);   // f.args order
//   void NAME_packed(float** args);                          // uniform entry
// where NAME is f.name made into a valid C identifier (see c_function_name).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "codegen/passes/temp_buffers.h"
#include "ir/expr.h"
#include "ir/stmt.h"

namespace loom {

// What the parallel loops of the unit become.
enum class CParallel { kSerial, kOpenMP, kRuntime };

struct CSourceOptions {
  // kSerial: parallel loops run serially. kOpenMP: the outermost parallel
  // loop becomes `#pragma omp parallel for` (compile with -fopenmp), with
  // num_threads(N) when num_threads > 0. kRuntime: as the LLVM backend does,
  // the body of the outermost parallel loop is outlined into
  //   static void NAME_parK(int64_t begin, int64_t end, void* closure)
  // (closure: a struct of the buffers and loop variables it uses) and run by
  //   loom_parallel_for(extent, NAME_parK, &closure, num_threads),
  // which the unit declares as
  //   void loom_parallel_for(int64_t extent, void (*body)(int64_t, int64_t, void*),
  //                          void* closure, int32_t num_threads);
  // and a runtime linked with it defines (codegen/runtime/thread_pool.h in this
  // process, codegen/runtime/c_runtime.h for an exported kernel).
  CParallel parallel = CParallel::kSerial;
  int num_threads = 0;
  // 0: kVectorized loops are plain scalar loops (the obviously-right oracle
  // form). 2, 4, 8 or 16: explicit vector code (GCC/Clang vector extensions)
  // in chunks of that many lanes, with the LLVM backend's semantics
  // (codegen/llvm/llvm_jit.h): contiguous, broadcast and gathered loads,
  // masks for varying guards and for a remainder that is not a power of two,
  // inline vector math (and its scalar form for scalar code). As LLVM's loop
  // vectorizer does for the JIT, plain innermost loops whose iterations are
  // independent (codegen/passes/lane_analysis.h) are vectorized too. Other
  // values throw.
  int vector_width = 0;
  // Unroll loops at emission exactly where the LLVM backend does
  // (codegen/passes/unrolling.h), so that the register tile is explicit in
  // the C, and keep register tiles in variables as LLVM's LICM and SROA do
  // for the JIT (codegen/c/register_tile.cc: small inner loops of a
  // reduction are unrolled for it); otherwise unrolled and auto-unrolled
  // loops get `#pragma GCC unroll`.
  bool unroll_at_emission = false;
  // Vectorized loops emitted as scalar loops get `#pragma GCC ivdep`
  // (asserts no loop-carried dependence); otherwise they are plain loops.
  bool ivdep = false;
  // Temp buffers up to this many bytes live on the stack, larger ones are
  // allocated with posix_memalign and freed at the end of their scope.
  int64_t max_stack_bytes = kMaxStackTempBytes;
};

std::string emit_c_source(const LoweredFunc& f, const CSourceOptions& opts = {});

// The helper functions the expressions of to_c_expr call (loom_floordiv,
// loom_mini, loom_sigmoidf, ...), on int64_t and float; each is declared
// LOOM_HELPER, which the unit defines before them (C: static inline; CUDA:
// __device__, with int64_t a typedef of its 32-bit index type).
const char* c_helper_functions();

// Name of the typed function in the emitted source; the packed entry point is
// this name + "_packed".
std::string c_function_name(const LoweredFunc& f);

// A valid C identifier made from `name` ('.' and other characters become
// '_', a leading digit gets a prefix; C keywords get a trailing '_').
std::string sanitize_c_identifier(const std::string& name);

// Maps a variable (kVar) or buffer name to its C identifier.
struct CNames {
  std::function<std::string(const Expr& var)> var;
  std::function<std::string(const std::string& buffer)> buffer;
};

// C expression for `e` (int exprs are int64_t, float exprs float, bools int).
// Without names, a variable is sanitize(name)_id and a buffer sanitize(name).
// Throws LoomError for kReduce and for multi-index loads.
std::string to_c_expr(const Expr& e, const CNames& names = {});

}  // namespace loom
