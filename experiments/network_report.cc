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

#include "experiments/baselines/onnxruntime_network.h"
#include "experiments/baselines/pytorch_network.h"
#include "graph/interpreter.h"
#include "graph/onnx_import.h"
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

std::string onnx_file_for(const std::string& model) {
  const size_t dot = model.find_last_of('.');
  return dot != std::string::npos && model.substr(dot) == ".onnx" ? model : "";
}

std::string torch_file_for(const std::string& model) {
  const size_t dot = model.find_last_of('.');
  const std::string pt = (dot == std::string::npos ? model : model.substr(0, dot)) + ".pt";
  return std::ifstream(pt).good() ? pt : "";
}

double BaselineRounds::median_s() const { return s.empty() ? 0 : median(s); }
double NetworkComparison::loom_median_s() const { return loom_s.empty() ? 0 : median(loom_s); }
const BaselineRounds* NetworkComparison::baseline(const std::string& name) const {
  for (const auto& b : baselines)
    if (b.name == name) return &b;
  return nullptr;
}
double NetworkComparison::speed_ratio(const std::string& name) const {
  const BaselineRounds* b = baseline(name);
  if (!b) return 0;
  std::vector<double> r;
  for (size_t i = 0; i < loom_s.size() && i < b->s.size(); ++i) r.push_back(b->s[i] / loom_s[i]);
  return r.empty() ? 0 : median(r);
}
bool NetworkComparison::outputs_match() const {
  for (const auto& c : checks)
    for (const auto& a : c.agreement)
      if (!a.ok) return false;
  return true;
}

namespace {

std::vector<std::vector<float>> tensor_data(const std::vector<TorchTensor>& ts) {
  std::vector<std::vector<float>> out;
  for (const auto& t : ts) out.push_back(t.data);
  return out;
}

}  // namespace

NetworkComparison compare_network(const graph::Graph& g, graph::NetworkExecutor& ex, const NetworkBaselines& baselines,
                                  int threads, int rounds, bool check, double tol) {
  NetworkComparison c;
  graph::Values inputs = graph::random_graph_inputs(g, 1);
  std::vector<TorchTensor> tensors;
  std::vector<std::string> names;
  for (const auto& in : g.inputs) {
    tensors.push_back({in.shape, inputs.at(in.name), in.integer_range > 0});
    names.push_back(in.name);
  }
  // c.baselines: PyTorch first where it runs, ONNX Runtime last.
  std::unique_ptr<PyTorchNetwork> torch;
  if (!baselines.torch_path.empty()) {
    torch = std::make_unique<PyTorchNetwork>(baselines.torch_path, threads);
    c.baselines.push_back({"PyTorch", baselines.torch_path, {}});
  }
  std::unique_ptr<OnnxRuntimeNetwork> ort;
  if (!baselines.onnx_path.empty()) {
    const std::string why = OnnxRuntimeNetwork::unavailable_reason();
    if (!why.empty()) {
      c.warnings.push_back("ONNX Runtime skipped: " + why);
    } else {
      // A model ONNX Runtime refuses (an operator it lacks) loses the
      // baseline, not the run.
      try {
        ort = std::make_unique<OnnxRuntimeNetwork>(baselines.onnx_path, threads);
        ort->feed(names, tensors);
        c.baselines.push_back({"ONNX Runtime", "onnxruntime-node " + ort->version(), {}});
      } catch (const LoomError& e) {
        ort.reset();
        c.warnings.push_back(std::string("ONNX Runtime skipped: ") + e.what());
      }
    }
  }
  // A round's runs see the same load of the shared machine.
  graph::Values out = ex.run(inputs);  // warm-up
  std::vector<TorchTensor> torch_out;
  if (torch) torch_out = torch->run(tensors);
  if (ort) ort->run();
  for (int r = 0; r < rounds; ++r) {
    auto t = std::chrono::steady_clock::now();
    out = ex.run(inputs);
    c.loom_s.push_back(seconds_since(t));
    if (torch) {
      wait_for_idle_threads();
      t = std::chrono::steady_clock::now();
      torch_out = torch->run(tensors);
      c.baselines[0].s.push_back(seconds_since(t));
      wait_for_idle_threads();
    }
    if (ort) c.baselines.back().s.push_back(ort->run());
  }
  if (!check) return c;
  c.outputs = g.outputs;
  auto add_check = [&](const std::string& against, const std::vector<std::vector<float>>& expected) {
    if (expected.size() != g.outputs.size())
      throw LoomError(against + " gives " + std::to_string(expected.size()) + " outputs, the graph has " +
                      std::to_string(g.outputs.size()));
    OutputCheck oc{against, {}};
    for (size_t i = 0; i < g.outputs.size(); ++i) oc.agreement.push_back(agree(out.at(g.outputs[i]), expected[i], tol));
    c.checks.push_back(std::move(oc));
  };
  if (torch) {
    std::vector<TorchTensor> ref = torch->run_reference(tensors);
    if (ref.size() == torch_out.size())
      for (size_t i = 0; i < ref.size(); ++i) {
        // The timed baseline must compute what the reference does.
        Agreement opt = agree(torch_out[i].data, ref[i].data, tol);
        if (!opt.ok) {
          char buf[256];
          std::snprintf(buf, sizeof buf,
                        "PyTorch's optimize_for_inference module disagrees with its frozen module on output %zu "
                        "(max |error| %.3g): its time is not of a correct program",
                        i, opt.max_abs);
          c.warnings.push_back(buf);
        }
      }
    add_check("PyTorch (the frozen module)", tensor_data(ref));
  }
  if (ort) add_check("ONNX Runtime", tensor_data(ort->outputs()));
  if (!torch && !ort) {
    graph::Values ref = graph::interpret(g, inputs);
    std::vector<std::vector<float>> expected;
    for (const auto& o : g.outputs) expected.push_back(ref.at(o));
    add_check("the reference interpreter", expected);
  }
  return c;
}

std::string comparison_lines(const NetworkComparison& c, double tol) {
  std::string out;
  char buf[512];
  for (const auto& b : c.baselines) {
    std::snprintf(buf, sizeof buf,
                  "%s median %.3f ms (%s); Loom runs at %.2fx %s's speed (median of per-round ratios)\n",
                  b.name.c_str(), b.median_s() * 1e3, b.detail.c_str(), c.speed_ratio(b.name), b.name.c_str());
    out += buf;
  }
  for (const auto& w : c.warnings) out += "warning: " + w + "\n";
  for (const auto& check : c.checks)
    for (size_t i = 0; i < c.outputs.size(); ++i) {
      const Agreement& r = check.agreement[i];
      std::snprintf(buf, sizeof buf,
                    "check %s against %s: %s (max |error| %.3g, output scale %.3g, tolerance %.0e x (|expected| + "
                    "scale))\n",
                    c.outputs[i].c_str(), check.against.c_str(), r.ok ? "match" : "MISMATCH", r.max_abs, r.scale, tol);
      out += buf;
    }
  return out;
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

  graph::Graph g = graph::load_graph(cfg.network, cfg.input_shapes);
  graph::ExecutorOptions eo;
  eo.threads = cfg.target.threads;
  eo.log = cfg.log_path;
  graph::NetworkExecutor ex(g, eo);
  // Ten rounds per requested report round: a network run is milliseconds.
  r.end_to_end = compare_network(g, ex, {torch_file_for(cfg.network), onnx_file_for(cfg.network)},
                                 cfg.target.threads, std::max(opts.rounds, 1) * 10, /*check=*/true);
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
    if (const BaselineRounds* b = e.baseline(name)) {
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
  md << "Medians of " << e.loom_s.size() << " alternating rounds; each speed ratio is the median of the per-round "
        "ratios. Outputs compared with " << (against.empty() ? "nothing" : against) << ".\n\n";
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
  const BaselineRounds* torch = e.baseline("PyTorch");
  const BaselineRounds* ort = e.baseline("ONNX Runtime");
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
