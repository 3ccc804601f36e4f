#include "experiments/export.h"

#include <filesystem>
#include <fstream>

#include "codegen/c_source.h"
#include "ir/error.h"
#include "ir/lower.h"

namespace loom {

std::string task_file_stem(const Task& task) {
  std::string s = task.workload;
  for (const auto& [k, v] : task.params.items()) s += "_" + k + v.dump();
  if (task.target.kind == "cpu") s += "_t" + std::to_string(task.target.threads);
  else s += "_" + task.target.arch;
  return s;
}

namespace {
void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!out) throw LoomError(path + ": cannot write");
  out << text;
}
}  // namespace

std::vector<ExportedFiles> export_best(const std::vector<Task>& tasks,
                                       const std::vector<MeasureRecord>& records,
                                       const std::string& dir) {
  std::filesystem::create_directories(dir);
  std::vector<ExportedFiles> out;
  for (const Task& task : tasks) {
    const ProgramCost best_prog = best_program(records, task.key());
    const MeasureRecord* best = best_prog.record;
    if (!best) continue;
    State state = State::from_json(task.dag, best->steps);
    LowerOptions lo;
    lo.func_name = task_file_stem(task);
    LoweredFunc f = lower(state, lo);
    ExportedFiles e;
    e.task = task.description();
    std::string stem = (std::filesystem::path(dir) / task_file_stem(task)).string();
    e.record_path = stem + ".record.json";
    e.c_path = stem + ".c";
    e.loop_nest_path = stem + ".loops.txt";
    write_file(e.record_path, record_to_json(*best).dump(2) + "\n");
    std::string header = "/* Exported by Loom: best schedule of " + task.description() + " on " +
                         task.target.to_string() + ", measured " +
                         std::to_string(best_prog.cost_s * 1e3) + " ms (median of " +
                         std::to_string(best_prog.measurements) + " measurement(s)).\n   Entry points: " +
                         c_function_name(f) + "(...) and " + c_function_name(f) +
                         "_packed(float** args), args in this order: ";
    for (size_t i = 0; i < f.args.size(); ++i) header += (i ? ", " : "") + f.args[i].name;
    header += ".\n   Build: cc -O3 -march=native -c file.c (add -fopenmp to run parallel loops in parallel). */\n";
    CSourceOptions copts;
    copts.openmp = task.target.threads > 1;
    write_file(e.c_path, header + emit_c_source(f, copts));
    write_file(e.loop_nest_path, to_string(f));
    out.push_back(e);
  }
  return out;
}

}  // namespace loom
