// Cost-model throughput on a population of 2048 random matmul 512^3 states,
// one core: lowering + feature extraction (states/s), model inference alone,
// and the whole scoring of a population (features + inference), for the MLP
// and XGBoost models. Run: build/bench_costmodel (not part of ctest).
#include <benchmark/benchmark.h>

#include "costmodel/cost_model.h"
#include "costmodel/features.h"
#include "ir/lower.h"
#include "tests/support/matmul_schedules.h"

namespace loom {
namespace {

constexpr size_t kPopulation = 2048;

struct Fixture {
  Task task;
  std::vector<State> states;
  std::vector<ProgramFeatures> features;
  std::unique_ptr<CostModel> mlp, xgb;
  Fixture() {
    task = Task::make("matmul", {{"M", 512}, {"N", 512}, {"K", 512}}, Target::parse("cpu -threads=1"));
    std::vector<MatmulTiles> tiles;
    states = random_matmul_states(task.dag, 512, 512, 512, kPopulation, 1, &tiles);
    features = extract_features(states, FeatureOptions{1});
    // Train both models on a synthetic label (so XGBoost has real trees).
    std::vector<float> y;
    for (const auto& t : tiles)
      y.push_back(static_cast<float>(t.j[2]) / 64.0f + static_cast<float>(t.i[2] * t.j[2]) / 4096.0f);
    std::vector<int> g(y.size(), 0);
    mlp = make_cost_model("mlp", {{"max_epochs", 5}});
    mlp->fit(features, y, g);
    xgb = make_cost_model("xgb", {{"max_rounds", 100}, {"early_stopping_rounds", 100}});
    xgb->fit(features, y, g);
    mlp->feature_options().num_threads = 1;
    xgb->feature_options().num_threads = 1;
  }
};

// Never destroyed: freeing the XGBoost booster during static destruction,
// after the allocator has begun tearing down, can spin forever.
Fixture& fixture() {
  static Fixture* f = new Fixture;
  return *f;
}

void BM_Lower(benchmark::State& st) {
  auto& f = fixture();
  for (auto _ : st)
    for (const auto& s : f.states) benchmark::DoNotOptimize(lower(s));
  st.SetItemsProcessed(st.iterations() * f.states.size());
}

void BM_LowerAndExtractFeatures(benchmark::State& st) {
  auto& f = fixture();
  for (auto _ : st) benchmark::DoNotOptimize(extract_features(f.states, FeatureOptions{1}));
  st.SetItemsProcessed(st.iterations() * f.states.size());
}

void BM_InferenceOnly(benchmark::State& st, const char* kind) {
  auto& f = fixture();
  CostModel& m = std::string(kind) == "mlp" ? *f.mlp : *f.xgb;
  for (auto _ : st) benchmark::DoNotOptimize(m.predict_features(f.features));
  st.SetItemsProcessed(st.iterations() * f.states.size());
}

void BM_ScorePopulation(benchmark::State& st, const char* kind) {
  auto& f = fixture();
  CostModel& m = std::string(kind) == "mlp" ? *f.mlp : *f.xgb;
  for (auto _ : st) benchmark::DoNotOptimize(m.predict(f.task, f.states));
  st.SetItemsProcessed(st.iterations() * f.states.size());
}

BENCHMARK(BM_Lower)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LowerAndExtractFeatures)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_InferenceOnly, mlp, "mlp")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_InferenceOnly, xgb, "xgb")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_ScorePopulation, mlp, "mlp")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_ScorePopulation, xgb, "xgb")->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace loom

BENCHMARK_MAIN();
