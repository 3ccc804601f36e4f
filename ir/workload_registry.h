// Registry of named, parameterised workloads (Ansor's single-operator suite
// plus a few fused subgraphs). A workload is created from JSON parameters:
//
//   ComputeDAG dag = make_workload("conv2d", {{"N", 1}, {"C", 64}, {"H", 56}});
//
// Missing parameters take their defaults; unknown names, non-integers and
// out-of-range values are rejected with a LoomError naming the field.
//
// Each family lives in ir/workloads/<family>.cc and registers itself through
// an explicit function called from workload_registry.cc (no static
// registrars: unreferenced objects of a static library would be dropped).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/compute_dag.h"
#include "ir/error.h"

namespace loom {

using WorkloadParams = std::map<std::string, int64_t>;

struct WorkloadParam {
  std::string name;
  int64_t default_value = 1;
  std::string doc;
  int64_t min_value = 1;  // 1: positive integer; 0: non-negative (padding)
};

struct WorkloadInfo {
  std::string name;
  std::string description;
  std::vector<WorkloadParam> params;  // in documentation order
  // Builds the DAG from fully resolved parameters (every key present). May
  // throw LoomError for cross-parameter constraints (e.g. divisibility).
  std::function<ComputeDAG(const WorkloadParams&)> build;
  // A small instance (partial params; the rest default) that evaluates in
  // milliseconds with the reference interpreter: for tests.
  nlohmann::json small_params = nlohmann::json::object();
};

// All workloads, sorted by name.
const std::vector<WorkloadInfo>& workload_registry();
// nullptr if unknown.
const WorkloadInfo* find_workload(const std::string& name);
// "batch_matmul, conv1d, ..." (for messages).
std::string workload_names();

// Defaults filled in; `params` must be an object (or null = all defaults).
WorkloadParams resolve_params(const WorkloadInfo& info, const nlohmann::json& params);
// Throws LoomError for an unknown workload or bad parameters.
ComputeDAG make_workload(const std::string& name, const nlohmann::json& params = nlohmann::json::object());

// ---- helpers shared by the workload families (ir/workloads/*.cc) ----------
namespace workload_detail {
int64_t get(const WorkloadParams& p, const std::string& key);
// Output extent of a sliding window; throws LoomError naming `what` if < 1.
int64_t conv_out_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad,
                      int64_t dilation, const std::string& what);
// Padding of the dims of X with before[d]/after[d] > 0 as a separate stage
// `name` (select on the in-bounds condition), `value` outside. Returns X
// itself when no padding is needed.
Tensor pad_tensor(const Tensor& X, const std::vector<int64_t>& before,
                  const std::vector<int64_t>& after, const std::string& name, float value = 0.0f);
void require_divisible(const WorkloadParams& p, const std::string& a, const std::string& b);

void register_matmul_workloads(std::vector<WorkloadInfo>& out);
void register_conv_workloads(std::vector<WorkloadInfo>& out);
void register_norm_workloads(std::vector<WorkloadInfo>& out);
void register_softmax_workloads(std::vector<WorkloadInfo>& out);
void register_subgraph_workloads(std::vector<WorkloadInfo>& out);
}  // namespace workload_detail

}  // namespace loom
