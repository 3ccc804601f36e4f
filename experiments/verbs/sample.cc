// loom sample FILE.json -n N [--seed S] [--threads N] [--task I] [--no-ir]
// [--quiet] [--time]: N distinct random programs of a task (sketch + random
// annotation), each printed as steps and loop nest, compiled with LLVM and
// checked against the reference interpreter on random inputs; --time also
// times each correct program (median of 3 runs) and prints the GFLOP/s
// distribution. FILE.json is a task file, or with --task I an experiment
// config whose I-th task (from 0) is sampled. --quiet prints only the
// programs that fail (steps and verdict) and the summary line
// "N programs: a correct, b wrong, c errors". Stdout is flushed before each
// check, so the last program printed is the one a crash stopped at. Exits 1
// if any program is wrong or fails to lower or compile.
#include <algorithm>
#include <cstdio>
#include <random>

#include "codegen/llvm/llvm_jit.h"
#include "experiments/config.h"
#include "experiments/task_file.h"
#include "experiments/verbs.h"
#include "ir/error.h"
#include "ir/lower.h"
#include "ir/reference.h"
#include "measure/measurer.h"
#include "measure/timing.h"
#include "search/search_policy.h"
#include "sketch/sketch_policy.h"

namespace loom::cli {

namespace {

// "" if the program computes the reference result, else what went wrong.
// With `seconds` set, a correct program is also timed (median of 3 runs).
std::string check_program(const State& s, const LoweredFunc& f, const Target& target,
                          const std::map<std::string, TensorData>& inputs,
                          const std::map<std::string, TensorData>& ref, double* seconds) {
  LLVMCompileOptions copts;
  copts.num_threads = target.threads;
  copts.vector_width = target.vector_width();
  auto kernel = compile_llvm(f, copts);
  const ComputeDAG& dag = s.dag();
  std::map<std::string, TensorData> bufs = inputs;
  for (const auto& out : dag.output_names()) bufs[out].assign(shape_size(dag.op(out)->shape), -12345.0f);
  add_pretransformed_arguments(f, bufs);
  std::vector<float*> ptrs;
  for (const auto& b : f.args) ptrs.push_back(bufs.at(b.name).data());
  (*kernel)(ptrs);
  for (const auto& out : dag.output_names()) {
    std::string err = compare_outputs(bufs.at(out), ref.at(out));
    if (!err.empty()) return "wrong result in " + out + ": " + err;
  }
  if (seconds) {
    TimingOptions timing;
    timing.repeat = 3;
    timing.min_repeat_ms = 0;
    *seconds = median(time_function([&] { kernel->run(ptrs.data()); }, timing));
  }
  return "";
}

}  // namespace

int sample_verb(const Args& args) {
  std::string file;
  int n = 10, seed = 0, threads = 0, task_index = -1;
  bool print_ir = true, time_programs = false, quiet = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-n") n = int_flag(args, i, "-n");
    else if (args[i] == "--seed") seed = int_flag(args, i, "--seed", 0);
    else if (args[i] == "--threads") threads = int_flag(args, i, "--threads");
    else if (args[i] == "--task") task_index = int_flag(args, i, "--task", 0);
    else if (args[i] == "--no-ir") print_ir = false;
    else if (args[i] == "--quiet") quiet = true, print_ir = false;
    else if (args[i] == "--time") time_programs = true;
    else if (!args[i].empty() && args[i][0] == '-') throw LoomError("unknown option " + args[i]);
    else if (file.empty()) file = args[i];
    else throw LoomError("sample takes one FILE.json");
  }
  if (file.empty())
    throw LoomError("usage: loom sample FILE.json -n N [--seed S] [--threads N] [--task I] [--no-ir] [--quiet] [--time]");
  Task task;
  if (task_index >= 0) {
    ExperimentConfig config = ExperimentConfig::load(file);
    if (static_cast<size_t>(task_index) >= config.tasks.size())
      throw LoomError("--task " + std::to_string(task_index) + ": " + file + " has " +
                      std::to_string(config.tasks.size()) + " tasks");
    task = config.tasks[task_index].task;
    try {
      check_task_fits_memory(task, 0);  // as read_task_file: before the reference allocates
    } catch (const LoomError& e) {
      throw LoomError(file + ": tasks[" + std::to_string(task_index) + "]: " + e.what());
    }
  } else {
    task = read_task_file(file).task;
  }
  if (threads > 0) task.target.threads = threads;
  SketchPolicy policy(make_sketch_task(task));
  std::mt19937_64 rng(static_cast<uint64_t>(seed));
  std::vector<State> programs = policy.sample(n, rng);
  std::printf("task: %s  target: %s  %zu sketches, %zu programs (seed %d)\n",
              task.description().c_str(), task.target.to_string().c_str(),
              policy.sketches().size(), programs.size(), seed);

  const ComputeDAG& dag = *task.dag;
  auto inputs = random_inputs(dag, 1);
  auto ref = evaluate_reference(dag, inputs);
  int correct = 0, wrong = 0, errors = 0;
  std::vector<double> gflops;
  for (size_t k = 0; k < programs.size(); ++k) {
    const State& s = programs[k];
    const std::string header = "\n== program " + std::to_string(k) + ": " + s.steps_json().dump() + "\n";
    if (!quiet) {
      std::fputs(header.c_str(), stdout);
      std::fflush(stdout);
    }
    std::string verdict;
    try {
      LoweredFunc f = lower(s);
      if (print_ir) {
        std::printf("%s", to_string(f).c_str());
        std::fflush(stdout);
      }
      double seconds = 0;
      verdict = check_program(s, f, task.target, inputs, ref, time_programs ? &seconds : nullptr);
      verdict.empty() ? ++correct : ++wrong;
      if (verdict.empty() && time_programs) {
        gflops.push_back(dag.flop_count() / seconds / 1e9);
        std::printf("time: %.4f ms  %.2f GFLOP/s\n", seconds * 1e3, gflops.back());
      }
    } catch (const std::exception& e) {
      verdict = std::string("error: ") + e.what();
      ++errors;
    }
    if (quiet && verdict.empty()) continue;
    if (quiet) std::fputs(header.c_str(), stdout);  // a failing program: its steps, then the verdict
    std::printf("check: %s\n", verdict.empty() ? "correct" : verdict.c_str());
  }
  std::printf("\n%zu programs: %d correct, %d wrong, %d errors\n", programs.size(), correct, wrong, errors);
  if (!gflops.empty()) {
    std::sort(gflops.begin(), gflops.end());
    auto at = [&](double q) { return gflops[static_cast<size_t>(q * (gflops.size() - 1))]; };
    std::printf("GFLOP/s: best %.2f  p90 %.2f  median %.2f  p10 %.2f  worst %.2f\n", gflops.back(), at(0.9),
                at(0.5), at(0.1), gflops.front());
  }
  return wrong + errors == 0 ? kExitOk : kExitFailure;
}

}  // namespace loom::cli
