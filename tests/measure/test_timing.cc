// The idle wait that comparisons use between libraries (measure/timing.h).
#include <atomic>
#include <chrono>
#include <thread>

#include <time.h>

#include <gtest/gtest.h>

#include "measure/timing.h"

namespace loom {
namespace {

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// A thread of this process that keeps a core busy, as a library's worker
// does after a call, until `stop` is set or it has used `cpu_s` seconds of
// CPU: its own work, not the wall clock, ends it, so under other processes'
// load it merely takes longer.
struct Spinner {
  std::atomic<bool> stop{false}, stopped{false};
  std::thread thread;
  explicit Spinner(double cpu_s) {
    thread = std::thread([this, cpu_s] {
      const double start = thread_cpu_seconds();
      while (!stop.load(std::memory_order_relaxed) && thread_cpu_seconds() - start < cpu_s) {
      }
      stopped = true;
    });
  }
  ~Spinner() {
    stop = true;
    thread.join();
  }
};

// Windows of 50 ms: a spinner that shares its core with other processes
// still uses far more than 5% of one in every window.
TEST(Timing, WaitForIdleThreadsReturnsOnlyOnceASpinningThreadStops) {
  Spinner spinner(/*cpu_s=*/0.15);
  EXPECT_TRUE(wait_for_idle_threads(/*max_wait_s=*/60.0, /*window_ms=*/50));
  EXPECT_TRUE(spinner.stopped);
}

TEST(Timing, WaitForIdleThreadsGivesUpAfterItsLimit) {
  Spinner spinner(/*cpu_s=*/1e9);  // until the test ends
  EXPECT_FALSE(wait_for_idle_threads(/*max_wait_s=*/0.1, /*window_ms=*/50));
  EXPECT_FALSE(spinner.stopped);
}

TEST(Timing, WaitForIdleThreadsSeesAnIdleProcessAsIdle) {
  EXPECT_TRUE(wait_for_idle_threads(/*max_wait_s=*/5.0));
}

}  // namespace
}  // namespace loom
