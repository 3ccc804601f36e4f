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

#include "experiments/baselines/pytorch_network.h"
#include "graph/interpreter.h"
#include "graph/tasks.h"
#include "ir/error.h"
#include "measure/records.h"
#include "measure/timing.h"

namespace loom {

Agreement agree(const std::vector<float>& got, const std::vector<float>& expected, double tol) {
  Agreement r;
  if (got.size() != expected.size()) {
    r.ok = false;
    return r;
  }
  for (float e : expected) r.scale = std::max(r.scale, static_cast<double>(std::fabs(e)));
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::fabs(static_cast<double>(got[i]) - expected[i]);
    if (!(d <= tol * (std::fabs(expected[i]) + r.scale))) r.ok = false;
    r.max_abs = std::max(r.max_abs, std::isnan(d) ? INFINITY : d);
  }
  return r;
}

std::string torch_file_for(const std::string& model) {
  const size_t dot = model.find_last_of('.');
  const std::string pt = (dot == std::string::npos ? model : model.substr(0, dot)) + ".pt";
  return std::ifstream(pt).good() ? pt : "";
}

double NetworkComparison::loom_median_s() const { return loom_s.empty() ? 0 : median(loom_s); }
double NetworkComparison::torch_median_s() const { return torch_s.empty() ? 0 : median(torch_s); }
double NetworkComparison::speed_ratio() const {
  std::vector<double> r;
  for (size_t i = 0; i < loom_s.size() && i < torch_s.size(); ++i) r.push_back(torch_s[i] / loom_s[i]);
  return r.empty() ? 0 : median(r);
}
bool NetworkComparison::outputs_match() const {
  for (const auto& a : agreement)
    if (!a.ok) return false;
  return true;
}

NetworkComparison compare_network(const graph::Graph& g, graph::NetworkExecutor& ex, const std::string& torch_path,
                                  int threads, int rounds, bool check, double tol) {
  NetworkComparison c;
  c.torch_path = torch_path;
  graph::Values inputs = graph::random_graph_inputs(g, 1);
  std::unique_ptr<PyTorchNetwork> torch;
  std::vector<TorchTensor> torch_inputs;
  if (!torch_path.empty()) {
    torch = std::make_unique<PyTorchNetwork>(torch_path, threads);
    for (const auto& in : g.inputs) torch_inputs.push_back({in.shape, inputs.at(in.name)});
  }
  // A round's two runs see the same load of the shared machine.
  graph::Values out = ex.run(inputs);  // warm-up
  std::vector<TorchTensor> torch_out;
  if (torch) torch_out = torch->run(torch_inputs);
  for (int r = 0; r < rounds; ++r) {
    auto t = std::chrono::steady_clock::now();
    out = ex.run(inputs);
    c.loom_s.push_back(seconds_since(t));
    if (torch) {
      wait_for_idle_threads();
      t = std::chrono::steady_clock::now();
      torch_out = torch->run(torch_inputs);
      c.torch_s.push_back(seconds_since(t));
      wait_for_idle_threads();
    }
  }
  if (!check) return c;
  std::vector<std::vector<float>> expected;
  if (torch) {
    std::vector<TorchTensor> ref = torch->run_reference(torch_inputs);
    if (ref.size() != g.outputs.size())
      throw LoomError("the TorchScript model has " + std::to_string(ref.size()) + " outputs, the graph " +
                      std::to_string(g.outputs.size()));
    for (size_t i = 0; i < ref.size(); ++i) {
      expected.push_back(ref[i].data);
      // The timed baseline must compute what the reference does.
      Agreement opt = agree(torch_out[i].data, ref[i].data, tol);
      if (!opt.ok) {
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "PyTorch's optimize_for_inference module disagrees with its frozen module on %s "
                      "(max |error| %.3g): its time is not of a correct program",
                      g.outputs[i].c_str(), opt.max_abs);
        c.warnings.push_back(buf);
      }
    }
    c.against = "PyTorch (the frozen module)";
  } else {
    graph::Values ref = graph::interpret(g, inputs);
    for (const auto& o : g.outputs) expected.push_back(ref.at(o));
    c.against = "the reference interpreter";
  }
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    c.outputs.push_back(g.outputs[i]);
    c.agreement.push_back(agree(out.at(g.outputs[i]), expected[i], tol));
  }
  return c;
}

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
                                   const ReportOptions& opts) {
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

  graph::Graph g = graph::load_graph(cfg.network);
  graph::ExecutorOptions eo;
  eo.threads = cfg.target.threads;
  eo.log = cfg.log_path;
  graph::NetworkExecutor ex(g, eo);
  // Ten rounds per requested report round: a network run is milliseconds.
  r.end_to_end = compare_network(g, ex, torch_file_for(cfg.network), cfg.target.threads,
                                 std::max(opts.rounds, 1) * 10, /*check=*/true);
  return r;
}

std::string write_network_report(const ExperimentConfig& cfg, const NetworkReport& r,
                                 const std::vector<TaskReport>& tasks) {
  namespace fs = std::filesystem;
  fs::create_directories(cfg.report_dir);
  const NetworkComparison& e = r.end_to_end;
  std::ostringstream md, csv, curve;
  char buf[1024], torch_ms[32] = "-", ratio[32] = "-", unmeasured[64] = "";
  if (!e.torch_s.empty()) {
    std::snprintf(torch_ms, sizeof torch_ms, "%.3f", e.torch_median_s() * 1e3);
    std::snprintf(ratio, sizeof ratio, "%.2f", e.speed_ratio());
  }
  if (r.unmeasured_tasks) std::snprintf(unmeasured, sizeof unmeasured, " (%d tasks unmeasured)", r.unmeasured_tasks);
  std::snprintf(buf, sizeof buf,
                "| network | threads | Loom (ms) | PyTorch (ms) | Loom's speed / PyTorch's | estimated (ms) | outputs "
                "| trials | tuning time (s) |\n|---|---|---|---|---|---|---|---|---|\n"
                "| %s | %d | %.3f | %s | %s | %.3f%s | %s | %d | %.0f |\n\n",
                fs::path(r.model).filename().string().c_str(), r.threads, e.loom_median_s() * 1e3, torch_ms, ratio,
                r.estimated_s * 1e3, unmeasured,
                e.agreement.empty() ? "not checked" : e.outputs_match() ? "match" : "MISMATCH", r.trials, r.tuning_s);
  md << buf;
  md << "Medians of " << e.loom_s.size() << " alternating rounds; the speed ratio is the median of the per-round "
        "ratios. Outputs compared with " << (e.against.empty() ? "nothing" : e.against) << ".\n\n";
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
  csv << "network,threads,loom_ms,torch_ms,speed_ratio,estimated_ms,unmeasured_tasks,outputs_match,trials,tuning_s\n";
  std::snprintf(buf, sizeof buf, "%s,%d,%.6f,%.6f,%.4f,%.6f,%d,%d,%d,%.0f\n",
                fs::path(r.model).filename().string().c_str(), r.threads, e.loom_median_s() * 1e3,
                e.torch_median_s() * 1e3, e.speed_ratio(), r.estimated_s * 1e3, r.unmeasured_tasks,
                e.outputs_match() ? 1 : 0, r.trials, r.tuning_s);
  csv << buf;
  curve << "trials,estimated_ms\n";
  for (const auto& [trials, s] : r.curve) curve << trials << "," << s * 1e3 << "\n";
  std::ofstream(cfg.report_dir + "/network.md") << md.str();
  std::ofstream(cfg.report_dir + "/network.csv") << csv.str();
  std::ofstream(cfg.report_dir + "/network_curve.csv") << curve.str();
  return md.str();
}

}  // namespace loom
