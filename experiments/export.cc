#include "experiments/export.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include "codegen/c/compile.h"
#include "codegen/runtime/c_runtime.h"
#include "codegen/c/source.h"
#include "codegen/llvm/llvm_jit.h"
#include "ir/error.h"
#include "ir/lower.h"

namespace loom {

namespace {

// Longer stems (a network subgraph's parameters are a whole graph) are cut
// and made unique by a hash of the task's key.
constexpr size_t kMaxStemLength = 72;

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Runs a build step of the export; a failure is a LoomError.
void run_build_step(const std::vector<std::string>& argv, const std::string& log_path) {
  std::string problem = run_build_command(argv, log_path);
  if (!problem.empty()) throw LoomError("export: " + problem);
}

std::string header_text(const ExportedFiles& e, const LoweredFunc& f, const Task& task,
                        const std::vector<std::string>& outputs) {
  const std::string& name = e.stem;
  std::string guard = "LOOM_" + name + "_H";
  for (char& c : guard) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  char measured[160];
  std::snprintf(measured, sizeof(measured), "%.6g ms (median of %d measurement(s))", e.measured_s * 1e3,
                e.measurements);
  std::string h = "/* Exported by Loom: the best schedule of " + task.description() + " on " +
                  task.target.to_string() + ", measured " + measured + ".\n\n";
  h += "   Arguments, float32, dense row-major, distinct (no aliasing), in this order:\n";
  for (const Buffer& b : f.args) {
    bool out = std::find(outputs.begin(), outputs.end(), b.name) != outputs.end();
    if (b.layout) {
      h += "     " + sanitize_c_identifier(b.name) + " " + std::to_string(b.size()) + " floats  input: constant " +
           sanitize_c_identifier(b.layout->source) + " " + shape_text(b.layout->source_shape) +
           " pre-transformed by\n       " + pretransform_function_name(name, b) + "(" +
           sanitize_c_identifier(b.layout->source) + ", this), once, before the first call\n";
      continue;
    }
    h += "     " + sanitize_c_identifier(b.name) + " " + shape_text(b.shape) + (out ? "  output" : "  input") + "\n";
  }
  h += "\n   Two builds of the same program define these functions:\n";
  if (!e.library_path.empty()) {
    std::string cpu = llvm_host_cpu_description();
    cpu = cpu.substr(0, cpu.find(' '));
    h += "   - lib" + name + ".a: the kernel as it was timed (Loom's LLVM backend, for the\n"
         "     CPU features of this " + cpu + " machine) and loom_runtime.o.\n"
         "       cc -O2 app.c lib" + name + ".a -lmvec -lm -pthread\n";
  }
  h += "   - " + name + ".c: C with explicit vector code.\n"
       "       cc -O3 -march=native app.c " + name + ".c loom_runtime.c -lm -pthread\n";
  if (task.target.threads > 1)
    h += "   Parallel loops run on " + std::to_string(task.target.threads) +
         " threads through loom_parallel_for (loom_runtime.h).\n";
  h += "   `loom export CONFIG --check` builds both, checks them against the\n"
       "   reference and times them against the tuner's kernel. */\n";
  h += "#ifndef " + guard + "\n#define " + guard + "\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  h += "enum { " + name + "_num_args = " + std::to_string(f.args.size()) + " };\n\n";
  h += "void " + name + "(";
  for (size_t i = 0; i < f.args.size(); ++i)
    h += std::string(i ? ", " : "") + "float* " + sanitize_c_identifier(f.args[i].name);
  if (f.args.empty()) h += "void";
  h += ");\n/* args[i] is the i-th argument above. */\nvoid " + name + "_packed(float** args);\n\n";
  for (const Buffer& b : f.args) {
    if (!b.layout) continue;
    h += "/* The blocked layout " + b.layout->to_string() + ", pads zeroed. */\n";
    h += b.layout->c_function(pretransform_function_name(name, b)) + "\n";
  }
  h += "#ifdef __cplusplus\n}\n#endif\n#endif\n";
  return h;
}

}  // namespace

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw LoomError(path + ": cannot write");
  out << text;
  if (!out) throw LoomError(path + ": write failed");
}

std::string pretransform_function_name(const std::string& stem, const Buffer& arg) {
  return stem + "_pretransform_" + sanitize_c_identifier(arg.name);
}

std::string run_build_command(const std::vector<std::string>& argv, const std::string& log_path) {
  int rc = run_process(argv, log_path);
  if (rc == 0) {
    std::filesystem::remove(log_path);
    return "";
  }
  std::string cmd;
  for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  std::ifstream in(log_path);
  std::string first;
  std::getline(in, first);
  return "`" + cmd + "` failed (exit " + std::to_string(rc) + ")" + (first.empty() ? "" : ": " + first);
}

std::string task_file_stem(const Task& task) {
  std::string s = task.workload;
  if (task.kind().params_name_files) {
    for (const auto& [k, v] : task.params.items()) s += "_" + k + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  if (task.target.is_cpu()) s += "_t" + std::to_string(task.target.threads);
  else s += "_" + task.target.arch;
  std::string id = sanitize_c_identifier(s);
  if (!task.kind().params_name_files || id.size() > kMaxStemLength) {
    char hash[32];
    std::snprintf(hash, sizeof(hash), "%016zx", std::hash<std::string>{}(task.key()));
    id = id.substr(0, std::min(id.size(), kMaxStemLength - 17)) + "_" + hash;
  }
  return id;
}

std::vector<ExportedFiles> export_best(const std::vector<Task>& tasks,
                                       const std::vector<MeasureRecord>& records,
                                       const std::string& dir) {
  std::filesystem::create_directories(dir);
  const std::string runtime_c = (std::filesystem::path(dir) / "loom_runtime.c").string();
  const std::string runtime_o = (std::filesystem::path(dir) / "loom_runtime.o").string();
  write_file((std::filesystem::path(dir) / "loom_runtime.h").string(), c_runtime_header());
  write_file(runtime_c, c_runtime_source());
  bool runtime_built = false;
  std::vector<ExportedFiles> out;
  for (const Task& task : tasks) {
    const ProgramCost best_prog = best_program(records, task.key());
    const MeasureRecord* best = best_prog.record;
    if (!best) continue;
    ExportedFiles e;
    e.task = task.description();
    e.task_def = task;
    e.stem = task_file_stem(task);
    e.measured_s = best_prog.cost_s;
    e.measurements = best_prog.measurements;
    e.steps = best->steps;
    State state = State::from_json(task.dag, best->steps);
    LowerOptions lo;
    lo.func_name = e.stem;
    LoweredFunc f = lower(state, lo);
    const std::string stem = (std::filesystem::path(dir) / e.stem).string();
    e.record_path = stem + ".record.json";
    e.c_path = stem + ".c";
    e.loop_nest_path = stem + ".loops.txt";
    e.header_path = stem + ".h";
    write_file(e.record_path, record_to_json(*best).dump(2) + "\n");
    write_file(e.loop_nest_path, to_string(f));

    const bool cpu = task.target.is_cpu();
    if (cpu) {
      // The kernel the worker timed: its compile options (measure/worker).
      LLVMCompileOptions lo_opts;
      lo_opts.num_threads = task.target.threads;
      lo_opts.vector_width = task.target.vector_width();
      e.object_path = stem + ".o";
      e.library_path = (std::filesystem::path(dir) / ("lib" + e.stem + ".a")).string();
      write_file(e.object_path, compile_llvm_object(f, e.stem, lo_opts));
      if (!runtime_built) {
        run_build_step({default_c_compiler(), "-O2", "-fPIC", "-pthread", "-c", runtime_c, "-o", runtime_o},
                       runtime_o + ".log");
        runtime_built = true;
      }
      std::filesystem::remove(e.library_path);
      run_build_step({"ar", "rcs", e.library_path, e.object_path, runtime_o}, e.library_path + ".log");
    }

    CSourceOptions copts;
    copts.parallel = CParallel::kRuntime;
    copts.num_threads = cpu ? task.target.threads : 1;
    copts.vector_width = cpu ? task.target.vector_width() : 0;
    copts.unroll_at_emission = true;
    std::string c_head = "/* Exported by Loom: " + task.description() + " on " + task.target.to_string() +
                         "; the interface, argument order and build lines are in " + e.stem + ".h. */\n";
    write_file(e.c_path, c_head + emit_c_source(f, copts));
    write_file(e.header_path, header_text(e, f, task, task.dag->output_names()));
    out.push_back(e);
  }
  return out;
}

}  // namespace loom
