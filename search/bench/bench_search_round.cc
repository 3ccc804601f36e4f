// One evolutionary search round on matmul 1024^3 (the search-overhead
// target: under 2 s on one core): a population of 2048 fresh samples evolved
// for 4 generations under the MLP cost model, feature extraction and
// inference on one thread. The MLP is trained beforehand on 512 sampled
// programs with synthetic labels; its weights do not change the work done.
// Run pinned to one core: `taskset -c 0 build/bench_search_round` (not part
// of ctest).
#include <benchmark/benchmark.h>

#include "costmodel/cost_model.h"
#include "costmodel/features.h"
#include "search/evolutionary_search.h"
#include "search/mutation_rule.h"
#include "sketch/sketch_policy.h"

namespace loom {
namespace {

struct Fixture {
  Task task;
  SketchTask sketch_task;
  std::unique_ptr<CostModel> mlp;
  Fixture() {
    task = Task::make("matmul", {{"M", 1024}, {"N", 1024}, {"K", 1024}}, Target::parse("cpu -threads=1"));
    sketch_task.dag = task.dag;
    sketch_task.threads = 1;
    SketchPolicy policy(sketch_task);
    std::mt19937_64 rng(7);
    std::vector<State> train = policy.sample(512, rng);
    std::vector<ProgramFeatures> features = extract_features(train, FeatureOptions{1});
    std::vector<float> labels;
    for (size_t i = 0; i < features.size(); ++i) labels.push_back(static_cast<float>(i % 97) / 97.0f);
    mlp = make_cost_model("mlp", {{"max_epochs", 5}, {"threads", 1}});
    mlp->fit(features, labels, std::vector<int>(labels.size(), 0));
    mlp->feature_options().num_threads = 1;
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

void BM_EvolutionRound(benchmark::State& st) {
  auto& f = fixture();
  SearchSettings settings;  // population 2048, 4 generations (the defaults)
  std::mt19937_64 rng(1);
  SketchPolicy policy(f.sketch_task);
  EvolutionarySearch evolution(policy.task(), settings, cpu_mutation_rules());
  ScoreFn score = [&](const std::vector<State>& states) { return f.mlp->predict(f.task, states); };
  double scored = 0, score_s = 0, total = 0;
  for (auto _ : st) {
    std::vector<State> population = policy.sample(settings.population, rng);
    benchmark::DoNotOptimize(evolution.run(population, score, 64, {}, rng));
    scored += evolution.stats().scored;
    total += evolution.stats().population_total;
    score_s += evolution.stats().score_seconds;
  }
  st.counters["scored_per_round"] = scored / st.iterations();
  st.counters["states_per_round"] = total / st.iterations();
  st.counters["score_s_per_round"] = score_s / st.iterations();
}

BENCHMARK(BM_EvolutionRound)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

}  // namespace
}  // namespace loom

BENCHMARK_MAIN();
