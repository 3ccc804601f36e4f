// `loom report`: for each task of a config, the best Loom schedule from the
// log and the vendor baselines, re-measured in the same run and interleaved
// (Loom, baselines, Loom, baselines, ...) because the machine is shared and
// noisy; medians are reported. Writes a CSV and a Markdown table, the tuning
// curves as CSV, and renders them to PNG with scripts/plot_tuning.py.
#pragma once

#include <string>
#include <vector>

#include "experiments/baselines/baseline.h"
#include "experiments/config.h"

namespace loom {

// "library (variant)", or "none" for null.
std::string baseline_name(const BaselineResult* b);

struct TaskReport {
  std::string task;      // description
  std::string workload;
  double flops = 0, weight = 1;
  int trials = 0;
  double tuning_s = 0;         // first to last record of the task in the log
  double loom_s = 0;           // re-measured median of the best schedule (0: none)
  double tuned_s = 0;          // its median over its measurements in the log (0: none)
  std::string loom_error;      // why there is no Loom figure
  std::vector<BaselineResult> baselines;  // medians over the interleaved rounds
  // Per interleaved round: Loom's time and each baseline's (parallel to
  // `baselines`), 0 where that round gave none. The ratios are medians of
  // the per-round ratios: a round's programs run seconds apart, so the
  // load of the moment, which on a shared machine switches between rounds,
  // cancels out of their ratio.
  std::vector<double> loom_rounds;
  std::vector<std::vector<double>> baseline_rounds;
  const BaselineResult* best_baseline() const;  // fastest supported, correct variant
  // Fastest supported, correct variant that read the inputs as given (nothing
  // prepacked outside its timed call), as Loom's programs do; null if none.
  const BaselineResult* best_baseline_as_given() const;
  double loom_gflops() const { return loom_s > 0 ? flops / loom_s / 1e9 : 0; }
  double ratio() const;           // Loom GFLOP/s / best baseline GFLOP/s (0: n/a)
  double ratio_as_given() const;  // Loom GFLOP/s / best_baseline_as_given GFLOP/s (0: n/a)
  double ratio_to(const BaselineResult* b) const;  // one of `baselines` (0: n/a)
  // Records one interleaved round: Loom's time (0: none this round) and the
  // baselines' results; the first round's results become `baselines`.
  void add_round(double loom_round_s, const std::vector<BaselineResult>& round);
  // Sets loom_s and every baseline's median_s to the median of its times
  // over the rounds (a side without any keeps its value).
  void summarize_rounds();
  // Why the task's ratios may not hold on a quiet machine, "" when nothing
  // says so: a ratio (to the fastest baseline, to the fastest as given)
  // whose per-round values' upper quartile exceeds their lower one by more
  // than kMaxRatioSpread (the load changed under the rounds, one side at a
  // time; the extremes with 2-3 rounds), or Loom re-measured more than
  // kMaxSlowdownFromTuning times slower than its median in the log (the
  // machine is slower than during the tuning). Both bounds are wide of a
  // quiet machine's round-to-round noise and narrow of a disturbed run's.
  std::string unsteady() const;
  static constexpr double kMaxRatioSpread = 1.25;
  static constexpr double kMaxSlowdownFromTuning = 1.5;
  // The per-round ratios baseline time / Loom time for one of `baselines`,
  // over the rounds where both gave a time.
  std::vector<double> paired_ratios(const BaselineResult* b) const;
  std::vector<std::pair<int, double>> curve;  // (trials, best GFLOP/s so far)
};

// The quiet-probe wait of `loom report` and `loom run` (per measurement).
inline constexpr double kReportQuietWaitMs = 2000;

struct ReportOptions {
  int rounds = 3;         // interleaved re-measurement rounds
  bool remeasure = true;  // false: Loom figure from the log, baselines once
  // Minimum length of a timed repeat group in the re-measurement (Loom and
  // baselines alike); 0 = the config's measure.min_repeat_ms. Longer groups
  // steady the comparison on a shared machine.
  double min_repeat_ms = 0;
  // Time one measurement (Loom's or a baseline's) may spend waiting for a
  // quiet load probe and re-timing disturbed groups (measure/timing.h); 0:
  // no probe. On a shared machine it keeps other processes' cache traffic
  // out of the ratios.
  double quiet_wait_ms = kReportQuietWaitMs;
};

std::vector<TaskReport> build_report(const ExperimentConfig& cfg, const ReportOptions& opts);
// Writes report.csv, report.md, curves.csv (and tuning.png if the plot script
// runs) into cfg.report_dir; returns the Markdown table.
std::string write_report(const ExperimentConfig& cfg, const std::vector<TaskReport>& reports);

}  // namespace loom
