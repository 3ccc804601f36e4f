// Speed of LLVM-compiled kernels (Google Benchmark; not a test): the
// hand-written GEMM 1024^3 schedule (experiments/schedules/matmul_1024_tiled.json)
// on 1 and 2 threads, and the register-tile FMA throughput with L1-resident
// operands — the practical peak of the generated inner kernel on this machine;
// element-wise exp, log, tanh and erf, inline against glibc's libmvec. The
// GFLOP/s counter of the element-wise ones counts G elements/s.
#include <benchmark/benchmark.h>

#include <dlfcn.h>
#include <immintrin.h>

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
  std::uniform_real_distribution<float> dist(-10.f, 10.f);
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

// B[i] = f(A[i]) over 64 Ki floats in [-10, 10] (L2-resident), vectorized at
// the native width: Loom's inline math against glibc's vector functions
// (libmvec, called per vector of 16 as the backend called them before).
LoweredFunc map_kernel(const char* fn, int64_t n) {
  Var i = make_var("i", n);
  Expr x = load("A", {Expr(i)});
  Expr y = std::string(fn) == "exp" ? exp(x) : std::string(fn) == "log" ? log(fabs(x)) :
           std::string(fn) == "tanh" ? tanh(x) : erf(x);
  LoweredFunc f;
  f.name = std::string("map_") + fn;
  f.args = {{"A", {n}}, {"B", {n}}};
  f.body = make_for(i, n, ForKind::kVectorized, make_store("B", i, y));
  return f;
}

const char* const kMathFns[] = {"exp", "log", "tanh", "erf"};
constexpr int64_t kMapN = 1 << 16;

void BM_InlineVectorMath(benchmark::State& state) {
  LoweredFunc f = map_kernel(kMathFns[state.range(0)], kMapN);
  state.SetLabel(kMathFns[state.range(0)]);
  run_kernel(state, f, kMapN, 1);  // "GFLOP/s": G elements/s
}
BENCHMARK(BM_InlineVectorMath)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);

__attribute__((target("avx512f"))) void libmvec_map(void* fn, const float* a, float* b, int64_t n, bool abs) {
  auto f = reinterpret_cast<__m512 (*)(__m512)>(fn);
  for (int64_t i = 0; i < n; i += 16) {
    __m512 x = _mm512_loadu_ps(a + i);
    if (abs) x = _mm512_abs_ps(x);
    _mm512_storeu_ps(b + i, f(x));
  }
}

void BM_LibmvecVectorMath(benchmark::State& state) {
  static void* lib = dlopen("libmvec.so.1", RTLD_NOW | RTLD_LOCAL);
  const std::string name = std::string("_ZGVeN16v_") + kMathFns[state.range(0)] + "f";
  void* fn = lib ? dlsym(lib, name.c_str()) : nullptr;
  if (!fn || !__builtin_cpu_supports("avx512f")) {
    state.SkipWithError("no AVX-512 libmvec");
    return;
  }
  state.SetLabel(kMathFns[state.range(0)]);
  std::vector<float> a(kMapN), b(kMapN);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-10.f, 10.f);
  for (auto& x : a) x = dist(rng);
  for (auto _ : state) {
    libmvec_map(fn, a.data(), b.data(), kMapN, state.range(0) == 1);
    benchmark::DoNotOptimize(b.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(kMapN * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_LibmvecVectorMath)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
