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
#include "experiments/report.h"
#include "experiments/task_file.h"
#include "experiments/verbs.h"
#include "ir/error.h"
#include "ir/lower.h"
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
  TaskReport cmp;  // the same pairing and choice of baselines as `loom report`
  cmp.flops = dag.flop_count();
  for (int k = 0; k < rounds; ++k) {
    MeasureResult r = measurer.measure(task, {state})[0];
    cmp.add_round(r.ok() ? r.median_s() : 0.0, run_onednn_baselines(task, timing, inputs, ref));
  }
  cmp.summarize_rounds();
  const BaselineResult* best = cmp.best_baseline();
  if (cmp.loom_s <= 0 || !best) {
    std::printf("comparison with oneDNN: not available for this workload\n");
    return;
  }
  for (const auto& b : cmp.baselines)
    if (b.supported && b.check.empty())
      std::printf("oneDNN %-40s median %.4f ms  %.2f GFLOP/s%s\n", b.variant.c_str(), b.median_s * 1e3,
                  b.gflops(cmp.flops), b.inputs_as_given ? "  (inputs as given)" : "");
  // The fastest variant overall, and the fastest that read the inputs as
  // given (nothing prepacked outside its timing, as Loom's programs).
  std::printf("Loom (same run, %d interleaved rounds) median %.4f ms  %.2f GFLOP/s = %.1f%% of oneDNN (%s)", rounds,
              cmp.loom_s * 1e3, cmp.loom_gflops(), 100.0 * cmp.ratio(), best->variant.c_str());
  const BaselineResult* given = cmp.best_baseline_as_given();
  if (given && given != best)
    std::printf(", %.1f%% of oneDNN (%s)", 100.0 * cmp.ratio_as_given(), given->variant.c_str());
  std::printf("\n");
  if (const std::string why = cmp.unsteady(); !why.empty())
    std::printf("unsteady: %s: these ratios may not hold on a quiet machine\n", why.c_str());
}

}  // namespace

int run_verb(const Args& args) {
  std::string file;
  bool print_ir = false;
  bool print_asm = false;
  TimingOptions timing;
  timing.repeat = 5;
  timing.min_repeat_ms = 100;
  timing.quiet_wait_ms = kReportQuietWaitMs;
  int threads_override = 0;
  int compare_rounds = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--print-ir") print_ir = true;
    else if (args[i] == "--print-asm") print_asm = true;
    else if (args[i] == "--compare-onednn") compare_rounds = 3;
    else if (args[i] == "--rounds") compare_rounds = int_flag(args, i, "--rounds");
    else if (args[i] == "--repeat") timing.repeat = int_flag(args, i, "--repeat");
    else if (args[i] == "--min-repeat-ms") timing.min_repeat_ms = int_flag(args, i, "--min-repeat-ms");
    else if (args[i] == "--quiet-wait-ms") timing.quiet_wait_ms = int_flag(args, i, "--quiet-wait-ms", 0);
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
  timing.probe_threads = task.target.threads;

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
    copts.vector_width = task.target.vector_width();
    copts.dump_ir = true;
    std::printf("%s", compile_llvm(f, copts)->asm_text().c_str());
  }

  // The tuner's measurement path: a worker process builds (LLVM), checks
  // against the reference and times the schedule (measure/measurer.h).
  MeasureOptions mopts;
  mopts.repeat = timing.repeat;
  mopts.min_repeat_ms = timing.min_repeat_ms;
  mopts.quiet_wait_ms = timing.quiet_wait_ms;
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
