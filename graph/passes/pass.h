// Graph passes: each maps a validated Graph to a validated Graph and lives in
// its own file (graph/passes/<name>.cc). The standard pipeline is listed once,
// in pass.cc; fusion (fuse_ops.h) partitions the result and is not a
// Graph -> Graph pass.
//
// Adding a pass:
//  1. a GraphPass in graph/passes/<name>.cc and its make_<name>_pass()
//     declared below;
//  2. its place in standard_passes() (pass.cc), with why it stands there
//     written in the comment above standard_passes();
//  3. tests in tests/graph/test_passes.cc: the smallest graph the pass
//     changes, interpreted on random inputs to the same outputs as before
//     (expect_same_outputs); a graph it must leave alone comes out unchanged.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace loom::graph {

class GraphPass {
 public:
  virtual ~GraphPass() = default;
  virtual std::string name() const = 0;
  virtual Graph run(const Graph& g) const = 0;
};
using GraphPassPtr = std::unique_ptr<GraphPass>;

GraphPassPtr make_fold_constants_pass();
GraphPassPtr make_fold_batch_norm_pass();
GraphPassPtr make_drop_padding_taps_pass();
GraphPassPtr make_eliminate_dead_nodes_pass();

// A name for a constant a pass adds to `out` (a copy of `g` being
// rewritten): unused in `g` and among the constants `out` has gained.
std::string new_constant_name(const Graph& g, const Graph& out, const std::string& base);

// In order: constants folded first (a batch norm's parameters may be
// computed from constants), then batch norms into their convolutions, then
// the kernel taps that read only padding out of the (folded) weights, then
// the nodes and constants nothing reads any more are dropped (the weights
// the taps were cut from among them).
std::vector<GraphPassPtr> standard_passes();
Graph run_standard_passes(const Graph& g);

}  // namespace loom::graph
