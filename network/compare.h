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


// A baseline's rounds, alternating with Loom's.
struct BaselineRounds {
  std::string name;    // "PyTorch", "ONNX Runtime"
  std::string detail;  // what ran: the TorchScript file, the ONNX Runtime version
  std::vector<double> s;
  double median_s() const;
};

// Loom's outputs against one reference.
struct OutputCheck {
  std::string against;
  std::vector<Agreement> agreement;  // per graph output
};

struct NetworkComparison {
  std::vector<double> loom_s;             // per round
  std::vector<BaselineRounds> baselines;  // those that ran, in the list's order
  std::vector<std::string> outputs;       // the graph outputs
  std::vector<OutputCheck> checks;        // with a check: one per reference
  // A baseline that was asked for and could not run (one line each), and
  // PyTorch's optimized module disagreeing with its own frozen module.
  std::vector<std::string> warnings;
  double loom_median_s() const;
  const BaselineRounds* baseline(const std::string& name) const;  // nullptr: did not run
  // The baseline's time / Loom's, the median of the per-round ratios (0: it did not run).
  double speed_ratio(const std::string& name) const;
  bool outputs_match() const;
};

// One warm-up run each, then `rounds` rounds on the seed-1 random inputs in
// which Loom and each baseline run once, in turn; with `check`, Loom's last
// outputs against each baseline's reference outputs (or, with none, the
// reference interpreter). An optional baseline that cannot run (ONNX
// Runtime without node or its package, or refusing the model) is a
// warning, not an error.
NetworkComparison compare_network(const graph::Graph& g, graph::NetworkExecutor& ex, const NetworkBaselines& baselines,
                                  int threads, int rounds, bool check, double tol = 1e-3);

// The lines `loom network run` and `loom report` print of a comparison: a
// line per baseline that ran ("ONNX Runtime median 7.61 ms (...); Loom runs
// at 1.22x ONNX Runtime's speed ..."), the warnings, and with a check one
// line per output and reference ("check output against ONNX Runtime: match
// (max |error| ...)").
std::string comparison_lines(const NetworkComparison& c, double tol);

}  // namespace loom
