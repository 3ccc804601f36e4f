#include "experiments/network_export.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "codegen/c/compile.h"
#include "codegen/runtime/c_runtime.h"
#include "codegen/c/source.h"
#include "experiments/export.h"
#include "experiments/network_report.h"
#include "network/default_schedule.h"
#include "network/executor.h"
#include "graph/graph.h"
#include "graph/onnx_import.h"
#include "graph/tasks.h"
#include "ir/error.h"
#include "ir/lower.h"
#include "measure/task.h"
#include "measure/timing.h"

namespace loom {

namespace {

namespace fs = std::filesystem;

// One task's kernel as the network calls it.
struct Kernel {
  std::string stem;
  LoweredFunc f;
  std::vector<int> arg_inputs;  // per argument: the subgraph input it is (-1: the output)
};

}  // namespace

NetworkExport export_network(const ExperimentConfig& cfg, const std::vector<MeasureRecord>& records) {
  if (cfg.network.empty()) throw LoomError("export_network: " + cfg.name + " is not a network config");
  const graph::Graph model = graph::load_graph(cfg.network, cfg.input_shapes);
  const graph::NetworkTasks nt = graph::extract_tasks(model);
  const graph::Graph& g = nt.graph;
  const int threads = cfg.target.threads;
  NetworkExport e;
  e.name = sanitize_c_identifier(cfg.name);
  const fs::path dir(cfg.export_dir);
  fs::create_directories(dir);
  write_file((dir / "loom_runtime.h").string(), c_runtime_header());
  write_file((dir / "loom_runtime.c").string(), c_runtime_source());

  std::vector<Kernel> kernels;
  for (const auto& t : nt.tasks) {
    Task task = Task::make(t.workload(), t.subgraph, cfg.target);
    const ProgramCost best = best_program(records, task.key());
    const MeasureRecord* untimed = best.record ? nullptr : latest_untimed(records, task.key());
    State state;
    const char* origin = ", the log's best schedule";
    if (best.record) {
      state = State::from_json(task.dag, best.record->steps);
    } else if (untimed) {
      state = State::from_json(task.dag, untimed->steps);
      origin = ", the log's untimed schedule (chosen with nothing timed)";
      ++e.untimed_schedules;
    } else {
      origin = ", a default schedule (no record in the log)";
      state = graph::default_schedule(task.dag, threads, task.target.vector_width());
      ++e.default_schedules;
    }
    Kernel k;
    k.stem = task_file_stem(task);
    LowerOptions lo;
    lo.func_name = k.stem;
    k.f = lower(state, lo);
    k.arg_inputs = graph::argument_inputs(k.f, *task.dag);
    CSourceOptions copts;
    copts.parallel = CParallel::kRuntime;
    copts.num_threads = threads;
    copts.vector_width = task.target.vector_width();
    copts.unroll_at_emission = true;
    const std::string path = (dir / (k.stem + ".c")).string();
    write_file(path, "/* Exported by Loom: " + task.description() + " on " + task.target.to_string() + origin + "; called by " + e.name + ".c. */\n" + emit_c_source(k.f, copts));
    e.kernel_sources.push_back(path);
    kernels.push_back(std::move(k));
  }

  // Where each value lives: a graph input, a constant (its offset in the
  // weights file), or the buffer of the group computing it.
  std::map<std::string, int> input_index, constant_index, group_of;
  for (size_t i = 0; i < g.inputs.size(); ++i) input_index[g.inputs[i].name] = static_cast<int>(i);
  for (size_t gi = 0; gi < nt.groups.size(); ++gi) group_of[nt.groups[gi].output(g)] = static_cast<int>(gi);
  std::vector<std::string> constants;
  for (size_t gi = 0; gi < nt.groups.size(); ++gi)
    for (const auto& [v, offset] : nt.group_inputs[gi])
      if (g.is_constant(v) && !constant_index.count(v)) {
        constant_index[v] = static_cast<int>(constants.size());
        constants.push_back(v);
      }
  e.weights_path = (dir / (cfg.name + ".weights.bin")).string();
  {
    std::ofstream w(e.weights_path, std::ios::binary);
    for (const auto& c : constants) {
      const auto& data = g.constants.at(c).data;
      w.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * sizeof(float)));
    }
    if (!w) throw LoomError("cannot write " + e.weights_path);
  }

  const std::string& n = e.name;
  std::ostringstream h, c;
  int64_t intermediate = 0;
  for (size_t gi = 0; gi < nt.groups.size(); ++gi) {
    const std::string& out = nt.groups[gi].output(g);
    if (std::find(g.outputs.begin(), g.outputs.end(), out) == g.outputs.end()) intermediate += graph::num_elements(g.shape(out));
  }
  h << "/* Exported by Loom: the network " << fs::path(cfg.network).filename().string() << " on "
    << cfg.target.to_string() << ", " << nt.groups.size() << " fused subgraphs calling " << nt.tasks.size()
    << " kernels (" << nt.tasks.size() - e.default_schedules - e.untimed_schedules << " tuned, "
    << e.untimed_schedules << " untimed, " << e.default_schedules << " default schedules).\n\n   Inputs, float32, row-major, in this order:\n";
  for (const auto& in : g.inputs) h << "     " << in.name << " " << graph::shape_string(in.shape) << "\n";
  h << "   Outputs:\n";
  for (const auto& o : g.outputs) h << "     " << o << " " << graph::shape_string(g.shape(o)) << "\n";
  h << "   Memory: " << constants.size() << " constants (" << cfg.name << ".weights.bin, read by " << n
    << "_init), intermediates " << intermediate * 4 / 1e6 << " MB.\n\n   Build:\n     cc -O3 -march=native app.c "
    << n << ".c";
  for (const auto& k : kernels) h << " " << k.stem << ".c";
  h << " loom_runtime.c -lm -pthread */\n";
  h << "#ifndef LOOM_NETWORK_" << n << "_H\n#define LOOM_NETWORK_" << n << "_H\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  h << "/* Reads the constants and pre-transforms the weights the kernels read in\n   layouts of their own; 0 on success, -1 (with a message on stderr) if not. */\n";
  h << "int " << n << "_init(const char* weights_path);\n";
  h << "/* inputs[i], outputs[i]: the i-th input and output above. */\n";
  h << "void " << n << "_run(const float* const* inputs, float* const* outputs);\n";
  h << "void " << n << "_free(void);\n\n#ifdef __cplusplus\n}\n#endif\n#endif\n";

  c << "/* Exported by Loom: the call sequence of " << fs::path(cfg.network).filename().string()
    << " (see " << n << ".h). */\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n#include \"" << n
    << ".h\"\n\n";
  for (const auto& k : kernels) {
    c << "void " << k.stem << "(";
    for (size_t a = 0; a < k.f.args.size(); ++a) c << (a ? ", " : "") << "float*";
    c << ");\n";
  }
  c << "\n";
  // Pre-transformed weights: one blocked copy per (group, argument).
  std::vector<std::string> pre_fns;
  std::map<std::pair<size_t, size_t>, int> pre_index;
  std::ostringstream init_pre;
  int n_pre = 0;
  std::map<std::tuple<std::string, int, size_t>, int> pre_copy;
  for (const auto& k : kernels)
    for (const Buffer& b : k.f.args)
      if (b.layout) c << b.layout->c_function(pretransform_function_name(k.stem, b)) << "\n";
  for (size_t gi = 0; gi < nt.groups.size(); ++gi) {
    const Kernel& k = kernels[nt.task_of_group[gi]];
    for (size_t a = 0; a < k.f.args.size(); ++a) {
      const Buffer& b = k.f.args[a];
      if (!b.layout) continue;
      const std::string& v = nt.group_inputs[gi][k.arg_inputs[a]].value;
      // One blocked copy per constant and kernel argument, however many
      // groups of the task read it.
      auto [copy, added] = pre_copy.try_emplace({v, nt.task_of_group[gi], a}, n_pre);
      pre_index[{gi, a}] = copy->second;
      if (!added) continue;
      init_pre << "  pre[" << n_pre << "] = (float*)calloc(" << b.size() << ", sizeof(float));\n  if (!pre["
               << n_pre << "]) return oom();\n  " << pretransform_function_name(k.stem, b) << "(constants["
               << constant_index.at(v) << "], pre[" << n_pre << "]);\n";
      ++n_pre;
    }
  }
  c << "static float* constants[" << std::max<size_t>(constants.size(), 1) << "];\n";
  c << "static float* pre[" << std::max(n_pre, 1) << "];\n";
  c << "static float* buffers[" << nt.groups.size() << "];\n";
  c << "static const long constant_sizes[" << std::max<size_t>(constants.size(), 1) << "] = {";
  for (const auto& v : constants) c << graph::num_elements(g.constants.at(v).shape) << "L, ";
  c << (constants.empty() ? "0" : "") << "};\n";
  c << "static const long buffer_sizes[" << nt.groups.size() << "] = {";
  for (size_t gi = 0; gi < nt.groups.size(); ++gi) c << graph::num_elements(g.shape(nt.groups[gi].output(g))) << "L, ";
  c << "};\n\n";
  c << "static int oom(void) {\n  fprintf(stderr, \"" << n << "_init: out of memory\\n\");\n  return -1;\n}\n\n";
  c << "int " << n << "_init(const char* weights_path) {\n"
    << "  FILE* f = fopen(weights_path, \"rb\");\n"
    << "  if (!f) {\n    fprintf(stderr, \"" << n << "_init: cannot open %s\\n\", weights_path);\n    return -1;\n  }\n"
    << "  for (int i = 0; i < " << constants.size() << "; ++i) {\n"
    << "    constants[i] = (float*)malloc(sizeof(float) * (size_t)constant_sizes[i] + 1);\n"
    << "    if (!constants[i]) { fclose(f); return oom(); }\n"
    << "    if (fread(constants[i], sizeof(float), (size_t)constant_sizes[i], f) != (size_t)constant_sizes[i]) {\n"
    << "      fprintf(stderr, \"" << n << "_init: %s is truncated\\n\", weights_path);\n      fclose(f);\n      return -1;\n    }\n  }\n"
    << "  fclose(f);\n"
    << "  for (int i = 0; i < " << nt.groups.size() << "; ++i) {\n"
    << "    buffers[i] = (float*)calloc((size_t)buffer_sizes[i], sizeof(float));\n"
    << "    if (!buffers[i]) return oom();\n  }\n"
    << init_pre.str() << "  return 0;\n}\n\n";
  c << "void " << n << "_free(void) {\n"
    << "  for (int i = 0; i < " << constants.size() << "; ++i) free(constants[i]);\n"
    << "  for (int i = 0; i < " << n_pre << "; ++i) free(pre[i]);\n"
    << "  for (int i = 0; i < " << nt.groups.size() << "; ++i) free(buffers[i]);\n}\n\n";
  auto pointer = [&](const std::string& v) -> std::string {
    auto o = std::find(g.outputs.begin(), g.outputs.end(), v);
    if (o != g.outputs.end()) return "outputs[" + std::to_string(o - g.outputs.begin()) + "]";
    if (input_index.count(v)) return "(float*)inputs[" + std::to_string(input_index.at(v)) + "]";
    if (constant_index.count(v)) return "constants[" + std::to_string(constant_index.at(v)) + "]";
    return "buffers[" + std::to_string(group_of.at(v)) + "]";
  };
  c << "void " << n << "_run(const float* const* inputs, float* const* outputs) {\n";
  for (size_t gi = 0; gi < nt.groups.size(); ++gi) {
    const Kernel& k = kernels[nt.task_of_group[gi]];
    c << "  " << k.stem << "(";
    for (size_t a = 0; a < k.f.args.size(); ++a) {
      c << (a ? ", " : "");
      if (k.f.args[a].layout) c << "pre[" << pre_index.at({gi, a}) << "]";
      else if (k.arg_inputs[a] < 0) c << pointer(nt.groups[gi].output(g));
      else {
        const graph::GroupInput& in = nt.group_inputs[gi][k.arg_inputs[a]];
        c << pointer(in.value) << (in.offset ? " + " + std::to_string(in.offset) : "");
      }
    }
    c << ");\n";
  }
  // A graph output that is also an input or constant (no group computes it).
  for (size_t o = 0; o < g.outputs.size(); ++o)
    if (!group_of.count(g.outputs[o]))
      c << "  memcpy(outputs[" << o << "], " << pointer(g.outputs[o]) << ", sizeof(float) * "
        << graph::num_elements(g.shape(g.outputs[o])) << ");\n";
  c << "}\n";
  e.header_path = (dir / (n + ".h")).string();
  e.c_path = (dir / (n + ".c")).string();
  write_file(e.header_path, h.str());
  write_file(e.c_path, c.str());
  return e;
}

NetworkExportCheck check_network_export(const ExperimentConfig& cfg, const NetworkExport& e,
                                        const std::string& compiler, int rounds) {
  NetworkExportCheck r;
  const graph::Graph model = graph::load_graph(cfg.network, cfg.input_shapes);
  const fs::path dir(cfg.export_dir);
  const graph::Values inputs = graph::random_graph_inputs(model, 1);
  // The harness: init, one run writing the outputs, then `rounds` timed runs.
  std::ostringstream c;
  c << "#define _POSIX_C_SOURCE 200112L\n#include <stdio.h>\n#include <stdlib.h>\n#include <time.h>\n#include \""
    << e.name << ".h\"\n\nstatic double now_s(void) {\n  struct timespec t;\n  clock_gettime(CLOCK_MONOTONIC, &t);\n"
    << "  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;\n}\n\n"
    << "int main(int argc, char** argv) {\n  if (argc != 5) return 2;\n  if (" << e.name
    << "_init(argv[1]) != 0) return 2;\n  const int rounds = atoi(argv[4]);\n  FILE* in = fopen(argv[2], \"rb\");\n"
    << "  if (!in) return 2;\n";
  c << "  const float* inputs[" << std::max<size_t>(model.inputs.size(), 1) << "];\n  float* outputs["
    << std::max<size_t>(model.outputs.size(), 1) << "];\n";
  for (size_t i = 0; i < model.inputs.size(); ++i) {
    const int64_t n = graph::num_elements(model.inputs[i].shape);
    c << "  { float* p = (float*)malloc(sizeof(float) * " << n << "); if (!p || fread(p, sizeof(float), " << n
      << ", in) != " << n << ") return 2; inputs[" << i << "] = p; }\n";
  }
  for (size_t o = 0; o < model.outputs.size(); ++o)
    c << "  outputs[" << o << "] = (float*)malloc(sizeof(float) * " << graph::num_elements(model.shape(model.outputs[o])) << ");\n";
  c << "  fclose(in);\n  " << e.name << "_run(inputs, outputs);\n  FILE* out = fopen(argv[3], \"wb\");\n  if (!out) return 2;\n";
  for (size_t o = 0; o < model.outputs.size(); ++o)
    c << "  fwrite(outputs[" << o << "], sizeof(float), " << graph::num_elements(model.shape(model.outputs[o])) << ", out);\n";
  c << "  fclose(out);\n  printf(\"seconds\");\n  for (int r = 0; r < rounds; ++r) {\n    double t = now_s();\n    "
    << e.name << "_run(inputs, outputs);\n    printf(\" %.9g\", now_s() - t);\n  }\n  printf(\"\\n\");\n  " << e.name
    << "_free();\n  return 0;\n}\n";
  const std::string harness = (dir / (e.name + "_check.c")).string();
  const std::string exe = (dir / (e.name + "_check")).string();
  write_file(harness, c.str());
  std::vector<std::string> argv = {compiler, "-O3", "-march=native", "-o", exe, harness, e.c_path};
  argv.insert(argv.end(), e.kernel_sources.begin(), e.kernel_sources.end());
  for (const std::string& x : {(dir / "loom_runtime.c").string(), std::string("-lm"), std::string("-pthread")}) argv.push_back(x);
  r.problem = run_build_command(argv, exe + ".build.log");
  if (!r.problem.empty()) return r;
  const std::string in_path = (dir / (e.name + "_check.input.bin")).string();
  const std::string out_path = (dir / (e.name + "_check.output.bin")).string();
  {
    std::ofstream in(in_path, std::ios::binary);
    for (const auto& gi : model.inputs) {
      const auto& v = inputs.at(gi.name);
      in.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
    }
  }
  const std::string log = exe + ".run.log";
  const int rc = run_process({exe, e.weights_path, in_path, out_path, std::to_string(rounds)}, log);
  std::ifstream run_log(log);
  std::string line, seconds;
  while (std::getline(run_log, line))
    if (line.rfind("seconds", 0) == 0) seconds = line;
  if (rc != 0) {
    r.problem = exe + " failed (exit " + std::to_string(rc) + ")";
    return r;
  }
  std::vector<double> c_s;
  std::istringstream ss(seconds.substr(std::min<size_t>(seconds.size(), 7)));
  for (double t; ss >> t;) c_s.push_back(t);
  if (!c_s.empty()) r.c_s = median(c_s);

  graph::ExecutorOptions eo;
  eo.threads = cfg.target.threads;
  eo.log = cfg.log_path;
  graph::NetworkExecutor ex(model, eo);
  graph::Values want = ex.run(inputs);
  std::vector<double> ex_s;
  for (int k = 0; k < rounds; ++k) {
    auto t = std::chrono::steady_clock::now();
    ex.run(inputs);
    ex_s.push_back(seconds_since(t));
  }
  if (!ex_s.empty()) r.executor_s = median(ex_s);
  std::ifstream got_in(out_path, std::ios::binary);
  for (const auto& o : model.outputs) {
    std::vector<float> got(static_cast<size_t>(graph::num_elements(model.shape(o))));
    got_in.read(reinterpret_cast<char*>(got.data()), static_cast<std::streamsize>(got.size() * sizeof(float)));
    if (!got_in) {
      r.problem = out_path + ": truncated";
      return r;
    }
    Agreement a = agree(got, want.at(o), 1e-3);
    r.max_abs_error = std::max(r.max_abs_error, a.max_abs);
    if (!a.ok) r.problem = "output " + o + " differs from the executor's (max |error| " + std::to_string(a.max_abs) + ")";
  }
  return r;
}

}  // namespace loom
