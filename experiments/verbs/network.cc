// loom network import|tasks|run: a whole model (ONNX or Loom's graph JSON).
//
//   loom network import MODEL.onnx OUT.json    Loom's graph JSON (+ OUT.bin weights)
//   loom network tasks MODEL [--json] [--config OUT.json [--threads N] [--trials N]]
//     the fused subgraphs as tasks with weights; --config writes a tuning
//     config of them for `loom tune` (its log then feeds `network run --log`)
//   loom network run MODEL [--log LOG] [--threads N] [--rounds N] [--runs N] [--check]
//                    [--baselines torch,ort|none] [--torch FILE.pt] [--profile]
//                    [--database LOG|none]... [--cost-model FILE] [--default-schedules]
//     runs the network from one kernel per task: the log's best program of
//     a task it measured; else a schedule chosen with nothing timed
//     (network/untimed_schedules.h): the schedule database's program for the
//     same task, or its similar tasks' re-fitted and ranked by the cost
//     model, or the model's own pick. The database is every log in
//     experiments/schedules/database/ (--database: these logs instead, none:
//     no database), its records of other machine kinds left out; the model
//     the shipped one (--cost-model: another). --default-schedules runs the
//     plain default schedules instead. The baselines run in the same rounds
//     (network/compare.h; 10 by default), each engine --runs times (5) back
//     to back after Loom's, once every engine's threads are quiet: PyTorch
//     where a TorchScript file of the same model is there (MODEL's stem + ".pt", or --torch), ONNX Runtime on an
//     ONNX MODEL (a warning line where node or onnxruntime-node is missing);
//     --check compares the outputs with each of them, with neither with
//     Loom's reference interpreter; --profile times every kernel inside the
//     network, per task, next to what the log measured for it alone.
// Each verb takes --shape NAME=DIMxDIM... (repeatable) to pin an input's
// dynamic dimensions (exporters mark batch and sequence dynamic).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "codegen/llvm/llvm_jit.h"
#include "experiments/network_report.h"
#include "experiments/verbs.h"
#include "network/executor.h"
#include "graph/interpreter.h"
#include "graph/onnx_import.h"
#include "graph/tasks.h"
#include "ir/error.h"
#include "measure/task.h"
#include "measure/timing.h"
#include "network/untimed_schedules.h"

namespace loom::cli {

namespace {

using graph::Graph;
using graph::Values;

// `--shape NAME=DIMxDIM...` at a[i]: adds the pin to `shapes`.
bool shape_flag(const Args& a, size_t& i, graph::InputShapes& shapes) {
  if (a[i] != "--shape") return false;
  if (i + 1 >= a.size()) throw LoomError("--shape needs NAME=DIMxDIM... (e.g. input_ids=1x128)");
  graph::parse_input_shape(a[++i], shapes);
  return true;
}

int import_verb(const Args& a) {
  std::vector<std::string> files;
  graph::InputShapes shapes;
  for (size_t i = 0; i < a.size(); ++i) {
    if (shape_flag(a, i, shapes)) continue;
    if (!a[i].empty() && a[i][0] == '-') throw LoomError("unknown option " + a[i]);
    files.push_back(a[i]);
  }
  if (files.size() != 2) throw LoomError("usage: loom network import MODEL OUT.json [--shape NAME=DIMxDIM...]");
  Graph g = graph::load_graph(files[0], shapes);
  graph::save_graph(g, files[1]);
  std::printf("%s: %zu inputs, %zu nodes, %zu constants -> %s\n", files[0].c_str(), g.inputs.size(), g.nodes.size(),
              g.constants.size(), files[1].c_str());
  return kExitOk;
}

// A tuning config of the network's tasks, weighted by their occurrences.
void write_config(const std::string& path, const std::string& model, const graph::NetworkTasks& nt, int threads,
                  int trials, const graph::InputShapes& shapes) {
  std::string name = model.substr(model.find_last_of('/') + 1);
  name = name.substr(0, name.find('.'));
  nlohmann::json tasks = nlohmann::json::array();
  for (const auto& t : nt.tasks)
    tasks.push_back({{"workload", t.workload()}, {"params", t.subgraph}, {"weight", t.weight}});
  nlohmann::json config = {{"name", name},
                           {"comment", "the fused subgraphs of " + model + " (loom network tasks --config)"},
                           {"target", "cpu -threads=" + std::to_string(threads)},
                           {"tasks", tasks},
                           {"search", {{"num_trials", trials}}},
                           {"baselines", nlohmann::json::array()}};
  if (!shapes.empty()) config["comment"] = config["comment"].get<std::string>() + ", inputs pinned to " + nlohmann::json(shapes).dump();
  std::ofstream out(path);
  out << config.dump(1) << "\n";
  if (!out) throw LoomError("cannot write " + path);
  std::printf("wrote %s: %zu tasks, %d trials in all, target cpu -threads=%d\n", path.c_str(), nt.tasks.size(), trials,
              threads);
}

int tasks_verb(const Args& a) {
  std::string model, config;
  bool json = false;
  int threads = 1, trials = 0;
  graph::InputShapes shapes;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == "--json") {
      json = true;
    } else if (a[i] == "--config") {
      if (i + 1 >= a.size()) throw LoomError("--config needs a file");
      config = a[++i];
    } else if (a[i] == "--threads") {
      threads = int_flag(a, i, "--threads");
    } else if (a[i] == "--trials") {
      trials = int_flag(a, i, "--trials");
    } else if (shape_flag(a, i, shapes)) {
    } else if (!a[i].empty() && a[i][0] == '-') {
      throw LoomError("unknown option " + a[i]);
    } else if (model.empty()) {
      model = a[i];
    } else {
      throw LoomError("network tasks takes one MODEL");
    }
  }
  if (model.empty()) throw LoomError("usage: loom network tasks MODEL [--json] [--config OUT.json] [--shape NAME=DIMxDIM...]");
  Graph g = graph::load_graph(model, shapes);
  graph::NetworkTasks nt = graph::extract_tasks(g);
  const double total = nt.total_flops();
  if (!config.empty()) {
    // Ansor's budget for a network: about 64 trials per task by default.
    write_config(config, model, nt, threads, trials > 0 ? trials : 64 * static_cast<int>(nt.tasks.size()), shapes);
    return kExitOk;
  }
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& t : nt.tasks)
      out.push_back({{"workload", t.workload()}, {"params", t.subgraph}, {"weight", t.weight}, {"flops", t.flops}});
    std::printf("%s\n", out.dump(1).c_str());
    return kExitOk;
  }
  std::printf("%s: %zu nodes after the passes (%zu before), %zu fused subgraphs, %zu distinct tasks, %.3f GFLOP\n",
              model.c_str(), nt.graph.nodes.size(), g.nodes.size(), nt.groups.size(), nt.tasks.size(), total / 1e9);
  std::printf("%4s  %-40s %9s %6s %7s  %s\n", "task", "subgraph (output shape)", "MFLOP", "weight", "share", "inputs (* constant)");
  for (size_t i = 0; i < nt.tasks.size(); ++i) {
    const auto& t = nt.tasks[i];
    std::printf("%4zu  %-40s %9.2f %6d %6.2f%%  %s\n", i, graph::subgraph_summary(t.subgraph).c_str(), t.flops / 1e6,
                t.weight, total > 0 ? 100.0 * t.flops * t.weight / total : 0.0, graph::subgraph_inputs_summary(t.subgraph).c_str());
  }
  return kExitOk;
}

// Each task's time inside the network (all its groups, per run, mean over
// `rounds` runs back to back); the same kernels run again at once on the
// data their first run left in the caches (in `rounds` runs of their own, so
// that the re-runs do not change the first runs' cache state); and, when
// tuned, the log's time for it alone times its weight. In network against
// re-run: what the data's way through the caches costs a kernel in the
// network; re-run against alone: the rest (another program state, the load).
void print_profile(graph::NetworkExecutor& ex, const Values& inputs, int rounds) {
  std::vector<double> group_s, rerun_s;
  double run_s = 0;
  for (int r = 0; r < rounds; ++r) {
    const auto t = std::chrono::steady_clock::now();
    ex.run(inputs, &group_s);
    run_s += seconds_since(t) / rounds;
  }
  for (int r = 0; r < rounds; ++r) ex.run(inputs, nullptr, &rerun_s);
  const auto& nt = ex.tasks();
  std::vector<double> task_s(nt.tasks.size(), 0.0), task_rerun_s(nt.tasks.size(), 0.0);
  double total = 0, total_rerun = 0, total_alone = 0;
  for (size_t g = 0; g < group_s.size(); ++g) {
    task_s[nt.task_of_group[g]] += group_s[g] / rounds;
    task_rerun_s[nt.task_of_group[g]] += rerun_s[g] / rounds;
    total += group_s[g] / rounds;
    total_rerun += rerun_s[g] / rounds;
  }
  bool all_tuned = true;
  for (size_t i = 0; i < nt.tasks.size(); ++i) {
    if (ex.kernels()[i].tuned) total_alone += ex.kernels()[i].measured_s * nt.tasks[i].weight;
    else all_tuned = false;
  }
  std::vector<size_t> order(task_s.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return task_s[a] > task_s[b]; });
  std::printf("profile (%d runs): %.3f ms per run, of which kernels %.3f ms; each kernel re-run at once %.3f ms", rounds,
              run_s * 1e3, total * 1e3, total_rerun * 1e3);
  if (all_tuned) std::printf("; alone (the log) %.3f ms", total_alone * 1e3);
  std::printf("\n%4s  %-40s %6s %12s %7s %15s %18s\n", "task", "subgraph (output shape)", "weight", "in network", "share",
              "re-run at once", "alone x weight");
  for (size_t i : order) {
    const auto& k = ex.kernels()[i];
    const int w = nt.tasks[i].weight;
    std::printf("%4zu  %-40s %6d %9.3f ms %6.1f%% %9.3f ms (%.2fx)", i,
                graph::subgraph_summary(nt.tasks[i].subgraph).c_str(), w, task_s[i] * 1e3,
                total > 0 ? 100.0 * task_s[i] / total : 0.0, task_rerun_s[i] * 1e3,
                task_rerun_s[i] > 0 ? task_s[i] / task_rerun_s[i] : 0.0);
    if (k.tuned) std::printf(" %12.3f ms (%.2fx)", k.measured_s * w * 1e3, task_s[i] / (k.measured_s * w));
    std::printf("\n");
  }
}

int run_network_verb(const Args& a) {
  std::string model, torch_path;
  graph::ExecutorOptions opts;
  bool profile = false, untimed = true, databases_given = false;
  std::vector<std::string> baseline_keys;  // every one unless --baselines says
  for (const auto& k : network_baseline_kinds()) baseline_keys.push_back(k.key);
  graph::UntimedScheduleOptions untimed_opts;
  untimed_opts.cost_model = shipped_cost_model();
  untimed_opts.databases = shipped_schedule_databases();
  graph::InputShapes shapes;
  ComparisonOptions co;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == "--log") {
      if (i + 1 >= a.size()) throw LoomError("--log needs a file");
      opts.log = a[++i];
    } else if (a[i] == "--threads") {
      opts.threads = int_flag(a, i, "--threads");
    } else if (a[i] == "--rounds") {
      co.rounds = int_flag(a, i, "--rounds");
    } else if (a[i] == "--runs") {
      co.runs = int_flag(a, i, "--runs");
    } else if (a[i] == "--check") {
      co.check = true;
    } else if (a[i] == "--torch") {
      if (i + 1 >= a.size()) throw LoomError("--torch needs a TorchScript file");
      torch_path = a[++i];
    } else if (a[i] == "--baselines") {
      if (i + 1 >= a.size())
        throw LoomError("--baselines needs a comma-separated list of " + network_baseline_keys() + ", or none");
      baseline_keys.clear();
      std::stringstream list(a[++i]);
      for (std::string b; std::getline(list, b, ',');) {
        if (find_network_baseline(b)) baseline_keys.push_back(b);
        else if (b != "none")
          throw LoomError("--baselines: unknown baseline '" + b + "' (known: " + network_baseline_keys() + ", none)");
      }
    } else if (a[i] == "--profile") {
      profile = true;
    } else if (a[i] == "--default-schedules") {
      untimed = false;
    } else if (a[i] == "--cost-model") {
      if (i + 1 >= a.size()) throw LoomError("--cost-model needs a saved cost-model file");
      untimed_opts.cost_model = a[++i];
    } else if (a[i] == "--database") {
      if (i + 1 >= a.size()) throw LoomError("--database needs a records log, or none");
      if (!databases_given) untimed_opts.databases.clear();  // the first replaces the shipped ones
      databases_given = true;
      if (a[++i] != "none") untimed_opts.databases.push_back(a[i]);
    } else if (shape_flag(a, i, shapes)) {
    } else if (!a[i].empty() && a[i][0] == '-') {
      throw LoomError("unknown option " + a[i]);
    } else if (model.empty()) {
      model = a[i];
    } else {
      throw LoomError("network run takes one MODEL");
    }
  }
  if (model.empty()) throw LoomError("usage: loom network run MODEL [--log LOG] [--threads N] [--rounds N] [--runs N] [--check]");
  NetworkBaselines baselines = network_baselines_for(model, baseline_keys);
  for (auto& b : baselines)
    if (std::string(b.kind->key) == "torch" && !torch_path.empty()) b.file = torch_path;  // --torch FILE

  Graph g = graph::load_graph(model, shapes);
  if (untimed) {
    untimed_opts.log = opts.log;
    untimed_opts.threads = opts.threads;
    const graph::UntimedSchedules u = graph::choose_untimed_schedules(graph::extract_tasks(g), untimed_opts);
    for (const std::string& note : u.notes) std::printf("note: %s\n", note.c_str());
    std::printf("chose %zu schedules in %.1f s, none timed: %d from the database as measured, %d re-fitted from "
                "similar tasks and ranked by the cost model, %d predicted by it (%d programs scored)\n",
                u.schedules.size(), u.seconds, u.same_task, u.refitted, u.predicted, u.scored);
    opts.schedules = u.schedules;
  }
  auto t0 = std::chrono::steady_clock::now();
  graph::NetworkExecutor ex(g, opts);
  int tuned = 0, given = 0;
  double compile_s = 0;
  for (const auto& k : ex.kernels()) {
    tuned += k.tuned;
    given += k.given || k.untimed_in_log;
    compile_s += k.compile_s;
  }
  std::string cpu = llvm_host_cpu_description();
  const std::string untimed_n = given ? ", " + std::to_string(given) + " chosen untimed" : "";
  std::printf("%s: %zu fused subgraphs, %zu tasks (%d tuned from the log%s, %zu default schedules), compiled in %.1f s "
              "(LLVM %.1f s); %d thread%s on %s\n",
              model.c_str(), ex.tasks().groups.size(), ex.tasks().tasks.size(), tuned, untimed_n.c_str(),
              ex.tasks().tasks.size() - tuned - given, seconds_since(t0), compile_s, opts.threads,
              opts.threads == 1 ? "" : "s", cpu.substr(0, cpu.find(' ')).c_str());
  // As TVM warns of its fallback schedules: a task the log has no record of
  // (for this target) runs a default schedule, far from tuned speed.
  if (!opts.log.empty()) {
    for (size_t i = 0; i < ex.kernels().size(); ++i)
      if (!ex.kernels()[i].tuned)
        std::printf("warning: %s has no valid record for task %zu (%s) on cpu -threads=%d: %s\n",
                    opts.log.c_str(), i, graph::subgraph_summary(ex.tasks().tasks[i].subgraph).c_str(), opts.threads,
                    ex.kernels()[i].untimed_in_log ? "its untimed record's schedule"
                    : ex.kernels()[i].given        ? "a schedule chosen untimed"
                                                   : "the default schedule");
  }
  std::printf("memory plan: intermediates %.1f MB in reused buffers (%.1f MB without reuse)\n",
              ex.planned_bytes() / 1e6, ex.unplanned_bytes() / 1e6);
  if (ex.pretransformed_bytes() > 0)
    std::printf("weights in kernel layouts: %.1f MB, transformed once at load\n", ex.pretransformed_bytes() / 1e6);

  co.threads = opts.threads;
  NetworkComparison c = compare_network(g, ex, baselines, co);
  std::printf("Loom median %.3f ms over %d rounds of %d run%s", c.loom_median_s() * 1e3, co.rounds, co.runs,
              co.runs == 1 ? "" : "s");
  if (co.runs > 1) std::printf(" (first runs after a quiet machine: %.3f ms)", c.loom.first_median_s() * 1e3);
  std::printf("\n%s", comparison_lines(c, co.tol).c_str());
  if (profile) print_profile(ex, graph::random_graph_inputs(g, 1), co.rounds * co.runs);
  return c.outputs_match() ? kExitOk : kExitFailure;
}

}  // namespace

int network_verb(const Args& args) {
  if (args.empty()) throw LoomError("usage: loom network import|tasks|run ...");
  Args rest(args.begin() + 1, args.end());
  if (args[0] == "import") return import_verb(rest);
  if (args[0] == "tasks") return tasks_verb(rest);
  if (args[0] == "run") return run_network_verb(rest);
  throw LoomError("network: unknown subcommand '" + args[0] + "' (expected import, tasks or run)");
}

}  // namespace loom::cli
