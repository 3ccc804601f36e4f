// Task extraction: each fused group of a network becomes a self-contained
// subgraph description, and from it a ComputeDAG built with the ir/ DSL;
// identical subgraphs are one task whose weight is its number of
// occurrences (Ansor's extract_tasks).
//
// A subgraph's JSON form names no value of the network and holds no weight
// data, so it identifies the computation alone and a log of a network's
// tasks replays without the model:
//   {"inputs": [{"shape": [1, 64, 56, 56]}, {"shape": [64, 64, 3, 3], "constant": true}, ...],
//    "nodes":  [{"op": "conv2d", "attrs": {...}, "inputs": ["in0", "in1", "in2"]},
//               {"op": "relu", "attrs": {}, "inputs": ["n0"]}]}
// "inK" is the subgraph's input K, "nK" the value of its node K; the last
// node's value is the output. In the DAG, input K is placeholder "inK" and
// node K's final stage "<op>K" (helper stages add a suffix, e.g. "conv2d0_pad").
// Tasks name it as the workload kind "subgraph" (kSubgraphWorkload),
// registered by graph/subgraph_workload.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "graph/graph.h"
#include "graph/passes/fuse_ops.h"
#include "ir/compute_dag.h"
#include "ir/workload_registry.h"

namespace loom::graph {

// The workload kind of a network's fused subgraph: its params are the
// subgraph's JSON form.
inline constexpr const char* kSubgraphWorkload = "subgraph";

// What a group's input "inK" reads: a network value from element `offset`
// on. A slice that selects one contiguous block of a value computed outside
// the group (a recurrent layer's step t of its input projection, a
// transformer's query part of a fused QKV) is read in place: the subgraph
// takes the block as its input, not the whole value and a slice, so that
// the same computation at other offsets is the same task.
struct GroupInput {
  std::string value;
  int64_t offset = 0;  // in elements of `value`
  bool operator==(const GroupInput& o) const { return value == o.value && offset == o.offset; }
};

// The element offset of a slice of a `shape` value when the slice is one
// contiguous block of it (steps of 1 where more than one index is taken, a
// single index on every dim outside the first partial one, whole dims
// inside it), else -1.
int64_t contiguous_slice_offset(const Shape& shape, const nlohmann::json& slice_attrs);

// The subgraph of one group; `inputs` receives what its "inK" read, in
// order. Contiguous slices of values from outside the group are inputs
// (GroupInput), not nodes, unless the slice is the group's output.
nlohmann::json group_subgraph(const Graph& g, const FusedGroup& group, std::vector<GroupInput>* inputs);

// Throws LoomError naming the bad part ("subgraph.inputs[0].shape: expected
// integers", "node 'subgraph.nodes[1]' (foo): unknown op ...").
ComputeDAG subgraph_dag(const nlohmann::json& subgraph);
// "conv2d+add+relu" (the ops, without building the graph).
std::string subgraph_ops(const nlohmann::json& subgraph);
// "conv2d+add+relu 1x64x56x56" (the ops and the output shape).
std::string subgraph_summary(const nlohmann::json& subgraph);
// "1x64x56x56, 64x64x3x3*, 64*" (its inputs' shapes, * marking constants).
std::string subgraph_inputs_summary(const nlohmann::json& subgraph);

// The registry workload computing a subgraph's main operator, for a
// per-operator baseline: a conv2d (bias + ReLU fused when that is the whole
// subgraph; depthwise when every channel is its own group) with equal
// strides, pads and dilations on both axes, or a gemm as a matmul.
std::optional<EquivalentWorkload> equivalent_workload(const nlohmann::json& subgraph);

struct NetworkTask {
  // A task of it: Task::make(workload(), subgraph, target).
  static const char* workload() { return kSubgraphWorkload; }
  nlohmann::json subgraph;
  std::string key;         // subgraph.dump()
  int weight = 0;          // occurrences in the network
  double flops = 0;        // of one occurrence
  std::vector<int> groups; // the groups that compute it
};

struct NetworkTasks {
  Graph graph;                      // after the standard passes
  // fuse_ops(graph), less the groups that are one contiguous slice of a
  // computed value: their readers read that block in place.
  std::vector<FusedGroup> groups;
  std::vector<std::vector<GroupInput>> group_inputs;  // per group, what its "inK" read
  std::vector<NetworkTask> tasks;   // in order of first occurrence
  std::vector<int> task_of_group;
  double total_flops() const;       // every occurrence
};

// Runs the standard passes and fusion on a validated graph, then extracts
// the tasks.
NetworkTasks extract_tasks(const Graph& g);

}  // namespace loom::graph
