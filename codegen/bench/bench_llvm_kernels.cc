// Speed of LLVM-compiled kernels (Google Benchmark; not a test): the
// hand-written GEMM 1024^3 schedule (experiments/schedules/matmul_1024_tiled.json)
// on 1 and 2 threads, and the register-tile FMA throughput with L1-resident
// operands — the practical peak of the generated inner kernel on this machine.
#include <benchmark/benchmark.h>

#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "codegen/llvm/llvm_jit.h"
#include "ir/lower.h"
#include "ir/workload_registry.h"

#ifndef LOOM_SOURCE_DIR
#define LOOM_SOURCE_DIR "."
#endif

namespace {

using namespace loom;

std::vector<std::vector<float>> random_buffers(const LoweredFunc& f) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<std::vector<float>> data;
  for (const auto& b : f.args) {
    data.emplace_back(b.size());
    for (auto& x : data.back()) x = dist(rng);
  }
  return data;
}

// Runs `f` compiled for `threads` in the benchmark loop; FLOP/s as a counter.
void run_kernel(benchmark::State& state, const LoweredFunc& f, double flops, int threads) {
  LLVMCompileOptions opts;
  opts.num_threads = threads;
  auto kernel = compile_llvm(f, opts);
  auto data = random_buffers(f);
  std::vector<float*> args;
  for (auto& d : data) args.push_back(d.data());
  (*kernel)(args);  // warm-up
  for (auto _ : state) (*kernel)(args);
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_TiledMatmul1024(benchmark::State& state) {
  std::ifstream in(std::string(LOOM_SOURCE_DIR) + "/experiments/schedules/matmul_1024_tiled.json");
  const nlohmann::json schedule = nlohmann::json::parse(in);
  auto dag = std::make_shared<const ComputeDAG>(make_workload("matmul", schedule.at("params")));
  LoweredFunc f = lower(State::from_json(dag, schedule.at("steps")));
  run_kernel(state, f, dag->flop_count(), static_cast<int>(state.range(0)));
}
BENCHMARK(BM_TiledMatmul1024)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// A 8x32 accumulator tile (8 rows unrolled, 2 vectors of 16) over k = 64,
// repeated 4096 times on the same L1-resident A and B panels.
void BM_RegisterTileFmaPeak(benchmark::State& state) {
  const int64_t reps = 4096, kk = 64, mr = 8, nr = 32;
  Var r = make_var("r", reps), k = make_var("k", kk), i = make_var("i", mr), j = make_var("j", nr);
  Var i2 = make_var("i2", mr), j2 = make_var("j2", nr);
  auto tile = [&](const Var& a, const Var& b) { return Expr(a) * nr + b; };
  auto ld = [](const char* buf, Expr index) { return load(buf, {std::move(index)}); };
  Stmt init = make_for(i2, mr, ForKind::kUnrolled, make_for(j2, nr, ForKind::kVectorized,
                                                            make_store("L", tile(i2, j2), Expr(0.0f))));
  Stmt update = make_for(
      r, reps, ForKind::kSerial,
      make_for(k, kk, ForKind::kSerial,
               make_for(i, mr, ForKind::kUnrolled,
                        make_for(j, nr, ForKind::kVectorized,
                                 make_store("L", tile(i, j),
                                            ld("L", tile(i, j)) + ld("A", Expr(k) * mr + i) *
                                                                      ld("B", Expr(k) * nr + j))))));
  Stmt write = make_for(i2, mr, ForKind::kUnrolled, make_for(j2, nr, ForKind::kVectorized,
                                                             make_store("C", tile(i2, j2), ld("L", tile(i2, j2)))));
  LoweredFunc f;
  f.name = "fma_peak";
  f.args = {{"A", {kk, mr}}, {"B", {kk, nr}}, {"C", {mr, nr}}};
  f.temps = {{"L", {mr, nr}, BufferScope::kLocal}};
  f.body = make_allocate("L", make_seq({init, update, write}));
  run_kernel(state, f, 2.0 * reps * kk * mr * nr, 1);
}
BENCHMARK(BM_RegisterTileFmaPeak)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
