// What measuring one candidate produces: costs or one error of a closed set.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/machine.h"

namespace loom {

enum class ErrorKind {
  kNone,             // measured: costs_s holds one mean per repeat group
  kInvalidSchedule,  // the steps do not replay or the state does not lower
  kBuildError,       // code generation / compilation failed (or crashed)
  kRunError,         // the kernel crashed (signal), threw, or ran out of memory
  kTimeout,          // build or run exceeded its limit; the worker was killed
  kWrongResult,      // the output differs from the reference: a Loom bug
  kNotMeasured,      // nothing was timed: a schedule chosen untimed (search/untimed_schedule.h)
                     // that runs until one is measured, and that tuning measures first
};

// "none", "invalid_schedule", "build_error", "run_error", "timeout",
// "wrong_result", "not_measured".
const char* error_kind_name(ErrorKind k);
// Throws LoomError for an unknown name.
ErrorKind parse_error_kind(const std::string& name);

struct MeasureResult {
  std::vector<double> costs_s;  // seconds per run, one entry per repeat group
  ErrorKind error = ErrorKind::kNone;
  std::string error_msg;        // one line; empty when error == kNone
  double build_s = 0;           // replay + lower + compile, in the worker
  double check_s = 0;           // first run + comparison with the reference
  double run_s = 0;             // wall time of the timing (warm-up + groups)
  int64_t timestamp = 0;        // seconds since the epoch when measured
  MachineKind machine;          // where it was measured (unknown in old records)
  std::string node;             // a distributed job's node: "HOST rank R" ("" = this process's workers)

  bool ok() const { return error == ErrorKind::kNone && !costs_s.empty(); }
  double median_s() const;      // of costs_s; +inf when not ok()
};

// The "result" object of a measure record (measure/records.h): costs_s,
// error, error_msg (errors only), build_s, check_s, run_s, timestamp,
// machine, node (distributed jobs only).
nlohmann::json result_to_json(const MeasureResult& r);
// Strict: bad values throw LoomError naming `path`.
MeasureResult result_from_json(const nlohmann::json& j, const std::string& path = "result");

}  // namespace loom
