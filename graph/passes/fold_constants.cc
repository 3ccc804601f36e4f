// Constant folding: a node whose inputs are all constants is evaluated once
// (by the reference interpreter) and becomes a constant.
#include "graph/interpreter.h"
#include "graph/passes/pass.h"

namespace loom::graph {

namespace {

class FoldConstantsPass : public GraphPass {
 public:
  std::string name() const override { return "fold_constants"; }
  Graph run(const Graph& g) const override {
    Graph out = g;
    out.nodes.clear();
    for (const Node& n : g.nodes) {
      bool all_constant = !n.inputs.empty();
      for (const auto& v : n.inputs) all_constant = all_constant && out.is_constant(v);
      if (!all_constant) {
        out.nodes.push_back(n);
        continue;
      }
      Graph one;
      for (const auto& v : n.inputs) one.constants[v] = out.constants.at(v);
      one.nodes.push_back(n);
      one.outputs = {n.output};
      one.validate();
      Values values = interpret(one, {});
      out.constants[n.output] = Constant{one.shape(n.output), std::move(values.at(n.output))};
    }
    out.validate();
    return out;
  }
};

}  // namespace

GraphPassPtr make_fold_constants_pass() { return std::make_unique<FoldConstantsPass>(); }

}  // namespace loom::graph
