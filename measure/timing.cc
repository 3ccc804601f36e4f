#include "measure/timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <thread>

namespace loom {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void flush_cpu_cache() {
  // 64 MiB: larger than the L3 of the machines we target.
  static std::vector<char> buf(64 << 20);
  static volatile char sink;
  for (size_t i = 0; i < buf.size(); i += 64) buf[i] = static_cast<char>(buf[i] + 1);
  sink = buf[buf.size() / 2];
}

std::vector<double> time_function(const std::function<void()>& fn, const TimingOptions& opts) {
  double flush_s = 0;
  if (opts.flush_cache) {
    auto tf = Clock::now();
    flush_cpu_cache();
    flush_s = seconds_since(tf);
  }
  auto t0 = Clock::now();
  fn();  // warm-up (also calibrates the group size)
  double once = std::max(seconds_since(t0), 1e-9);
  // With flushing, a group's wall time (flushes included) lasts
  // min_repeat_ms: a tiny kernel must not multiply the flush cost.
  int per_group = static_cast<int>(std::ceil(opts.min_repeat_ms / 1e3 / (once + flush_s)));
  per_group = std::clamp(per_group, 1, opts.max_runs_per_group);
  std::vector<double> out;
  for (int g = 0; g < std::max(opts.repeat, 1); ++g) {
    double total = 0;
    if (opts.flush_cache) {
      for (int r = 0; r < per_group; ++r) {
        flush_cpu_cache();
        auto t = Clock::now();
        fn();
        total += seconds_since(t);
      }
    } else {
      auto t = Clock::now();
      for (int r = 0; r < per_group; ++r) fn();
      total = seconds_since(t);
    }
    out.push_back(total / per_group);
  }
  return out;
}

namespace {
double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
}  // namespace

bool wait_for_idle_threads(double max_wait_s, double window_ms, double busy_fraction) {
  const auto window = std::chrono::duration<double, std::milli>(window_ms);
  const auto t0 = Clock::now();
  for (;;) {
    // The calling thread sleeps through the window: the CPU time the
    // process spends meanwhile is its other threads'.
    const double cpu0 = process_cpu_seconds();
    const auto w0 = Clock::now();
    std::this_thread::sleep_for(window);
    const double busy = (process_cpu_seconds() - cpu0) / std::max(seconds_since(w0), 1e-6);
    if (busy < busy_fraction) return true;
    if (seconds_since(t0) >= max_wait_s) return false;
  }
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace loom
