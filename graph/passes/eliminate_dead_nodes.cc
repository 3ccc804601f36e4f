// Dead-node elimination: nodes whose output no graph output depends on, and
// constants nothing reads, are dropped.
#include <set>

#include "graph/passes/pass.h"

namespace loom::graph {

namespace {

class EliminateDeadNodesPass : public GraphPass {
 public:
  std::string name() const override { return "eliminate_dead_nodes"; }
  Graph run(const Graph& g) const override {
    std::set<std::string> live(g.outputs.begin(), g.outputs.end());
    std::vector<bool> keep(g.nodes.size(), false);
    for (size_t i = g.nodes.size(); i-- > 0;) {
      const Node& n = g.nodes[i];
      if (!live.count(n.output)) continue;
      keep[i] = true;
      live.insert(n.inputs.begin(), n.inputs.end());
    }
    Graph out;
    out.inputs = g.inputs;  // an unused input stays: callers still pass it
    out.outputs = g.outputs;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (keep[i]) out.nodes.push_back(g.nodes[i]);
    for (const auto& [name, c] : g.constants)
      if (live.count(name)) out.constants[name] = c;
    out.validate();
    return out;
  }
};

}  // namespace

GraphPassPtr make_eliminate_dead_nodes_pass() { return std::make_unique<EliminateDeadNodesPass>(); }

}  // namespace loom::graph
