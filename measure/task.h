// A tuning task: a workload instance (DAG) on a target. The task's JSON form
// is the "task" object of a measure record (measure/records.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/compute_dag.h"
#include "ir/workload_registry.h"
#include "measure/target.h"

namespace loom {

struct Task {
  std::string workload;    // a WorkloadKind's name (ir/workload_registry.h)
  nlohmann::json params;  // fully resolved (defaults filled in)
  std::string dtype = "float32";
  Target target;
  // Inputs of a registry workload that are constants (weights): their layout
  // is the schedule's to choose (the layout rewrite), transformed once
  // outside the timed region. A subgraph marks its own.
  std::vector<std::string> constants;
  std::shared_ptr<const ComputeDAG> dag;

  // {"workload":..., "params":..., "dtype":..., "target":..., "constants":
  // [...] only when there are any}
  nlohmann::json to_json() const;
  // Strict: unknown keys and bad values throw LoomError naming `path`.
  static Task from_json(const nlohmann::json& j, const std::string& path = "task");
  // Throws LoomError for an unknown workload, bad params, or a constant that
  // is not one of the workload's inputs.
  static Task make(const std::string& workload, const nlohmann::json& params, const Target& target,
                   const std::vector<std::string>& constants = {});
  // Identity of the task in logs: workload + params + dtype + target
  // (+ constants).
  std::string key() const;
  // "matmul M=1024 N=1024 K=1024"; "subgraph conv2d+relu 1x64x56x56 from
  // 1x64x56x56, 64x64x3x3*, 64*" (ops, output shape, inputs; * constant).
  std::string description() const;
  // The tasks whose throughputs compare (the task scheduler's similar
  // tasks): the kind's similarity key.
  std::string similarity_group() const;
  const WorkloadKind& kind() const;
};

}  // namespace loom
