#include "search/evolutionary_search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "ir/lower.h"
#include "measure/timing.h"
#include "search/crossover.h"
#include "sketch/gpu/gpu_rules.h"

namespace loom {

std::vector<float> random_scores_of_valid(const std::vector<State>& states, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(0, 1);
  std::vector<float> out(states.size());
  for (size_t i = 0; i < states.size(); ++i) {
    out[i] = u(rng);  // drawn for every state: the stream does not depend on validity
    try {
      lower(states[i]);
    } catch (const std::exception&) {
      out[i] = -std::numeric_limits<float>::infinity();
    }
  }
  return out;
}

std::string state_key(const State& s) { return s.steps_json().dump(); }

EvolutionarySearch::EvolutionarySearch(const SketchTask& task, SearchSettings settings,
                                       std::vector<WeightedMutation> mutations)
    : task_(task), settings_(std::move(settings)), mutations_(std::move(mutations)) {}

bool EvolutionarySearch::fits_target(const State& s) const { return !task_.is_gpu || fits_gpu_limits(s); }

std::optional<State> EvolutionarySearch::mutate(const State& s, std::mt19937_64& rng) {
  double total = 0;
  for (const auto& m : mutations_) total += m.weight;
  if (total <= 0) return std::nullopt;
  std::uniform_real_distribution<double> u(0, total);
  double x = u(rng);
  const MutationRule* rule = mutations_.back().rule.get();
  for (const auto& m : mutations_) {
    if (x < m.weight) {
      rule = m.rule.get();
      break;
    }
    x -= m.weight;
  }
  MutationContext ctx{task_, rng};
  return rule->apply(s, ctx);
}

std::vector<State> EvolutionarySearch::run(std::vector<State> population, const ScoreFn& score,
                                           int num_out,
                                           const std::unordered_set<std::string>& exclude,
                                           std::mt19937_64& rng) {
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  stats_ = {};
  // Best distinct states seen in any generation: key -> (score, state).
  std::map<std::string, std::pair<float, State>> best;
  auto keep_best = [&](const std::vector<State>& pop, const std::vector<float>& scores,
                       const std::vector<std::string>& keys) {
    for (size_t i = 0; i < pop.size(); ++i) {
      if (!std::isfinite(scores[i]) || exclude.count(keys[i])) continue;
      best.emplace(keys[i], std::make_pair(scores[i], pop[i]));
    }
    if (static_cast<int>(best.size()) > 4 * std::max(num_out, 1)) {
      // Trim to the top num_out to bound memory.
      std::vector<std::pair<float, std::string>> order;
      for (const auto& [k, v] : best) order.emplace_back(v.first, k);
      std::sort(order.begin(), order.end(), std::greater<>());
      for (size_t i = num_out; i < order.size(); ++i) best.erase(order[i].second);
    }
  };

  // The model does not change during a run: a state seen in an earlier
  // generation (a copied parent, a mutation that lands on a known state) is
  // not lowered and scored again.
  std::unordered_map<std::string, float> known_scores;
  for (int gen = 0; !population.empty(); ++gen) {
    auto ts = Clock::now();
    std::vector<std::string> keys;
    keys.reserve(population.size());
    for (const auto& s : population) keys.push_back(state_key(s));
    std::vector<State> unscored;
    std::vector<size_t> unscored_at;
    for (size_t i = 0; i < population.size(); ++i) {
      if (!known_scores.emplace(keys[i], 0.0f).second) continue;  // scored, or first seen earlier here
      unscored.push_back(population[i]);
      unscored_at.push_back(i);
    }
    std::vector<float> fresh = unscored.empty() ? std::vector<float>{} : score(unscored);
    for (size_t j = 0; j < unscored_at.size(); ++j) known_scores[keys[unscored_at[j]]] = fresh[j];
    std::vector<float> scores(population.size());
    for (size_t i = 0; i < population.size(); ++i) scores[i] = known_scores.at(keys[i]);
    stats_.score_seconds += seconds_since(ts);
    stats_.scored += static_cast<int>(unscored.size());
    stats_.population_total += static_cast<int>(population.size());
    keep_best(population, scores, keys);
    stats_.generations = gen;
    if (gen >= settings_.generations) break;

    // Fitness-proportional selection over the valid states.
    float lo = std::numeric_limits<float>::infinity();
    for (float x : scores) if (std::isfinite(x)) lo = std::min(lo, x);
    std::vector<double> weights(population.size(), 0.0);
    double wsum = 0;
    for (size_t i = 0; i < scores.size(); ++i) {
      if (!std::isfinite(scores[i])) continue;
      weights[i] = static_cast<double>(scores[i] - lo) + 1e-6;
      wsum += weights[i];
    }
    if (wsum <= 0) break;
    std::discrete_distribution<size_t> pick(weights.begin(), weights.end());
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<State> next;
    next.reserve(settings_.population);
    int attempts = 0;
    while (static_cast<int>(next.size()) < settings_.population && attempts < 4 * settings_.population) {
      ++attempts;
      const State& parent = population[pick(rng)];
      double r = u(rng);
      if (r < settings_.mutation_prob) {
        ++stats_.mutations_tried;
        if (auto child = mutate(parent, rng); child && fits_target(*child)) {
          ++stats_.mutations_ok;
          next.push_back(std::move(*child));
        }
      } else if (r < settings_.mutation_prob + settings_.crossover_prob) {
        ++stats_.crossovers_tried;
        if (auto child = crossover(parent, population[pick(rng)], rng); child && fits_target(*child)) {
          ++stats_.crossovers_ok;
          next.push_back(std::move(*child));
        }
      } else {
        next.push_back(parent);
      }
    }
    population = std::move(next);
  }

  std::vector<std::pair<float, State>> ranked;
  for (auto& [k, v] : best) ranked.push_back(v);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<State> out;
  for (size_t i = 0; i < ranked.size() && static_cast<int>(out.size()) < num_out; ++i)
    out.push_back(ranked[i].second);
  stats_.seconds = seconds_since(t0);
  return out;
}

}  // namespace loom
