#include "costmodel/transfer_eval.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <cstdio>
#include <map>
#include <random>

#include "costmodel/training_data.h"
#include "ir/error.h"

namespace loom {

namespace {

// "" for a record that is in no unit (it only trains).
std::string unit_of(const TrainingRecord& r, const TransferOptions& o) {
  if (o.unit == TransferUnit::kMachine) return machine_label(r.machine);
  if (!r.task) return "";
  if (o.unit == TransferUnit::kNetwork) {
    auto it = o.networks.network_of_task.find(r.task->key());
    return it == o.networks.network_of_task.end() ? "" : it->second;
  }
  return r.task->workload + " " + r.task->dtype + " " + r.task->params.dump();
}

// The lowest cost among the k top-scored of a task's programs.
double best_of_top(const std::vector<float>& scores, const std::vector<double>& costs, int k) {
  std::vector<size_t> order(scores.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  double best = std::numeric_limits<double>::infinity();
  for (size_t j = 0; j < order.size() && static_cast<int>(j) < k; ++j) best = std::min(best, costs[order[j]]);
  return best;
}

std::string group_name(const TrainingRecord& r) {
  std::string name = r.task ? r.task->description() + " (" + r.task->target.to_string() + ")" : "?";
  return r.machine.known() ? name + " on " + r.machine.name() : name;
}

}  // namespace

nlohmann::json TransferReport::to_json() const {
  nlohmann::json g = nlohmann::json::array();
  for (const auto& h : groups) {
    nlohmann::json m = h.metrics.to_json();
    m["task"] = h.name;
    m["fold"] = h.fold;
    g.push_back(std::move(m));
  }
  nlohmann::json j = overall.to_json();
  j["folds"] = folds;
  j["units"] = units;
  j["mean_pairwise_accuracy"] = mean_pairwise;
  j["min_pairwise_accuracy"] = min_pairwise;
  j["min_task"] = min_group;
  j["held_out"] = std::move(g);
  if (!networks.empty()) {
    nlohmann::json n = nlohmann::json::array();
    for (const auto& x : networks) n.push_back({{"network", x.name}, {"tasks", x.tasks}, {"top1_score", x.top1}, {"topk_score", x.topk}});
    j["networks"] = std::move(n);
  }
  return j;
}

TransferReport evaluate_transfer(const std::vector<TrainingRecord>& ranked, const TransferOptions& o,
                                 const std::function<void(const std::string&)>& progress,
                                 const std::vector<TrainingRecord>& train_only) {
  // The units, in a seeded order, dealt round-robin to the folds.
  std::vector<std::string> units;
  for (const auto& r : ranked)
    if (std::string u = unit_of(r, o); !u.empty() || o.unit != TransferUnit::kNetwork) units.push_back(u);
  std::sort(units.begin(), units.end());
  units.erase(std::unique(units.begin(), units.end()), units.end());
  const char* what = o.unit == TransferUnit::kTask ? "task shape" : o.unit == TransferUnit::kMachine ? "machine kind" : "network";
  if (units.size() < 2)
    throw LoomError("the records hold " + std::to_string(units.size()) + " " + what + (units.size() == 1 ? "" : "s") +
                    (units.empty() ? "" : " (" + units[0] + ")") + ": holding one out needs at least two");
  std::shuffle(units.begin(), units.end(), std::mt19937_64(o.seed));
  const int folds = o.folds == 0 ? static_cast<int>(units.size()) : std::min<int>(o.folds, static_cast<int>(units.size()));
  if (folds < 2) throw LoomError("transfer evaluation needs at least 2 folds, got " + std::to_string(o.folds));
  std::map<std::string, int> fold_of_unit;
  for (size_t i = 0; i < units.size(); ++i) fold_of_unit[units[i]] = static_cast<int>(i % static_cast<size_t>(folds));
  make_cost_model(o.model, o.settings);  // bad settings fail before the features are extracted

  // The ranked records first, then the train-only ones; fold -1: a unit
  // that is never held out (only train-only records name it).
  std::vector<TrainingRecord> records = ranked;
  records.insert(records.end(), train_only.begin(), train_only.end());
  const size_t num_ranked = ranked.size();

  // Features once; labels per ranking group over all records (a group lies
  // wholly in one fold, so its labels are those a model trained on it saw).
  FeatureDataset d = make_feature_dataset(records, o.features);
  const std::vector<float> train_labels = d.normalized_throughput();
  std::vector<float> eval_labels = train_labels;
  for (auto& y : eval_labels)
    if (!(y > 0)) y = -1;  // failed or unlowerable: not ranked
  std::vector<int> fold(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    auto it = fold_of_unit.find(unit_of(records[i], o));
    fold[i] = it == fold_of_unit.end() ? -1 : it->second;
  }

  // kNetwork: per network, sum(w * best) and sum(w * best of top-1, top-k)
  // over its held-out tasks.
  struct NetworkSums { int tasks = 0; double best = 0, top1 = 0, topk = 0; };
  std::map<std::string, NetworkSums> network_sums;
  TransferReport rep;
  rep.folds = folds;
  rep.units = static_cast<int>(units.size());
  std::vector<float> all_scores(records.size(), 0.0f);
  std::vector<bool> scored(records.size(), false);
  for (int f = 0; f < folds; ++f) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<ProgramFeatures> train_x, test_x;
    std::vector<float> train_y;
    std::vector<int> train_g;
    std::vector<size_t> test_idx;
    for (size_t i = 0; i < records.size(); ++i) {
      if (fold[i] == f) {
        if (i >= num_ranked) continue;  // train-only, of the held-out unit: it must not train
        test_x.push_back(d.programs[i]);
        test_idx.push_back(i);
      } else {
        train_x.push_back(d.programs[i]);
        train_y.push_back(train_labels[i]);
        train_g.push_back(d.groups[i]);
      }
    }
    auto model = make_cost_model(o.model, o.settings);
    model->fit(train_x, train_y, train_g);
    std::vector<float> s = model->predict_features(test_x);
    for (size_t j = 0; j < test_idx.size(); ++j) all_scores[test_idx[j]] = s[j], scored[test_idx[j]] = true;

    // Per held-out group, in the order the records first name it.
    std::map<int, std::vector<size_t>> members;
    std::vector<int> order;
    for (size_t i : test_idx) {
      if (members[d.groups[i]].empty()) order.push_back(d.groups[i]);
      members[d.groups[i]].push_back(i);
    }
    double fold_correct = 0;
    size_t fold_pairs = 0;
    for (int g : order) {
      std::vector<float> gs, gl;
      for (size_t i : members[g]) gs.push_back(all_scores[i]), gl.push_back(eval_labels[i]);
      HeldOutGroup h{group_name(records[members[g][0]]), f,
                     ranking_metrics(gs, gl, std::vector<int>(gs.size(), 0), o.k)};
      if (o.unit == TransferUnit::kNetwork) {
        std::vector<float> vs;  // the valid programs' scores and costs
        std::vector<double> vc;
        for (size_t i : members[g])
          if (eval_labels[i] > 0 && std::isfinite(records[i].cost_s)) vs.push_back(all_scores[i]), vc.push_back(records[i].cost_s);
        if (!vc.empty()) {
          const std::string key = records[members[g][0]].task->key();
          auto w = o.networks.weight_of_task.find(key);
          const double weight = w == o.networks.weight_of_task.end() ? 1.0 : w->second;
          NetworkSums& n = network_sums[o.networks.network_of_task.at(key)];
          ++n.tasks;
          n.best += weight * *std::min_element(vc.begin(), vc.end());
          n.top1 += weight * best_of_top(vs, vc, 1);
          n.topk += weight * best_of_top(vs, vc, o.k);
        }
      }
      if (h.metrics.num_pairs == 0) continue;  // fewer than two valid programs: nothing to rank
      fold_correct += h.metrics.pairwise_accuracy * static_cast<double>(h.metrics.num_pairs);
      fold_pairs += h.metrics.num_pairs;
      rep.groups.push_back(std::move(h));
    }
    if (progress) {
      char line[256];
      std::snprintf(line, sizeof line, "fold %d/%d: %zu held-out programs of %zu task(s), trained on %zu, %.1f s: "
                    "pairwise %.3f", f + 1, folds, test_idx.size(), order.size(), train_x.size(),
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                    fold_pairs ? fold_correct / static_cast<double>(fold_pairs) : 0.0);
      progress(line);
    }
  }
  std::vector<float> s, y;
  std::vector<int> g;
  for (size_t i = 0; i < records.size(); ++i)
    if (scored[i]) s.push_back(all_scores[i]), y.push_back(eval_labels[i]), g.push_back(d.groups[i]);
  rep.overall = ranking_metrics(s, y, g, o.k);
  for (const auto& [name, n] : network_sums)
    rep.networks.push_back({name, n.tasks, n.top1 > 0 ? n.best / n.top1 : 0, n.topk > 0 ? n.best / n.topk : 0});
  if (!rep.groups.empty()) {
    double sum = 0;
    rep.min_pairwise = 2;
    for (const auto& h : rep.groups) {
      sum += h.metrics.pairwise_accuracy;
      if (h.metrics.pairwise_accuracy < rep.min_pairwise) rep.min_pairwise = h.metrics.pairwise_accuracy, rep.min_group = h.name;
    }
    rep.mean_pairwise = sum / static_cast<double>(rep.groups.size());
  }
  return rep;
}

}  // namespace loom
