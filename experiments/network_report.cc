#include "experiments/network_report.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_set>

#include "network/baselines/onnxruntime_network.h"
#include "network/baselines/pytorch_network.h"
#include "graph/interpreter.h"
#include "graph/onnx_import.h"
#include "graph/tasks.h"
#include "ir/error.h"
#include "measure/records.h"
#include "measure/timing.h"

namespace loom {

namespace {

// The estimate of the network's latency as tuning went: trials in log
// order (a program measured again is no new trial), and after each trial
// that improved some task, the weighted sum of every task's best so far —
// from the first trial at which every task has a correct program.
std::vector<std::pair<int, double>> estimate_curve(const ExperimentConfig& cfg, const std::vector<MeasureRecord>& records) {
  std::map<std::string, size_t> task_of;
  for (size_t i = 0; i < cfg.tasks.size(); ++i) task_of[cfg.tasks[i].task.key()] = i;
  std::vector<double> best(cfg.tasks.size(), INFINITY);
  std::unordered_set<std::string> programs;
  std::vector<std::pair<int, double>> curve;
  int trials = 0;
  for (const auto& rec : records) {
    auto it = task_of.find(rec.task_key());
    if (it == task_of.end()) continue;
    if (!programs.insert(rec.task_key() + rec.steps.dump()).second) continue;
    ++trials;
    if (!rec.result.ok() || rec.result.median_s() >= best[it->second]) continue;
    best[it->second] = rec.result.median_s();
    double sum = 0;
    for (size_t i = 0; i < best.size(); ++i) sum += cfg.tasks[i].weight * best[i];
    if (std::isfinite(sum)) curve.emplace_back(trials, sum);
  }
  return curve;
}

}  // namespace

NetworkReport build_network_report(const ExperimentConfig& cfg, const std::vector<TaskReport>& tasks,
                                   const ReportOptions& opts, const std::map<std::string, nlohmann::json>& untimed) {
  if (cfg.network.empty()) throw LoomError("build_network_report: " + cfg.name + " is not a network config");
  NetworkReport r;
  r.model = cfg.network;
  r.threads = cfg.target.threads;
  for (const auto& t : tasks) {
    r.trials += t.trials;
    if (t.loom_s > 0) r.estimated_s += t.weight * t.loom_s;
    else ++r.unmeasured_tasks;
  }
  std::vector<MeasureRecord> records;
  if (std::filesystem::exists(cfg.log_path)) records = load_records(cfg.log_path);
  std::unordered_set<std::string> keys;
  for (const auto& t : cfg.tasks) keys.insert(t.task.key());
  int64_t first = 0, last = 0;
  for (const auto& rec : records) {
    if (!keys.count(rec.task_key())) continue;
    if (!first) first = rec.result.timestamp;
    last = rec.result.timestamp;
  }
  r.tuning_s = static_cast<double>(last - first);
  r.curve = estimate_curve(cfg, records);

  graph::Graph g = graph::load_graph(cfg.network, cfg.input_shapes);
  graph::ExecutorOptions eo;
  eo.threads = cfg.target.threads;
  eo.log = cfg.log_path;
  eo.schedules = untimed;
  graph::NetworkExecutor ex(g, eo);
  // Two rounds of five runs per requested report round: a network run is
  // milliseconds.
  ComparisonOptions co;
  co.threads = cfg.target.threads;
  co.rounds = std::max(opts.rounds, 1) * 2;
  co.runs = 5;
  co.check = true;
  r.end_to_end = compare_network(g, ex, network_baselines_for(cfg.network), co);
  return r;
}

std::string write_network_report(const ExperimentConfig& cfg, const NetworkReport& r,
                                 const std::vector<TaskReport>& tasks) {
  namespace fs = std::filesystem;
  fs::create_directories(cfg.report_dir);
  const NetworkComparison& e = r.end_to_end;
  std::ostringstream md, csv, curve;
  char buf[1024], unmeasured[64] = "";
  // Per baseline: its median and Loom's speed relative to it, "-" where it did not run.
  auto baseline_cells = [&](const char* name, std::string& ms, std::string& ratio) {
    ms = ratio = "-";
    if (const EngineRounds* b = e.baseline(name)) {
      std::snprintf(buf, sizeof buf, "%.3f", b->median_s() * 1e3);
      ms = buf;
      std::snprintf(buf, sizeof buf, "%.2f", e.speed_ratio(name));
      ratio = buf;
    }
  };
  std::string torch_ms, torch_ratio, ort_ms, ort_ratio;
  baseline_cells("PyTorch", torch_ms, torch_ratio);
  baseline_cells("ONNX Runtime", ort_ms, ort_ratio);
  if (r.unmeasured_tasks) std::snprintf(unmeasured, sizeof unmeasured, " (%d tasks unmeasured)", r.unmeasured_tasks);
  std::snprintf(buf, sizeof buf,
                "| network | threads | Loom (ms) | PyTorch (ms) | Loom's speed / PyTorch's | ONNX Runtime (ms) "
                "| Loom's speed / ONNX Runtime's | estimated (ms) | outputs | trials | tuning time (s) |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|\n"
                "| %s | %d | %.3f | %s | %s | %s | %s | %.3f%s | %s | %d | %.0f |\n\n",
                fs::path(r.model).filename().string().c_str(), r.threads, e.loom_median_s() * 1e3, torch_ms.c_str(),
                torch_ratio.c_str(), ort_ms.c_str(), ort_ratio.c_str(), r.estimated_s * 1e3, unmeasured,
                e.checks.empty() ? "not checked" : e.outputs_match() ? "match" : "MISMATCH", r.trials, r.tuning_s);
  md << buf;
  std::string against;
  for (const auto& c : e.checks) against += (against.empty() ? "" : " and ") + c.against;
  md << "Medians of " << e.loom.turns.size() << " alternating rounds of " << e.runs << " runs per engine, each engine "
        "starting on a quiet machine; a round's time is the median of its runs after the first; each speed ratio is "
        "the median of the per-round ratios. Outputs compared with " << (against.empty() ? "nothing" : against) << ".\n\n";
  md << "| task | weight | Loom (ms) | x weight (ms) | share of the estimate | trials | oneDNN primitive (ms) "
        "| Loom's speed / oneDNN's | oneDNN variant |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& t : tasks) {
    const BaselineResult* b = t.best_baseline();
    char base_ms[32] = "-", base_ratio[32] = "-";
    if (b) {
      std::snprintf(base_ms, sizeof base_ms, "%.4f", b->median_s * 1e3);
      std::snprintf(base_ratio, sizeof base_ratio, "%.2f", t.ratio());
    }
    std::snprintf(buf, sizeof buf, "| %s | %.0f | %.4f | %.4f | %.1f%% | %d | %s | %s | %s |\n", t.task.c_str(),
                  t.weight, t.loom_s * 1e3, t.weight * t.loom_s * 1e3,
                  r.estimated_s > 0 ? 100.0 * t.weight * t.loom_s / r.estimated_s : 0.0, t.trials, base_ms, base_ratio,
                  b ? b->variant.c_str() : "none");
    md << buf;
  }
  csv << "network,threads,loom_ms,torch_ms,speed_ratio,ort_ms,ort_speed_ratio,estimated_ms,unmeasured_tasks,"
         "outputs_match,trials,tuning_s\n";
  const EngineRounds* torch = e.baseline("PyTorch");
  const EngineRounds* ort = e.baseline("ONNX Runtime");
  std::snprintf(buf, sizeof buf, "%s,%d,%.6f,%.6f,%.4f,%.6f,%.4f,%.6f,%d,%d,%d,%.0f\n",
                fs::path(r.model).filename().string().c_str(), r.threads, e.loom_median_s() * 1e3,
                torch ? torch->median_s() * 1e3 : 0.0, e.speed_ratio("PyTorch"), ort ? ort->median_s() * 1e3 : 0.0,
                e.speed_ratio("ONNX Runtime"), r.estimated_s * 1e3, r.unmeasured_tasks, e.outputs_match() ? 1 : 0,
                r.trials, r.tuning_s);
  csv << buf;
  curve << "trials,estimated_ms\n";
  for (const auto& [trials, s] : r.curve) curve << trials << "," << s * 1e3 << "\n";
  std::ofstream(cfg.report_dir + "/network.md") << md.str();
  std::ofstream(cfg.report_dir + "/network.csv") << csv.str();
  std::ofstream(cfg.report_dir + "/network_curve.csv") << curve.str();
  return md.str();
}

}  // namespace loom
