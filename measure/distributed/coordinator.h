// Rank 0 of a distributed tuning job: a CandidateMeasurer that deals each
// batch's candidates to the measurement nodes as they become free (a share
// of `n_parallel_builds` candidates per node at a time) and gathers their
// results in order; the tuner above it alone writes the log.
//
// Nodes are grouped by machine kind (measure/machine.h). A task is measured
// only on nodes of one kind: for CPU tasks the kind most nodes have, for
// CUDA tasks the GPU most nodes with a GPU have (ties: the lowest rank's);
// nodes of other kinds stay idle and are named at the start. Every result
// names its node ("HOST rank R") and the node's machine.
//
// A node that sends nothing (results or heartbeats) for node_timeout_s is
// lost: its share is dealt again to the others, and what it sends later is
// ignored. When no node of a task's kind is left, measure_steps throws
// LoomError: the tuner ends with the log holding every batch measured.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "measure/distributed/transport.h"
#include "measure/machine.h"
#include "measure/measurer.h"

namespace loom {

struct NodeInfo {
  int rank = 0;
  std::string host;
  MachineKind machine;
  bool lost = false;
  int measured = 0;  // candidates it returned
  double last_heard = 0;  // steady seconds of its last message
  std::string name() const { return host + " rank " + std::to_string(rank); }
};

class DistributedMeasurer : public CandidateMeasurer {
 public:
  // Waits up to node_timeout_s for every node's hello (a node that does not
  // answer is lost) and sends each the measure options. Throws LoomError
  // when the job has no node (a job of one rank).
  DistributedMeasurer(Transport& transport, MeasureOptions opts,
                      std::function<void(const std::string&)> print);
  // Tells every node to quit.
  ~DistributedMeasurer() override;

  std::vector<MeasureResult> measure_steps(const Task& task, const std::vector<nlohmann::json>& steps) override;

  const std::vector<NodeInfo>& nodes() const { return nodes_; }

 private:
  // Indices into nodes_ of the kind that measures tasks of `target`'s kind
  // (chosen at its first task and kept), lost ones included.
  const std::vector<int>& nodes_for(const Target& target);
  void lose(NodeInfo& node, const std::string& why);

  Transport& t_;
  MeasureOptions opts_;
  std::function<void(const std::string&)> print_;
  std::vector<NodeInfo> nodes_;                     // ranks 1..size-1
  std::map<std::string, std::vector<int>> kinds_;  // target kind -> its nodes
  std::map<std::string, double> best_by_task_;
  int next_share_id_ = 0;
  std::atomic<bool> stop_{false};
  std::thread heartbeat_;
};

}  // namespace loom
