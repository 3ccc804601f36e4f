// loom run FILE.json: one schedule of one workload, end to end — replay the
// steps, lower, compile with LLVM, check against the reference on random
// inputs, time it. Compiling, checking and timing go through the Measurer
// (a worker process), exactly as in tuning.
//
// FILE.json: {"workload": "matmul", "params": {...}, "target": "cpu -threads=1",
//             "steps": [["SP", 2, 0, 1024, [8, 4, 16], 1], ...]}
// or a measure record: {"task": {...}, "steps": [...], ...}.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "codegen/llvm/llvm_jit.h"
#include "experiments/baselines/baseline.h"
#include "experiments/task_file.h"
#include "experiments/verbs.h"
#include "ir/error.h"
#include "ir/lower.h"
#include "ir/reference.h"
#include "ir/reference.h"
#include "ir/state.h"
#include "measure/measurer.h"
#include "measure/task.h"
#include "measure/timing.h"

namespace loom::cli {

namespace {

// Loom's schedule and oneDNN, re-measured alternately `rounds` times in this
// process (the machine is shared and noisy): medians, and the median of the
// per-round ratios (a round's runs are seconds apart, so the load of the
// moment cancels out of their ratio).
void compare_with_onednn(const Task& task, Measurer& measurer, const State& state,
                         const TimingOptions& timing, int rounds) {
  const ComputeDAG& dag = *task.dag;
  auto inputs = random_inputs(dag, 1);
  auto ref = evaluate_reference(dag, inputs);
  std::vector<double> loom_runs;
  std::map<std::string, std::vector<double>> onednn_runs, round_ratios;
  std::map<std::string, bool> as_given;
  for (int k = 0; k < rounds; ++k) {
    MeasureResult r = measurer.measure(task, {state})[0];
    if (r.ok()) loom_runs.push_back(r.median_s());
    for (const auto& b : run_onednn_baselines(task, timing, inputs, ref))
      if (b.supported && b.check.empty()) {
        onednn_runs[b.variant].push_back(b.median_s);
        as_given[b.variant] = b.inputs_as_given;
        if (r.ok()) round_ratios[b.variant].push_back(b.median_s / r.median_s());
      }
  }
  if (loom_runs.empty() || onednn_runs.empty()) {
    std::printf("comparison with oneDNN: not available for this workload\n");
    return;
  }
  double loom_s = median(loom_runs);
  // The fastest variant overall, and the fastest that read the inputs as
  // given (nothing prepacked outside its timing, as Loom's programs).
  std::string best_variant, best_given_variant;
  double best_s = 0, best_given_s = 0;
  for (const auto& [variant, runs] : onednn_runs) {
    double m = median(runs);
    std::printf("oneDNN %-40s median %.4f ms  %.2f GFLOP/s%s\n", variant.c_str(), m * 1e3, dag.flop_count() / m / 1e9,
                as_given[variant] ? "  (inputs as given)" : "");
    if (best_s == 0 || m < best_s) best_s = m, best_variant = variant;
    if (as_given[variant] && (best_given_s == 0 || m < best_given_s)) best_given_s = m, best_given_variant = variant;
  }
  auto percent_of = [&](const std::string& variant) {
    const auto& v = round_ratios[variant];
    return v.empty() ? 0.0 : 100.0 * median(v);
  };
  std::printf("Loom (same run, %d interleaved rounds) median %.4f ms  %.2f GFLOP/s = %.1f%% of oneDNN (%s)",
              rounds, loom_s * 1e3, dag.flop_count() / loom_s / 1e9, percent_of(best_variant), best_variant.c_str());
  if (best_given_s > 0 && best_given_variant != best_variant)
    std::printf(", %.1f%% of oneDNN (%s)", percent_of(best_given_variant), best_given_variant.c_str());
  std::printf("\n");
}

}  // namespace

int run_verb(const Args& args) {
  std::string file;
  bool print_ir = false;
  bool print_asm = false;
  TimingOptions timing;
  timing.repeat = 5;
  timing.min_repeat_ms = 100;
  int threads_override = 0;
  int compare_rounds = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--print-ir") print_ir = true;
    else if (args[i] == "--print-asm") print_asm = true;
    else if (args[i] == "--compare-onednn") compare_rounds = 3;
    else if (args[i] == "--rounds") compare_rounds = int_flag(args, i, "--rounds");
    else if (args[i] == "--repeat") timing.repeat = int_flag(args, i, "--repeat");
    else if (args[i] == "--min-repeat-ms") timing.min_repeat_ms = int_flag(args, i, "--min-repeat-ms");
    else if (args[i] == "--threads") threads_override = int_flag(args, i, "--threads");
    else if (!args[i].empty() && args[i][0] == '-') throw LoomError("unknown option " + args[i]);
    else if (file.empty()) file = args[i];
    else throw LoomError("run takes one FILE.json");
  }
  if (file.empty()) throw LoomError("usage: loom run FILE.json [--print-ir] [--print-asm]");

  TaskFile tf = read_task_file(file);
  Task task = tf.task;
  nlohmann::json steps = tf.steps;
  if (threads_override) task.target.threads = threads_override;

  State state;
  try {
    state = State::from_json(task.dag, steps);
  } catch (const LoomError& e) {
    throw LoomError(file + ": " + e.what());
  }
  LoweredFunc f = lower(state);
  std::printf("task: %s  target: %s  (%.3f GFLOP)\n", task.description().c_str(),
              task.target.to_string().c_str(), task.dag->flop_count() / 1e9);
  if (print_ir) std::printf("%s", to_string(f).c_str());
  if (print_asm) {
    // The same compilation the worker does, kept in-process for its text.
    LLVMCompileOptions copts;
    copts.num_threads = task.target.threads;
    copts.dump_ir = true;
    std::printf("%s", compile_llvm(f, copts)->asm_text().c_str());
  }

  // The tuner's measurement path: a worker process builds (LLVM), checks
  // against the reference and times the schedule (measure/measurer.h).
  MeasureOptions mopts;
  mopts.repeat = timing.repeat;
  mopts.min_repeat_ms = timing.min_repeat_ms;
  mopts.n_parallel_builds = 1;
  mopts.run_timeout_s = 120;  // naive schedules of big workloads are slow
  mopts.loud_wrong_results = false;  // reported below
  Measurer measurer(mopts);
  MeasureResult r = measurer.measure(task, {state})[0];
  const MeasureBatchStats& st = measurer.last_stats();
  const ComputeDAG& dag = *task.dag;
  std::string cpu = llvm_host_cpu_description();
  if (r.build_s > 0 || r.ok())
    std::printf("compiled with LLVM in %.1f ms (%s)\n", r.build_s * 1e3, cpu.substr(0, cpu.find(' ')).c_str());
  if (r.error == ErrorKind::kWrongResult) {
    std::printf("WRONG RESULT: %s\n", r.error_msg.c_str());
    return kExitFailure;
  }
  if (!r.ok()) {
    std::printf("%s: %s\n", error_kind_name(r.error), r.error_msg.c_str());
    return kExitFailure;
  }
  std::printf("correct (checked against the reference interpreter in %.1f s)\n", st.reference_s);
  double med = r.median_s();
  std::printf("median %.4f ms  %.2f GFLOP/s  (%d groups of >= %.0f ms:", med * 1e3,
              dag.flop_count() / med / 1e9, timing.repeat, timing.min_repeat_ms);
  for (double c : r.costs_s) std::printf(" %.4f", c * 1e3);
  std::printf(" ms)\n");
  if (compare_rounds > 0) compare_with_onednn(task, measurer, state, timing, compare_rounds);
  return kExitOk;
}

}  // namespace loom::cli
