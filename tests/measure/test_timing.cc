// The idle wait that comparisons use between libraries (measure/timing.h).
#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "measure/timing.h"

namespace loom {
namespace {

using Clock = std::chrono::steady_clock;

// A thread of this process that keeps a core busy until `stop` is set or
// `spin_for` has passed, as a library's worker does after a call.
struct Spinner {
  std::atomic<bool> stop{false}, stopped{false};
  std::thread thread;
  explicit Spinner(std::chrono::milliseconds spin_for) {
    thread = std::thread([this, spin_for] {
      const auto end = Clock::now() + spin_for;
      while (!stop.load(std::memory_order_relaxed) && Clock::now() < end) {
      }
      stopped = true;
    });
  }
  ~Spinner() {
    stop = true;
    thread.join();
  }
};

TEST(Timing, WaitForIdleThreadsReturnsOnlyOnceASpinningThreadStops) {
  Spinner spinner(std::chrono::milliseconds(150));
  EXPECT_TRUE(wait_for_idle_threads(/*max_wait_s=*/5.0, /*window_ms=*/20));
  EXPECT_TRUE(spinner.stopped);
}

TEST(Timing, WaitForIdleThreadsGivesUpAfterItsLimit) {
  Spinner spinner(std::chrono::seconds(30));
  EXPECT_FALSE(wait_for_idle_threads(/*max_wait_s=*/0.1, /*window_ms=*/20));
  EXPECT_FALSE(spinner.stopped);
}

TEST(Timing, WaitForIdleThreadsSeesAnIdleProcessAsIdle) {
  EXPECT_TRUE(wait_for_idle_threads(/*max_wait_s=*/5.0));
}

}  // namespace
}  // namespace loom
