#include "search/search_policy.h"

#include <algorithm>
#include <chrono>

#include "ir/lower.h"
#include "measure/timing.h"

namespace loom {

SketchTask make_sketch_task(const Task& task, const SketchSettings& settings) {
  SketchTask st;
  st.dag = task.dag;
  st.threads = task.target.threads;
  st.vector_width = task.target.vector_width();
  st.is_gpu = task.target.is_gpu();
  st.settings = settings;
  return st;
}

SearchPolicy::SearchPolicy(std::shared_ptr<const Task> task, SketchTask sketch_task,
                           SearchSettings settings, std::vector<WeightedMutation> mutations,
                           uint64_t seed)
    : task_(std::move(task)),
      settings_(std::move(settings)),
      sketch_policy_(std::move(sketch_task)),
      evolution_(sketch_policy_.task(), settings_, std::move(mutations)),
      seed_(seed),
      rng_(seed) {}

std::vector<State> SearchPolicy::next_batch(int n, const ScoreFn& score, const std::vector<State>& transferred,
                                            int transfer_limit) {
  if (transfer_limit < 0) transfer_limit = settings_.transfer_per_round;
  using Clock = std::chrono::steady_clock;
  rng_.seed(round_seed(seed_, trials_));
  std::vector<State> out;
  std::unordered_set<std::string> chosen_nests;
  batch_nests_.clear();  // state_key -> loop_nest_key of the states chosen
  // Adds s to the batch unless it was measured or is in the batch already,
  // under its steps or under other steps that make the same loop nest.
  auto take = [&](State s) {
    std::string key = state_key(s);
    if (measured_.count(key) || batch_nests_.count(key)) return false;
    std::string nest = loop_nest_key(s);
    if (!nest.empty() && (measured_nests_.count(nest) || !chosen_nests.insert(nest).second)) return false;
    batch_nests_.emplace(std::move(key), std::move(nest));
    out.push_back(std::move(s));
    return true;
  };
  if (settings_.strategy == SearchStrategy::kRandom) {
    // Pure random search (the ablation baseline): fresh samples only.
    auto t0 = Clock::now();
    for (int attempt = 0; attempt < 8 && static_cast<int>(out.size()) < n; ++attempt) {
      for (auto& s : sketch_policy_.sample(n, rng_)) {
        if (static_cast<int>(out.size()) >= n) break;
        take(std::move(s));
      }
    }
    sample_seconds_ = seconds_since(t0);
    return out;
  }
  // A similar task's best programs, measured whatever the model says of
  // them: the model ranks a new task's programs poorly, while the best
  // programs of a task with the same stages and loop extents (a conv and
  // the dilated conv of its shape) often run well here too.
  for (int k = 0, taken = 0; k < static_cast<int>(transferred.size()) && taken < transfer_limit &&
                             static_cast<int>(out.size()) < n;
       ++k)
    if (take(transferred[k])) ++taken;
  // Initial population: the best measured states, then fresh samples.
  std::vector<State> population;
  int n_measured = std::min<int>(static_cast<int>(measured_good_.size()),
                                 static_cast<int>(settings_.population * settings_.init_measured_ratio));
  for (int i = 0; i < n_measured; ++i) population.push_back(measured_good_[i].second);
  int n_fresh = std::max(settings_.population - n_measured, settings_.init_min_fresh);
  auto t0 = Clock::now();
  std::vector<State> fresh = sketch_policy_.sample(n_fresh, rng_);
  sample_seconds_ = seconds_since(t0);
  population.insert(population.end(), fresh.begin(), fresh.end());

  // Besides the model's picks: neighbours of the best measured states by the
  // target's neighbour rules (CPU: one innermost length; as many as half the
  // eps-greedy share, rounded up), chosen without the model. A model ranks
  // low the tiles it has not seen measured (register tiles no divisor of the
  // extent gives), so the search would never propose them. They come out of
  // the model's share rather than the random samples' (measured in
  // docs/results/2026-12-03-register-tile-neighbour-xeon.md).
  static const auto cpu_neighbours = cpu_neighbour_rules();
  static const auto gpu_neighbours = gpu_neighbour_rules();
  const auto& neighbour_rules = sketch_policy_.task().is_gpu ? gpu_neighbours : cpu_neighbours;
  const int n_random = static_cast<int>(n * settings_.eps_greedy);
  const int n_neighbours = neighbour_rules.empty() ? 0 : (n_random + 1) / 2;
  const int n_model = std::max(0, n - static_cast<int>(out.size()) - n_random - n_neighbours);
  // Twice as many as wanted: some may make a loop nest measured already.
  int model_taken = 0;
  for (State& s : evolution_.run(population, score, 2 * n_model, measured_, rng_))
    if (model_taken < n_model && take(std::move(s))) ++model_taken;
  if (n_neighbours > 0) {
    MutationContext ctx{sketch_policy_.task(), rng_};
    const int top = std::min<int>(4, static_cast<int>(measured_good_.size()));
    for (int k = 0, added = 0; top > 0 && k < 8 * n_neighbours && added < n_neighbours &&
                               static_cast<int>(out.size()) < n; ++k) {
      auto m = neighbour_rules[k % neighbour_rules.size()]->apply(measured_good_[k % top].second, ctx);
      if (m && take(std::move(*m))) ++added;
    }
  }
  // eps-greedy: random fresh samples not measured and not already chosen.
  std::shuffle(fresh.begin(), fresh.end(), rng_);
  for (const auto& s : fresh) {
    if (static_cast<int>(out.size()) >= n) break;
    take(s);
  }
  return out;
}

void SearchPolicy::add_measured(const std::vector<State>& states, const std::vector<double>& costs) {
  double before = best_cost_;
  for (size_t i = 0; i < states.size(); ++i) {
    std::string key = state_key(states[i]);
    auto chosen = batch_nests_.find(key);
    std::string nest = chosen != batch_nests_.end() ? chosen->second : loop_nest_key(states[i]);
    if (!nest.empty()) measured_nests_.insert(std::move(nest));
    measured_.insert(std::move(key));
    ++trials_;
    if (!std::isfinite(costs[i])) continue;
    measured_good_.emplace_back(costs[i], states[i]);
    if (costs[i] < best_cost_) {
      best_cost_ = costs[i];
      best_state_ = states[i];
    }
  }
  std::stable_sort(measured_good_.begin(), measured_good_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  size_t keep = static_cast<size_t>(std::max(settings_.population, 1));
  if (measured_good_.size() > keep) measured_good_.resize(keep);
  ++rounds_;
  stale_rounds_ = best_cost_ < before ? 0 : stale_rounds_ + 1;
  empty_rounds_ = states.empty() ? empty_rounds_ + 1 : 0;
  best_history_.push_back(best_cost_);
}

}  // namespace loom
