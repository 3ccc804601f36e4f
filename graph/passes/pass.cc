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

std::string new_constant_name(const Graph& g, const Graph& out, const std::string& base) {
  std::string name = g.fresh_name(base);
  for (int i = 1; out.constants.count(name); ++i) name = g.fresh_name(base + "_" + std::to_string(i));
  return name;
}

Graph run_standard_passes(const Graph& g) {
  Graph out = g;
  for (const auto& pass : standard_passes()) out = pass->run(out);
  return out;
}

}  // namespace loom::graph
