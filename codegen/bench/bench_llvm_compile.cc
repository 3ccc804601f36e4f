// LLVM compile time of a typical tiled matmul candidate (the hand-written
// experiments/schedules/matmul_1024_tiled.json schedule): lowering excluded,
// IR emission + O3 pipeline + machine code included. Not a test.
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include "codegen/llvm/llvm_jit.h"
#include "ir/lower.h"
#include "ir/workload_registry.h"

namespace {

const char* kTiledMatmulSteps = R"([
  ["CHW", 2, "local"], ["CHR", 1, "local", [2]],
  ["SP", 4, 0, 1024, [64], 1], ["SP", 4, 2, 1024, [64], 1], ["RE", 4, [0, 2, 1, 3]],
  ["CA", 3, 4, 1], ["SP", 3, 0, 1024, [16, 4], 1], ["SP", 3, 3, 1024, [4, 16], 1],
  ["SP", 3, 6, 1024, [128], 1], ["RE", 3, [0, 3, 6, 1, 7, 2, 4, 5]], ["CA", 2, 3, 2],
  ["AN", 2, 1, "vectorize"], ["AN", 3, 5, "unroll"], ["AN", 3, 6, "unroll"],
  ["AN", 3, 7, "vectorize"], ["AN", 4, 0, "parallel"], ["AN", 4, 3, "vectorize"]])";

loom::LoweredFunc tiled_matmul() {
  auto dag = std::make_shared<const loom::ComputeDAG>(
      loom::make_workload("matmul", {{"M", 1024}, {"N", 1024}, {"K", 1024}}));
  return loom::lower(loom::State::from_json(dag, nlohmann::json::parse(kTiledMatmulSteps)));
}

void BM_CompileTiledMatmul(benchmark::State& state) {
  loom::LoweredFunc f = tiled_matmul();
  loom::LLVMCompileOptions opts;
  opts.opt_level = static_cast<int>(state.range(0));
  for (auto _ : state) {
    auto k = loom::compile_llvm(f, opts);
    benchmark::DoNotOptimize(k.get());
  }
}
BENCHMARK(BM_CompileTiledMatmul)->Arg(3)->Arg(2)->Unit(benchmark::kMillisecond)->Repetitions(5)
    ->ReportAggregatesOnly(true)->ComputeStatistics("median", [](const std::vector<double>& v) {
      std::vector<double> s = v;
      std::sort(s.begin(), s.end());
      return s[s.size() / 2];
    });

}  // namespace

BENCHMARK_MAIN();
