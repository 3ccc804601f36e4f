#include "network/baselines/network_baseline.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>

#include "measure/timing.h"
#include "network/baselines/onnxruntime_network.h"
#include "network/baselines/pytorch_network.h"
#include "network/compare.h"

namespace loom {

namespace {

std::vector<std::vector<float>> tensor_data(const std::vector<TorchTensor>& ts) {
  std::vector<std::vector<float>> out;
  for (const auto& t : ts) out.push_back(t.data);
  return out;
}

// PyTorch: the TorchScript module prepared with optimize_for_inference is
// timed; the frozen module as saved is the reference (pytorch_network.h).
class PyTorchBaseline : public NetworkBaseline {
 public:
  PyTorchBaseline(const std::string& file, int threads, const std::vector<TorchTensor>& inputs)
      : file_(file), net_(file, threads), inputs_(inputs) {}
  std::string detail() const override { return file_; }
  std::vector<double> run(int times) override {
    std::vector<double> s;
    for (int i = 0; i < times; ++i) {
      const auto t = std::chrono::steady_clock::now();
      last_ = net_.run(inputs_);
      s.push_back(seconds_since(t));
    }
    return s;
  }
  std::vector<std::vector<float>> reference_outputs(std::string& against, std::vector<std::string>& warnings,
                                                    double tol) override {
    against = "PyTorch (the frozen module)";
    std::vector<TorchTensor> ref = net_.run_reference(inputs_);
    if (ref.size() == last_.size())
      for (size_t i = 0; i < ref.size(); ++i) {
        // The timed module must compute what the reference does.
        Agreement opt = agree(last_[i].data, ref[i].data, tol);
        if (!opt.ok) {
          char buf[256];
          std::snprintf(buf, sizeof buf,
                        "PyTorch's optimize_for_inference module disagrees with its frozen module on output %zu "
                        "(max |error| %.3g): its time is not of a correct program",
                        i, opt.max_abs);
          warnings.push_back(buf);
        }
      }
    return tensor_data(ref);
  }

 private:
  std::string file_;
  PyTorchNetwork net_;
  std::vector<TorchTensor> inputs_, last_;
};

// ONNX Runtime on the ONNX file, timed inside its runner process.
class OnnxRuntimeBaseline : public NetworkBaseline {
 public:
  OnnxRuntimeBaseline(const std::string& file, int threads, const std::vector<std::string>& names,
                      const std::vector<TorchTensor>& inputs)
      : ort_(file, threads) {
    ort_.feed(names, inputs);
  }
  std::string detail() const override { return "onnxruntime-node " + ort_.version(); }
  std::vector<double> run(int times) override { return ort_.run(times); }
  void wait_until_idle() override { ort_.wait_until_idle(); }
  std::vector<std::vector<float>> reference_outputs(std::string& against, std::vector<std::string>&, double) override {
    against = "ONNX Runtime";
    return tensor_data(ort_.outputs());
  }

 private:
  OnnxRuntimeNetwork ort_;
};

std::string always_available() { return ""; }

}  // namespace

std::string onnx_file_for(const std::string& model) {
  const size_t dot = model.find_last_of('.');
  return dot != std::string::npos && model.substr(dot) == ".onnx" ? model : "";
}

std::string torch_file_for(const std::string& model) {
  const size_t dot = model.find_last_of('.');
  const std::string pt = (dot == std::string::npos ? model : model.substr(0, dot)) + ".pt";
  return std::ifstream(pt).good() ? pt : "";
}

NetworkBaselines network_baselines_for(const std::string& model, const std::vector<std::string>& keys) {
  NetworkBaselines out;
  for (const auto& k : network_baseline_kinds())
    if (std::find(keys.begin(), keys.end(), k.key) != keys.end()) out.push_back({&k, k.file_for(model)});
  return out;
}

NetworkBaselines network_baselines_for(const std::string& model) {
  std::vector<std::string> keys;
  for (const auto& k : network_baseline_kinds()) keys.push_back(k.key);
  return network_baselines_for(model, keys);
}

const std::vector<NetworkBaselineKind>& network_baseline_kinds() {
  static const std::vector<NetworkBaselineKind> kinds = {
      {"torch", "PyTorch", torch_file_for, always_available,
       [](const std::string& file, int threads, const std::vector<std::string>&,
          const std::vector<TorchTensor>& inputs) -> std::unique_ptr<NetworkBaseline> {
         return std::make_unique<PyTorchBaseline>(file, threads, inputs);
       },
       false},
      {"ort", "ONNX Runtime", onnx_file_for, OnnxRuntimeNetwork::unavailable_reason,
       [](const std::string& file, int threads, const std::vector<std::string>& names,
          const std::vector<TorchTensor>& inputs) -> std::unique_ptr<NetworkBaseline> {
         return std::make_unique<OnnxRuntimeBaseline>(file, threads, names, inputs);
       },
       true},
  };
  return kinds;
}

const NetworkBaselineKind* find_network_baseline(const std::string& key) {
  for (const auto& k : network_baseline_kinds())
    if (key == k.key) return &k;
  return nullptr;
}

std::string network_baseline_keys() {
  std::string s;
  for (const auto& k : network_baseline_kinds()) s += (s.empty() ? "" : ", ") + std::string(k.key);
  return s;
}

}  // namespace loom
