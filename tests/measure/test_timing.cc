// The timing protocol's waits (measure/timing.h): for the process's own idle
// threads, and for a quiet load probe.
#include <atomic>
#include <chrono>
#include <cmath>
#include <vector>
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

// A probe that reads out a script of speeds (1 quiet, 0.5 disturbed), then
// stays at its last entry; counts its calls.
struct ScriptedProbe {
  std::vector<double> speeds;
  size_t calls = 0;
  double operator()() { return speeds[std::min(calls++, speeds.size() - 1)]; }
};

TimingOptions one_run_groups(double quiet_wait_ms) {
  TimingOptions o;
  o.repeat = 3;
  o.min_repeat_ms = 0;  // one run per group
  o.quiet_wait_ms = quiet_wait_ms;
  return o;
}

// Calibration (4 probes), then for each group a probe before and after.
TEST(Timing, GroupWithDisturbedProbeAfterItIsTimedAgain) {
  ScriptedProbe probe{{1, 1, 1, 1, /*g1*/ 1, 0.5, /*g1 again*/ 1, 1, /*g2*/ 1, 1, /*g3*/ 1, 1}};
  int runs = 0;
  TimingStats st;
  auto costs = time_function([&] { ++runs; }, one_run_groups(60e3), &st, std::ref(probe));
  EXPECT_EQ(costs.size(), 3u);
  EXPECT_EQ(runs, 1 + 4);  // warm-up, three groups and one again
  EXPECT_EQ(st.retimed_groups, 1);
  EXPECT_EQ(st.disturbed_groups, 0);
}

TEST(Timing, GroupWaitsForAQuietProbeBeforeIt) {
  ScriptedProbe probe{{1, 1, 1, 1, /*before g1*/ 0.5, 0.5, 1, /*after*/ 1, 1, 1, 1, 1}};
  int runs = 0;
  TimingStats st;
  time_function([&] { ++runs; }, one_run_groups(60e3), &st, std::ref(probe));
  EXPECT_EQ(runs, 1 + 3);
  EXPECT_EQ(probe.calls, 4u + 3 + 1 + 2 + 2);
  EXPECT_EQ(st.retimed_groups, 0);
  EXPECT_EQ(st.disturbed_groups, 0);
}

TEST(Timing, DisturbedGroupsCountOnceTheWaitIsSpent) {
  ScriptedProbe probe{{1, 1, 1, 1, 0.5}};
  int runs = 0;
  TimingStats st;
  auto costs = time_function([&] { ++runs; }, one_run_groups(/*1 us*/ 1e-3), &st, std::ref(probe));
  EXPECT_EQ(costs.size(), 3u);
  EXPECT_EQ(runs, 1 + 3);
  EXPECT_EQ(st.disturbed_groups, 3);
  EXPECT_EQ(st.retimed_groups, 0);
}

// A kernel on two threads is watched on two: a probe disturbed only on the
// thread started beside the caller (once, right after the first group)
// still has that group timed again; probed on one thread, it is not seen.
struct DisturbedBesideTheCaller {
  std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> beside_calls{0};
  double operator()() {
    if (std::this_thread::get_id() == caller) return 1;
    return ++beside_calls == 4 + 2 ? 0.5 : 1;  // calibration, before g1, after g1
  }
};

TEST(Timing, ProbeOnTwoThreadsSeesTheSecondThreadDisturbed) {
  DisturbedBesideTheCaller probe;
  TimingOptions o = one_run_groups(60e3);
  o.probe_threads = 2;
  TimingStats st;
  time_function([] {}, o, &st, std::ref(probe));
  EXPECT_EQ(st.retimed_groups, 1);
  EXPECT_GT(probe.beside_calls, 0);
}

TEST(Timing, ProbeOnOneThreadRunsOnTheCallerOnly) {
  DisturbedBesideTheCaller probe;
  TimingStats st;
  time_function([] {}, one_run_groups(60e3), &st, std::ref(probe));
  EXPECT_EQ(st.retimed_groups, 0);
  EXPECT_EQ(probe.beside_calls, 0);
}

TEST(Timing, NoProbeWithoutAQuietWait) {
  ScriptedProbe probe{{1}};
  time_function([] {}, one_run_groups(0), nullptr, std::ref(probe));
  EXPECT_EQ(probe.calls, 0u);
}

TEST(Timing, AWarmUpRunAboveTheAbandonLimitIsTheWholeResult) {
  TimingOptions o;
  o.repeat = 3;
  o.min_repeat_ms = 1;
  o.abandon_above_s = 1e-4;
  int runs = 0;
  auto costs = time_function([&] { ++runs; std::this_thread::sleep_for(std::chrono::milliseconds(1)); }, o);
  EXPECT_EQ(runs, 1);
  ASSERT_EQ(costs.size(), 1u);
  EXPECT_GE(costs[0], 1e-3);
}

TEST(Timing, AWarmUpRunBelowTheAbandonLimitIsFollowedByEveryGroup) {
  TimingOptions o;
  o.repeat = 3;
  o.min_repeat_ms = 0;
  o.abandon_above_s = 10;
  int runs = 0;
  auto costs = time_function([&] { ++runs; }, o);
  EXPECT_EQ(costs.size(), 3u);
  EXPECT_EQ(runs, 4);  // the warm-up and one run per group
}

TEST(Timing, LoadProbeMeasuresASpeed) {
  const double s = load_probe();
  EXPECT_TRUE(std::isfinite(s));
  EXPECT_GT(s, 0);
}

// Whether the machine is quiet or not, within a 200 ms wait.
TEST(Timing, RealProbeOnTwoThreadsTimesEveryGroup) {
  TimingOptions o = one_run_groups(200);
  o.probe_threads = 2;
  int runs = 0;
  auto costs = time_function([&] { ++runs; }, o);
  EXPECT_EQ(costs.size(), 3u);
  EXPECT_GE(runs, 1 + 3);
}

}  // namespace
}  // namespace loom
