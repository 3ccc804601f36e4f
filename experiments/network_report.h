// `loom report` of a network config: the network end to end against PyTorch
// and ONNX Runtime (network/compare.h), with the estimate from the tasks'
// own latencies, the tuning time and the tuning curve of that estimate.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/config.h"
#include "experiments/report.h"
#include "network/compare.h"

namespace loom {

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

// `tasks`: build_report's per-task reports of the same config. `untimed`:
// the schedules of the tasks the log has no record of, by subgraph JSON
// (network/untimed_schedules.h; the rest run default schedules).
NetworkReport build_network_report(const ExperimentConfig& cfg, const std::vector<TaskReport>& tasks,
                                   const ReportOptions& opts,
                                   const std::map<std::string, nlohmann::json>& untimed = {});
// Writes network.md, network.csv and network_curve.csv into cfg.report_dir
// (scripts/plot_network.py renders the curve); returns the Markdown.
std::string write_network_report(const ExperimentConfig& cfg, const NetworkReport& r,
                                 const std::vector<TaskReport>& tasks);

}  // namespace loom
