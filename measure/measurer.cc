#include "measure/measurer.h"
#include "measure/timing.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/error.h"
#include "measure/batch_runner.h"
#include "measure/machine.h"
#include "measure/reference_data.h"

#ifndef LOOM_WORKER_DEFAULT_PATH
#define LOOM_WORKER_DEFAULT_PATH ""
#endif

namespace loom {

struct Measurer::Impl {
  std::vector<std::unique_ptr<WorkerSlot>> slots;
  std::string tmpdir;
  std::map<std::string, std::string> reference_files;  // task key -> path
  std::map<std::string, double> best_by_task;          // task key -> best cost so far
};

std::string bytes_text(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) bytes /= 1024, ++u;
  char buf[48];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

double physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? static_cast<double>(pages) * static_cast<double>(page_size) : 0;
}

void check_task_fits_memory(const Task& task, int64_t max_memory_mb) {
  if (!task.dag) return;
  const double physical = physical_memory_bytes();
  if (max_memory_mb <= 0 && physical <= 0) return;  // no limit known
  const double limit = max_memory_mb > 0 ? static_cast<double>(max_memory_mb) * (1 << 20) : physical;
  const ComputeDAG& dag = *task.dag;
  double total = 0, largest = -1;
  std::string largest_name, largest_shape;
  auto add = [&](const std::string& name) {
    const auto& shape = dag.op(name)->shape;
    double bytes = sizeof(float);  // in double: a shape's product may overflow int64
    std::string dims;
    for (int64_t d : shape) bytes *= static_cast<double>(d), dims += (dims.empty() ? "" : "x") + std::to_string(d);
    total += 2 * bytes;
    if (bytes > largest) largest = bytes, largest_name = name, largest_shape = dims;
  };
  for (const auto& n : dag.input_names()) add(n);
  for (const auto& n : dag.output_names()) add(n);
  if (total <= limit) return;
  const std::string where = max_memory_mb > 0 ? " (measure.max_memory_mb)" : " (the machine's physical memory)";
  throw LoomError(task.description() + ": tensor " + largest_name + " [" + largest_shape + "] is " +
                  bytes_text(largest) + "; the task's inputs and outputs need at least " + bytes_text(total) +
                  " in a worker, over its memory limit of " + bytes_text(limit) + where);
}

namespace {

bool is_executable(const std::string& p) {
  struct stat st{};
  return !p.empty() && ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

std::map<int, std::string> faults_from_env() {
  std::map<int, std::string> out;
  const char* env = std::getenv("LOOM_TEST_FAULT");
  if (!env || !*env) return out;
  std::string s = env;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    std::string item = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t colon = item.find(':');
    if (colon == std::string::npos) throw LoomError("LOOM_TEST_FAULT: expected INDEX:KIND items (INDEX a number or *), got '" + item + "'");
    try {
      const std::string index = item.substr(0, colon);
      out[index == "*" ? kEveryCandidate : std::stoi(index)] = item.substr(colon + 1);
    } catch (const std::exception&) {
      throw LoomError("LOOM_TEST_FAULT: bad candidate index in '" + item + "'");
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

}  // namespace

int64_t worker_memory_limit_mb(const Task& task, const MeasureOptions& opts) {
  return task.target.is_gpu() ? 0 : opts.max_memory_mb;
}

std::string find_worker_executable() {
  std::vector<std::string> tried;
  if (const char* env = std::getenv("LOOM_WORKER"); env && *env) {
    if (is_executable(env)) return env;
    throw LoomError(std::string("LOOM_WORKER=") + env + " is not an executable file");
  }
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    std::string dir(self, static_cast<size_t>(n));
    dir = dir.substr(0, dir.rfind('/'));
    std::string p = dir + "/loom_worker";
    if (is_executable(p)) return p;
    tried.push_back(p);
  }
  std::string def = LOOM_WORKER_DEFAULT_PATH;
  if (is_executable(def)) return def;
  if (!def.empty()) tried.push_back(def);
  std::string msg = "cannot find the loom_worker executable (set LOOM_WORKER; tried";
  for (const auto& t : tried) msg += " " + t;
  throw LoomError(msg + ")");
}

Measurer::Measurer(MeasureOptions opts) : opts_(std::move(opts)), impl_(std::make_unique<Impl>()) {
  if (opts_.repeat < 1) throw LoomError("measure: repeat must be at least 1");
  if (opts_.n_parallel_builds < 1) throw LoomError("measure: n_parallel_builds must be at least 1");
  if (opts_.build_timeout_s <= 0 || opts_.run_timeout_s <= 0)
    throw LoomError("measure: timeouts must be positive");
  worker_path_ = find_worker_executable();
  for (const auto& [i, f] : faults_from_env()) opts_.test_faults[i] = f;
  for (int i = 0; i < opts_.n_parallel_builds; ++i) impl_->slots.push_back(std::make_unique<WorkerSlot>());
}

Measurer::~Measurer() {
  for (auto& s : impl_->slots) s->proc.shutdown(0.5);
  for (const auto& [key, path] : impl_->reference_files) std::remove(path.c_str());
  if (!impl_->tmpdir.empty()) ::rmdir(impl_->tmpdir.c_str());
}

std::vector<MeasureResult> CandidateMeasurer::measure(const Task& task, const std::vector<State>& states) {
  std::vector<nlohmann::json> steps;
  steps.reserve(states.size());
  for (const State& s : states)
    steps.push_back(s.defined() ? s.steps_json() : nlohmann::json("undefined state"));
  return measure_steps(task, steps);
}

std::vector<MeasureResult> Measurer::measure_steps(const Task& task,
                                                   const std::vector<nlohmann::json>& steps) {
  auto t0 = std::chrono::steady_clock::now();
  stats_ = MeasureBatchStats{};
  stats_.candidates = static_cast<int>(steps.size());
  if (!task.dag) throw LoomError("measure: task has no DAG");
  // The candidates run in worker processes, but this process's own threads
  // share the CPU with them: a library's pool that keeps spinning after a
  // call (LibTorch's OpenBLAS after the search, a baseline before) would
  // take a core from the first candidates.
  wait_for_idle_threads();

  const std::string key = task.key();
  auto it = impl_->reference_files.find(key);
  if (it == impl_->reference_files.end()) {
    check_task_fits_memory(task, opts_.max_memory_mb);
    if (impl_->tmpdir.empty()) {
      const char* base = std::getenv("TMPDIR");
      std::string tmpl = std::string(base && *base ? base : "/tmp") + "/loom-measure-XXXXXX";
      if (!::mkdtemp(tmpl.data())) throw LoomError("measure: cannot create a temp directory in " + tmpl);
      impl_->tmpdir = tmpl;
    }
    ReferenceData ref = compute_reference(task);
    stats_.reference_s = ref.compute_s;
    std::string path = impl_->tmpdir + "/ref-" + std::to_string(impl_->reference_files.size()) + ".bin";
    write_reference_file(path, ref);
    it = impl_->reference_files.emplace(key, path).first;
  }

  BatchInput in;
  in.task = &task;
  in.task_key = key;
  in.reference_path = it->second;
  in.steps = &steps;
  in.faults = opts_.test_faults;
  double& best = impl_->best_by_task[key];
  in.best_known_s = best;
  auto results = run_batch(in, opts_, worker_path_, impl_->slots, stats_);
  for (auto& r : results) {
    if (r.ok() && (best == 0 || r.median_s() < best)) best = r.median_s();
    r.machine = this_machine();
  }
  stats_.wall_s = seconds_since(t0);
  return results;
}

void Measurer::note_best(const Task& task, double cost_s) {
  double& best = impl_->best_by_task[task.key()];
  if (cost_s > 0 && (best == 0 || cost_s < best)) best = cost_s;
}

}  // namespace loom
