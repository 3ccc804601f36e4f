// The Measurer with real worker processes: normal candidates are measured,
// and every injected fault costs exactly its own candidate, with the right
// error kind, while the rest of the batch is measured normally.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "ir/error.h"
#include "measure/measurer.h"
#include "measure/worker_process.h"
#include "measure_test_util.h"

namespace loom {
namespace {

using namespace measure_test;

void expect_ok(const MeasureResult& r, int i) {
  EXPECT_EQ(r.error, ErrorKind::kNone) << "candidate " << i << ": " << r.error_msg;
  EXPECT_TRUE(r.ok()) << i;
  EXPECT_EQ(r.costs_s.size(), 2u) << i;
  for (double c : r.costs_s) EXPECT_GT(c, 0) << i;
  EXPECT_GT(r.build_s, 0) << i;
  EXPECT_GT(r.run_s, 0) << i;
  EXPECT_GT(r.timestamp, 1600000000) << i;
}

TEST(Measurer, MeasuresValidCandidates) {
  Task task = small_matmul();
  MeasureOptions o = fast_options();
  Measurer m(o);
  std::vector<State> states = {State::initial(task.dag), tiled(task, 0), tiled(task, 1), tiled(task, 2)};
  auto rs = m.measure(task, states);
  ASSERT_EQ(rs.size(), states.size());
  for (size_t i = 0; i < rs.size(); ++i) expect_ok(rs[i], static_cast<int>(i));
  EXPECT_EQ(m.last_stats().errors, 0);
  EXPECT_GT(m.last_stats().reference_s, 0);  // first batch of the task
  // The reference is computed once per task.
  rs = m.measure(task, {tiled(task, 3)});
  expect_ok(rs[0], 0);
  EXPECT_EQ(m.last_stats().reference_s, 0);
}

TEST(Measurer, AHopelesslySlowCandidateCostsItsCheckingRun) {
  Task task = small_matmul();
  MeasureOptions o = fast_options();
  // Every candidate is "slower than 1e-9 x the best": once the task has a
  // best (first batch), later candidates are not timed further.
  o.slow_cutoff = 1e-9;
  Measurer m(o);
  expect_ok(m.measure(task, {tiled(task, 0)})[0], 0);
  MeasureResult r = m.measure(task, {tiled(task, 1)})[0];
  EXPECT_EQ(r.error, ErrorKind::kNone) << r.error_msg;
  ASSERT_EQ(r.costs_s.size(), 1u) << "the checking run's time only";
  EXPECT_GT(r.costs_s[0], 0);
}

TEST(Measurer, AFastCandidateWithASlowColdFirstRunIsTimed) {
  // The second batch's candidate 1 is the task's best program again, but its
  // checking run takes 4 ms more (a cold first run), over 50 times the best
  // (a 64^3 matmul: microseconds): warm, it is as fast as the best, so it is
  // timed, not cut off.
  Task task = small_matmul();
  MeasureOptions o = fast_options();
  o.slow_cutoff = 50;
  o.test_faults = {{1, "cold_first_run"}};
  Measurer m(o);
  expect_ok(m.measure(task, {tiled(task, 0)})[0], 0);
  auto rs = m.measure(task, {tiled(task, 0), tiled(task, 0)});
  expect_ok(rs[1], 1);
}

TEST(Measurer, UnderQuietIsolationAHopelesslySlowCandidateCostsOneExclusiveRun) {
  Task task = small_matmul();
  MeasureOptions o = fast_options();
  o.isolation = MeasureOptions::Isolation::kQuiet;
  o.slow_cutoff = 1e-9;
  Measurer m(o);
  expect_ok(m.measure(task, {tiled(task, 0)})[0], 0);
  MeasureResult r = m.measure(task, {tiled(task, 1)})[0];
  EXPECT_EQ(r.error, ErrorKind::kNone) << r.error_msg;
  ASSERT_EQ(r.costs_s.size(), 1u) << "the exclusive warm-up run's time only";
  EXPECT_GT(r.costs_s[0], 0);
}

TEST(Measurer, UnderQuietIsolationACheckingRunSlowedBesideTheKernelDoesNotCutTheCandidateOff) {
  // Candidate 1 is the task's best program again, but both of its checking
  // runs take 4 ms more (a build held one of its cores): over 50 times the
  // best. Alone on the cores it is as fast as the best, so it is timed.
  Task task = small_matmul();
  MeasureOptions o = fast_options();
  o.isolation = MeasureOptions::Isolation::kQuiet;
  o.slow_cutoff = 50;
  o.test_faults = {{1, "disturbed_check"}};
  Measurer m(o);
  expect_ok(m.measure(task, {tiled(task, 0)})[0], 0);
  auto rs = m.measure(task, {tiled(task, 0), tiled(task, 0)});
  expect_ok(rs[1], 1);  // every group timed
}

TEST(Measurer, FaultsCostOnlyTheirCandidate) {
  Task task = small_matmul();
  MeasureOptions o = fast_options();
  o.run_timeout_s = 1;
  o.test_faults = {{1, "segfault"}, {3, "spin"}, {5, "wrong_result"}, {7, "abort"}};
  Measurer m(o);
  std::vector<State> states;
  for (int i = 0; i < 9; ++i) states.push_back(tiled(task, i));
  auto rs = m.measure(task, states);
  ASSERT_EQ(rs.size(), 9u);
  for (int i : {0, 2, 4, 6, 8}) expect_ok(rs[i], i);
  EXPECT_EQ(rs[1].error, ErrorKind::kRunError) << rs[1].error_msg;
  EXPECT_NE(rs[1].error_msg.find("SIGSEGV"), std::string::npos) << rs[1].error_msg;
  EXPECT_EQ(rs[3].error, ErrorKind::kTimeout) << rs[3].error_msg;
  EXPECT_EQ(rs[5].error, ErrorKind::kWrongResult) << rs[5].error_msg;
  EXPECT_NE(rs[5].error_msg.find("differ"), std::string::npos) << rs[5].error_msg;
  EXPECT_EQ(rs[7].error, ErrorKind::kRunError) << rs[7].error_msg;
  EXPECT_NE(rs[7].error_msg.find("SIGABRT"), std::string::npos) << rs[7].error_msg;
  for (int i : {1, 3, 5, 7}) EXPECT_TRUE(rs[i].costs_s.empty()) << i;
  EXPECT_EQ(m.last_stats().errors, 4);
  EXPECT_GE(m.last_stats().workers_restarted, 2);  // segfault, spin, abort killed theirs

  // The pool recovered: a fault-free batch measures normally.
  Measurer m2(fast_options());
  auto again = m2.measure(task, {tiled(task, 1), tiled(task, 2)});
  expect_ok(again[0], 0);
  expect_ok(again[1], 1);
}

// Hostile kernels: each costs its candidate (a run error naming what it
// did), its worker is replaced, and nothing it left behind survives.
// Measures three candidates, `fault` injected into the second: it is a run
// error whose message holds `message`, the others are measured.
void expect_run_error_of_candidate_1(const std::string& fault, const std::string& message) {
  Task task = small_matmul();
  MeasureOptions o = fast_options();
  o.test_faults = {{1, fault}};
  Measurer m(o);
  auto rs = m.measure(task, {tiled(task, 0), tiled(task, 1), tiled(task, 2)});
  expect_ok(rs[0], 0);
  expect_ok(rs[2], 2);
  EXPECT_EQ(rs[1].error, ErrorKind::kRunError) << rs[1].error_msg;
  EXPECT_NE(rs[1].error_msg.find(message), std::string::npos) << rs[1].error_msg;
}

TEST(Measurer, AKernelWritingOutsideItsBuffersIsARunError) {
  expect_run_error_of_candidate_1("write_outside", "the kernel wrote outside output C (past its end)");
}

TEST(Measurer, AKernelLeavingThreadsRunningIsARunError) {
  expect_run_error_of_candidate_1("spin_threads", "the kernel left 2 thread(s) running");
}

bool process_named(const std::string& name) {
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::ifstream comm(e.path() / "comm");
    std::string c;
    if (comm && std::getline(comm, c) && c == name) return true;
  }
  return false;
}

TEST(Measurer, AKernelStartingAProcessIsARunErrorAndTheProcessIsKilled) {
  expect_run_error_of_candidate_1("fork", "the kernel started a process");
  // Killed with its worker's process group (SIGKILL: gone by the time the
  // worker is reaped, give or take the kernel's bookkeeping).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (process_named("loom_fork_test") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  EXPECT_FALSE(process_named("loom_fork_test")) << "the candidate's process outlived its worker";
}

TEST(Measurer, WorkersAreReplacedAcrossBatches) {
  Task task = small_matmul();
  MeasureOptions o = fast_options();
  o.n_parallel_builds = 1;  // one worker: it must be replaced after each crash
  o.test_faults = {{0, "segfault"}};
  Measurer m(o);
  for (int round = 0; round < 2; ++round) {
    auto rs = m.measure(task, {tiled(task, 0), tiled(task, 1)});
    EXPECT_EQ(rs[0].error, ErrorKind::kRunError) << round;
    expect_ok(rs[1], 1);
  }
}

TEST(Measurer, RunawayAllocationIsARunError) {
  if (!worker_memory_limit_enforced()) GTEST_SKIP() << "built with AddressSanitizer: workers run without RLIMIT_AS";
  Task task = small_matmul();
  MeasureOptions o = fast_options();
  o.max_memory_mb = 768;
  o.run_timeout_s = 20;  // touching the memory takes a while on a loaded machine
  o.test_faults = {{0, "oom"}};
  Measurer m(o);
  auto rs = m.measure(task, {tiled(task, 0), tiled(task, 1)});
  EXPECT_EQ(rs[0].error, ErrorKind::kRunError) << rs[0].error_msg;
  EXPECT_NE(rs[0].error_msg.find("memory"), std::string::npos) << rs[0].error_msg;
  expect_ok(rs[1], 1);
}

// The CUDA driver reserves address space for all of the device's and the
// host's memory at cuInit, so a cuda task's workers start unlimited.
TEST(Measurer, OnlyCpuWorkersHaveAnAddressSpaceLimit) {
  MeasureOptions o;
  o.max_memory_mb = 768;
  EXPECT_EQ(worker_memory_limit_mb(small_matmul(), o), 768);
  Task gpu = Task::make("matmul", {{"M", 64}, {"N", 64}, {"K", 64}}, Target::parse("cuda -arch=sm_90"));
  EXPECT_EQ(worker_memory_limit_mb(gpu, o), 0);
}

TEST(Measurer, BuildFaults) {
  Task task = small_matmul();
  MeasureOptions o = fast_options();
  o.build_timeout_s = 1.5;
  o.test_faults = {{0, "build_spin"}, {1, "build_segfault"}};
  Measurer m(o);
  // Warm the workers up so that the start-up allowance does not apply.
  m.measure(task, {tiled(task, 0), tiled(task, 1)});
  auto rs = m.measure(task, {tiled(task, 0), tiled(task, 1), tiled(task, 2)});
  EXPECT_EQ(rs[0].error, ErrorKind::kTimeout) << rs[0].error_msg;
  EXPECT_NE(rs[0].error_msg.find("build"), std::string::npos) << rs[0].error_msg;
  EXPECT_EQ(rs[1].error, ErrorKind::kBuildError) << rs[1].error_msg;
  EXPECT_NE(rs[1].error_msg.find("SIGSEGV"), std::string::npos) << rs[1].error_msg;
  expect_ok(rs[2], 2);
}

TEST(Measurer, InvalidSchedules) {
  Task task = small_matmul();
  Measurer m(fast_options());
  nlohmann::json bad_split = nlohmann::json::array({nlohmann::json::array({"SP", 2, 0, 64, {128}, 1})});
  nlohmann::json bad_stage = nlohmann::json::array({nlohmann::json::array({"AN", 9, 0, "parallel"})});
  nlohmann::json not_a_step = nlohmann::json::array({nlohmann::json::array({"XX", 1})});
  auto rs = m.measure_steps(task, {bad_split, tiled(task, 0).steps_json(), bad_stage, not_a_step,
                                   nlohmann::json::object()});
  EXPECT_EQ(rs[0].error, ErrorKind::kInvalidSchedule) << rs[0].error_msg;
  expect_ok(rs[1], 1);
  EXPECT_EQ(rs[2].error, ErrorKind::kInvalidSchedule) << rs[2].error_msg;
  EXPECT_EQ(rs[3].error, ErrorKind::kInvalidSchedule) << rs[3].error_msg;
  EXPECT_EQ(rs[4].error, ErrorKind::kInvalidSchedule) << rs[4].error_msg;
  auto undefined = m.measure(task, {State()});
  EXPECT_EQ(undefined[0].error, ErrorKind::kInvalidSchedule);
}

TEST(Measurer, SwitchesTasksAndThreads) {
  Measurer m(fast_options());
  Task a = small_matmul(32), b = small_matmul(48, 2);
  for (int round = 0; round < 2; ++round) {
    expect_ok(m.measure(a, {tiled(a, round)})[0], 0);
    expect_ok(m.measure(b, {tiled(b, round)})[0], 0);
  }
}

TEST(Measurer, QuietIsolation) {
  Task task = small_matmul();
  MeasureOptions o = fast_options();
  o.isolation = MeasureOptions::Isolation::kQuiet;
  Measurer m(o);
  auto rs = m.measure(task, {tiled(task, 0), tiled(task, 1), tiled(task, 2)});
  for (int i = 0; i < 3; ++i) expect_ok(rs[i], i);
}

TEST(Measurer, ErrorKindNames) {
  for (auto k : {ErrorKind::kNone, ErrorKind::kInvalidSchedule, ErrorKind::kBuildError, ErrorKind::kRunError,
                 ErrorKind::kTimeout, ErrorKind::kWrongResult})
    EXPECT_EQ(parse_error_kind(error_kind_name(k)), k);
  EXPECT_STREQ(error_kind_name(ErrorKind::kWrongResult), "wrong_result");
  EXPECT_THROW(parse_error_kind("oops"), LoomError);
}

}  // namespace
}  // namespace loom
