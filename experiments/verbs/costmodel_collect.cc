// loom costmodel collect: measure random schedules of one task into a record
// log — training and evaluation data for the cost model, independent of any
// search (the sketch sampler draws the programs, the measurer times them).
//
//   loom costmodel collect WORKLOAD [--params JSON] [--constants NAME,...] [--target STR]
//        --n N --log FILE [--seed S] [--batch B] [--repeat R] [--min-repeat-ms MS]
//
// --constants marks inputs as constant weights (as a config's "constants"):
// their layout is then the schedule's to choose, as in tuning.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "experiments/verbs.h"
#include "ir/error.h"
#include "measure/measurer.h"
#include "measure/records.h"
#include "measure/task.h"
#include "search/search_policy.h"
#include "sketch/sketch_policy.h"

namespace loom::cli {

namespace {

std::string next(const Args& a, size_t& i) {
  if (i + 1 >= a.size()) throw LoomError(a[i] + " needs a value");
  return a[++i];
}

}  // namespace

int costmodel_collect(const Args& a) {
  std::string workload, log_path, target = "cpu -threads=1";
  std::vector<std::string> constants;
  nlohmann::json params = nlohmann::json::object();
  int n = 0, batch = 64;
  uint64_t seed = 0;
  MeasureOptions mo;
  mo.repeat = 2;
  mo.min_repeat_ms = 5;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string& f = a[i];
    if (f == "--params") {
      params = nlohmann::json::parse(next(a, i), nullptr, false);
      if (params.is_discarded() || !params.is_object()) throw LoomError("--params: expected a JSON object");
    } else if (f == "--constants") {
      std::string list = next(a, i);
      for (size_t at = 0; at <= list.size();) {
        size_t comma = std::min(list.find(',', at), list.size());
        if (comma > at) constants.push_back(list.substr(at, comma - at));
        at = comma + 1;
      }
    } else if (f == "--target") target = next(a, i);
    else if (f == "--n") n = int_flag(a, i, f.c_str());
    else if (f == "--log") log_path = next(a, i);
    else if (f == "--seed") seed = static_cast<uint64_t>(int_flag(a, i, f.c_str()));
    else if (f == "--batch") batch = int_flag(a, i, f.c_str());
    else if (f == "--repeat") mo.repeat = int_flag(a, i, f.c_str());
    else if (f == "--min-repeat-ms") mo.min_repeat_ms = int_flag(a, i, f.c_str());
    else if (!f.empty() && f[0] == '-') throw LoomError("unknown option " + f);
    else if (workload.empty()) workload = f;
    else throw LoomError("collect takes one WORKLOAD");
  }
  if (workload.empty() || n == 0 || log_path.empty())
    throw LoomError("usage: loom costmodel collect WORKLOAD [--params JSON] --n N --log FILE");

  Task task = Task::make(workload, params, Target::parse(target), constants);
  // The sketches a search of the task starts from (threads, vector width,
  // the constants' layout rewrite).
  SketchPolicy policy(make_sketch_task(task));
  std::mt19937_64 rng(seed);
  std::printf("collect: %s  target: %s  n: %d  batch: %d  seed: %llu  repeat: %d  min-repeat-ms: %g  "
              "sketches: %zu\n",
              task.description().c_str(), task.target.to_string().c_str(), n, batch,
              static_cast<unsigned long long>(seed), mo.repeat, mo.min_repeat_ms, policy.sketches().size());
  std::vector<State> states = policy.sample(n, rng);
  if (states.empty()) throw LoomError("the sampler produced no programs for " + task.description());

  Measurer measurer(mo);
  RecordLog log(log_path);
  int done = 0, errors = 0;
  double best = 1e30;
  for (size_t b = 0; b < states.size(); b += static_cast<size_t>(batch)) {
    std::vector<State> chunk(states.begin() + b,
                             states.begin() + std::min(states.size(), b + static_cast<size_t>(batch)));
    std::vector<MeasureResult> res = measurer.measure(task, chunk);
    std::vector<nlohmann::json> steps;
    for (const auto& s : chunk) steps.push_back(s.steps_json());
    log.append(task, steps, res);
    for (const auto& r : res) {
      if (r.ok()) best = std::min(best, r.median_s());
      else ++errors;
    }
    done += static_cast<int>(chunk.size());
    std::printf("  %d/%zu measured, %d errors, best %.3f ms (%.1f GFLOP/s), batch %.1f s\n", done,
                states.size(), errors, best * 1e3, task.dag->flop_count() / best / 1e9,
                measurer.last_stats().wall_s);
    std::fflush(stdout);
  }
  return kExitOk;
}

}  // namespace loom::cli
