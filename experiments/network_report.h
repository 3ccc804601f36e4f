// A whole network against PyTorch, for `loom network run` and for `loom
// report` of a network config: Loom's executor (one kernel per task, the
// log's best schedules) and PyTorch's TorchScript module of the same model
// (frozen, optimize_for_inference: convolutions through oneDNN) run the same
// inputs in alternating rounds; the report adds the estimate from the tasks'
// own latencies, the tuning time and the tuning curve of that estimate.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "experiments/config.h"
#include "experiments/report.h"
#include "graph/executor/executor.h"

namespace loom {

// |got - expected| <= tol * (|expected| + max|expected|): relative to the
// output's scale, since a deep network's small outputs carry the absolute
// error of its large ones.
struct Agreement {
  double max_abs = 0, scale = 0;
  bool ok = true;
};
Agreement agree(const std::vector<float>& got, const std::vector<float>& expected, double tol);

// MODEL's stem + ".pt" when that file exists, else "".
std::string torch_file_for(const std::string& model);

struct NetworkComparison {
  std::string torch_path;               // "" when PyTorch did not run
  std::vector<double> loom_s, torch_s;  // per round
  // With a check: per graph output, its agreement with `against`.
  std::string against;
  std::vector<std::string> outputs;
  std::vector<Agreement> agreement;
  // PyTorch's optimized module disagreeing with its own frozen module.
  std::vector<std::string> warnings;
  double loom_median_s() const;
  double torch_median_s() const;
  // PyTorch's time / Loom's, the median of the per-round ratios (0: no PyTorch).
  double speed_ratio() const;
  bool outputs_match() const;
};

// One warm-up run each, then `rounds` alternating rounds on the seed-1
// random inputs; with `check`, Loom's last outputs against PyTorch's frozen
// module (or, without a TorchScript file, the reference interpreter).
NetworkComparison compare_network(const graph::Graph& g, graph::NetworkExecutor& ex, const std::string& torch_path,
                                  int threads, int rounds, bool check, double tol = 1e-3);

struct NetworkReport {
  std::string model;
  int threads = 1;
  NetworkComparison end_to_end;
  double estimated_s = 0;  // sum over tasks of weight x re-measured latency
  int unmeasured_tasks = 0;
  int trials = 0;
  double tuning_s = 0;     // first to last record of the network's tasks
  std::vector<std::pair<int, double>> curve;  // (trials, estimated latency in s), once every task has a program
};

// `tasks`: build_report's per-task reports of the same config.
NetworkReport build_network_report(const ExperimentConfig& cfg, const std::vector<TaskReport>& tasks,
                                   const ReportOptions& opts);
// Writes network.md, network.csv and network_curve.csv into cfg.report_dir
// (scripts/plot_network.py renders the curve); returns the Markdown.
std::string write_network_report(const ExperimentConfig& cfg, const NetworkReport& r,
                                 const std::vector<TaskReport>& tasks);

}  // namespace loom
