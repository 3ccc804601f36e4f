// Registers the workload kind "subgraph" (a network's fused subgraph, its
// params the subgraph's JSON form) with ir/'s workload registry. This file is
// linked into every executable that links loom_graph as an object of its
// own (graph/CMakeLists.txt), so its registrar runs before main.
#include "graph/tasks.h"
#include "ir/error.h"

namespace loom::graph {
namespace {

WorkloadKind subgraph_kind() {
  WorkloadKind k;
  k.name = kSubgraphWorkload;
  k.build = [](const nlohmann::json& params, nlohmann::json& resolved) {
    try {
      ComputeDAG dag = subgraph_dag(params);
      resolved = params;
      return dag;
    } catch (const LoomError& e) {
      throw LoomError(std::string("params.") + e.what());
    }
  };
  // A subgraph's ops and output shape do not tell its tasks apart (a 1x1
  // conv and the depthwise conv after it give "conv2d+clip 1x144x56x56"
  // alike); its inputs' shapes do.
  k.describe = [](const nlohmann::json& s) {
    return std::string(kSubgraphWorkload) + " " + subgraph_summary(s) + " from " + subgraph_inputs_summary(s);
  };
  k.similarity_key = [](const nlohmann::json& s) { return std::string(kSubgraphWorkload) + " " + subgraph_ops(s); };
  k.equivalent_workload = [](const nlohmann::json& s) { return equivalent_workload(s); };
  k.marks_own_constants = true;
  k.params_name_files = false;  // a subgraph document is no file name
  return k;
}

// Guarded: an executable may hold this object once per library that brings it.
const bool registered = find_workload_kind(kSubgraphWorkload) || (register_workload_kind(subgraph_kind()), true);

}  // namespace
}  // namespace loom::graph
