// Operator fusion by Relay's FuseOps rules, as a partition of a graph's
// nodes into groups, each compiled as one kernel (one tuning task). A node
// fuses with the nodes up to its immediate post-dominator (the first node
// every path from it to the graph outputs passes through) when the node's
// group and everything on those paths allow it:
//  - an out-element-wise-fusable group (conv2d, gemm, matmul, pooling) takes
//    element-wise and broadcast paths (bias, residual add, ReLU, a GELU's
//    diamond x * erf(x / sqrt 2) ...);
//  - an element-wise or broadcast group fuses into an injective or reduction
//    post-dominator through injective paths;
//  - then (a second phase, so that element-wise ops go to their contraction
//    first) injective groups fuse through injective paths.
// Two contractions never fuse, opaque ops (softmax, layer_norm) fuse with
// nothing, a graph output ends its group, and constants are never fused
// into: they are group inputs. Every group has exactly one output, the value
// of its last node.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/ops.h"

namespace loom::graph {

struct FusedGroup {
  std::vector<int> nodes;  // indices into Graph::nodes, in graph order
  OpPattern pattern = OpPattern::kElemWise;  // the strongest pattern in the group
  const std::string& output(const Graph& g) const { return g.nodes[nodes.back()].output; }
};

// Groups in graph order (a group's inputs come from earlier groups, graph
// inputs or constants).
std::vector<FusedGroup> fuse_ops(const Graph& g);

}  // namespace loom::graph
