#include "search/evolutionary_search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "ir/lower.h"
#include "search/crossover.h"

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

std::string innermost_tile_key(const State& s) {
  std::string key;
  for (size_t stage = 0; stage < s.stages().size(); ++stage) {
    const Stage& st = s.stages()[stage];
    for (const auto& rel : st.relations) {
      if (rel.kind != IterRelation::kSplit || rel.follows_another_split || rel.parents.empty() ||
          rel.children.empty())
        continue;
      if (st.iters[rel.parents[0]].kind != IterKind::kSpatial) continue;
      key += std::to_string(stage) + ":" + std::to_string(st.iters[rel.children.back()].extent) + " ";
    }
  }
  return key;
}

int states_per_tile(double cap, int num_out) {
  return std::max(1, static_cast<int>(std::ceil(cap * num_out - 1e-9)));
}

std::vector<State> select_with_tile_cap(const std::vector<State>& ranked, int num_out, double cap) {
  if (cap >= 1.0) return {ranked.begin(), ranked.begin() + std::min<size_t>(ranked.size(), std::max(num_out, 0))};
  std::vector<State> out;
  const int per_tile = states_per_tile(cap, num_out);
  std::unordered_map<std::string, int> taken;
  std::vector<size_t> skipped;
  for (size_t i = 0; i < ranked.size() && static_cast<int>(out.size()) < num_out; ++i) {
    int& n = taken[innermost_tile_key(ranked[i])];
    if (n < per_tile) {
      ++n;
      out.push_back(ranked[i]);
    } else {
      skipped.push_back(i);
    }
  }
  for (size_t i : skipped) {
    if (static_cast<int>(out.size()) >= num_out) break;
    out.push_back(ranked[i]);
  }
  return out;
}

EvolutionarySearch::EvolutionarySearch(const SketchTask& task, SearchSettings settings,
                                       std::vector<WeightedMutation> mutations)
    : task_(task), settings_(std::move(settings)), mutations_(std::move(mutations)) {}

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
  // Best distinct states seen in any generation: key -> (score, state, tile).
  struct Kept {
    float score;
    State state;
    std::string tile;  // innermost_tile_key, with a tile cap only
  };
  std::map<std::string, Kept> best;
  // Bounded to the top `num_out`, and with a tile cap also to the top
  // `per_tile` of every innermost tile: once the model prefers one tile the
  // whole top of the evolution can be its variants, and the cap then needs
  // the other tiles' best-scored states to give their share to.
  const bool capped = settings_.tile_cap < 1.0;
  const size_t keep = static_cast<size_t>(std::max(num_out, 1));
  const int per_tile = states_per_tile(settings_.tile_cap, num_out);
  size_t trim_above = 4 * keep;
  auto keep_best = [&](const std::vector<State>& pop, const std::vector<float>& scores,
                       const std::vector<std::string>& keys) {
    for (size_t i = 0; i < pop.size(); ++i) {
      if (!std::isfinite(scores[i]) || exclude.count(keys[i]) || best.count(keys[i])) continue;
      best.emplace(keys[i], Kept{scores[i], pop[i], capped ? innermost_tile_key(pop[i]) : std::string()});
    }
    if (best.size() <= trim_above) return;
    std::vector<std::pair<float, std::string>> order;
    for (const auto& [k, v] : best) order.emplace_back(v.score, k);
    std::sort(order.begin(), order.end(), std::greater<>());
    std::unordered_map<std::string, int> kept_of_tile;
    size_t kept = 0;
    for (size_t i = 0; i < order.size(); ++i) {
      bool keep_it = i < keep;
      if (capped) {
        int& n = kept_of_tile[best.at(order[i].second).tile];
        if (n < per_tile) {
          ++n;
          keep_it = true;
        }
      }
      if (keep_it) {
        ++kept;
      } else {
        best.erase(order[i].second);
      }
    }
    trim_above = std::max(4 * keep, 2 * kept);
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
    stats_.score_seconds += std::chrono::duration<double>(Clock::now() - ts).count();
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
        if (auto child = mutate(parent, rng)) {
          ++stats_.mutations_ok;
          next.push_back(std::move(*child));
        }
      } else if (r < settings_.mutation_prob + settings_.crossover_prob) {
        ++stats_.crossovers_tried;
        if (auto child = crossover(parent, population[pick(rng)], rng)) {
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
  for (auto& [k, v] : best) ranked.emplace_back(v.score, v.state);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<State> ordered;
  ordered.reserve(ranked.size());
  for (auto& r : ranked) ordered.push_back(std::move(r.second));
  std::vector<State> out = select_with_tile_cap(ordered, num_out, settings_.tile_cap);
  stats_.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return out;
}

}  // namespace loom
