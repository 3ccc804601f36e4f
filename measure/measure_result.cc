#include "measure/measure_result.h"

#include <limits>

#include "ir/error.h"
#include "measure/timing.h"

namespace loom {

namespace {
constexpr const char* kNames[] = {"none",    "invalid_schedule", "build_error",
                                  "run_error", "timeout",        "wrong_result"};
}

const char* error_kind_name(ErrorKind k) { return kNames[static_cast<int>(k)]; }

ErrorKind parse_error_kind(const std::string& name) {
  for (int i = 0; i < 6; ++i)
    if (name == kNames[i]) return static_cast<ErrorKind>(i);
  throw LoomError("unknown error kind '" + name +
                  "' (expected none, invalid_schedule, build_error, run_error, timeout, wrong_result)");
}

double MeasureResult::median_s() const {
  if (!ok()) return std::numeric_limits<double>::infinity();
  return median(costs_s);
}

}  // namespace loom
