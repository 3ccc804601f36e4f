// loom sample FILE.json -n N [--seed S] [--threads N] [--no-ir] [--time]: N
// distinct random programs of a task (sketch + random annotation), each
// printed as steps and loop nest, compiled with LLVM and checked against the
// reference interpreter on random inputs; --time also times each correct
// program (median of 3 runs) and prints the GFLOP/s distribution. Exits 1 if
// any program is wrong.
#include <algorithm>
#include <cstdio>
#include <random>

#include "codegen/llvm/llvm_jit.h"
#include "experiments/task_file.h"
#include "experiments/verbs.h"
#include "ir/error.h"
#include "ir/lower.h"
#include "ir/reference.h"
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
  int n = 10, seed = 0, threads = 0;
  bool print_ir = true, time_programs = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-n") n = int_flag(args, i, "-n");
    else if (args[i] == "--seed") seed = int_flag(args, i, "--seed", 0);
    else if (args[i] == "--threads") threads = int_flag(args, i, "--threads");
    else if (args[i] == "--no-ir") print_ir = false;
    else if (args[i] == "--time") time_programs = true;
    else if (!args[i].empty() && args[i][0] == '-') throw LoomError("unknown option " + args[i]);
    else if (file.empty()) file = args[i];
    else throw LoomError("sample takes one FILE.json");
  }
  if (file.empty()) throw LoomError("usage: loom sample FILE.json -n N [--seed S] [--threads N] [--no-ir] [--time]");
  TaskFile tf = read_task_file(file);
  if (threads > 0) tf.task.target.threads = threads;
  SketchPolicy policy(make_sketch_task(tf.task));
  std::mt19937_64 rng(static_cast<uint64_t>(seed));
  std::vector<State> programs = policy.sample(n, rng);
  std::printf("task: %s  target: %s  %zu sketches, %zu programs (seed %d)\n",
              tf.task.description().c_str(), tf.task.target.to_string().c_str(),
              policy.sketches().size(), programs.size(), seed);

  const ComputeDAG& dag = *tf.task.dag;
  auto inputs = random_inputs(dag, 1);
  auto ref = evaluate_reference(dag, inputs);
  int correct = 0, wrong = 0, errors = 0;
  std::vector<double> gflops;
  for (size_t k = 0; k < programs.size(); ++k) {
    const State& s = programs[k];
    std::printf("\n== program %zu: %s\n", k, s.steps_json().dump().c_str());
    std::string verdict;
    try {
      LoweredFunc f = lower(s);
      if (print_ir) std::printf("%s", to_string(f).c_str());
      double seconds = 0;
      verdict = check_program(s, f, tf.task.target, inputs, ref, time_programs ? &seconds : nullptr);
      verdict.empty() ? ++correct : ++wrong;
      if (verdict.empty() && time_programs) {
        gflops.push_back(dag.flop_count() / seconds / 1e9);
        std::printf("time: %.4f ms  %.2f GFLOP/s\n", seconds * 1e3, gflops.back());
      }
    } catch (const LoomError& e) {
      verdict = std::string("error: ") + e.what();
      ++errors;
    }
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
