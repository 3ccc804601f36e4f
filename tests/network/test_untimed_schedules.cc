// Schedules chosen with nothing timed: a database's program for the same
// task, its similar tasks' programs re-fitted, the cost model's pick for
// the rest; the network they make computes what the interpreter computes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <random>

#include "graph/interpreter.h"
#include "ir/reference.h"
#include "measure/machine.h"
#include "measure/records.h"
#include "measure/task.h"
#include "network/executor.h"
#include "network/untimed_schedules.h"
#include "search/search_policy.h"
#include "sketch/sketch_policy.h"
#include "tests/graph/graph_builder.h"
#include "tests/support/scratch_dir.h"

namespace loom::graph {
namespace {

using testing::GraphBuilder;

std::string shipped_model() {
  const char* src = std::getenv("LOOM_SOURCE_DIR");
  const std::filesystem::path root =
      src ? std::filesystem::path(src) : std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
  return (root / "experiments" / "models" / "suite_mlp.model").string();
}

// Two conv-relu layers of the same kind (8 and then 16 output channels),
// a global pool and a classifier.
Graph two_convs() {
  GraphBuilder b;
  b.input("x", {1, 8, 8, 8}).pattern_constant("w1", {8, 8, 3, 3}, 1).pattern_constant("w2", {16, 8, 3, 3}, 2);
  b.pattern_constant("fc_w", {5, 16}, 3).pattern_constant("fc_b", {5}, 4);
  const nlohmann::json conv = {{"pads", {1, 1, 1, 1}}};
  b.node("conv2d", {"x", "w1"}, "c1", conv)
      .node("relu", {"c1"}, "r1")
      .node("conv2d", {"r1", "w2"}, "c2", conv)
      .node("relu", {"c2"}, "r2")
      .node("global_avg_pool2d", {"r2"}, "gp")
      .node("flatten", {"gp"}, "f")
      .node("gemm", {"f", "fc_w", "fc_b"}, "y", {{"trans_b", 1}});
  return b.build({"y"});
}

// A database holding one measured program of the network's first task.
std::string database_of_first_task(const NetworkTasks& nt, const std::string& file, const MachineKind& machine) {
  Task task = Task::make(nt.tasks[0].workload(), nt.tasks[0].subgraph, Target{});
  std::mt19937_64 rng(6);
  std::vector<State> programs = sample(make_sketch_task(task), 1, rng);
  MeasureRecord r{task, programs.at(0).steps_json(), {}};
  r.result.costs_s = {1e-4};
  r.result.machine = machine;
  const std::string path = (loom::testing::scratch_dir() / file).string();
  std::filesystem::remove(path);
  RecordLog(path).append({r});
  return path;
}

UntimedScheduleOptions options_with(const std::string& database) {
  UntimedScheduleOptions o;
  o.cost_model = shipped_model();
  o.databases = {database};
  o.search.population = 128;  // a small search: this is about where programs come from
  o.search.generations = 1;
  return o;
}

TEST(UntimedSchedules, TheSameTaskReplaysASimilarOneIsRefittedTheRestArePredicted) {
  Graph g = two_convs();
  NetworkTasks nt = extract_tasks(g);
  ASSERT_GE(nt.tasks.size(), 3u);
  const std::string db = database_of_first_task(nt, "untimed_database.jsonl", this_machine());
  UntimedSchedules u = choose_untimed_schedules(nt, options_with(db));
  EXPECT_EQ(u.same_task, 1);
  EXPECT_EQ(u.refitted, 1);  // the second conv, from the first's program
  EXPECT_EQ(u.predicted, static_cast<int>(nt.tasks.size()) - 2);
  EXPECT_EQ(u.schedules.size(), nt.tasks.size());
  EXPECT_TRUE(u.notes.empty());

  ExecutorOptions opts;
  opts.schedules = u.schedules;
  NetworkExecutor ex(g, opts);
  for (const auto& k : ex.kernels()) EXPECT_TRUE(k.given);
  Values inputs = random_graph_inputs(g, 3);
  EXPECT_EQ(compare_outputs(ex.run(inputs).at("y"), interpret(g, inputs).at("y"), 1e-3, 1e-4), "");
}

TEST(UntimedSchedules, RecordsOfAnotherMachineKindAreLeftOutWithANote) {
  Graph g = two_convs();
  NetworkTasks nt = extract_tasks(g);
  MachineKind other = this_machine();
  other.cpu = "Some Other CPU";
  const std::string db = database_of_first_task(nt, "untimed_other_machine.jsonl", other);
  UntimedSchedules u = choose_untimed_schedules(nt, options_with(db));
  EXPECT_EQ(u.same_task, 0);
  EXPECT_EQ(u.refitted, 0);
  EXPECT_EQ(u.predicted, static_cast<int>(nt.tasks.size()));
  ASSERT_EQ(u.notes.size(), 1u);
  EXPECT_NE(u.notes[0].find("1 records measured on Some Other CPU"), std::string::npos) << u.notes[0];
}

TEST(UntimedSchedules, TasksTheRunsOwnLogMeasuredAreLeftToIt) {
  Graph g = two_convs();
  NetworkTasks nt = extract_tasks(g);
  const std::string log = database_of_first_task(nt, "untimed_own_log.jsonl", this_machine());
  UntimedScheduleOptions o = options_with(log);
  o.databases.clear();
  o.log = log;
  UntimedSchedules u = choose_untimed_schedules(nt, o);
  EXPECT_EQ(u.schedules.size(), nt.tasks.size() - 1);
  EXPECT_EQ(u.schedules.count(nt.tasks[0].subgraph.dump()), 0u);
  EXPECT_EQ(u.refitted, 1);  // the log's program still serves the similar task
}

// The executor runs a log's untimed record of a task it has no measurement
// of, and the network matches the interpreter.
TEST(UntimedSchedules, TheExecutorRunsALogsUntimedRecord) {
  Graph g = two_convs();
  NetworkTasks nt = extract_tasks(g);
  Task task = Task::make(nt.tasks[0].workload(), nt.tasks[0].subgraph, Target{});
  std::mt19937_64 rng(8);
  std::vector<State> programs = sample(make_sketch_task(task), 1, rng);
  const std::string log = (loom::testing::scratch_dir() / "untimed_in_log.jsonl").string();
  std::filesystem::remove(log);
  RecordLog(log).append({untimed_record(task, programs.at(0).steps_json())});
  ExecutorOptions opts;
  opts.log = log;
  NetworkExecutor ex(g, opts);
  EXPECT_TRUE(ex.kernels()[0].untimed_in_log);
  EXPECT_FALSE(ex.kernels()[0].tuned);
  EXPECT_FALSE(ex.kernels()[1].untimed_in_log);
  Values inputs = random_graph_inputs(g, 5);
  EXPECT_EQ(compare_outputs(ex.run(inputs).at("y"), interpret(g, inputs).at("y"), 1e-3, 1e-4), "");
  // Choosing schedules for the network leaves that task to the executor.
  UntimedScheduleOptions o = options_with(log);
  o.databases.clear();
  o.log = log;
  EXPECT_EQ(choose_untimed_schedules(nt, o).schedules.count(nt.tasks[0].subgraph.dump()), 0u);
}

}  // namespace
}  // namespace loom::graph
