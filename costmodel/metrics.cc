#include "costmodel/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <random>

namespace loom {

namespace {

std::map<int, std::vector<size_t>> by_group(const std::vector<float>& labels, const std::vector<int>& groups) {
  std::map<int, std::vector<size_t>> g;
  for (size_t i = 0; i < labels.size(); ++i)
    if (labels[i] >= 0) g[groups[i]].push_back(i);
  return g;
}

// Average ranks (ties share the mean rank), ascending by value.
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> o(v.size());
  std::iota(o.begin(), o.end(), 0);
  std::sort(o.begin(), o.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < o.size();) {
    size_t j = i;
    while (j + 1 < o.size() && v[o[j + 1]] == v[o[i]]) ++j;
    for (size_t k = i; k <= j; ++k) r[o[k]] = (static_cast<double>(i) + static_cast<double>(j)) / 2.0;
    i = j + 1;
  }
  return r;
}

void count_pairs(const std::vector<size_t>& idx, const std::vector<float>& s, const std::vector<float>& y,
                 double* correct, size_t* pairs) {
  for (size_t a = 0; a < idx.size(); ++a)
    for (size_t b = a + 1; b < idx.size(); ++b) {
      size_t i = idx[a], j = idx[b];
      if (y[i] == y[j]) continue;
      ++*pairs;
      double ds = static_cast<double>(s[i]) - s[j], dy = static_cast<double>(y[i]) - y[j];
      if (ds == 0) *correct += 0.5;
      else if ((ds > 0) == (dy > 0)) *correct += 1;
    }
}

}  // namespace

double pairwise_accuracy(const std::vector<float>& scores, const std::vector<float>& labels,
                         const std::vector<int>& groups) {
  double correct = 0;
  size_t pairs = 0;
  for (const auto& [g, idx] : by_group(labels, groups)) count_pairs(idx, scores, labels, &correct, &pairs);
  return pairs ? correct / static_cast<double>(pairs) : 0.0;
}

RankingMetrics ranking_metrics(const std::vector<float>& scores, const std::vector<float>& labels,
                               const std::vector<int>& groups, int k) {
  RankingMetrics m;
  m.k = k;
  double correct = 0, top1 = 0, topk = 0, topk_score = 0, rho = 0;
  size_t rho_tasks = 0;
  for (const auto& [g, idx] : by_group(labels, groups)) {
    m.num_programs += idx.size();
    ++m.num_tasks;
    count_pairs(idx, scores, labels, &correct, &m.num_pairs);
    std::vector<size_t> by_score = idx, by_label = idx;
    std::stable_sort(by_score.begin(), by_score.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
    std::stable_sort(by_label.begin(), by_label.end(), [&](size_t a, size_t b) { return labels[a] > labels[b]; });
    float best = labels[by_label[0]];
    top1 += labels[by_score[0]] >= best ? 1 : 0;
    size_t kk = std::min<size_t>(static_cast<size_t>(k), idx.size());
    // A program counts as truly top-k if its label reaches the k-th best label (ties included).
    float kth = labels[by_label[kk - 1]];
    size_t hits = 0;
    float best_in_topk = -1;
    for (size_t i = 0; i < kk; ++i) {
      hits += labels[by_score[i]] >= kth;
      best_in_topk = std::max(best_in_topk, labels[by_score[i]]);
    }
    topk += static_cast<double>(hits) / static_cast<double>(kk);
    topk_score += best > 0 ? best_in_topk / best : 1.0;
    if (idx.size() >= 3) {
      std::vector<double> s, y;
      for (size_t i : idx) s.push_back(scores[i]), y.push_back(labels[i]);
      std::vector<double> rs = ranks(s), ry = ranks(y);
      double ms = std::accumulate(rs.begin(), rs.end(), 0.0) / rs.size();
      double my = std::accumulate(ry.begin(), ry.end(), 0.0) / ry.size();
      double num = 0, ds = 0, dy = 0;
      for (size_t i = 0; i < rs.size(); ++i) {
        num += (rs[i] - ms) * (ry[i] - my);
        ds += (rs[i] - ms) * (rs[i] - ms);
        dy += (ry[i] - my) * (ry[i] - my);
      }
      rho += ds > 0 && dy > 0 ? num / std::sqrt(ds * dy) : 0.0;
      ++rho_tasks;
    }
  }
  if (m.num_pairs) m.pairwise_accuracy = correct / static_cast<double>(m.num_pairs);
  if (m.num_tasks) {
    m.top1_recall = top1 / m.num_tasks;
    m.topk_recall = topk / m.num_tasks;
    m.topk_score = topk_score / m.num_tasks;
  }
  if (rho_tasks) m.spearman = rho / rho_tasks;
  return m;
}

std::string RankingMetrics::to_string() const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "pairwise %.3f  top1-recall %.3f  top%d-recall %.3f  top%d-score %.3f  spearman %.3f  "
                "(%zu programs, %zu tasks, %zu pairs)",
                pairwise_accuracy, top1_recall, k, topk_recall, k, topk_score, spearman, num_programs,
                num_tasks, num_pairs);
  return buf;
}

nlohmann::json RankingMetrics::to_json() const {
  return {{"pairwise_accuracy", pairwise_accuracy},
          {"top1_recall", top1_recall},
          {"topk_recall", topk_recall},
          {"topk_score", topk_score},
          {"spearman", spearman},
          {"k", k},
          {"programs", num_programs},
          {"tasks", num_tasks}};
}

void split_indices(size_t n, double valid_fraction, uint64_t seed, std::vector<size_t>* train,
                   std::vector<size_t>* valid) {
  std::vector<size_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(idx.begin(), idx.end(), rng);
  size_t nv = static_cast<size_t>(std::floor(static_cast<double>(n) * valid_fraction));
  valid->assign(idx.begin(), idx.begin() + nv);
  train->assign(idx.begin() + nv, idx.end());
  std::sort(valid->begin(), valid->end());
  std::sort(train->begin(), train->end());
}

void stable_split(const std::vector<size_t>& items, double valid_fraction, uint64_t seed,
                  std::vector<size_t>* train, std::vector<size_t>* valid) {
  train->clear();
  valid->clear();
  for (size_t item : items) {
    // splitmix64 of the position: uniform, and independent of the others.
    uint64_t z = static_cast<uint64_t>(item) + seed * 0x9e3779b97f4a7c15ULL + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    const double u = static_cast<double>(z >> 11) * 0x1.0p-53;
    (u < valid_fraction ? valid : train)->push_back(item);
  }
}

}  // namespace loom
