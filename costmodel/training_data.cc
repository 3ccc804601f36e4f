#include "costmodel/training_data.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "costmodel/metrics.h"
#include "costmodel/parallel_for.h"
#include "ir/error.h"
#include "ir/lower.h"

#include "measure/records.h"
#include "measure/timing.h"

namespace loom {

std::string program_key(const std::string& ranking_group, const nlohmann::json& steps) {
  return ranking_group + "\n" + steps.dump();
}

namespace {

// Programs whose steps differ but lower to the same loop nest (the features
// see the lowered code, as the machine does) are one program: their timings
// pool into the first. A state that does not lower stays a program of its own.
void pool_same_code(std::vector<TrainingRecord>* out, std::vector<std::vector<double>>* timings,
                    RecordLoadStats* st) {
  std::vector<std::string> code(out->size());
  parallel_for(out->size(), 0, [&](size_t i) { code[i] = loop_nest_key((*out)[i].state); });

  std::map<std::string, size_t> first;  // ranking group + code -> position in the result
  std::vector<TrainingRecord> kept;
  std::vector<std::vector<double>> kept_timings;
  for (size_t i = 0; i < out->size(); ++i) {
    TrainingRecord& r = (*out)[i];
    if (code[i].empty()) {
      kept.push_back(std::move(r));
      kept_timings.push_back(std::move((*timings)[i]));
      continue;
    }
    std::string key = ranking_group(r) + "\n" + code[i];
    auto [where, fresh] = first.emplace(key, kept.size());
    if (!fresh) {
      ++st->merged, ++st->same_code;
      auto& t = kept_timings[where->second];
      t.insert(t.end(), (*timings)[i].begin(), (*timings)[i].end());
      continue;
    }
    r.program = std::move(key);
    kept.push_back(std::move(r));
    kept_timings.push_back(std::move((*timings)[i]));
  }
  *out = std::move(kept);
  *timings = std::move(kept_timings);
}

}  // namespace

std::vector<TrainingRecord> read_training_records(const std::vector<std::string>& paths,
                                                  RecordLoadStats* stats, CostStatistic statistic) {
  RecordLoadStats st;
  std::vector<TrainingRecord> out;
  std::vector<std::vector<double>> timings;  // per program: every timed repeat of every measurement
  std::map<std::string, std::shared_ptr<const Task>> tasks;  // one DAG per task key
  std::map<std::string, size_t> program_at;                  // task key + steps -> position in out
  for (const auto& path : paths) {
    LoadReport report;
    std::vector<MeasureRecord> records = load_records(path, &report, /*warn=*/false);
    st.lines += static_cast<size_t>(report.lines);
    st.skipped += static_cast<size_t>(report.skipped);
    if (st.first_problem.empty() && !report.warnings.empty()) st.first_problem = report.warnings[0];
    for (auto& rec : records) {
      if (rec.untimed()) continue;  // a choice, not a measurement
      std::string key = rec.task.key();
      ++st.records;
      // The same program measured again (another log, a re-collection) on
      // the same kind of machine: one program whose cost pools all its timings.
      auto [where, fresh] = program_at.emplace(program_key(ranking_group(key, rec.result.machine), rec.steps), out.size());
      if (!fresh) {
        ++st.merged;
        if (rec.result.ok()) timings[where->second].insert(timings[where->second].end(),
                                                           rec.result.costs_s.begin(), rec.result.costs_s.end());
        continue;
      }
      auto it = tasks.find(key);
      if (it == tasks.end()) it = tasks.emplace(key, std::make_shared<const Task>(rec.task)).first;
      TrainingRecord r;
      r.task = it->second;
      r.machine = rec.result.machine;
      try {
        r.state = State::from_json(r.task->dag, rec.steps);
      } catch (const std::exception& e) {
        ++st.skipped;
        --st.records;
        program_at.erase(where);
        if (st.first_problem.empty()) st.first_problem = path + ": steps do not replay: " + e.what();
        continue;
      }
      out.push_back(std::move(r));
      timings.emplace_back();
      if (rec.result.ok()) timings.back() = rec.result.costs_s;
    }
  }
  pool_same_code(&out, &timings, &st);
  for (size_t i = 0; i < out.size(); ++i) {
    std::vector<double>& t = timings[i];
    if (t.empty()) {
      ++st.failed;  // cost stays +inf
      continue;
    }
    out[i].cost_s = statistic == CostStatistic::kMin ? *std::min_element(t.begin(), t.end()) : median(t);
  }
  if (stats) *stats = st;
  return out;
}

void split_records(const std::vector<TrainingRecord>& records, const std::string& mode, double test_fraction,
                   uint64_t seed, std::vector<size_t>* train, std::vector<size_t>* test) {
  train->clear();
  test->clear();
  if (mode == "none") {
    for (size_t i = 0; i < records.size(); ++i) train->push_back(i);
  } else if (mode == "record") {
    split_indices(records.size(), test_fraction, seed, train, test);
  } else if (mode == "task") {
    std::vector<std::string> keys;
    for (const auto& r : records) {
      std::string k = r.task ? r.task->key() : "";
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
    std::sort(keys.begin(), keys.end());
    std::shuffle(keys.begin(), keys.end(), std::mt19937_64(seed));
    size_t n_test = static_cast<size_t>(std::llround(test_fraction * static_cast<double>(keys.size())));
    if (keys.size() >= 2) n_test = std::clamp<size_t>(n_test, 1, keys.size() - 1);
    std::set<std::string> test_keys(keys.begin(), keys.begin() + std::min(n_test, keys.size()));
    for (size_t i = 0; i < records.size(); ++i)
      (test_keys.count(records[i].task ? records[i].task->key() : "") ? test : train)->push_back(i);
  } else {
    throw LoomError("unknown split '" + mode + "' (expected task, record or none)");
  }
}

FeatureDataset make_feature_dataset(const std::vector<TrainingRecord>& records, const FeatureOptions& options) {
  std::vector<State> states;
  for (const auto& r : records) states.push_back(r.state);
  FeatureDataset d;
  d.programs = extract_features(states, options);
  for (const auto& r : records) {
    d.costs.push_back(r.cost_s);
    d.groups.push_back(d.group_of(ranking_group(r)));
  }
  return d;
}

}  // namespace loom
