// `loom export --check`: builds every exported artifact with the system
// compiler, links each into a generated C harness (check/check_STEM.c) that
// reads the task's reference data (random inputs and the reference
// interpreter's outputs, measure/reference_data.h), checks the outputs and
// times the kernel with the tuner's protocol (warm-up, `repeat` groups of at
// least `min_repeat_ms`, the median group). The tuner's own kernel is
// re-measured through the Measurer in the same run, interleaved round by
// round with the exported builds: the speed of each build is the median of
// the rounds' ratios against it (and, for reference, its median time
// against the record's).
#pragma once

#include <string>
#include <vector>

#include "codegen/c/compile.h"
#include "experiments/export.h"
#include "measure/measurer.h"

namespace loom {

struct ExportCheckOptions {
  // C compilers to build the C source with ("cc", "gcc", "clang", ...).
  std::vector<std::string> compilers = {default_c_compiler()};
  int rounds = 5;
  MeasureOptions measure;  // timing protocol and tolerances
  // A build slower than the re-measured kernel by more than this is reported.
  double max_slowdown = 1.10;
};

struct ExportCheckRow {
  std::string build;     // "library" or "C (gcc 12.2.0)"
  double median_s = 0;   // median over the rounds
  // Median over the rounds of the tuner's kernel's time / this build's time
  // (a round's runs are seconds apart: the load of the moment cancels out).
  double speed = 0;
  std::string problem;   // empty when built, correct and timed
};

struct ExportCheckResult {
  std::string task, stem;
  int threads = 1;
  double record_s = 0;  // the record's time
  double jit_s = 0;     // the tuner's kernel, re-measured now (median of rounds)
  std::string jit_problem;
  std::vector<ExportCheckRow> builds;
};

// Checks the exported files of `files` (written by export_best into `dir`).
// Never throws for a build, a run or a mismatch of one artifact: that is
// its row's problem. Progress lines go to stderr.
std::vector<ExportCheckResult> check_exports(const std::vector<ExportedFiles>& files,
                                             const std::string& dir, const ExportCheckOptions& opts);

// Adds the results of `r` to the first comment of the exported C file (its
// header says which compilers were checked, on which CPU, at what speed).
void note_check_in_c_source(const ExportedFiles& e, const ExportCheckResult& r, const std::string& cpu);

// Whether a row is a failure: a problem, or a speed below 1 / max_slowdown.
bool export_check_failed(const ExportCheckResult& r, const ExportCheckRow& row, double max_slowdown);

}  // namespace loom
