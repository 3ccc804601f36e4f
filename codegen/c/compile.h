// Compile emitted C source with the system C compiler and load it.
//
// Each module is compiled to a uniquely named shared object in a per-process
// temp dir, dlopen'ed, and the files are removed right after loading.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/c/source.h"
#include "ir/stmt.h"

namespace loom {

struct CCompileOptions {
  // Compiler program; empty means $LOOM_CC if set, else "cc".
  std::string compiler;
  std::string opt_level = "-O2";
  bool march_native = true;
  bool openmp = false;  // adds -fopenmp
  std::vector<std::string> extra_flags;
};

using PackedCFunc = void (*)(float** args);

class CompiledCModule {
 public:
  // Compiles `source` and looks up `entry` (a `void entry(float**)` symbol).
  // `num_args` >= 0 makes run() check the argument count. Throws LoomError
  // with the first lines of the compiler's diagnostics on failure.
  CompiledCModule(const std::string& source, const std::string& entry,
                  const CCompileOptions& opts = {}, int num_args = -1);
  ~CompiledCModule();
  CompiledCModule(CompiledCModule&& other) noexcept;
  CompiledCModule& operator=(CompiledCModule&& other) noexcept;
  CompiledCModule(const CompiledCModule&) = delete;
  CompiledCModule& operator=(const CompiledCModule&) = delete;

  // emit_c_source + compile; opts.openmp is taken from the source options.
  static CompiledCModule from_func(const LoweredFunc& f, const CSourceOptions& src_opts = {},
                                   CCompileOptions cc_opts = {});

  void run(std::vector<float*> args) const;
  void run(float** args) const { fn_(args); }
  PackedCFunc function() const { return fn_; }
  const std::string& source() const { return source_; }

 private:
  void* handle_ = nullptr;
  PackedCFunc fn_ = nullptr;
  int num_args_ = -1;
  std::string source_;
};

// Runs argv (the program looked up in PATH) with stdout and stderr written to
// log_path; returns its exit status (128 + the signal when killed). Throws
// LoomError when the program cannot be started.
int run_process(const std::vector<std::string>& argv, const std::string& log_path);

// The system C compiler: $LOOM_CC if set, else "cc".
std::string default_c_compiler();

// The compiler command line (without input/output files) for these options.
std::vector<std::string> c_compile_command(const CCompileOptions& opts);

}  // namespace loom
