// Measuring candidate schedules honestly: each one built, checked against
// the reference and timed in a worker process.
//
//   Measurer m(opts);
//   std::vector<MeasureResult> r = m.measure(task, states);
//
// Candidates are built and run in a small pool of long-lived worker processes
// (the `loom_worker` executable, measure/worker/) that talk to the tuner over
// Unix sockets (measure/protocol.h). A worker replays the steps, lowers,
// compiles with LLVM, runs the kernel once on the task's fixed random inputs
// and compares with the reference output, then — when the tuner hands it the
// timing token — times it (measure/timing.h). Builds run in parallel (one per
// worker); only one candidate is timed at a time. A build or run that
// overruns its deadline, or a worker that dies (segfault, abort, out of
// memory), costs that candidate only: the worker is SIGKILLed if needed and
// replaced, and the other candidates of the batch are measured normally.
//
// The reference output is computed once per task (in the tuner, from the
// unscheduled program) and shared with the workers through a temp file.
//
// Finding the worker: $LOOM_WORKER, else `loom_worker` next to the running
// executable, else the build tree's path (LOOM_WORKER_DEFAULT_PATH).
#pragma once

#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/state.h"
#include "measure/measure_result.h"
#include "measure/task.h"

namespace loom {

// MeasureOptions::test_faults key of a fault for every candidate.
inline constexpr int kEveryCandidate = -1;

struct MeasureOptions {
  // Timing protocol (measure/timing.h): warm-up, then `repeat` groups of at
  // least `min_repeat_ms` each; one mean per group.
  int repeat = 3;
  double min_repeat_ms = 20;
  bool flush_cache = false;  // evict the LLC before every timed run
  // Time one measurement may spend waiting for, and re-timing groups until, a
  // quiet load probe (measure/timing.h); 0: no probe.
  double quiet_wait_ms = 0;

  // Limits. build: replay + lower + compile. run: the first (checking) run;
  // timing is then allowed run_timeout_s + (repeat + 1) * (min_repeat_ms +
  // 3 x the checking run's time).
  double build_timeout_s = 20;
  double run_timeout_s = 5;

  // Worker processes, i.e. builds in flight at once.
  int n_parallel_builds = 2;
  // Address-space limit of each worker (setrlimit RLIMIT_AS); 0 = none.
  // Not applied to the workers of a cuda target (worker_memory_limit_mb).
  int64_t max_memory_mb = 8192;

  // When a candidate is being timed, builds on other workers may proceed
  // (kOverlap), must wait (kQuiet), or kAuto: quiet when the kernel's threads
  // would occupy every core (target threads >= hardware threads).
  enum class Isolation { kAuto, kOverlap, kQuiet } isolation = Isolation::kAuto;

  // Correctness tolerance (measure/reference_data.h: atol is scaled by the
  // reference output's magnitude).
  double rtol = 1e-3;
  double atol = 1e-4;

  // Report wrong results loudly on stderr (they are Loom bugs).
  bool loud_wrong_results = true;
  // A candidate whose checking run is slower than this many times the best
  // cost measured so far for its task is not timed further: its cost is the
  // checking run (a run under 10 ms is timed a second time, warm, so that a
  // cold first run does not pass a fast kernel off as slow). Under quiet
  // isolation (a kernel on every core) the checking run may have shared the
  // cores with another worker's build, so such a candidate's cost is its
  // exclusive warm-up run instead, and it is timed in full when that is not
  // hopeless. Tuning wastes no time on hopeless programs (0: always time).
  double slow_cutoff = 10;

  // A distributed job (measure/distributed/): a node silent this long (no
  // heartbeat, no result) is lost and its candidates go to other nodes;
  // a node whose coordinator is silent this long ends.
  double node_timeout_s = 30;

  // TEST ONLY: fault injected into candidate i of every batch (key i):
  // "segfault", "abort", "spin", "oom", "wrong_result", "build_spin",
  // "build_segfault", "cold_first_run" (the checking run takes 4 ms more),
  // "disturbed_check" (both checking runs of a short kernel take 4 ms more),
  // "simulated_time" (built and checked, not timed: its cost is a function of
  // its steps, 1-2 ms, so that a search is reproducible run to run),
  // "slow_device" (simulated_time whose timing takes 1 s: a device whose
  // timed runs dominate). Key
  // kEveryCandidate: every candidate without a fault of its own. Also read
  // from $LOOM_TEST_FAULT ("1:segfault,3:spin", "*:simulated_time").
  std::map<int, std::string> test_faults;
};

// The "measure" object of a config (every key optional, unknown keys are
// errors naming `path`; `given` receives the keys it holds), its echo, and
// its docs table's rows (`loom config doc`), from one table
// (measure_options.cc).
MeasureOptions measure_options_from_json(const nlohmann::json& j, const std::string& path,
                                         MeasureOptions defaults = {}, std::set<std::string>* given = nullptr);
nlohmann::json measure_options_to_json(const MeasureOptions& m);
std::string measure_options_doc(const std::string& prefix = "measure.");

// Totals of the last measure() call, for progress lines and benchmarks.
struct MeasureBatchStats {
  int candidates = 0, errors = 0;
  double wall_s = 0;       // whole call
  double reference_s = 0;  // computing the reference (first batch of a task)
  double build_s = 0, check_s = 0, run_s = 0;  // sums over candidates
  int workers_restarted = 0;
};

// What the tuner measures through: this process's worker pool (Measurer)
// or the nodes of a distributed job (measure/distributed/coordinator.h).
class CandidateMeasurer {
 public:
  virtual ~CandidateMeasurer() = default;
  // One result per step list, in order (a list that does not replay is
  // invalid_schedule for that candidate only).
  virtual std::vector<MeasureResult> measure_steps(const Task& task, const std::vector<nlohmann::json>& steps) = 0;
  // Same with states. Undefined states are invalid_schedule.
  std::vector<MeasureResult> measure(const Task& task, const std::vector<State>& states);
};

class Measurer : public CandidateMeasurer {
 public:
  explicit Measurer(MeasureOptions opts = {});
  ~Measurer() override;
  Measurer(const Measurer&) = delete;
  Measurer& operator=(const Measurer&) = delete;

  // Every result names this machine (MeasureResult::machine).
  std::vector<MeasureResult> measure_steps(const Task& task, const std::vector<nlohmann::json>& steps) override;
  // The best cost another measurer found for the task: the slow cutoff
  // (MeasureOptions::slow_cutoff) holds candidates to it too.
  void note_best(const Task& task, double cost_s);

  const MeasureOptions& options() const { return opts_; }
  const MeasureBatchStats& last_stats() const { return stats_; }

  struct Impl;

 private:
  MeasureOptions opts_;
  MeasureBatchStats stats_;
  std::string worker_path_;
  std::unique_ptr<Impl> impl_;
};

// Throws LoomError, one line naming the largest tensor, its size and the
// limit, when the task's inputs and outputs cannot fit in a worker's memory:
// a worker holds each twice (the reference and its working copy), against
// max_memory_mb (0: the machine's physical memory). A task that cannot fit
// fails at once instead of computing a reference it has no room for.
void check_task_fits_memory(const Task& task, int64_t max_memory_mb);
// "1.5 GiB", for messages about sizes.
std::string bytes_text(double bytes);
// The machine's physical memory in bytes (0: unknown).
double physical_memory_bytes();

// The address-space limit a worker measuring `task` starts with:
// max_memory_mb, except 0 (none) for a cuda target, whose driver reserves
// virtual address space for all of the device's and the host's memory at
// cuInit (far more than a limit of a few GB: every candidate would fail
// with CUDA_ERROR_OUT_OF_MEMORY); the task's host buffers are still held to
// max_memory_mb by check_task_fits_memory.
int64_t worker_memory_limit_mb(const Task& task, const MeasureOptions& opts);

// Where the worker executable is looked for (see above); throws LoomError
// naming the places tried when none exists.
std::string find_worker_executable();

}  // namespace loom
