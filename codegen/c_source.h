// Loop nest -> standalone C99 source.
//
// The C backend is the export format and the correctness oracle for the
// faster backends: it favours obviously-right code over speed. The emitted
// translation unit defines
//   void NAME(float* restrict A, float* restrict B, ...);   // f.args order
//   void NAME_packed(float** args);                          // uniform entry
// where NAME is f.name made into a valid C identifier (see c_function_name).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "codegen/temp_buffers.h"
#include "ir/expr.h"
#include "ir/stmt.h"

namespace loom {

struct CSourceOptions {
  // Parallel loops become `#pragma omp parallel for` (outermost one only);
  // otherwise they are serial loops. Compile with -fopenmp when set.
  bool openmp = false;
  // Vectorized loops get `#pragma GCC ivdep` (asserts no loop-carried
  // dependence); otherwise they are plain loops.
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
