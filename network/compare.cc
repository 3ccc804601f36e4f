#include "network/compare.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "graph/interpreter.h"
#include "ir/error.h"
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

std::vector<double> EngineRounds::s() const {
  std::vector<double> out;
  for (const auto& runs : turns)
    out.push_back(runs.size() == 1 ? runs.front() : median(std::vector<double>(runs.begin() + 1, runs.end())));
  return out;
}
std::vector<double> EngineRounds::first_s() const {
  std::vector<double> out;
  for (const auto& runs : turns) out.push_back(runs.front());
  return out;
}
double EngineRounds::median_s() const { return turns.empty() ? 0 : median(s()); }
double EngineRounds::first_median_s() const { return turns.empty() ? 0 : median(first_s()); }
const EngineRounds* NetworkComparison::baseline(const std::string& name) const {
  for (const auto& b : baselines)
    if (b.name == name) return &b;
  return nullptr;
}

namespace {

double median_ratio(const std::vector<double>& baseline_s, const std::vector<double>& loom_s) {
  std::vector<double> r;
  for (size_t i = 0; i < loom_s.size() && i < baseline_s.size(); ++i) r.push_back(baseline_s[i] / loom_s[i]);
  return r.empty() ? 0 : median(r);
}

}  // namespace

double NetworkComparison::speed_ratio(const std::string& name) const {
  const EngineRounds* b = baseline(name);
  return b ? median_ratio(b->s(), loom.s()) : 0;
}
double NetworkComparison::first_run_speed_ratio(const std::string& name) const {
  const EngineRounds* b = baseline(name);
  return b ? median_ratio(b->first_s(), loom.first_s()) : 0;
}
bool NetworkComparison::outputs_match() const {
  for (const auto& c : checks)
    for (const auto& a : c.agreement)
      if (!a.ok) return false;
  return true;
}

NetworkComparison compare_network(const graph::Graph& g, graph::NetworkExecutor& ex, const NetworkBaselines& baselines,
                                  const ComparisonOptions& opts) {
  if (opts.rounds < 1 || opts.runs < 1) throw LoomError("a network comparison needs at least one round of one run");
  NetworkComparison c;
  c.runs = opts.runs;
  c.loom.name = "Loom";
  graph::Values inputs = graph::random_graph_inputs(g, 1);
  std::vector<TorchTensor> tensors;
  std::vector<std::string> names;
  for (const auto& in : g.inputs) {
    tensors.push_back({in.shape, inputs.at(in.name), in.integer_range > 0});
    names.push_back(in.name);
  }
  std::vector<std::unique_ptr<NetworkBaseline>> running;  // parallel to c.baselines
  for (const auto& [kind, file] : baselines) {
    if (file.empty()) continue;
    const std::string why = kind->unavailable_reason();
    if (!why.empty()) {
      c.warnings.push_back(std::string(kind->name) + " skipped: " + why);
      continue;
    }
    try {
      running.push_back(kind->open(file, opts.threads, names, tensors));
    } catch (const LoomError& e) {
      if (!kind->optional) throw;
      c.warnings.push_back(std::string(kind->name) + " skipped: " + e.what());
      continue;
    }
    c.baselines.push_back({kind->name, running.back()->detail(), {}});
  }
  // Before each turn: this process's threads (Loom's pool, LibTorch's) and
  // every runner's quiet for a 10-ms window (at most a second each).
  auto wait_until_quiet = [&] {
    wait_for_idle_threads();
    for (auto& b : running) b->wait_until_idle();
  };
  graph::Values out = ex.run(inputs);  // warm-up
  for (auto& b : running) b->run(1);
  std::vector<double> runs(opts.runs);
  for (int r = 0; r < opts.rounds; ++r) {
    wait_until_quiet();
    for (int i = 0; i < opts.runs; ++i) {
      const auto t = std::chrono::steady_clock::now();
      out = ex.run(inputs);
      runs[i] = seconds_since(t);
    }
    c.loom.turns.push_back(runs);
    for (size_t k = 0; k < running.size(); ++k) {
      wait_until_quiet();
      c.baselines[k].turns.push_back(running[k]->run(opts.runs));
    }
  }
  if (!opts.check) return c;
  c.outputs = g.outputs;
  auto add_check = [&](const std::string& against, const std::vector<std::vector<float>>& expected) {
    if (expected.size() != g.outputs.size())
      throw LoomError(against + " gives " + std::to_string(expected.size()) + " outputs, the graph has " +
                      std::to_string(g.outputs.size()));
    OutputCheck oc{against, {}};
    for (size_t i = 0; i < g.outputs.size(); ++i) oc.agreement.push_back(agree(out.at(g.outputs[i]), expected[i], opts.tol));
    c.checks.push_back(std::move(oc));
  };
  for (auto& b : running) {
    std::string against;
    std::vector<std::vector<float>> expected = b->reference_outputs(against, c.warnings, opts.tol);
    add_check(against, expected);
  }
  if (running.empty()) {
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
                  "%s median %.3f ms (%s); Loom runs at %.2fx %s's speed (median of per-round ratios)", b.name.c_str(),
                  b.median_s() * 1e3, b.detail.c_str(), c.speed_ratio(b.name), b.name.c_str());
    out += buf;
    if (c.runs > 1) {
      std::snprintf(buf, sizeof buf, "; first runs after a quiet machine: %.3f ms, %.2fx", b.first_median_s() * 1e3,
                    c.first_run_speed_ratio(b.name));
      out += buf;
    }
    out += "\n";
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

}  // namespace loom
