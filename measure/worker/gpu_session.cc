#include "measure/worker/gpu_session.h"

#include <algorithm>
#include <chrono>

#include "codegen/cuda/cuda_runner.h"
#include "codegen/cuda/nvrtc.h"
#include "ir/error.h"
#include "measure/timing.h"
#include "measure/worker/replies.h"

namespace loom {

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

struct GpuSession::Impl {
  CudaModuleSource module;
  std::unique_ptr<CudaModuleRunner> runner;
  int kernel_id = -1;
  double once_ms = 0;
};

GpuSession::GpuSession() : impl_(std::make_unique<Impl>()) {}
GpuSession::~GpuSession() = default;

bool GpuSession::build_and_check(const Task& task, const ReferenceData& ref, const nlohmann::json& req,
                                 const Reply& reply) {
  const int id = req.value("id", -1);
  Impl& m = *impl_;
  m.runner.reset();
  m.kernel_id = -1;
  auto t0 = Clock::now();
  std::optional<LoweredFunc> lowered = replay_and_lower(task, req, reply);
  if (!lowered) return true;
  try {
    m.module = emit_cuda_source(*lowered);
  } catch (const std::exception& e) {
    reply(error_reply(id, "invalid_schedule", std::string("CUDA: ") + e.what()));
    return true;
  }
  std::string ptx;
  try {
    ptx = compile_cuda_to_ptx(m.module.source, task.target.arch);
  } catch (const std::exception& e) {
    auto r = error_reply(id, "build_error", std::string("nvrtc: ") + e.what());
    r["build_s"] = seconds_since(t0);
    reply(r);
    return true;
  }
  std::string why;
  CudaDevice* dev = CudaDevice::open(&why);
  if (!dev) {
    reply(error_reply(id, "run_error", why));
    return true;
  }
  try {
    m.runner = std::make_unique<CudaModuleRunner>(*dev, m.module, ptx);
  } catch (const CudaError& e) {
    reply(error_reply(id, "build_error", std::string("load: ") + e.what(), e.sticky()));
    return !e.sticky();
  }
  reply({{"type", "built"}, {"id", id}, {"build_s", seconds_since(t0)}});

  auto t1 = Clock::now();
  std::string bad;
  try {
    for (const auto& [name, data] : ref.inputs) m.runner->write(name, data);
    for (const auto& [name, data] : ref.outputs) m.runner->fill_nan(name);
    auto tr = Clock::now();
    m.runner->run();
    m.once_ms = seconds_since(tr) * 1e3;
    for (const auto& [name, want] : ref.outputs) {
      std::string diff = compare_with_reference(m.runner->read(name), want, req.value("rtol", 1e-3),
                                                req.value("atol", 1e-4));
      if (!diff.empty()) {
        bad = "output " + name + ": " + diff;
        break;
      }
    }
  } catch (const CudaError& e) {
    m.runner.reset();
    reply(error_reply(id, "run_error", e.what(), e.sticky()));
    return !e.sticky();
  } catch (const std::exception& e) {
    m.runner.reset();
    reply(error_reply(id, "run_error", e.what()));
    return true;
  }
  if (!bad.empty()) {
    m.runner.reset();
    reply(error_reply(id, "wrong_result", bad));
    return true;
  }
  m.kernel_id = id;
  reply({{"type", "checked"}, {"id", id}, {"check_s", seconds_since(t1)}, {"once_s", m.once_ms / 1e3}});
  return true;
}

bool GpuSession::time(const nlohmann::json& req, const Reply& reply) {
  const int id = req.value("id", -1);
  Impl& m = *impl_;
  if (!m.runner || m.kernel_id != id) {
    reply(error_reply(id, "run_error", "worker: no checked kernel for candidate " + std::to_string(id)));
    return true;
  }
  const int repeat = std::max(1, req.value("repeat", 3));
  const double min_ms = req.value("min_repeat_ms", 20.0);
  auto t0 = Clock::now();
  std::vector<double> costs;
  try {
    double warm = m.runner->time_ms(1);  // warm-up (also a better estimate than the first run)
    const int n = static_cast<int>(std::clamp(min_ms / std::max(warm, 1e-3), 1.0, 100000.0));
    for (int g = 0; g < repeat; ++g) costs.push_back(m.runner->time_ms(n) / 1e3);
  } catch (const CudaError& e) {
    m.runner.reset();
    reply(error_reply(id, "run_error", e.what(), e.sticky()));
    return !e.sticky();
  }
  m.runner.reset();
  m.kernel_id = -1;
  reply({{"type", "timed"}, {"id", id}, {"costs_s", costs}, {"run_s", seconds_since(t0)}});
  return true;
}

}  // namespace loom
