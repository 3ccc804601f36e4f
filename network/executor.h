// Runs a whole network on the CPU from one compiled kernel per fused group:
// each task's best program in a records log, else the log's untimed record
// of it (a schedule chosen with nothing timed), else a given schedule, else
// its default schedule (network/default_schedule.h). Intermediate
// values live in buffers reused once their last reader has run (the memory
// plan), all in one arena; the weights the kernels read are copied once
// into another, in the order the kernels run (network/arena.h: huge pages);
// graph inputs are read in place.
//
//   NetworkExecutor ex(graph, {.threads = 2, .log = "resnet.log"});
//   Values out = ex.run({{"input", data}});
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "graph/interpreter.h"
#include "ir/compute_dag.h"
#include "ir/stmt.h"
#include "graph/tasks.h"

namespace loom::graph {

struct ExecutorOptions {
  int threads = 1;
  std::string log;       // records log with tuned programs; "" = default schedules only
  int vector_width = 0;  // floats per vector; 0 = the host's
  // Steps for tasks the log has no program of, by the task's subgraph JSON
  // (NetworkTask::subgraph.dump()): e.g. schedules a cost model chose
  // (search/predicted_schedule.h). The rest run default schedules.
  std::map<std::string, nlohmann::json> schedules;
};

struct KernelSummary {
  int task = -1;
  bool tuned = false;      // from the log
  bool untimed_in_log = false;  // the log's untimed record (chosen with nothing timed)
  bool given = false;      // from ExecutorOptions::schedules
  double measured_s = 0;   // tuned: what the log measured for the program (one run)
  double compile_s = 0;
};

// Per argument of a task's kernel, the index of the DAG input it is made
// from (a pre-transformed argument: its layout's source), -1 for an output.
std::vector<int> argument_inputs(const LoweredFunc& f, const ComputeDAG& dag);

// Throws LoomError naming the largest value and its size when the network's
// tensors cannot fit in the machine's memory (checked before the executor
// allocates anything).
void check_network_fits_memory(const Graph& g);

class NetworkExecutor {
 public:
  // Extracts the tasks (passes, fusion) and compiles every kernel. Throws
  // LoomError naming the task when a program cannot be built.
  NetworkExecutor(const Graph& g, const ExecutorOptions& opts);
  ~NetworkExecutor();
  NetworkExecutor(const NetworkExecutor&) = delete;
  NetworkExecutor& operator=(const NetworkExecutor&) = delete;

  // The graph outputs by name; throws LoomError for a missing or mis-sized
  // input. With `group_seconds`, each group's wall time is added to its
  // entry (resized to the number of groups): a per-kernel profile. With
  // `rerun_seconds`, each group runs twice more at once, on the same data
  // (a kernel never writes its inputs), and the faster of those is added:
  // the kernel's time with its weights and inputs as its first run left
  // them in the caches.
  Values run(const Values& inputs, std::vector<double>* group_seconds = nullptr,
             std::vector<double>* rerun_seconds = nullptr);

  const NetworkTasks& tasks() const { return tasks_; }
  const std::vector<KernelSummary>& kernels() const { return summaries_; }  // per task
  // Bytes of the intermediate buffers of the memory plan, and what the
  // intermediates would take without reuse.
  int64_t planned_bytes() const { return planned_bytes_; }
  int64_t unplanned_bytes() const { return unplanned_bytes_; }
  // Bytes of the weights the kernels read in layouts of their own (each
  // transformed once, when the executor is built; the model's own copy is
  // kept).
  int64_t pretransformed_bytes() const { return pretransformed_bytes_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  NetworkTasks tasks_;
  std::vector<KernelSummary> summaries_;
  int64_t planned_bytes_ = 0, unplanned_bytes_ = 0, pretransformed_bytes_ = 0;
};

}  // namespace loom::graph
