#include "measure/worker/worker_session.h"

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <thread>
#include <new>

#include "codegen/runtime/thread_pool.h"
#include "ir/error.h"
#include "measure/timing.h"
#include "measure/worker/replies.h"

namespace loom {

namespace {

using Clock = std::chrono::steady_clock;

// Checking runs shorter than this are timed a second time, warm.
constexpr double kWarmRetimeBelowS = 0.01;

constexpr uint32_t kGuardPattern = 0x7fa5a5a5u;  // a signalling NaN no kernel computes

bool guard_intact(const float* g) {
  for (size_t i = 0; i < AlignedBuffer::kGuardFloats; ++i) {
    uint32_t bits;
    std::memcpy(&bits, g + i, sizeof bits);
    if (bits != kGuardPattern) return false;
  }
  return true;
}

void fill_guard(float* g) {
  for (size_t i = 0; i < AlignedBuffer::kGuardFloats; ++i) std::memcpy(g + i, &kGuardPattern, sizeof kGuardPattern);
}

// Threads of this process (/proc/self/stat, field 20).
int thread_count() {
  FILE* f = std::fopen("/proc/self/stat", "r");
  if (!f) return -1;
  char buf[1024];
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = 0;
  char* p = std::strrchr(buf, ')');  // the command name may hold spaces
  if (!p) return -1;
  int field = 2, threads = -1;
  for (char* tok = std::strtok(p + 1, " "); tok; tok = std::strtok(nullptr, " "))
    if (++field == 20) threads = std::atoi(tok);
  return threads;
}

// Whether the kernel left something behind that would disturb every later
// measurement: a process it started, threads still running outside the pool.
std::string leftovers(int threads_before, int pool_before) {
  int status = 0;
  pid_t child = ::waitpid(-1, &status, WNOHANG);
  if (child >= 0) return "the kernel started a process";  // 0: running, > 0: exited
  const int started = thread_count() - threads_before - (ThreadPool::global().num_workers() - pool_before);
  if (threads_before >= 0 && started > 0) return "the kernel left " + std::to_string(started) + " thread(s) running";
  return "";
}

}  // namespace

AlignedBuffer::AlignedBuffer(size_t n) : n_(n) {
  padded_ = ((n * sizeof(float) + 63) / 64) * 16;
  const size_t bytes = (padded_ + 2 * kGuardFloats) * sizeof(float);
  ptr_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
  if (!ptr_) throw std::bad_alloc();
  fill_guard(ptr_.get());
  // The tail of the last 64 bytes belongs to the tensor's padding: a vector
  // store of a whole last chunk may write it. The guard starts past it.
  fill_guard(ptr_.get() + kGuardFloats + padded_);
}

std::string AlignedBuffer::guard_damage() const {
  if (!ptr_) return "";
  if (!guard_intact(ptr_.get())) return "before its start";
  if (!guard_intact(ptr_.get() + kGuardFloats + padded_)) return "past its end";
  return "";
}

bool WorkerSession::handle(const nlohmann::json& req, const Reply& reply) {
  const std::string type = req.value("type", "");
  if (type == "task") {
    load_task(req);
    reply({{"type", "loaded"}, {"id", req.value("id", -1)}});
    return true;
  }
  const bool gpu = task_.dag && task_.target.is_gpu();
  if (type == "build") return gpu ? gpu_.build_and_check(task_, ref_, req, reply) : build_and_check(req, reply);
  if (type == "time") return gpu ? gpu_.time(req, reply) : time(req, reply);
  reply(error_reply(req.value("id", -1), "build_error", "worker: unknown request type '" + type + "'"));
  return true;
}

void WorkerSession::load_task(const nlohmann::json& req) {
  kernel_.reset();
  kernel_id_ = -1;
  task_ = Task::from_json(req.at("task"));
  ref_ = read_reference_file(req.at("reference").get<std::string>());
  inputs_.clear();
  outputs_.clear();
  for (const auto& [name, data] : ref_.inputs) {
    AlignedBuffer b(data.size());
    std::memcpy(b.data(), data.data(), data.size() * sizeof(float));
    inputs_.emplace(name, std::move(b));
  }
  for (const auto& [name, data] : ref_.outputs) outputs_.emplace(name, AlignedBuffer(data.size()));
  inputs_dirty_ = false;
}

bool WorkerSession::build_and_check(const nlohmann::json& req, const Reply& reply) {
  const int id = req.value("id", -1);
  const std::string fault = req.value("fault", "");
  kernel_.reset();
  kernel_id_ = -1;
  slow_device_ = fault == "slow_device";
  simulated_cost_s_ = fault == "simulated_time" || slow_device_
                          ? simulated_cost_s(req.value("steps", nlohmann::json::array()))
                          : 0;
  if (!task_.dag) {
    reply(error_reply(id, "build_error", "worker: no task loaded"));
    return true;
  }
  // Build: replay, lower, compile.
  auto t0 = Clock::now();
  std::optional<LoweredFunc> lowered = replay_and_lower(task_, req, reply);
  if (!lowered) return true;
  const LoweredFunc& f = *lowered;
  inject_build_fault(fault);
  try {
    LLVMCompileOptions o;
    o.num_threads = req.value("threads", 1);
    o.vector_width = task_.target.vector_width();
    kernel_ = compile_llvm(f, o);
  } catch (const std::exception& e) {
    auto r = error_reply(id, "build_error", std::string("compile: ") + e.what());
    r["build_s"] = seconds_since(t0);
    reply(r);
    return true;
  }
  args_.clear();
  pretransformed_.clear();
  for (const Buffer& b : f.args) {
    // A pre-transformed constant is made from the pristine reference input,
    // here, before anything is timed (the layout rewrite's contract).
    if (b.layout) {
      auto src = ref_.inputs.find(b.layout->source);
      if (src == ref_.inputs.end() || static_cast<int64_t>(src->second.size()) != shape_size(b.layout->source_shape)) {
        kernel_.reset();
        reply(error_reply(id, "build_error", "argument " + b.name + ": no input " + b.layout->source + " to transform"));
        return true;
      }
      AlignedBuffer& t = pretransformed_.emplace_back(static_cast<size_t>(b.size()));
      b.layout->apply(src->second.data(), t.data());
      args_.push_back(t.data());
      continue;
    }
    auto in = inputs_.find(b.name);
    auto out = outputs_.find(b.name);
    AlignedBuffer* buf = in != inputs_.end() ? &in->second : out != outputs_.end() ? &out->second : nullptr;
    if (!buf || static_cast<int64_t>(buf->size()) != b.size()) {
      kernel_.reset();
      reply(error_reply(id, "build_error", "argument " + b.name + " does not match the task's tensors"));
      return true;
    }
    args_.push_back(buf->data());
  }
  reply({{"type", "built"}, {"id", id}, {"build_s", seconds_since(t0)}});

  // Check: one run on the reference inputs, outputs pre-filled with NaN so
  // that unwritten elements are caught.
  auto t1 = Clock::now();
  if (inputs_dirty_) {
    for (auto& [name, b] : inputs_)
      std::memcpy(b.data(), ref_.inputs.at(name).data(), b.size() * sizeof(float));
    inputs_dirty_ = false;
  }
  for (auto& [name, b] : outputs_)
    std::fill(b.data(), b.data() + b.size(), std::numeric_limits<float>::quiet_NaN());
  double once_s = 0;
  const int threads_before = thread_count(), pool_before = ThreadPool::global().num_workers();
  try {
    auto tr = Clock::now();
    inject_run_fault(fault);
    kernel_->run(args_.data());
    once_s = seconds_since(tr);
  } catch (const std::bad_alloc&) {
    auto r = error_reply(id, "run_error", "out of memory (std::bad_alloc)");
    r["exit"] = true;
    reply(r);
    return false;
  } catch (const std::exception& e) {
    auto r = error_reply(id, "run_error", std::string("kernel threw: ") + e.what());
    r["exit"] = true;
    reply(r);
    return false;
  }
  if (fault == "wrong_result" && !outputs_.empty()) outputs_.begin()->second.data()[0] += 1.0f;
  if (fault == "write_outside" && !outputs_.empty()) {
    AlignedBuffer& out = outputs_.begin()->second;
    out.data()[(out.size() + 15) / 16 * 16] = 1.0f;  // the first float past the tensor's 64-byte chunks
  }
  // What a kernel must never do; the worker exits after it (its heap or its
  // threads are not to be trusted).
  std::string broken = leftovers(threads_before, pool_before);
  auto check_guards = [&](const char* what, const std::string& name, const AlignedBuffer& b) {
    std::string d = b.guard_damage();
    if (broken.empty() && !d.empty()) broken = std::string("the kernel wrote outside ") + what + " " + name + " (" + d + ")";
  };
  for (const auto& [name, b] : inputs_) check_guards("input", name, b);
  for (const auto& [name, b] : outputs_) check_guards("output", name, b);
  for (const auto& b : pretransformed_) check_guards("a pre-transformed", "constant", b);
  if (!broken.empty()) {
    kernel_.reset();
    auto r = error_reply(id, "run_error", broken);
    r["exit"] = true;
    reply(r);
    return false;
  }
  std::string bad;
  for (auto& [name, b] : inputs_) {
    const TensorData& orig = ref_.inputs.at(name);
    if (std::memcmp(b.data(), orig.data(), b.size() * sizeof(float)) != 0) {
      inputs_dirty_ = true;
      bad = "the kernel wrote into input " + name;
      break;
    }
  }
  for (auto& [name, b] : outputs_) {
    if (!bad.empty()) break;
    TensorData got(b.data(), b.data() + b.size());
    std::string diff = compare_with_reference(got, ref_.outputs.at(name), req.value("rtol", 1e-3),
                                              req.value("atol", 1e-4));
    if (!diff.empty()) bad = "output " + name + ": " + diff;
  }
  if (!bad.empty()) {
    kernel_.reset();
    reply(error_reply(id, "wrong_result", bad));
    return true;
  }
  // A short checking run is timed again, warm: the first run of a fresh
  // kernel pays for its code's page faults and for waking the thread pool,
  // which would pass a kernel of microseconds off as hopelessly slow
  // (MeasureOptions::slow_cutoff).
  if (once_s < kWarmRetimeBelowS) {
    auto tr = Clock::now();
    inject_recheck_fault(fault);
    kernel_->run(args_.data());
    once_s = std::min(once_s, seconds_since(tr));
  }
  if (simulated_cost_s_ > 0) once_s = simulated_cost_s_;
  kernel_id_ = id;
  reply({{"type", "checked"}, {"id", id}, {"check_s", seconds_since(t1)}, {"once_s", once_s}});
  return true;
}

bool WorkerSession::time(const nlohmann::json& req, const Reply& reply) {
  const int id = req.value("id", -1);
  if (!kernel_ || kernel_id_ != id) {
    reply(error_reply(id, "run_error", "worker: no checked kernel for candidate " + std::to_string(id)));
    return true;
  }
  TimingOptions o;
  o.repeat = req.value("repeat", 3);
  o.min_repeat_ms = req.value("min_repeat_ms", 20.0);
  o.flush_cache = req.value("flush", false);
  o.quiet_wait_ms = req.value("quiet_wait_ms", 0.0);
  o.probe_threads = task_.target.threads;
  o.abandon_above_s = req.value("cutoff_s", 0.0);
  auto t0 = Clock::now();
  const CompiledKernel& k = *kernel_;
  float* const* args = args_.data();
  std::vector<double> costs = simulated_cost_s_ > 0 ? std::vector<double>(std::max(o.repeat, 1), simulated_cost_s_)
                                                    : time_function([&] { k.run(args); }, o);
  if (slow_device_) std::this_thread::sleep_for(std::chrono::duration<double>(kSlowDeviceTimingS));
  double run_s = seconds_since(t0);
  kernel_.reset();
  kernel_id_ = -1;
  reply({{"type", "timed"}, {"id", id}, {"costs_s", costs}, {"run_s", run_s}});
  return true;
}

}  // namespace loom
