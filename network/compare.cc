#include "network/compare.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "graph/interpreter.h"
#include "ir/error.h"
#include "measure/timing.h"
#include "network/baselines/onnxruntime_network.h"
#include "network/baselines/pytorch_network.h"

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

}  // namespace loom
