#include "measure/batch_runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <deque>
#include <poll.h>
#include <thread>

#include "ir/error.h"

namespace loom {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace {

using Phase = WorkerSlot::Phase;

// Limit for a worker to start and load a task (DAG + reference file).
constexpr double kLoadTimeoutS = 60.0;

class BatchRunner {
 public:
  BatchRunner(const BatchInput& in, const MeasureOptions& opts, const std::string& exe,
              std::vector<std::unique_ptr<WorkerSlot>>& slots, MeasureBatchStats& stats)
      : in_(in), opts_(opts), exe_(exe), slots_(slots), stats_(stats),
        results_(in.steps->size()) {
    unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    quiet_ = opts.isolation == MeasureOptions::Isolation::kQuiet ||
             (opts.isolation == MeasureOptions::Isolation::kAuto &&
              in.task->target.threads >= static_cast<int>(hw));
  }

  std::vector<MeasureResult> run() {
    // A previous batch that ended by an exception may have left work in
    // flight: start from idle workers.
    for (auto& s : slots_)
      if (s->phase != Phase::kIdle) {
        s->proc.kill_and_reap();
        s->phase = Phase::kIdle;
        s->cand = -1;
      }
    const int n = static_cast<int>(results_.size());
    for (int i = 0; i < n; ++i) {
      if ((*in_.steps)[i].is_array()) {
        pending_.push_back(i);
      } else {
        std::string why = (*in_.steps)[i].is_string() ? (*in_.steps)[i].get<std::string>()
                                                      : "steps must be a JSON array";
        finish(i, ErrorKind::kInvalidSchedule, why);
      }
    }
    while (done_ < n) {
      bool progressed = start_timing();
      progressed |= start_builds();
      if (!wait_and_handle() && !progressed) throw LoomError("measure: internal error: batch stalled");
    }
    return std::move(results_);
  }

 private:
  const BatchInput& in_;
  const MeasureOptions& opts_;
  const std::string& exe_;
  std::vector<std::unique_ptr<WorkerSlot>>& slots_;
  MeasureBatchStats& stats_;
  std::vector<MeasureResult> results_;
  std::deque<int> pending_;
  std::deque<WorkerSlot*> ready_;
  WorkerSlot* timing_ = nullptr;
  bool quiet_ = false;
  int done_ = 0;
  double best_in_batch_ = 0;  // best cost measured in this batch so far

  bool building_somewhere() const {
    for (auto& s : slots_)
      if (s->phase == Phase::kBuilding || s->phase == Phase::kChecking) return true;
    return false;
  }

  void finish(int cand, ErrorKind kind, const std::string& msg) {
    MeasureResult& r = results_[cand];
    r.error = kind;
    r.error_msg = msg;
    if (kind != ErrorKind::kNone) r.costs_s.clear();
    if (r.ok() && (best_in_batch_ == 0 || r.median_s() < best_in_batch_)) best_in_batch_ = r.median_s();
    r.timestamp = static_cast<int64_t>(std::time(nullptr));
    stats_.build_s += r.build_s;
    stats_.check_s += r.check_s;
    stats_.run_s += r.run_s;
    if (kind != ErrorKind::kNone) ++stats_.errors;
    if (kind == ErrorKind::kWrongResult && opts_.loud_wrong_results) {
      std::fprintf(stderr,
                   "\n*** loom: WRONG RESULT (this is a Loom bug) ***\n  task: %s\n  candidate %d: %s\n"
                   "  steps: %s\n\n",
                   in_.task->description().c_str(), cand, msg.c_str(), (*in_.steps)[cand].dump().c_str());
    }
    ++done_;
  }

  void release(WorkerSlot& s) {
    if (timing_ == &s) timing_ = nullptr;
    s.phase = Phase::kIdle;
    s.cand = -1;
  }

  // Ensures a live worker; false (and the candidate finished with an error)
  // when none can be started.
  bool ensure_worker(WorkerSlot& s, int cand) {
    const int64_t limit = worker_memory_limit_mb(*in_.task, opts_);
    if (s.proc.alive() && !s.proc.exited() && s.memory_limit_mb == limit) return true;
    if (s.started_once) ++stats_.workers_restarted;
    try {
      s.proc.spawn(exe_, limit);
      s.memory_limit_mb = limit;
    } catch (const LoomError& e) {
      finish(cand, ErrorKind::kBuildError, std::string("cannot start a worker: ") + e.what());
      return false;
    }
    s.started_once = true;
    s.loaded_task.clear();
    return true;
  }

  // Sends the build request of s.cand (the task is loaded).
  void send_build(WorkerSlot& s) {
    nlohmann::json req = {{"type", "build"}, {"id", s.cand}, {"steps", (*in_.steps)[s.cand]},
                          {"threads", in_.task->target.threads}, {"rtol", opts_.rtol},
                          {"atol", opts_.atol}};
    auto f = in_.faults.find(s.cand);
    if (f == in_.faults.end()) f = in_.faults.find(kEveryCandidate);
    if (f != in_.faults.end()) req["fault"] = f->second;
    s.phase = Phase::kBuilding;
    s.deadline = steady_seconds() + opts_.build_timeout_s;
    if (!s.proc.send(req)) worker_died(s);
  }

  bool start_builds() {
    if (quiet_ && (timing_ || !ready_.empty())) return false;
    bool any = false;
    for (auto& sp : slots_) {
      WorkerSlot& s = *sp;
      if (s.phase != Phase::kIdle || pending_.empty()) continue;
      int cand = pending_.front();
      pending_.pop_front();
      any = true;
      if (!ensure_worker(s, cand)) continue;
      s.cand = cand;
      if (s.loaded_task == in_.task_key) {
        send_build(s);
        continue;
      }
      // Load the task first (start-up and loading are not the candidate's
      // build time); the build request follows the "loaded" reply.
      s.phase = Phase::kLoading;
      s.deadline = steady_seconds() + kLoadTimeoutS;
      if (!s.proc.send({{"type", "task"}, {"id", cand}, {"task", in_.task->to_json()},
                        {"reference", in_.reference_path}}))
        worker_died(s);
    }
    return any;
  }

  bool start_timing() {
    if (timing_ || ready_.empty()) return false;
    if (quiet_ && building_somewhere()) return false;
    WorkerSlot& s = *ready_.front();
    ready_.pop_front();
    // The best so far: from earlier batches, or from this one (the first
    // batch of a task has no earlier best).
    double best = in_.best_known_s;
    if (best_in_batch_ > 0 && (best == 0 || best_in_batch_ < best)) best = best_in_batch_;
    const bool looks_hopeless = opts_.slow_cutoff > 0 && best > 0 && s.once_s > opts_.slow_cutoff * best;
    if (looks_hopeless && !quiet_) {
      // Hopelessly slow: the checking run is its cost (see MeasureOptions).
      results_[s.cand].costs_s = {s.once_s};
      finish(s.cand, ErrorKind::kNone, "");
      release(s);
      return true;
    }
    nlohmann::json req = {{"type", "time"}, {"id", s.cand}, {"repeat", opts_.repeat},
                          {"min_repeat_ms", opts_.min_repeat_ms}, {"flush", opts_.flush_cache},
                          {"quiet_wait_ms", opts_.quiet_wait_ms}};
    // A kernel on every core checked while another worker built: one of its
    // threads waited for the compiler's time slice and ran many times its
    // time, so good candidates would be cut off. Judged on its exclusive warm-up run
    // instead: the timing stops there when that run is hopeless too.
    if (looks_hopeless) req["cutoff_s"] = opts_.slow_cutoff * best;
    s.phase = Phase::kTiming;
    timing_ = &s;
    if (!s.proc.send(req)) {
      worker_died(s);
      return true;
    }
    s.deadline = steady_seconds() + opts_.run_timeout_s +
                 (opts_.repeat + 1) * (opts_.min_repeat_ms / 1e3 + 3 * s.once_s + 0.1) +
                 2 * opts_.quiet_wait_ms / 1e3;
    return true;
  }

  void worker_died(WorkerSlot& s) {
    std::string how = s.proc.reap(0.5);
    if (s.cand >= 0) {
      if (s.phase == Phase::kLoading)
        finish(s.cand, ErrorKind::kBuildError, "worker failed while loading the task: " + how);
      else if (s.phase == Phase::kBuilding)
        finish(s.cand, ErrorKind::kBuildError, "worker crashed while building: " + how);
      else
        finish(s.cand, ErrorKind::kRunError, "worker " + how);
    }
    release(s);
  }

  void timed_out(WorkerSlot& s) {
    s.proc.kill_and_reap();
    char buf[160];
    if (s.phase == Phase::kLoading)
      std::snprintf(buf, sizeof buf, "worker did not load the task within %.3g s; worker killed", kLoadTimeoutS);
    else if (s.phase == Phase::kBuilding)
      std::snprintf(buf, sizeof buf, "build exceeded %.3g s; worker killed", opts_.build_timeout_s);
    else if (s.phase == Phase::kChecking)
      std::snprintf(buf, sizeof buf, "run exceeded %.3g s; worker killed", opts_.run_timeout_s);
    else
      std::snprintf(buf, sizeof buf, "timing exceeded its deadline; worker killed");
    finish(s.cand, ErrorKind::kTimeout, buf);
    release(s);
  }

  void handle(WorkerSlot& s, const nlohmann::json& m) {
    if (m.value("id", -1) != s.cand || s.cand < 0) return;  // stale
    const std::string type = m.value("type", "");
    MeasureResult& r = results_[s.cand];
    if (type == "loaded" && s.phase == Phase::kLoading) {
      s.loaded_task = in_.task_key;
      send_build(s);
    } else if (type == "built" && s.phase == Phase::kBuilding) {
      r.build_s = m.value("build_s", 0.0);
      s.phase = Phase::kChecking;
      s.deadline = steady_seconds() + opts_.run_timeout_s;
    } else if (type == "checked" && s.phase == Phase::kChecking) {
      r.check_s = m.value("check_s", 0.0);
      s.once_s = m.value("once_s", 0.0);
      s.phase = Phase::kReady;
      ready_.push_back(&s);
    } else if (type == "timed" && s.phase == Phase::kTiming) {
      r.run_s = m.value("run_s", 0.0);
      r.costs_s = m.value("costs_s", std::vector<double>{});
      finish(s.cand, r.costs_s.empty() ? ErrorKind::kRunError : ErrorKind::kNone,
             r.costs_s.empty() ? "worker returned no costs" : "");
      release(s);
    } else if (type == "error") {
      if (m.contains("build_s")) r.build_s = m.value("build_s", 0.0);
      ErrorKind kind = ErrorKind::kRunError;
      try {
        kind = parse_error_kind(m.value("error", "run_error"));
      } catch (const LoomError&) {
      }
      finish(s.cand, kind, m.value("msg", "unknown error"));
      if (m.value("exit", false)) s.proc.reap(1.0);
      release(s);
    }
  }

  // Waits for replies or the nearest deadline; false when nothing was busy.
  bool wait_and_handle() {
    std::vector<pollfd> fds;
    std::vector<WorkerSlot*> who;
    double nearest = 1e300;
    for (auto& sp : slots_) {
      WorkerSlot& s = *sp;
      if (s.phase == Phase::kIdle || s.phase == Phase::kReady) continue;
      fds.push_back({s.proc.fd(), POLLIN, 0});
      who.push_back(&s);
      nearest = std::min(nearest, s.deadline);
    }
    if (fds.empty()) return false;
    double wait = std::max(0.0, nearest - steady_seconds());
    int ms = static_cast<int>(std::min(wait * 1e3 + 1, 3.6e6));
    int rc = ::poll(fds.data(), fds.size(), ms);
    if (rc < 0 && errno != EINTR) throw LoomError("measure: poll failed");
    for (size_t k = 0; k < fds.size(); ++k) {
      WorkerSlot& s = *who[k];
      if (!fds[k].revents) continue;
      bool open = s.proc.pump();
      try {
        nlohmann::json m;
        while (s.cand >= 0 && s.proc.next(&m)) handle(s, m);
      } catch (const LoomError& e) {
        s.proc.kill_and_reap();
        finish(s.cand, ErrorKind::kRunError, std::string("worker protocol error: ") + e.what());
        release(s);
        continue;
      }
      if (!open && s.cand >= 0) worker_died(s);
    }
    double now = steady_seconds();
    for (WorkerSlot* s : who)
      if (s->cand >= 0 && s->phase != Phase::kReady && s->phase != Phase::kIdle && now >= s->deadline)
        timed_out(*s);
    return true;
  }
};

}  // namespace

std::vector<MeasureResult> run_batch(const BatchInput& in, const MeasureOptions& opts,
                                     const std::string& worker_exe,
                                     std::vector<std::unique_ptr<WorkerSlot>>& slots,
                                     MeasureBatchStats& stats) {
  return BatchRunner(in, opts, worker_exe, slots, stats).run();
}

}  // namespace loom
