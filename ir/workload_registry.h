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
//
// A task names a workload kind (WorkloadKind below): every family above is
// one, and a layer above ir/ registers kinds of its own whose params are a
// document rather than integers (graph/ registers "subgraph", a network's
// fused subgraph).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
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

// The registry workload that stands for an instance of a kind in per-operator
// baselines (a network's conv subgraph: the conv2d workload). `leaves_out`
// says what of the instance the workload does not compute ("" when nothing),
// so a baseline of it does less than the task.
struct EquivalentWorkload {
  std::string workload;
  nlohmann::json params;
  std::string leaves_out;
};

// What a task needs of its workload, whoever defines it.
struct WorkloadKind {
  std::string name;
  // Validates `params` (errors name the field: "params.K: ..."), writes
  // them resolved (defaults filled in) to `resolved` and builds the DAG.
  std::function<ComputeDAG(const nlohmann::json& params, nlohmann::json& resolved)> build;
  // One line naming an instance: "matmul M=1024 N=1024 K=1024".
  std::function<std::string(const nlohmann::json& resolved)> describe;
  // The tasks whose throughputs compare (the task scheduler's similar
  // tasks): for a family its name, for a subgraph its ops, so that a
  // memory-bound gemm or pool is not held to a conv's GFLOP/s.
  std::function<std::string(const nlohmann::json& resolved)> similarity_key;
  // The per-operator baselines' workload for an instance (nullopt: none).
  std::function<std::optional<EquivalentWorkload>(const nlohmann::json& resolved)> equivalent_workload;
  // The DAG marks its constant inputs itself (a task of it lists none).
  bool marks_own_constants = false;
  // Export file stems spell the params out ("matmul_M1024_..."); otherwise
  // they are the kind's name and a hash of the task.
  bool params_name_files = true;
};

// Adds a kind (called by the layer defining it, before any task names it);
// throws LoomError when the name is taken.
void register_workload_kind(WorkloadKind kind);
// The registry's families and the registered kinds; nullptr if unknown.
const WorkloadKind* find_workload_kind(const std::string& name);
// "batch_matmul, conv1d, ..., subgraph" (for messages).
std::string workload_kind_names();

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
