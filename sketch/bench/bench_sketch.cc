// Random-state sampling throughput (states per second, one core): the
// initial population of every search round is sampled with this.
//
//   build/sketch/bench_sketch --benchmark_min_time=2
#include <benchmark/benchmark.h>

#include <random>

#include "ir/workload_registry.h"
#include "sketch/sketch_policy.h"

namespace loom {
namespace {

SketchTask task_for(const std::string& workload, const nlohmann::json& params) {
  SketchTask t;
  t.dag = std::make_shared<const ComputeDAG>(make_workload(workload, params));
  t.threads = 1;
  return t;
}

void sample_states(benchmark::State& state, const std::string& workload, const nlohmann::json& params) {
  SketchPolicy policy(task_for(workload, params));
  std::mt19937_64 rng(1);
  for (auto _ : state) benchmark::DoNotOptimize(policy.sample_one(rng));
  state.counters["states/s"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                  benchmark::Counter::kIsRate);
}

void BM_SampleMatmul1024(benchmark::State& state) {
  sample_states(state, "matmul", {{"M", 1024}, {"N", 1024}, {"K", 1024}});
}
void BM_SampleConv2d(benchmark::State& state) {
  sample_states(state, "conv2d", nlohmann::json::object());  // ResNet-50 3x3 layer
}
void BM_SampleConv2dBiasRelu(benchmark::State& state) {
  sample_states(state, "conv2d_bias_relu", nlohmann::json::object());
}
// Distinct states per call, as the search asks for a population.
void BM_SampleDistinct64Matmul1024(benchmark::State& state) {
  SketchPolicy policy(task_for("matmul", {{"M", 1024}, {"N", 1024}, {"K", 1024}}));
  std::mt19937_64 rng(1);
  for (auto _ : state) benchmark::DoNotOptimize(policy.sample(64, rng));
  state.counters["states/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * 64,
                                                  benchmark::Counter::kIsRate);
}

BENCHMARK(BM_SampleMatmul1024);
BENCHMARK(BM_SampleConv2d);
BENCHMARK(BM_SampleConv2dBiasRelu);
BENCHMARK(BM_SampleDistinct64Matmul1024);

}  // namespace
}  // namespace loom

BENCHMARK_MAIN();
