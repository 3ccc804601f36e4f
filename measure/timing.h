// The timing protocol: a warm-up run, then `repeat` groups of runs, each group
// long enough to last `min_repeat_ms`; the cost of a group is its mean time
// per run. Optionally the last-level cache is flushed before every run (then
// the flush itself is excluded from the time, but counts towards the group's
// min_repeat_ms so that flushing does not multiply a tiny kernel's wall time).
#pragma once

#include <chrono>
#include <functional>
#include <vector>

namespace loom {

struct TimingOptions {
  int repeat = 3;              // number of groups
  double min_repeat_ms = 100;  // minimum duration of one group
  bool flush_cache = false;    // evict caches before each run
  int max_runs_per_group = 1 << 20;
};

// Seconds per run, one entry per group.
std::vector<double> time_function(const std::function<void()>& fn, const TimingOptions& opts);

double median(std::vector<double> v);

// Seconds of the steady clock since t0.
double seconds_since(std::chrono::steady_clock::time_point t0);

// Writes over a buffer larger than the last-level cache.
void flush_cpu_cache();

// Library thread pools keep their workers spinning after a call returns
// (OpenBLAS's pthread server burns a whole core for about 0.1 s, libgomp
// for its spin count): a measurement started then shares the CPU with them,
// and with a multi-threaded program that is a handicap of tens of percent
// on its first group. Sleeps in windows of `window_ms` until the threads
// of this process together used less than `busy_fraction` of one core over
// a window, or `max_wait_s` has passed. Returns whether they went idle.
// Called where timings start: Measurer::measure_steps (before a batch runs in
// the workers) and measure_baseline (before a library is timed here).
bool wait_for_idle_threads(double max_wait_s = 1.0, double window_ms = 10, double busy_fraction = 0.05);

}  // namespace loom
