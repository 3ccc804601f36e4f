// How well a cost model ranks programs of tasks (or machines) it was never
// trained on: grouped cross-validation over record logs.
//
// Records are dealt into folds by a unit — a task's shape (workload, dtype
// and parameters: a shape's thread counts and constant-weight variants are
// held out together, so no variant of it is seen in training) or the
// machine kind that timed them. For each fold a fresh model is trained on
// every other fold's records and ranks the fold's programs; every unit is
// held out exactly once. `folds` = 0 makes one fold per unit: leave one task
// (or one machine) out.
//
// Metrics are those of metrics.h, within each ranking group (a task on one
// machine), over the programs with a valid measurement; failed ones train as
// the slowest (label 0), as in online training.
//
// `train_only` records train every fold that does not hold out their unit
// and are never ranked: e.g. the random programs of every task while the
// search-chosen ones are ranked. A model shipped for unseen tasks is trained
// on all the programs of its tasks, so the ranking of a held-out task's
// search-chosen programs is measured the same way (a held-out task's own
// train-only records never train its fold).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "costmodel/cost_model.h"
#include "costmodel/metrics.h"

namespace loom {

enum class TransferUnit { kTask, kMachine, kNetwork };

// kNetwork: the network each task belongs to and its weight there (how often
// it occurs), by task key (Task::key()). Records of tasks no network names
// only train.
struct NetworkTasksOfRecords {
  std::map<std::string, std::string> network_of_task;
  std::map<std::string, double> weight_of_task;
};

struct TransferOptions {
  std::string model = "mlp";
  nlohmann::json settings = nlohmann::json::object();
  TransferUnit unit = TransferUnit::kTask;
  int folds = 0;      // 0 = one per unit
  uint64_t seed = 0;  // deals the units to folds
  int k = 10;         // top-k of the metrics
  FeatureOptions features;
  NetworkTasksOfRecords networks;  // kNetwork only
};

// TenSet's top-k score of a held-out network: the network's latency with
// every task's best measured program over its latency with the best of the
// model's k top-scored programs of each task, tasks weighted by their
// occurrences: sum(w * best) / sum(w * best of top-k). 1 = the model's
// picks hold the best programs.
struct NetworkTopK {
  std::string name;
  int tasks = 0;
  double top1 = 0, topk = 0;
};

struct HeldOutGroup {
  std::string name;  // the task's description (+ " on MACHINE" when the records name one)
  int fold = 0;
  RankingMetrics metrics;
};

struct TransferReport {
  int folds = 0, units = 0;
  std::vector<HeldOutGroup> groups;  // in fold order
  RankingMetrics overall;            // over every held-out group (pairs pooled)
  double mean_pairwise = 0, min_pairwise = 0;  // over the groups
  std::string min_group;                       // the group of min_pairwise
  std::vector<NetworkTopK> networks;           // kNetwork: per held-out network
  nlohmann::json to_json() const;
};

// Throws LoomError when the ranked records hold fewer than two units
// (nothing to hold out against) or the model settings are bad. `progress`
// gets one line per fold.
TransferReport evaluate_transfer(const std::vector<TrainingRecord>& ranked, const TransferOptions& options,
                                 const std::function<void(const std::string&)>& progress = {},
                                 const std::vector<TrainingRecord>& train_only = {});

}  // namespace loom
