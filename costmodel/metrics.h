// Ranking quality of a cost model, measured within each task (scores are only
// comparable inside one task): pairwise accuracy, top-1 / top-k recall of the
// truly best programs, best-of-top-k score, Spearman correlation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace loom {

struct RankingMetrics {
  double pairwise_accuracy = 0;  // pairs (same task, different labels) ordered right; score ties count 1/2
  double top1_recall = 0;        // tasks whose top-scored program is a truly best one
  double topk_recall = 0;        // |top-k by score ∩ top-k by label| / k, averaged over tasks
  double topk_score = 0;         // best label among the top-k scored / best label, averaged over tasks
  double spearman = 0;           // rank correlation of score and label, averaged over tasks (n >= 3)
  int k = 10;
  size_t num_programs = 0, num_tasks = 0, num_pairs = 0;
  std::string to_string() const;
  // {"pairwise_accuracy", "top1_recall", "topk_recall", "topk_score",
  //  "spearman", "k", "programs", "tasks"}
  nlohmann::json to_json() const;
};

// labels: higher = better (e.g. normalized throughput); programs with a
// negative label (failed measurements) are left out.
RankingMetrics ranking_metrics(const std::vector<float>& scores, const std::vector<float>& labels,
                               const std::vector<int>& groups, int k = 10);

// Only the pairwise accuracy (cheap; used for early stopping).
double pairwise_accuracy(const std::vector<float>& scores, const std::vector<float>& labels,
                         const std::vector<int>& groups);

// Deterministic split of [0, n) into train / validation indices.
void split_indices(size_t n, double valid_fraction, uint64_t seed, std::vector<size_t>* train,
                   std::vector<size_t>* valid);

// Split of `items` (program positions in a growing training set) into train
// / validation by a hash of each position: a program keeps its side across
// fits as records are appended. Online training warm-starts the MLP, so a
// fresh random split would validate on programs the model was trained on
// in an earlier fit — and early stopping would keep the old weights.
void stable_split(const std::vector<size_t>& items, double valid_fraction, uint64_t seed,
                  std::vector<size_t>* train, std::vector<size_t>* valid);

}  // namespace loom
