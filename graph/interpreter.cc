#include "graph/interpreter.h"

#include <algorithm>

#include "graph/ops.h"
#include "ir/error.h"
#include "ir/reference.h"

namespace loom::graph {

const std::vector<float>& graph_input_value(const GraphInput& in, const Values& inputs) {
  auto it = inputs.find(in.name);
  if (it == inputs.end()) throw LoomError("input '" + in.name + "': no value given");
  if (static_cast<int64_t>(it->second.size()) != num_elements(in.shape))
    throw LoomError("input '" + in.name + "': " + std::to_string(it->second.size()) + " values for shape " +
                    shape_string(in.shape));
  return it->second;
}

Values interpret(const Graph& g, const Values& inputs) {
  Values values;
  for (const auto& in : g.inputs) values[in.name] = graph_input_value(in, inputs);
  for (const auto& [name, c] : g.constants) values[name] = c.data;
  for (const auto& n : g.nodes) {
    const OpDef* op = find_op(n.op);
    std::vector<Tensor> ins;
    std::map<std::string, TensorData> feed;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const std::string pname = "in" + std::to_string(i);
      ins.push_back(placeholder(op_detail::ir_shape(g.shape(n.inputs[i])), pname));
      feed[pname] = values.at(n.inputs[i]);
    }
    try {
      Tensor out = op->lower(ins, n.attrs, "out");
      ComputeDAG dag(ins, {out});
      values[n.output] = evaluate_reference(dag, feed).at("out");
    } catch (const LoomError& e) {
      throw LoomError("node '" + n.name + "' (" + n.op + "): " + e.what());
    }
  }
  return values;
}

Values random_graph_inputs(const Graph& g, uint64_t seed) {
  std::vector<Tensor> holders;
  for (const auto& in : g.inputs) holders.push_back(placeholder(op_detail::ir_shape(in.shape), in.name));
  Values out;
  if (holders.empty()) return out;
  // A DAG of just the inputs gives random_inputs its per-name streams.
  auto data = random_inputs(ComputeDAG(holders, holders), seed);
  for (const auto& in : g.inputs) {
    std::vector<float> v = data.at(in.name);
    // Integer inputs: the same stream mapped from [-1, 1) onto [0, range).
    if (in.integer_range > 0)
      for (float& x : v)
        x = static_cast<float>(std::min<int64_t>(in.integer_range - 1,
                                                 static_cast<int64_t>((x + 1.0f) * 0.5f * in.integer_range)));
    out[in.name] = std::move(v);
  }
  return out;
}

}  // namespace loom::graph
