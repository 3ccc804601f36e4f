#include "graph/passes/pass.h"

namespace loom::graph {

std::vector<GraphPassPtr> standard_passes() {
  std::vector<GraphPassPtr> passes;
  passes.push_back(make_fold_constants_pass());
  passes.push_back(make_fold_batch_norm_pass());
  passes.push_back(make_drop_padding_taps_pass());
  passes.push_back(make_eliminate_dead_nodes_pass());
  return passes;
}

Graph run_standard_passes(const Graph& g) {
  Graph out = g;
  for (const auto& pass : standard_passes()) out = pass->run(out);
  return out;
}

}  // namespace loom::graph
