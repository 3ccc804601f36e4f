// loom run FILE.json: one schedule of one workload, end to end — replay the
// steps, lower, compile with LLVM, check against the reference on random
// inputs, time it.
//
// FILE.json: {"workload": "matmul", "params": {...}, "target": "cpu -threads=1",
//             "steps": [["SP", 2, 0, 1024, [8, 4, 16], 1], ...]}
// or a measure record: {"task": {...}, "steps": [...], ...}.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "codegen/llvm/llvm_jit.h"
#include "experiments/verbs.h"
#include "ir/error.h"
#include "ir/lower.h"
#include "ir/reference.h"
#include "ir/state.h"
#include "measure/task.h"
#include "measure/timing.h"

namespace loom::cli {

namespace {

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw LoomError(path + ": cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return nlohmann::json::parse(ss.str());
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    throw LoomError(path + ": malformed JSON (" + what.substr(what.find(']') + 2) + ")");
  }
}

int parse_int_flag(const Args& a, size_t& i, const char* name) {
  if (i + 1 >= a.size()) throw LoomError(std::string(name) + " needs a value");
  try {
    size_t used = 0;
    int v = std::stoi(a[++i], &used);
    if (used != a[i].size() || v < 1) throw std::invalid_argument("x");
    return v;
  } catch (const std::exception&) {
    throw LoomError(std::string(name) + ": expected a positive integer, got '" + a[i] + "'");
  }
}

}  // namespace

int run_verb(const Args& args) {
  std::string file;
  bool print_ir = false;
  TimingOptions timing;
  timing.repeat = 5;
  timing.min_repeat_ms = 100;
  int threads_override = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--print-ir") print_ir = true;
    else if (args[i] == "--repeat") timing.repeat = parse_int_flag(args, i, "--repeat");
    else if (args[i] == "--min-repeat-ms") timing.min_repeat_ms = parse_int_flag(args, i, "--min-repeat-ms");
    else if (args[i] == "--threads") threads_override = parse_int_flag(args, i, "--threads");
    else if (!args[i].empty() && args[i][0] == '-') throw LoomError("unknown option " + args[i]);
    else if (file.empty()) file = args[i];
    else throw LoomError("run takes one FILE.json");
  }
  if (file.empty()) throw LoomError("usage: loom run FILE.json [--print-ir]");

  nlohmann::json j = read_json_file(file);
  if (!j.is_object()) throw LoomError(file + ": expected a JSON object");
  Task task;
  nlohmann::json steps = nlohmann::json::array();
  if (j.contains("task")) {
    for (const auto& [k, v] : j.items())
      if (k != "task" && k != "steps" && k != "result" && k != "version")
        throw LoomError(file + ": " + k + ": unknown key");
    task = Task::from_json(j["task"], "task");
  } else {
    nlohmann::json t = nlohmann::json::object();
    for (const auto& [k, v] : j.items()) {
      if (k == "steps" || k == "comment") continue;
      t[k] = v;
    }
    task = Task::from_json(t, file);
  }
  if (j.contains("steps")) steps = j["steps"];
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

  LLVMCompileOptions copts;
  copts.num_threads = task.target.threads;
  auto kernel = compile_llvm(f, copts);
  std::printf("compiled with LLVM in %.1f ms (%s)\n", kernel->compile_seconds() * 1e3,
              llvm_host_cpu_description().c_str());

  const ComputeDAG& dag = *task.dag;
  auto inputs = random_inputs(dag, 1);
  std::map<std::string, TensorData> bufs = inputs;
  for (const auto& out : dag.output_names()) bufs[out].assign(shape_size(dag.op(out)->shape), 0.0f);
  std::vector<float*> ptrs;
  for (const auto& b : f.args) ptrs.push_back(bufs.at(b.name).data());
  (*kernel)(ptrs);

  auto t0 = std::chrono::steady_clock::now();
  auto ref = evaluate_reference(dag, inputs);
  double ref_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  bool ok = true;
  for (const auto& out : dag.output_names()) {
    std::string err = compare_outputs(bufs.at(out), ref.at(out));
    if (!err.empty()) {
      std::printf("WRONG RESULT in %s: %s\n", out.c_str(), err.c_str());
      ok = false;
    }
  }
  if (ok) std::printf("correct (checked against the reference interpreter in %.1f s)\n", ref_s);

  auto costs = time_function([&] { kernel->run(ptrs.data()); }, timing);
  double med = median(costs);
  std::printf("median %.4f ms  %.2f GFLOP/s  (%d groups of >= %.0f ms:", med * 1e3,
              dag.flop_count() / med / 1e9, timing.repeat, timing.min_repeat_ms);
  for (double c : costs) std::printf(" %.4f", c * 1e3);
  std::printf(" ms)\n");
  return ok ? kExitOk : kExitFailure;
}

}  // namespace loom::cli
