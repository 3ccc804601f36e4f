// Export of the best schedule of each task — what a user takes away from a
// tuning run. For every task with a valid record, under the export folder:
//   STEM.record.json  the replayable record (steps JSON)
//   STEM.loops.txt    the loop nest as text
//   STEM.h            the C interface: STEM(args...) and STEM_packed(float**),
//                     the argument order, shapes and roles, how to link
// and for CPU targets
//   STEM.o, libSTEM.a the measured kernel itself: the object file of the LLVM
//                     pipeline that built the timed kernel (same IR, CPU
//                     features and optimization), and a static library of it
//                     with the runtime (loom_runtime.o)
//   STEM.c            standalone C of the same loop nest with explicit vector
//                     code (GCC/Clang vector extensions) and unrolling at the
//                     points the LLVM backend unrolls
// plus loom_runtime.h / loom_runtime.c (codegen/runtime/c_runtime.h), shared
// by all.
// STEM is task_file_stem(task), also the C symbol.
#pragma once

#include <string>
#include <vector>

#include "ir/stmt.h"
#include "measure/records.h"

namespace loom {

struct ExportedFiles {
  std::string task;  // description
  std::string stem;
  Task task_def;
  nlohmann::json steps;  // the record's
  std::string record_path, c_path, loop_nest_path, header_path;
  std::string object_path, library_path;  // empty for non-CPU targets
  double measured_s = 0;  // the record's median time
  int measurements = 0;
};

// Writes `text` to `path`; throws LoomError naming the path when it cannot.
void write_file(const std::string& path, const std::string& text);

// The exported header's function writing the blocked copy of a
// pre-transformed argument: STEM_pretransform_ARG(const float* source, float* dst).
std::string pretransform_function_name(const std::string& stem, const Buffer& arg);

// Runs one build command (compiler, ar, a harness build) with its output in
// log_path: "" when it succeeded (the log is removed), else a one-line
// description naming the command, its exit status and its first output line.
std::string run_build_command(const std::vector<std::string>& argv, const std::string& log_path);

// A file-name stem and C identifier for a task: "matmul_M1024_N1024_K1024_t1".
std::string task_file_stem(const Task& task);

// Writes the best valid record of each task found in `records` under `dir`
// (created if needed). Tasks without a valid record are skipped. Building the
// static libraries needs the system C compiler and `ar` ($LOOM_CC, else cc);
// their failure is a LoomError naming the command.
std::vector<ExportedFiles> export_best(const std::vector<Task>& tasks,
                                       const std::vector<MeasureRecord>& records,
                                       const std::string& dir);

}  // namespace loom
