// The tuning loop end to end on a tiny task with real worker processes.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <regex>
#include <set>

#include "ir/error.h"
#include "measure/records.h"
#include "search/schedule_transfer.h"
#include "search/search_policy.h"
#include "search/tuner.h"
#include "sketch/sketch_policy.h"
#include "tests/support/schedule_check.h"
#include "tests/support/scratch_dir.h"

namespace loom {
namespace {

std::string temp_log(const std::string& name) { return testing::scratch_path(name); }

TunerOptions tiny_options(const std::string& log, int trials) {
  TunerOptions o;
  o.search.num_trials = trials;
  o.search.measures_per_round = 8;
  o.search.population = 32;
  o.search.generations = 2;
  o.search.seed = 123;
  o.search.init_measured_ratio = 0;  // the population does not depend on measured times
  o.measure.repeat = 1;
  o.measure.min_repeat_ms = 1;
  o.search.confirm_top = 0;  // re-measuring depends on measured times (tested on its own)
  o.log_path = log;
  o.print = [](const std::string&) {};
  return o;
}

std::vector<TuneTask> tiny_tasks() {
  auto task = std::make_shared<const Task>(
      Task::make("matmul", nlohmann::json{{"M", 32}, {"N", 32}, {"K", 32}}, Target::parse("cpu -threads=1")));
  return {{task, 1.0}};
}

std::vector<std::string> logged_steps(const std::string& path) {
  std::vector<std::string> out;
  for (const auto& r : load_records(path)) out.push_back(r.steps.dump());
  return out;
}

TEST(Tuner, SameSeedAndRandomModelGiveIdenticalLogs) {
  std::string a = temp_log("det_a.jsonl"), b = temp_log("det_b.jsonl");
  Tuner(tiny_tasks(), tiny_options(a, 24), make_cost_model("random")).run();
  Tuner(tiny_tasks(), tiny_options(b, 24), make_cost_model("random")).run();
  auto la = logged_steps(a), lb = logged_steps(b);
  EXPECT_EQ(la.size(), 24u);
  EXPECT_EQ(la, lb);
}

// A run stops at the end of the round that spent its time budget, then
// confirms as a run whose trials are spent; at least one round runs.
TEST(Tuner, ATimeBudgetStopsTheRunAfterTheRoundThatSpentIt) {
  std::string log = temp_log("budget.jsonl");
  TunerOptions o = tiny_options(log, 64);
  o.search.time_budget_s = 1e-9;
  std::vector<std::string> lines;
  o.print = [&](const std::string& l) { lines.push_back(l); };
  Tuner(tiny_tasks(), o, make_cost_model("random")).run();
  EXPECT_EQ(logged_steps(log).size(), 8u);  // one round of measures_per_round
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("time budget of 1e-09 s spent after round 1: 8 of 64 trials") != std::string::npos;
  }));
}

// An estimate needs a round's pace: none after the first round (and none
// once the budget is spent), seconds left after the second.
TEST(Tuner, EtaIsShownOnlyOnceARoundAfterTheFirstHasRun) {
  std::string log = temp_log("eta.jsonl");
  TunerOptions o = tiny_options(log, 24);
  std::vector<std::string> rounds;
  o.print = [&](const std::string& line) {
    if (line.rfind("round ", 0) == 0) rounds.push_back(line);
  };
  Tuner(tiny_tasks(), o, make_cost_model("random")).run();
  ASSERT_EQ(rounds.size(), 3u);
  EXPECT_EQ(rounds[0].find("ETA"), std::string::npos) << rounds[0];
  EXPECT_TRUE(std::regex_search(rounds[1], std::regex(R"(\| ETA [0-9]+(\.[0-9])? s$)"))) << rounds[1];
  EXPECT_EQ(rounds[2].find("ETA"), std::string::npos) << rounds[2];
}

// A transpose has a few dozen distinct programs: the run ends once none is
// left to measure, below its budget, instead of asking again forever.
TEST(Tuner, ATaskWhoseSpaceIsExhaustedEndsTheRun) {
  std::string log = temp_log("exhausted.jsonl");
  TunerOptions o = tiny_options(log, 1000);
  std::vector<std::string> lines;
  o.print = [&](const std::string& line) { lines.push_back(line); };
  const auto transpose = nlohmann::json::parse(
      R"({"inputs": [{"shape": [4, 8]}], "nodes": [{"op": "transpose", "attrs": {"perm": [1, 0]}, "inputs": ["in0"]}]})");
  auto task = std::make_shared<const Task>(Task::make("subgraph", transpose, Target::parse("cpu -threads=1")));
  Tuner tuner({{task, 1.0}}, o, make_cost_model("random"));
  tuner.run();
  EXPECT_LT(tuner.trials(), 1000);
  EXPECT_EQ(static_cast<int>(logged_steps(log).size()), tuner.trials());
  bool exhausted = false;
  for (const auto& l : lines) exhausted = exhausted || l.find("search space is exhausted") != std::string::npos;
  EXPECT_TRUE(exhausted);
}

std::vector<TuneTask> two_tiny_tasks() {
  const Target cpu = Target::parse("cpu -threads=1");
  return {{std::make_shared<const Task>(Task::make("matmul", nlohmann::json{{"M", 32}, {"N", 32}, {"K", 32}}, cpu)), 1.0},
          {std::make_shared<const Task>(Task::make("matmul", nlohmann::json{{"M", 16}, {"N", 32}, {"K", 32}}, cpu)), 1.0}};
}

// Random models as the per-task models: what matters is which records each
// one is given.
std::vector<std::unique_ptr<CostModel>> one_random_model_per_task(size_t n, std::vector<const CostModel*>* seen) {
  std::vector<std::unique_ptr<CostModel>> models;
  for (size_t i = 0; i < n; ++i) {
    models.push_back(make_cost_model("random"));
    seen->push_back(models.back().get());
  }
  return models;
}

TEST(Tuner, AModelPerTaskLearnsFromItsOwnTasksProgramsOnly) {
  std::string log = temp_log("per_task.jsonl");
  TunerOptions o = tiny_options(log, 32);
  o.search.task_scheduler = TaskSchedulerKind::kRoundRobin;
  std::vector<TuneTask> tasks = two_tiny_tasks();
  std::vector<const CostModel*> models;
  Tuner tuner(tasks, o, one_random_model_per_task(2, &models));
  tuner.run();
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(models[i]->num_records(), 16u) << "task " << i;
    // Its ranking groups: this task on this machine.
    ASSERT_EQ(models[i]->training_data().task_keys.size(), 1u) << "task " << i;
    EXPECT_EQ(models[i]->training_data().task_keys[0].rfind(tasks[i].task->key(), 0), 0u) << "task " << i;
  }
}

TEST(Tuner, ResumedProgramsTrainTheirOwnTasksModel) {
  std::string log = temp_log("per_task_resume.jsonl");
  TunerOptions o = tiny_options(log, 32);
  o.search.task_scheduler = TaskSchedulerKind::kRoundRobin;
  std::vector<TuneTask> tasks = two_tiny_tasks();
  Tuner(tasks, o, make_cost_model("random")).run();
  std::vector<const CostModel*> models;
  Tuner resumed(tasks, o, one_random_model_per_task(2, &models));  // the budget is spent: nothing new is measured
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(models[i]->num_records(), 16u) << "task " << i;
    // Its ranking groups: this task on this machine.
    ASSERT_EQ(models[i]->training_data().task_keys.size(), 1u) << "task " << i;
    EXPECT_EQ(models[i]->training_data().task_keys[0].rfind(tasks[i].task->key(), 0), 0u) << "task " << i;
  }
}

// Two tasks of 16 programs each, 8 a round, round robin; a task's own model
// takes over once it has 8.
TunerModels shared_then_own_after_8(std::vector<const CostModel*>* own, const CostModel** shared) {
  TunerModels m;
  m.shared = make_cost_model("random");
  *shared = m.shared.get();
  m.per_task = one_random_model_per_task(2, own);
  m.per_task_after = 8;
  return m;
}

// Scores every valid program alike and counts how many it was asked to score.
class CountingModel : public CostModel {
 public:
  size_t scored = 0;
  void fit(const std::vector<ProgramFeatures>&, const std::vector<float>&, const std::vector<int>&) override {}
  std::vector<float> predict_features(const std::vector<ProgramFeatures>& programs) override {
    scored += programs.size();
    std::vector<float> out;
    for (const auto& p : programs) out.push_back(p.valid ? 0.5f : kInvalidProgramScore);
    return out;
  }
  std::string name() const override { return "counting"; }
  nlohmann::json settings_json() const override { return nlohmann::json::object(); }

 protected:
  std::string serialize() const override { return "-"; }
  void deserialize(const std::string&) override {}
};

// A model that was trained before the run (its file says on how many
// programs) ranks from the first round; a new one gets random scores until it
// has learned from `model_warmup_records` programs.
TEST(Tuner, APretrainedModelScoresTheFirstRound) {
  const std::string file = temp_log("pretrained.model");
  CountingModel().save(file);
  std::string header, payload;
  {
    std::ifstream in(file, std::ios::binary);
    std::getline(in, header);
    payload.assign(std::istreambuf_iterator<char>(in), {});
  }
  nlohmann::json h = nlohmann::json::parse(header);
  h["trained_on"] = nlohmann::json::array({{{"machine", nullptr}, {"programs", 1000}}});
  std::ofstream(file, std::ios::binary) << h.dump() << '\n' << payload;
  auto pretrained = std::make_unique<CountingModel>();
  pretrained->load(file);
  auto fresh = std::make_unique<CountingModel>();
  CountingModel *p = pretrained.get(), *f = fresh.get();
  Tuner with_pretrained(tiny_tasks(), tiny_options(temp_log("pretrained_first.jsonl"), 8), std::move(pretrained));
  Tuner with_fresh(tiny_tasks(), tiny_options(temp_log("fresh_first.jsonl"), 8), std::move(fresh));
  with_pretrained.run();  // one round each
  with_fresh.run();
  EXPECT_GT(p->scored, 0u);
  EXPECT_EQ(f->scored, 0u);
}

TEST(Tuner, ATasksOwnModelTakesOverOnceItHasMeasuredEnough) {
  TunerOptions o = tiny_options(temp_log("hand_over.jsonl"), 32);
  o.search.task_scheduler = TaskSchedulerKind::kRoundRobin;
  std::vector<TuneTask> tasks = two_tiny_tasks();
  std::vector<const CostModel*> own;
  const CostModel* shared = nullptr;
  Tuner tuner(tasks, o, shared_then_own_after_8(&own, &shared));
  tuner.run();
  // The shared model learned from the rounds until the last task had its
  // own (one round of each); each own model from every program of its task.
  EXPECT_EQ(shared->num_records(), 8u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(own[i]->num_records(), 16u) << "task " << i;
    ASSERT_EQ(own[i]->training_data().task_keys.size(), 1u) << "task " << i;
    EXPECT_EQ(own[i]->training_data().task_keys[0].rfind(tasks[i].task->key(), 0), 0u) << "task " << i;
  }
}

TEST(Tuner, AResumedTaskWithEnoughProgramsHasItsOwnModelAtOnce) {
  TunerOptions o = tiny_options(temp_log("hand_over_resume.jsonl"), 24);
  o.search.task_scheduler = TaskSchedulerKind::kRoundRobin;
  std::vector<TuneTask> tasks = two_tiny_tasks();
  Tuner(tasks, o, make_cost_model("random")).run();  // task 0: 16 programs, task 1: 8
  o.search.num_trials = 24;  // the budget is spent: nothing new is measured
  std::vector<const CostModel*> own;
  const CostModel* shared = nullptr;
  TunerModels models = shared_then_own_after_8(&own, &shared);
  models.per_task_after = 12;
  Tuner resumed(tasks, o, std::move(models));
  EXPECT_EQ(own[0]->num_records(), 16u);
  EXPECT_EQ(own[1]->num_records(), 0u);     // not yet its own: it waits for 12
  EXPECT_EQ(shared->num_records(), 24u);    // scores task 1: learned from every program
}

TEST(Tuner, TasksWaitingForTheirOwnModelNeedASharedOne) {
  TunerModels m;
  std::vector<const CostModel*> own;
  m.per_task = one_random_model_per_task(2, &own);
  m.per_task_after = 8;
  try {
    Tuner(two_tiny_tasks(), tiny_options(temp_log("no_shared.jsonl"), 8), std::move(m));
    FAIL() << "expected an error";
  } catch (const LoomError& e) {
    EXPECT_NE(std::string(e.what()).find("no shared model"), std::string::npos) << e.what();
  }
}

TEST(Tuner, ModelsMustBeOneSharedOrOnePerTask) {
  std::vector<const CostModel*> models;
  try {
    Tuner(two_tiny_tasks(), tiny_options(temp_log("three_models.jsonl"), 8), one_random_model_per_task(3, &models));
    FAIL() << "expected an error";
  } catch (const LoomError& e) {
    EXPECT_NE(std::string(e.what()).find("3 cost models for 2 tasks"), std::string::npos) << e.what();
  }
}

TEST(Tuner, ResumeDoesNotMeasureAgain) {
  std::string log = temp_log("resume.jsonl");
  Tuner(tiny_tasks(), tiny_options(log, 16), make_cost_model("random")).run();
  ASSERT_EQ(load_records(log).size(), 16u);
  // A second run with a larger budget continues from the log.
  Tuner t(tiny_tasks(), tiny_options(log, 32), make_cost_model("random"));
  t.run();
  auto steps = logged_steps(log);
  EXPECT_EQ(steps.size(), 32u);  // 16 old + 16 new, not 16 + 32
  std::set<std::string> distinct(steps.begin(), steps.end());
  EXPECT_EQ(distinct.size(), steps.size());
}

TEST(Tuner, ConfirmationMeasuresTheTopProgramsAgainWithoutCountingThemAsTrials) {
  std::string log = temp_log("confirm.jsonl");
  TunerOptions o = tiny_options(log, 16);
  o.search.confirm_top = 3;
  o.search.confirm_rounds = 2;
  Tuner t(tiny_tasks(), o, make_cost_model("random"));
  t.run();
  EXPECT_EQ(t.trials(), 16);
  auto records = load_records(log);
  ASSERT_EQ(records.size(), 16u + 3u * 2u);
  std::set<std::string> top;  // the three confirmed programs: the last 6 records
  for (size_t i = 16; i < records.size(); ++i) top.insert(records[i].steps.dump());
  EXPECT_EQ(top.size(), 3u);
  auto steps = logged_steps(log);
  EXPECT_EQ(std::set<std::string>(steps.begin(), steps.end()).size(), 16u);
  // The best is one of the confirmed programs, chosen on the median of its
  // three measurements, and the log's best (what report and export use) is
  // the same program at the same cost.
  auto summary = t.summary();
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_TRUE(top.count(summary[0].best_steps.dump()));
  ProgramCost best = best_program(records, tiny_tasks()[0].task->key());
  ASSERT_NE(best.record, nullptr);
  EXPECT_EQ(best.record->steps, summary[0].best_steps);
  EXPECT_EQ(best.measurements, 3);
  EXPECT_DOUBLE_EQ(best.cost_s, summary[0].best_cost);
}

TEST(Tuner, ResumeCountsAConfirmedProgramOnce) {
  std::string log = temp_log("confirm_resume.jsonl");
  TunerOptions o = tiny_options(log, 16);
  o.search.confirm_top = 3;
  o.search.confirm_rounds = 2;
  Tuner(tiny_tasks(), o, make_cost_model("random")).run();
  // The finished log resumed with the same budget: nothing to measure, and
  // it is not confirmed again.
  Tuner same(tiny_tasks(), o, make_cost_model("random"));
  same.run();
  EXPECT_EQ(same.trials(), 16);
  EXPECT_EQ(load_records(log).size(), 22u);
  auto records = load_records(log);
  ProgramCost best = best_program(records, tiny_tasks()[0].task->key());
  ASSERT_NE(best.record, nullptr);
  EXPECT_EQ(same.summary()[0].best_steps, best.record->steps);  // the log's best, as report and export see it
  EXPECT_DOUBLE_EQ(same.summary()[0].best_cost, best.cost_s);
  o.search.num_trials = 24;
  Tuner more(tiny_tasks(), o, make_cost_model("random"));
  more.run();
  EXPECT_EQ(more.trials(), 24);
  auto steps = logged_steps(log);
  EXPECT_EQ(steps.size(), 22u + 8u + 6u);
  EXPECT_EQ(std::set<std::string>(steps.begin(), steps.end()).size(), 24u);
}

// Programs timed by the "simulated_time" fault (built and checked, their
// cost a function of their steps), so that runs compare record by record
// even though the population starts from the best measured programs.
TunerOptions simulated_options(const std::string& log, int trials) {
  TunerOptions o = tiny_options(log, trials);
  o.search.init_measured_ratio = 0.5;
  o.measure.test_faults[kEveryCandidate] = "simulated_time";
  return o;
}

std::vector<TuneTask> two_tasks() {
  auto gemm = std::make_shared<const Task>(
      Task::make("matmul", nlohmann::json{{"M", 13}, {"N", 17}, {"K", 11}}, Target::parse("cpu -threads=1")));
  auto softmax = std::make_shared<const Task>(
      Task::make("softmax", nlohmann::json{{"M", 7}, {"N", 19}}, Target::parse("cpu -threads=1")));
  return {{gemm, 1.0}, {softmax, 1.0}};
}

std::vector<std::string> logged_programs(const std::string& path) {
  std::vector<std::string> out;
  for (const auto& r : load_records(path))
    out.push_back(r.task_key() + " " + r.steps.dump() + " " + nlohmann::json(r.result.costs_s).dump());
  return out;
}

TEST(Tuner, SimulatedTimesAreAFunctionOfTheProgram) {
  std::string a = temp_log("simulated_a.jsonl"), b = temp_log("simulated_b.jsonl");
  Tuner(tiny_tasks(), simulated_options(a, 16), make_cost_model("random")).run();
  Tuner(tiny_tasks(), simulated_options(b, 16), make_cost_model("random")).run();
  EXPECT_EQ(logged_programs(a), logged_programs(b));
  std::set<double> costs;
  for (const auto& r : load_records(a)) {
    ASSERT_TRUE(r.result.ok()) << r.result.error_msg;
    EXPECT_GE(r.result.costs_s[0], 1e-3);
    EXPECT_LT(r.result.costs_s[0], 2e-3);
    costs.insert(r.result.costs_s[0]);
  }
  EXPECT_EQ(costs.size(), 16u);
}

TEST(Tuner, ARunStoppedAfterAnyRoundAndResumedMeasuresWhatTheUninterruptedRunDid) {
  std::string whole = temp_log("whole.jsonl");
  Tuner(two_tasks(), simulated_options(whole, 48), make_cost_model("random")).run();
  ASSERT_EQ(load_records(whole).size(), 48u);
  for (int stop_at : {8, 24, 40}) {  // after a round of the first task, of the second, of the first
    std::string cut = temp_log("cut" + std::to_string(stop_at) + ".jsonl");
    Tuner(two_tasks(), simulated_options(cut, stop_at), make_cost_model("random")).run();
    Tuner(two_tasks(), simulated_options(cut, 48), make_cost_model("random")).run();
    EXPECT_EQ(logged_programs(cut), logged_programs(whole)) << "stopped after " << stop_at << " trials";
  }
}

// 16 trials, then the top 3 confirmed in 3 rounds.
TunerOptions confirmed_run(const std::string& log) {
  TunerOptions o = simulated_options(log, 16);
  o.search.confirm_top = 3;
  o.search.confirm_rounds = 3;
  Tuner(tiny_tasks(), o, make_cost_model("random")).run();
  return o;
}

TEST(Tuner, AStoppedConfirmationIsFinishedWhenResumedAndNotRepeated) {
  std::string whole = temp_log("confirm_whole.jsonl"), cut = temp_log("confirm_cut.jsonl");
  TunerOptions o = confirmed_run(whole);
  const std::vector<std::string> full = logged_programs(whole);
  ASSERT_EQ(full.size(), 16u + 3u * 3u);
  // The log as a kill during the second confirmation round leaves it: the
  // search and one round of the confirmation.
  std::vector<MeasureRecord> records = load_records(whole);
  records.resize(16 + 3);
  RecordLog(cut).append(records);
  o.log_path = cut;
  Tuner(tiny_tasks(), o, make_cost_model("random")).run();
  EXPECT_EQ(logged_programs(cut), full);
  Tuner(tiny_tasks(), o, make_cost_model("random")).run();  // finished: nothing more
  EXPECT_EQ(logged_programs(cut), full);
}

TEST(Tuner, AFinishedConfirmationIsNotRepeatedWhenItsMediansRankOtherProgramsFirst) {
  std::string whole = temp_log("confirm_slow_whole.jsonl"), slow = temp_log("confirm_slow.jsonl");
  TunerOptions o = confirmed_run(whole);
  // The confirmation measured its candidates slower than the search did (a
  // busy machine): by their medians they now rank below unconfirmed programs.
  std::vector<MeasureRecord> records = load_records(whole);
  ASSERT_EQ(records.size(), 16u + 3u * 3u);
  for (size_t i = 16; i < records.size(); ++i) records[i].result.costs_s.assign(records[i].result.costs_s.size(), 1.0);
  RecordLog(slow).append(records);
  o.log_path = slow;
  Tuner(tiny_tasks(), o, make_cost_model("random")).run();  // finished: nothing more
  EXPECT_EQ(load_records(slow).size(), records.size());
}

TEST(Tuner, ResumeSkipsABestProgramWhoseStepsNoLongerReplay) {
  // A log from another version whose fastest record's steps do not replay
  // here: resuming keeps it out of the search (not measured again) and takes
  // the best from the programs that replay.
  std::string log = temp_log("unreplayable.jsonl");
  TunerOptions o = tiny_options(log, 8);
  Tuner(tiny_tasks(), o, make_cost_model("random")).run();
  MeasureRecord odd = load_records(log).front();
  odd.steps = nlohmann::json::array({nlohmann::json::array({"SP", 99, 0, 1024, {4}, 1})});
  odd.result.costs_s = {1e-9, 1e-9, 1e-9};
  RecordLog(log).append(std::vector<MeasureRecord>{odd});
  Tuner resumed(tiny_tasks(), o, make_cost_model("random"));
  resumed.run();
  EXPECT_TRUE(std::isfinite(resumed.summary()[0].best_cost));
  EXPECT_NE(resumed.summary()[0].best_steps, odd.steps);
}

TEST(Tuner, FindsACorrectProgramAndReportsIt) {
  std::string log = temp_log("best.jsonl");
  Tuner t(tiny_tasks(), tiny_options(log, 16), make_cost_model("random"));
  t.run();
  auto summary = t.summary();
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_TRUE(std::isfinite(summary[0].best_cost));
  State best = State::from_json(tiny_tasks()[0].task->dag, summary[0].best_steps);
  EXPECT_EQ(testing::check_with_c_backend(best), "");
  EXPECT_NE(t.summary_table().find("matmul"), std::string::npos);
}

TEST(Tuner, TheSummaryTableNamesEveryTaskInFull) {
  auto conv = std::make_shared<const Task>(
      Task::make("conv2d", nlohmann::json::object(), Target::parse("cpu -threads=1"), {"kernel"}));
  ASSERT_GT(conv->description().size(), 60u);
  Tuner t({{conv, 1.0}}, tiny_options(temp_log("names.jsonl"), 8), make_cost_model("random"));
  const std::string table = t.summary_table();
  EXPECT_NE(table.find(conv->description()), std::string::npos) << table;
}

// A conv and a dilated conv of one shape have the same stages and loop
// extents: the first round of the second measures the best two programs
// of the first (those that replay), in their rank order, first.
TEST(Tuner, TheBestProgramsOfATaskAreMeasuredOnAnotherWhereTheyReplay) {
  std::string log = temp_log("transfer.jsonl");
  TunerOptions o = tiny_options(log, 16);
  o.search.task_scheduler = TaskSchedulerKind::kRoundRobin;
  const Target cpu = Target::parse("cpu -threads=1");
  nlohmann::json shape = {{"N", 1}, {"C", 8}, {"H", 8}, {"W", 8}, {"K", 8}, {"R", 3}, {"S", 3}, {"stride", 1}};
  nlohmann::json conv = shape, dilated = shape;
  conv["pad"] = 1, conv["dilation"] = 1;
  dilated["pad"] = 2, dilated["dilation"] = 2;
  auto dilated_task = std::make_shared<const Task>(Task::make("dilated_conv2d", dilated, cpu));
  Tuner({{std::make_shared<const Task>(Task::make("conv2d", conv, cpu)), 1.0}, {dilated_task, 1.0}}, o,
        make_cost_model("random"))
      .run();
  std::vector<MeasureRecord> records = load_records(log);
  ASSERT_EQ(records.size(), 16u);
  std::vector<MeasureRecord> first(records.begin(), records.begin() + 8);
  std::stable_sort(first.begin(), first.end(),
                   [](const MeasureRecord& a, const MeasureRecord& b) { return a.result.median_s() < b.result.median_s(); });
  std::vector<std::string> expected;
  for (const auto& r : first) {
    if (!std::isfinite(r.result.median_s()) || expected.size() == 2) continue;
    try {
      State::from_json(dilated_task->dag, r.steps);
      expected.push_back(r.steps.dump());
    } catch (const LoomError&) {
    }
  }
  ASSERT_EQ(expected.size(), 2u);
  EXPECT_EQ(records[8].task.workload, "dilated_conv2d");
  EXPECT_EQ(records[8].steps.dump(), expected[0]);
  EXPECT_EQ(records[9].steps.dump(), expected[1]);
}

// With search.first_round_measures, every task's first round measures that
// many programs; later rounds measures_per_round.
TEST(Tuner, AFirstRoundOfAFewProgramsGivesEveryTaskATimeSoon) {
  std::string log = temp_log("first_round.jsonl");
  TunerOptions o = simulated_options(log, 16);
  o.search.first_round_measures = 4;
  o.search.task_scheduler = TaskSchedulerKind::kRoundRobin;
  Tuner(two_tasks(), o, make_cost_model("random")).run();
  std::vector<MeasureRecord> records = load_records(log);
  ASSERT_EQ(records.size(), 16u);
  std::vector<std::string> order;
  for (const auto& r : records) order.push_back(r.task.workload);
  std::vector<std::string> expected(4, "matmul");
  expected.insert(expected.end(), 4, "softmax");
  expected.insert(expected.end(), 8, "matmul");
  EXPECT_EQ(order, expected);
}

TEST(Tuner, ARunWithASmallFirstRoundResumedMeasuresWhatTheUninterruptedRunDid) {
  auto options = [](const std::string& log, int trials) {
    TunerOptions o = simulated_options(log, trials);
    o.search.first_round_measures = 4;
    return o;
  };
  std::string whole = temp_log("first_round_whole.jsonl");
  Tuner(two_tasks(), options(whole, 40), make_cost_model("random")).run();
  for (int stop_at : {4, 8, 16}) {
    std::string cut = temp_log("first_round_cut" + std::to_string(stop_at) + ".jsonl");
    Tuner(two_tasks(), options(cut, stop_at), make_cost_model("random")).run();
    Tuner(two_tasks(), options(cut, 40), make_cost_model("random")).run();
    EXPECT_EQ(logged_programs(cut), logged_programs(whole)) << "stopped after " << stop_at << " trials";
  }
}

// A database's programs of the same task lead its first round, then its
// similar tasks' re-fitted ones, up to half the round.
TEST(Tuner, TheDatabasesProgramsLeadATasksFirstRound) {
  const Target cpu = Target::parse("cpu -threads=1");
  Task same = Task::make("matmul", nlohmann::json{{"M", 32}, {"N", 32}, {"K", 32}}, cpu);
  Task similar = Task::make("matmul", nlohmann::json{{"M", 64}, {"N", 32}, {"K", 32}}, cpu);
  std::mt19937_64 rng(17);
  std::vector<State> same_programs = sample(make_sketch_task(same), 2, rng);
  std::vector<State> similar_programs = sample(make_sketch_task(similar), 4, rng);
  ASSERT_EQ(same_programs.size(), 2u);
  std::vector<MeasureRecord> db;
  for (size_t i = 0; i < same_programs.size(); ++i)
    db.push_back({same, same_programs[i].steps_json(), {}}), db.back().result.costs_s = {1e-3 * (i + 1)};
  for (const State& s : similar_programs)
    db.push_back({similar, s.steps_json(), {}}), db.back().result.costs_s = {1e-3};
  std::string log = temp_log("database_first.jsonl");
  TunerOptions o = tiny_options(log, 8);
  o.database = std::make_shared<const ScheduleLibrary>(db);
  Tuner({{std::make_shared<const Task>(same), 1.0}}, o, make_cost_model("random")).run();
  std::vector<MeasureRecord> records = load_records(log);
  ASSERT_EQ(records.size(), 8u);
  EXPECT_EQ(records[0].steps, same_programs[0].steps_json());  // the faster first
  EXPECT_EQ(records[1].steps, same_programs[1].steps_json());
  // Then re-fitted programs of the similar task (here its extents divide,
  // so they replay as they are), up to half of the 8.
  std::set<std::string> refitted;
  for (const State& s : similar_programs) refitted.insert(refit_program(same.dag, s.steps()).steps_json().dump());
  EXPECT_TRUE(refitted.count(records[2].steps.dump()));
  EXPECT_TRUE(refitted.count(records[3].steps.dump()));
}

// A log's untimed record (a schedule chosen with nothing timed) is measured
// first when tuning resumes from it, and is no trial.
TEST(Tuner, TheLogsUntimedScheduleIsMeasuredFirst) {
  std::string log = temp_log("untimed_first.jsonl");
  std::filesystem::remove(log);
  const std::vector<TuneTask> tasks = tiny_tasks();
  const Task& task = *tasks[0].task;
  std::mt19937_64 rng(23);
  std::vector<State> chosen = sample(make_sketch_task(task), 1, rng);
  ASSERT_EQ(chosen.size(), 1u);
  RecordLog(log).append({untimed_record(task, chosen[0].steps_json())});
  std::vector<std::string> lines;
  TunerOptions o = tiny_options(log, 8);
  o.print = [&](const std::string& l) { lines.push_back(l); };
  Tuner tuner(tasks, o, make_cost_model("random"));
  EXPECT_EQ(tuner.trials(), 0);
  tuner.run();
  std::vector<MeasureRecord> records = load_records(log);
  ASSERT_EQ(records.size(), 9u);  // the untimed record, then 8 measured
  EXPECT_TRUE(records[0].untimed());
  EXPECT_FALSE(records[1].untimed());
  EXPECT_EQ(records[1].steps, chosen[0].steps_json());
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("1 untimed schedules to measure first"), std::string::npos) << lines[0];
}

}  // namespace
}  // namespace loom
