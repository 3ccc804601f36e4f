// bench_measure: end-to-end measurement throughput and overhead (not a test).
//
// Measures N random tiled schedules of a 512³ matmul through the Measurer
// (worker processes, LLVM builds, reference check, serial timing) and reports
// candidates per second, the split between build, check and timed-run time,
// and the per-candidate overhead: everything that is not the timed runs
// themselves. Then measures one schedule 5 times and reports the spread of
// the medians (max/min).
//
//   bench_measure [--n 64] [--repeat 3] [--min-repeat-ms 20] [--threads 1]
//                 [--builds 2] [--quiet] [--seed 1] [--size 512]
//
// The schedules are Ansor-like "SSRSRS" tilings generated here (tile sizes
// from the factorizations of 512, fused+parallel outer loop, vectorized inner
// loop, a random auto-unroll pragma), so this benchmark does not depend on
// the sketch sampler.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "ir/error.h"
#include "measure/measurer.h"
#include "measure/timing.h"

using namespace loom;

namespace {

// Splits 2^e into `parts` powers of two (random exponents summing to <= e).
std::vector<int64_t> random_pow2_lengths(int e, int parts, std::mt19937_64& rng) {
  std::vector<int64_t> out;
  int left = e;
  for (int p = 0; p < parts; ++p) {
    int x = std::uniform_int_distribution<int>(0, std::min(left, 5))(rng);
    out.push_back(int64_t(1) << x);
    left -= x;
  }
  return out;
}

int log2i(int64_t v) {
  int e = 0;
  while ((int64_t(1) << (e + 1)) <= v) ++e;
  return e;
}

State random_matmul_schedule(const Task& task, int64_t size, std::mt19937_64& rng) {
  State s = State::initial(task.dag);
  const int C = s.stage_index("C");
  int e = log2i(size);
  s = s.split(C, 0, random_pow2_lengths(e, 3, rng));  // i0 i1 i2 i3 j k
  s = s.split(C, 4, random_pow2_lengths(e, 3, rng));  // ... j0 j1 j2 j3 k
  s = s.split(C, 8, random_pow2_lengths(e, 1, rng));  // ... k0 k1
  s = s.reorder(C, {0, 4, 1, 5, 8, 2, 6, 9, 3, 7});   // i0 j0 i1 j1 k0 i2 j2 k1 i3 j3
  s = s.fuse(C, {0, 1});
  s = s.annotate(C, 0, IterAnnotation::kParallel);
  s = s.annotate(C, 8, IterAnnotation::kVectorize);
  static const int64_t kUnroll[] = {0, 16, 64, 512};
  int64_t u = kUnroll[std::uniform_int_distribution<int>(0, 3)(rng)];
  if (u) s = s.pragma(C, 0, "auto_unroll_max_step$" + std::to_string(u));
  return s;
}

int int_arg(int argc, char** argv, int& i) {
  if (i + 1 >= argc) throw LoomError(std::string(argv[i]) + " needs a value");
  return std::atoi(argv[++i]);
}

}  // namespace

int main(int argc, char** argv) try {
  int n = 64, threads = 1, builds = 2, seed = 1, size = 512;
  MeasureOptions opts;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--n") n = int_arg(argc, argv, i);
    else if (a == "--repeat") opts.repeat = int_arg(argc, argv, i);
    else if (a == "--min-repeat-ms") opts.min_repeat_ms = int_arg(argc, argv, i);
    else if (a == "--threads") threads = int_arg(argc, argv, i);
    else if (a == "--builds") builds = int_arg(argc, argv, i);
    else if (a == "--seed") seed = int_arg(argc, argv, i);
    else if (a == "--size") size = int_arg(argc, argv, i);
    else if (a == "--quiet") opts.isolation = MeasureOptions::Isolation::kQuiet;
    else throw LoomError("unknown argument " + a);
  }
  opts.n_parallel_builds = builds;
  Target target;
  target.threads = threads;
  Task task = Task::make("matmul", {{"M", size}, {"N", size}, {"K", size}}, target);
  std::mt19937_64 rng(seed);
  std::vector<State> states;
  for (int i = 0; i < n; ++i) states.push_back(random_matmul_schedule(task, size, rng));

  Measurer m(opts);
  std::printf("task: %s  target: %s  workers: %d  repeat=%d  min_repeat_ms=%g  isolation=%s\n",
              task.description().c_str(), task.target.to_string().c_str(), builds, opts.repeat,
              opts.min_repeat_ms, opts.isolation == MeasureOptions::Isolation::kQuiet ? "quiet" : "auto");

  // Warm-up batch: reference computation, worker start-up (reported apart:
  // paid once per task and worker process).
  m.measure(task, {states[0]});
  const auto& w = m.last_stats();
  std::printf("first batch (1 candidate): %.2f s, of which reference %.2f s (once per task)\n", w.wall_s,
              w.reference_s);

  auto results = m.measure(task, states);
  MeasureBatchStats st = m.last_stats();
  double best = 1e30;
  int best_i = -1;
  for (int i = 0; i < n; ++i)
    if (results[i].ok() && results[i].median_s() < best) best = results[i].median_s(), best_i = i;
  double flop = task.dag->flop_count();
  std::printf("\n%d candidates in %.2f s: %.1f candidates/s, %d errors, %d worker restarts\n", n, st.wall_s,
              n / st.wall_s, st.errors, st.workers_restarted);
  std::printf("  sums over candidates: build %.2f s (%.1f ms each), check %.2f s (%.1f ms each), "
              "timed runs %.2f s (%.1f ms each)\n",
              st.build_s, st.build_s / n * 1e3, st.check_s, st.check_s / n * 1e3, st.run_s, st.run_s / n * 1e3);
  double overhead_ms = (st.wall_s - st.run_s) / n * 1e3;
  if (best_i >= 0)
    std::printf("  best: candidate %d, %.3f ms, %.1f GFLOP/s\n", best_i, best * 1e3, flop / best / 1e9);
  for (const auto& r : results)
    if (!r.ok()) std::printf("  error: %s: %s\n", error_kind_name(r.error), r.error_msg.c_str());
  std::printf("measurement overhead: %.0f ms per candidate (%.1f candidates/s at repeat=%d, min_repeat_ms=%g)\n",
              overhead_ms, n / st.wall_s, opts.repeat, opts.min_repeat_ms);

  // Stability: the best schedule 5 times, separate batches.
  if (best_i >= 0) {
    std::vector<double> medians;
    for (int r = 0; r < 5; ++r) {
      auto rr = m.measure(task, {states[best_i]});
      if (rr[0].ok()) medians.push_back(rr[0].median_s());
    }
    if (!medians.empty()) {
      auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
      std::printf("stability: candidate %d measured 5 times: medians", best_i);
      for (double v : medians) std::printf(" %.4f", v * 1e3);
      std::printf(" ms; max/min = %.3f\n", *hi / *lo);
    }
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_measure: %s\n", e.what());
  return 1;
}
