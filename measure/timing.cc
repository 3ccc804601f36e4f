#include "measure/timing.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <optional>
#include <thread>
#include <vector>

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

double load_probe() {
  // 8 rows x 8 columns of multiply-adds over a 512-deep reduction, inputs
  // 16 KiB + 2 KiB: the loads and register reuse of a tiled kernel.
  constexpr int kRows = 8, kCols = 8, kDepth = 512, kWRows = 64;
  static thread_local std::vector<float> x(kRows * kDepth, 1e-3f), w(kWRows * kCols, 1e-3f);
  static volatile float sink;
  float acc[kRows][kCols] = {};
  const auto t0 = Clock::now();
  int64_t reps = 0;
  double elapsed = 0;
  do {
    for (int k = 0; k < kDepth; ++k) {
      const float* wk = &w[(k % kWRows) * kCols];
      for (int i = 0; i < kRows; ++i) {
        const float xi = x[i * kDepth + k];
        for (int c = 0; c < kCols; ++c) acc[i][c] += xi * wk[c];
      }
    }
    ++reps;
    elapsed = seconds_since(t0);
  } while (elapsed < 2.5e-4);
  float s = 0;
  for (const auto& row : acc)
    for (float v : row) s += v;
  sink = s;
  return static_cast<double>(reps) * kRows * kCols * kDepth / std::max(elapsed, 1e-9);
}

namespace {

// The fastest load probe this process has seen (the real probe's), per
// number of threads probed at once: probes on cores that share a cache or a
// memory path slow each other, so each count has its own best.
constexpr int kMaxProbeThreads = 64;
std::atomic<double> g_best_probe[kMaxProbeThreads + 1];

// Runs `probe` on the calling thread and threads - 1 threads started for it,
// at once; the slowest speed.
double probe_on_threads(const std::function<double()>& probe, int threads) {
  if (threads == 1) return probe();
  std::vector<double> speeds(static_cast<size_t>(threads), 0);
  std::vector<std::thread> others;
  for (int t = 1; t < threads; ++t) others.emplace_back([&, t] { speeds[t] = probe(); });
  speeds[0] = probe();
  for (auto& th : others) th.join();
  return *std::min_element(speeds.begin(), speeds.end());
}

// Quiet or disturbed, from probe speeds relative to the fastest seen.
class ProbeWatch {
 public:
  ProbeWatch(const std::function<double()>& probe, int threads)
      : probe_(probe ? probe : std::function<double()>(&load_probe)),
        threads_(std::clamp(threads, 1, kMaxProbeThreads)),
        best_(probe ? local_best_ : g_best_probe[threads_]) {
    // A few probes first, so that the first group is not judged against
    // nothing.
    for (int i = 0; i < 4; ++i) quiet_now();
  }
  bool quiet_now() {
    const double speed = probe_on_threads(probe_, threads_);
    double best = best_.load(std::memory_order_relaxed);
    if (speed > best) {
      best = speed;
      best_.store(speed, std::memory_order_relaxed);  // a racing store loses little
    }
    return speed >= kQuietFraction * best;
  }

 private:
  std::function<double()> probe_;
  int threads_;
  std::atomic<double> local_best_{0};  // a test's probe: its own scale
  std::atomic<double>& best_;
};

}  // namespace

std::vector<double> time_function(const std::function<void()>& fn, const TimingOptions& opts, TimingStats* stats,
                                  const std::function<double()>& probe) {
  TimingStats st;
  const double budget_s = opts.quiet_wait_ms / 1e3;
  const auto t_probe0 = Clock::now();
  std::optional<ProbeWatch> watch;
  if (budget_s > 0) watch.emplace(probe, opts.probe_threads);
  double spent_s = seconds_since(t_probe0);  // probing, waiting, groups timed again
  double flush_s = 0;
  if (opts.flush_cache) {
    auto tf = Clock::now();
    flush_cpu_cache();
    flush_s = seconds_since(tf);
  }
  auto t0 = Clock::now();
  fn();  // warm-up (also calibrates the group size)
  double once = std::max(seconds_since(t0), 1e-9);
  if (opts.abandon_above_s > 0 && once > opts.abandon_above_s) {
    if (stats) *stats = st;
    return {once};
  }
  // With flushing, a group's wall time (flushes included) lasts
  // min_repeat_ms: a tiny kernel must not multiply the flush cost.
  int per_group = static_cast<int>(std::ceil(opts.min_repeat_ms / 1e3 / (once + flush_s)));
  per_group = std::clamp(per_group, 1, opts.max_runs_per_group);
  auto time_group = [&] {
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
    return total / per_group;
  };
  std::vector<double> out;
  for (int g = 0; g < std::max(opts.repeat, 1); ++g) {
    for (;;) {
      bool quiet = true;
      if (watch) {
        const auto tw = Clock::now();
        while (!(quiet = watch->quiet_now()) && spent_s + seconds_since(tw) < budget_s) {
        }
        spent_s += seconds_since(tw);
      }
      const auto tg = Clock::now();
      const double cost = time_group();
      const double group_s = seconds_since(tg);
      if (watch) {
        const auto ta = Clock::now();
        quiet = watch->quiet_now() && quiet;
        spent_s += seconds_since(ta);
      }
      if (quiet) {
        out.push_back(cost);
        break;
      }
      if (spent_s + group_s >= budget_s) {  // nothing left to wait with: it counts
        ++st.disturbed_groups;
        out.push_back(cost);
        break;
      }
      ++st.retimed_groups;
      spent_s += group_s;
    }
  }
  if (stats) *stats = st;
  return out;
}

double process_cpu_seconds(pid_t pid) {
  clockid_t clock = CLOCK_PROCESS_CPUTIME_ID;
  if (pid != 0 && clock_getcpuclockid(pid, &clock) != 0) return 0;
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

bool wait_for_idle_threads(double max_wait_s, double window_ms, double busy_fraction, pid_t pid) {
  const auto window = std::chrono::duration<double, std::milli>(window_ms);
  const auto t0 = Clock::now();
  for (;;) {
    // The calling thread sleeps through the window: the CPU time the
    // process spends meanwhile is its other threads'.
    const double cpu0 = process_cpu_seconds(pid);
    const auto w0 = Clock::now();
    std::this_thread::sleep_for(window);
    const double busy = (process_cpu_seconds(pid) - cpu0) / std::max(seconds_since(w0), 1e-6);
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
