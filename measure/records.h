// The records log: one JSON line per measured candidate,
//
//   {"task": {"workload": "matmul", "params": {...}, "dtype": "float32",
//             "target": "cpu -threads=1"},
//    "steps": [["SP", 2, 0, 512, [8, 4, 16], 1], ...],
//    "result": {"costs_s": [...], "error": "none", "error_msg": "..." (errors only),
//               "build_s": 0.03, "check_s": 0.002, "run_s": 0.08, "timestamp": 1795000000,
//               "machine": {"cpu": "AMD EPYC", "isa": "avx512", "cores": 2},
//               "node": "host3 rank 2" (distributed jobs only)},
//    "version": 1}
//
// Append-only. RecordLog writes each batch with one write(2) on an O_APPEND
// file (so a killed tuner leaves whole lines, at worst one cut line at the
// end) and can fsync. Reading keeps every complete record and skips, with a
// one-line warning each, a truncated last line or a malformed line.
#pragma once

#include <limits>
#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/measure_result.h"
#include "measure/task.h"

namespace loom {

constexpr int kRecordVersion = 1;

struct MeasureRecord {
  Task task;
  nlohmann::json steps = nlohmann::json::array();
  MeasureResult result;

  std::string task_key() const { return task.key(); }
  // A schedule chosen with nothing timed ("error": "not_measured"): not a
  // measurement, no trial, never a training program.
  bool untimed() const { return result.error == ErrorKind::kNotMeasured; }
};

// An untimed record of these steps for the task, on this machine.
MeasureRecord untimed_record(const Task& task, const nlohmann::json& steps);

nlohmann::json record_to_json(const MeasureRecord& r);
// Strict; throws LoomError naming the bad field.
MeasureRecord record_from_json(const nlohmann::json& j);

class RecordLog {
 public:
  // Opens (creating) `path` for appending; throws LoomError on failure. A
  // log whose last line was cut by a crash gets a newline first, so the cut
  // line stays one bad line and the next record starts clean.
  explicit RecordLog(const std::string& path, bool fsync_each_batch = false);
  ~RecordLog();
  RecordLog(const RecordLog&) = delete;
  RecordLog& operator=(const RecordLog&) = delete;

  // Appends the batch (one write) and flushes it to the kernel (+ fsync if
  // asked). Throws LoomError on a write failure.
  void append(const std::vector<MeasureRecord>& batch);
  void append(const Task& task, const std::vector<nlohmann::json>& steps,
              const std::vector<MeasureResult>& results);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool fsync_ = false;
};

struct LoadReport {
  int lines = 0;    // non-empty lines seen
  int records = 0;  // kept
  int skipped = 0;  // malformed or truncated
  std::vector<std::string> warnings;  // one line each
};

// Loads every complete record. Bad lines are skipped and reported in
// `report` and (when `warn`) on stderr as one line each. Throws LoomError
// when the file cannot be read.
std::vector<MeasureRecord> load_records(const std::string& path, LoadReport* report = nullptr,
                                        bool warn = true);

// The programs of a task, best first. A program measured once costs that
// measurement. A program measured again (the tuner measures its best
// programs again at the end of a run: search.confirm_top) costs the median of
// its records' medians, and these programs are compared among themselves:
// their re-measurements ran interleaved, under the same load, while a single
// measurement from another moment of a shared machine is not comparable with
// them. So the programs measured more than once come first, except those
// measured once whose measurement beats the first measurement of the best of
// them (found by tuning after the confirmation, with confirmation off). A
// program with a wrong result in any record is never a candidate
// (correctness first).
struct ProgramCost {
  const MeasureRecord* record = nullptr;  // its latest valid record
  double cost_s = std::numeric_limits<double>::infinity();
  int measurements = 0;                   // valid records of it
};
// Every program of the task with at least one valid record, best first.
std::vector<ProgramCost> ranked_programs(const std::vector<MeasureRecord>& records, const std::string& task_key);
// Of every task with a valid record, in the order the records first name
// them: its `per_task` best programs' records, best first.
std::vector<std::vector<const MeasureRecord*>> best_records_per_task(const std::vector<MeasureRecord>& records,
                                                                     int per_task);
// The best of them; record == nullptr if the task has no valid record.
ProgramCost best_program(const std::vector<MeasureRecord>& records, const std::string& task_key);
// The task's latest untimed record (a schedule chosen with nothing timed),
// nullptr if none.
const MeasureRecord* latest_untimed(const std::vector<MeasureRecord>& records, const std::string& task_key);

// Identity of a measurement for resuming: task key + steps.
std::string measure_key(const std::string& task_key, const nlohmann::json& steps);

}  // namespace loom
