// Helpers for the measure tests: a small matmul task and simple schedules.
#pragma once

#include "ir/state.h"
#include "measure/measurer.h"
#include "measure/task.h"

namespace loom::measure_test {

inline Task small_matmul(int64_t n = 64, int threads = 1) {
  Target t;
  t.threads = threads;
  return Task::make("matmul", {{"M", n}, {"N", n}, {"K", n}}, t);
}

// A valid tiled schedule; `variant` picks different tile sizes.
inline State tiled(const Task& task, int variant = 0) {
  State s = State::initial(task.dag);
  int C = s.stage_index("C");
  int64_t ti = int64_t(1) << (variant % 4), tj = 16 >> (variant % 3);
  s = s.split(C, 0, {ti});                      // i0 i1 j k
  s = s.split(C, 2, {tj});                      // i0 i1 j0 j1 k
  s = s.reorder(C, {0, 2, 4, 1, 3});            // i0 j0 k i1 j1
  s = s.annotate(C, 4, IterAnnotation::kVectorize);
  return s;
}

// Fast options for tests: short timing, short run timeout, and no slow
// cutoff: under other tenants' load a valid tile variant can time over 10x
// a variant timed before it, and then only its checking run is timed (the
// cutoff has its own test, which turns it on).
inline MeasureOptions fast_options() {
  MeasureOptions o;
  o.slow_cutoff = 0;
  o.repeat = 2;
  o.min_repeat_ms = 1;
  o.run_timeout_s = 2;
  o.build_timeout_s = 20;
  o.max_memory_mb = 2048;
  o.loud_wrong_results = false;
  return o;
}

}  // namespace loom::measure_test
