// A whole network against PyTorch and ONNX Runtime, for `loom network run`
// and `loom report` of a network config: Loom's executor (one kernel per
// task), PyTorch's TorchScript module of the same model (frozen,
// optimize_for_inference: convolutions through oneDNN) and ONNX Runtime on
// the ONNX file run the same inputs in alternating rounds.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"
#include "network/baselines/network_baseline.h"
#include "network/executor.h"

namespace loom {

// |got - expected| <= tol * (|expected| + max|expected|): relative to the
// output's scale, since a deep network's small outputs carry the absolute
// error of its large ones.
struct Agreement {
  double max_abs = 0, scale = 0;
  bool ok = true;
};
Agreement agree(const std::vector<float>& got, const std::vector<float>& expected, double tol);


// How compare_network times the engines. Each round runs Loom and then
// each baseline `runs` times back to back; every engine's turn starts once
// the threads of all of them have gone quiet, so none shares the cores with
// another's spinning pool and each starts from the same state of the
// machine. A round's time of an engine is the median of its runs after the
// first (the latency of back-to-back runs, as a serving loop sees it; with
// one run, that run); the first run of each turn, after the quiet wait, is
// kept as well (the latency of a network run on a machine that was idle).
struct ComparisonOptions {
  int threads = 1;
  int rounds = 10;
  int runs = 5;
  bool check = false;  // compare the outputs with each baseline's (or the reference interpreter's)
  double tol = 1e-3;
};

// An engine's rounds: the times of each round's turn of runs; per round,
// its time (the median of the turn's runs after the first; with one run,
// that run) and its turn's first run.
struct EngineRounds {
  std::string name;    // "Loom", "PyTorch", "ONNX Runtime"
  std::string detail;  // what ran: the TorchScript file, the ONNX Runtime version
  std::vector<std::vector<double>> turns;
  std::vector<double> s() const;
  std::vector<double> first_s() const;
  double median_s() const;
  double first_median_s() const;
};

// Loom's outputs against one reference.
struct OutputCheck {
  std::string against;
  std::vector<Agreement> agreement;  // per graph output
};

struct NetworkComparison {
  int runs = 1;                           // per engine and round
  EngineRounds loom;
  std::vector<EngineRounds> baselines;    // those that ran, in the list's order
  std::vector<std::string> outputs;       // the graph outputs
  std::vector<OutputCheck> checks;        // with a check: one per reference
  // A baseline that was asked for and could not run (one line each), and
  // PyTorch's optimized module disagreeing with its own frozen module.
  std::vector<std::string> warnings;
  double loom_median_s() const { return loom.median_s(); }
  const EngineRounds* baseline(const std::string& name) const;  // nullptr: did not run
  // The baseline's time / Loom's, the median of the per-round ratios (0: it
  // did not run); of the turns' first runs.
  double speed_ratio(const std::string& name) const;
  double first_run_speed_ratio(const std::string& name) const;
  bool outputs_match() const;
};

// One warm-up run each, then the rounds (above) on the seed-1 random inputs;
// with `check`, Loom's last outputs against each baseline's reference
// outputs (or, with none, the reference interpreter). An optional baseline
// that cannot run (ONNX Runtime without node or its package, or refusing
// the model) is a warning, not an error.
NetworkComparison compare_network(const graph::Graph& g, graph::NetworkExecutor& ex, const NetworkBaselines& baselines,
                                  const ComparisonOptions& opts);

// The lines `loom network run` and `loom report` print of a comparison: a
// line per baseline that ran ("ONNX Runtime median 7.61 ms (...); Loom runs
// at 1.22x ONNX Runtime's speed ...; first runs ..."), the warnings, and with a check one
// line per output and reference ("check output against ONNX Runtime: match
// (max |error| ...)").
std::string comparison_lines(const NetworkComparison& c, double tol);

}  // namespace loom
