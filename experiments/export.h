// Export of the best schedule of each task: the replayable record (steps
// JSON), a standalone C source file of the lowered program, and the loop nest
// as text — what a user takes away from a tuning run.
#pragma once

#include <string>
#include <vector>

#include "measure/records.h"

namespace loom {

struct ExportedFiles {
  std::string task;  // description
  std::string record_path, c_path, loop_nest_path;
};

// A file-name stem for a task: "matmul_M1024_N1024_K1024".
std::string task_file_stem(const Task& task);

// Writes the best valid record of each task found in `records` under `dir`
// (created if needed). Tasks without a valid record are skipped.
std::vector<ExportedFiles> export_best(const std::vector<Task>& tasks,
                                       const std::vector<MeasureRecord>& records,
                                       const std::string& dir);

}  // namespace loom
