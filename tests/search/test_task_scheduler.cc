#include <gtest/gtest.h>

#include <limits>

#include "search/task_scheduler.h"

namespace loom {
namespace {

TaskProgress progress(const std::string& group, double weight, double flops, double best,
                      int trials, std::vector<double> history) {
  TaskProgress p;
  p.group = group;
  p.weight = weight;
  p.flops = flops;
  p.best_cost = best;
  p.trials = trials;
  p.best_history = std::move(history);
  return p;
}

TEST(TaskScheduler, GivesEveryTaskOneRoundFirst) {
  SearchSettings s;
  TaskScheduler sched(s);
  std::mt19937_64 rng(1);
  std::vector<TaskProgress> t = {progress("a", 1, 1e9, 1e-3, 64, {1e-3}),
                                 progress("b", 1, 1e9, std::numeric_limits<double>::infinity(), 0, {})};
  EXPECT_EQ(sched.next(t, rng), 1);
}

TEST(TaskScheduler, PrefersTheTaskWithTheLargestWeightedLatency) {
  SearchSettings s;
  s.scheduler_eps = 0;
  TaskScheduler sched(s);
  std::mt19937_64 rng(1);
  // Same progress, but task 1 weighs 10x more: its next round saves more.
  std::vector<TaskProgress> t = {progress("a", 1, 1e9, 2e-3, 64, {3e-3, 2e-3}),
                                 progress("b", 10, 1e9, 2e-3, 64, {3e-3, 2e-3})};
  EXPECT_EQ(sched.next(t, rng), 1);
  EXPECT_LT(sched.gradient(t, 1), sched.gradient(t, 0));
}

TEST(TaskScheduler, PrefersATaskStillImproving) {
  SearchSettings s;
  s.scheduler_eps = 0;
  s.scheduler_window = 1;
  TaskScheduler sched(s);
  std::mt19937_64 rng(1);
  std::vector<TaskProgress> t = {progress("a", 1, 1e9, 1e-3, 128, {1e-3, 1e-3}),
                                 progress("b", 1, 1e9, 1e-3, 128, {4e-3, 1e-3})};
  EXPECT_EQ(sched.next(t, rng), 1);
}

TEST(TaskScheduler, StopsHoldingATaskThatStoppedImprovingToItsGroupsBestThroughput) {
  SearchSettings s;
  s.scheduler_eps = 0;
  TaskScheduler sched(s);
  std::mt19937_64 rng(1);
  // Task 0 runs at a tenth of its group's best throughput, but its last
  // rounds found nothing better; task 1, at the group's best, has had
  // fewer trials.
  std::vector<TaskProgress> t = {progress("conv", 1, 1e9, 10e-3, 640, std::vector<double>(10, 10e-3)),
                                 progress("conv", 1, 1e9, 1e-3, 32, {1e-3})};
  EXPECT_EQ(sched.next(t, rng), 1);
  // Still improving, the same task keeps the optimistic bound and the round.
  t[0].best_history.back() = 9e-3;
  t[0].best_cost = 9e-3;
  EXPECT_EQ(sched.next(t, rng), 0);
}

TEST(TaskScheduler, RoundRobinTakesTheTaskWithFewestRounds) {
  SearchSettings s;
  s.task_scheduler = TaskSchedulerKind::kRoundRobin;
  TaskScheduler sched(s);
  std::mt19937_64 rng(1);
  std::vector<TaskProgress> t = {progress("a", 100, 1e9, 9e-3, 128, {1, 1}),
                                 progress("b", 1, 1e9, 1e-3, 64, {1})};
  EXPECT_EQ(sched.next(t, rng), 1);
}

TEST(TaskScheduler, SkipsFinishedTasksAndReportsWhenAllAreDone) {
  SearchSettings s;
  TaskScheduler sched(s);
  std::mt19937_64 rng(1);
  std::vector<TaskProgress> t = {progress("a", 1, 1e9, 1e-3, 64, {1e-3})};
  t[0].finished = true;
  EXPECT_EQ(sched.next(t, rng), -1);
}

}  // namespace
}  // namespace loom
