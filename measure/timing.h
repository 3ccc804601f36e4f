// The timing protocol: a warm-up run, then `repeat` groups of runs, each group
// long enough to last `min_repeat_ms`; the cost of a group is its mean time
// per run. Optionally the last-level cache is flushed before every run (then
// the flush itself is excluded from the time, but counts towards the group's
// min_repeat_ms so that flushing does not multiply a tiny kernel's wall time).
//
// On a shared machine another process on the core's sibling hyperthread
// evicts the kernel's data from the first-level cache for seconds at a time:
// register-tiled kernels then run much slower (some more than others, so
// the ratio of two programs moves too) while pure arithmetic is not slowed
// (docs/results/2026-12-04-load-probe-xeon.md). With quiet_wait_ms > 0 each group is bracketed by a load probe
// (a register-tiled multiply-add loop over 16 KiB, a fraction of a
// millisecond): before a group, probes run until one is quiet (at least
// kQuietFraction of the fastest probe this process has seen); a group whose
// probe after it is disturbed is timed again. quiet_wait_ms bounds the time
// one measurement spends waiting and re-timing; once it is spent the groups
// count as timed. A kernel on several threads is watched on as many: the
// probe runs on the calling thread and probe_threads - 1 threads started
// beside it, at once, and the slowest of them counts.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <vector>

namespace loom {

struct TimingOptions {
  int repeat = 3;              // number of groups
  double min_repeat_ms = 100;  // minimum duration of one group
  bool flush_cache = false;    // evict caches before each run
  int max_runs_per_group = 1 << 20;
  double quiet_wait_ms = 0;    // 0: no probe
  int probe_threads = 1;       // threads the probe runs on at once: the kernel's
  // A warm-up run longer than this (seconds; 0 = never) ends the timing: the
  // result is that run alone. Hopeless candidates (MeasureOptions::
  // slow_cutoff) are judged on it when their checking run may have shared
  // the cores with a build.
  double abandon_above_s = 0;
};

// What the probe saw during one time_function call.
struct TimingStats {
  int disturbed_groups = 0;  // groups kept although their probe was disturbed
  int retimed_groups = 0;    // groups timed again after a disturbed probe
};

inline constexpr double kQuietFraction = 0.9;

// Seconds per run, one entry per group.
// `probe` (tests): replaces the load probe on each thread; returns a speed,
// higher is faster.
std::vector<double> time_function(const std::function<void()>& fn, const TimingOptions& opts,
                                  TimingStats* stats = nullptr, const std::function<double()>& probe = {});

// One run of the load probe: multiply-adds per second.
double load_probe();

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
// The window must span a scheduler tick (4 ms at 250 Hz): the CPU time of
// a thread running on another core is brought up to date only at its ticks,
// so a shorter window can read a spinning thread as idle.
// Called where timings start: Measurer::measure_steps (before a batch runs in
// the workers) and measure_baseline (before a library is timed here). With
// `pid` (not 0), the threads of that child process instead (ONNX Runtime's
// runner, whose intra-op pool spins after a run).
bool wait_for_idle_threads(double max_wait_s = 1.0, double window_ms = 10, double busy_fraction = 0.05,
                           pid_t pid = 0);
// The CPU seconds every thread of this process (pid 0) or of `pid` has
// used; 0 when it cannot be read.
double process_cpu_seconds(pid_t pid = 0);

}  // namespace loom
