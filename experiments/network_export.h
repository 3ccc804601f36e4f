// `loom export` of a network config: the whole network as standalone C.
// Next to each task's files (experiments/export.h) it writes NAME.h and
// NAME.c, the executor's call sequence over the tasks' kernels (each
// task's C source: the log's best schedule, or the executor's default
// schedule for a task the log has no record of), with the model's
// constants in NAME.weights.bin, read and pre-transformed into the kernels'
// layouts by NAME_init. --check builds it with the system compiler, runs it
// on the same inputs as the executor and compares the outputs and times.
#pragma once

#include <string>
#include <vector>

#include "experiments/config.h"
#include "measure/records.h"

namespace loom {

struct NetworkExport {
  std::string name;  // C identifier prefix: NAME_init, NAME_run, NAME_free
  std::string header_path, c_path, weights_path;
  std::vector<std::string> kernel_sources;  // one C file per task
  int default_schedules = 0;                // tasks without a record in the log
  int untimed_schedules = 0;                // tasks with only an untimed record (chosen with nothing timed)
};

NetworkExport export_network(const ExperimentConfig& cfg, const std::vector<MeasureRecord>& records);

struct NetworkExportCheck {
  std::string problem;  // "" when the C network built, ran and matched
  double max_abs_error = 0;
  double c_s = 0, executor_s = 0;  // medians, interleaved rounds
};

// Builds NAME.c with the kernels and loom_runtime.c by `compiler` into a
// harness, runs it on the executor's seed-1 inputs, compares its outputs
// with the executor's and times both in `rounds` alternating rounds.
NetworkExportCheck check_network_export(const ExperimentConfig& cfg, const NetworkExport& e,
                                        const std::string& compiler, int rounds);

}  // namespace loom
