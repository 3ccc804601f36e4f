#include "graph/tasks.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "graph/ops.h"
#include "graph/passes/pass.h"
#include "ir/error.h"

namespace loom::graph {

int64_t contiguous_slice_offset(const Shape& shape, const nlohmann::json& a) {
  const auto starts = a.at("starts").get<std::vector<int64_t>>();
  const auto steps = a.at("steps").get<std::vector<int64_t>>();
  const auto sizes = a.at("sizes").get<std::vector<int64_t>>();
  const size_t rank = shape.size();
  if (starts.size() != rank || steps.size() != rank || sizes.size() != rank) return -1;
  int64_t offset = 0, stride = 1;
  bool whole = true;  // every dim inside this one is taken whole
  for (size_t i = rank; i-- > 0;) {
    if (sizes[i] > 1 && (!whole || steps[i] != 1)) return -1;
    offset += starts[i] * stride;
    whole = whole && starts[i] == 0 && sizes[i] == shape[i];
    stride *= shape[i];
  }
  return offset;
}

namespace {

// Where slice node `n` reads its input in place: the element offset of a
// contiguous block of a computed value (a constant's slices are folded
// before fusion, and its own layout is what a schedule may rewrite); -1
// when it does not.
int64_t in_place_slice_offset(const Graph& g, const Node& n) {
  if (n.op != "slice" || g.is_constant(n.inputs[0])) return -1;
  return contiguous_slice_offset(g.shape(n.inputs[0]), n.attrs);
}

}  // namespace

nlohmann::json group_subgraph(const Graph& g, const FusedGroup& group, std::vector<GroupInput>* inputs) {
  std::map<std::string, std::string> ref;  // network value -> "inK" / "nK"
  std::map<std::tuple<std::string, int64_t, Shape>, std::string> block_ref;  // a block read in place -> "inK"
  nlohmann::json in = nlohmann::json::array(), nodes = nlohmann::json::array();
  inputs->clear();
  auto add_input = [&](const std::string& v, int64_t offset, const Shape& shape) {
    nlohmann::json ij = {{"shape", shape}};
    if (g.is_constant(v)) ij["constant"] = true;
    in.push_back(ij);
    inputs->push_back({v, offset});
    return "in" + std::to_string(inputs->size() - 1);
  };
  for (size_t k = 0; k < group.nodes.size(); ++k) {
    const Node& n = g.nodes[group.nodes[k]];
    // A slice of an outside value, read in place (unless it is the output).
    const int64_t offset =
        k + 1 < group.nodes.size() && !ref.count(n.inputs[0]) ? in_place_slice_offset(g, n) : int64_t{-1};
    if (offset >= 0) {
      auto it = block_ref.find({n.inputs[0], offset, g.shape(n.output)});
      if (it == block_ref.end())
        it = block_ref.emplace(std::make_tuple(n.inputs[0], offset, g.shape(n.output)),
                               add_input(n.inputs[0], offset, g.shape(n.output))).first;
      ref[n.output] = it->second;
      continue;
    }
    nlohmann::json refs = nlohmann::json::array();
    for (const auto& v : n.inputs) {
      auto it = ref.find(v);
      if (it == ref.end()) it = ref.emplace(v, add_input(v, 0, g.shape(v))).first;
      refs.push_back(it->second);
    }
    ref[n.output] = "n" + std::to_string(nodes.size());
    nodes.push_back({{"op", n.op}, {"attrs", n.attrs}, {"inputs", refs}});
  }
  return {{"inputs", in}, {"nodes", nodes}};
}

namespace {

// The subgraph as a Graph of its own (inputs "inK", node outputs "nK"),
// validated: shapes and attributes are checked exactly as in a network.
Graph subgraph_graph(const nlohmann::json& s) {
  if (!s.is_object()) throw LoomError("subgraph: expected an object");
  for (const auto& [k, v] : s.items())
    if (k != "inputs" && k != "nodes") throw LoomError("subgraph." + k + ": unknown key (expected inputs, nodes)");
  if (!s.contains("inputs") || !s["inputs"].is_array()) throw LoomError("subgraph.inputs: expected an array");
  if (!s.contains("nodes") || !s["nodes"].is_array() || s["nodes"].empty())
    throw LoomError("subgraph.nodes: expected a non-empty array");
  Graph g;
  for (size_t i = 0; i < s["inputs"].size(); ++i) {
    const auto& ij = s["inputs"][i];
    const std::string what = "subgraph.inputs[" + std::to_string(i) + "]";
    if (!ij.is_object() || !ij.contains("shape") || !ij["shape"].is_array())
      throw LoomError(what + ": expected {\"shape\": [...]}");
    for (const auto& [k, v] : ij.items())
      if (k != "shape" && k != "constant") throw LoomError(what + "." + k + ": unknown key");
    if (ij.contains("constant") && !ij["constant"].is_boolean()) throw LoomError(what + ".constant: expected true or false");
    Shape shape;
    for (const auto& d : ij["shape"]) {
      if (!d.is_number_integer()) throw LoomError(what + ".shape: expected integers");
      shape.push_back(d.get<int64_t>());
    }
    g.inputs.push_back({"in" + std::to_string(i), shape});
  }
  for (size_t k = 0; k < s["nodes"].size(); ++k) {
    const auto& nj = s["nodes"][k];
    const std::string what = "subgraph.nodes[" + std::to_string(k) + "]";
    if (!nj.is_object() || !nj.contains("op") || !nj["op"].is_string() || !nj.contains("inputs") ||
        !nj["inputs"].is_array())
      throw LoomError(what + ": expected {\"op\": ..., \"attrs\": {...}, \"inputs\": [...]}");
    for (const auto& [key, v] : nj.items())
      if (key != "op" && key != "attrs" && key != "inputs") throw LoomError(what + "." + key + ": unknown key");
    Node n;
    n.op = nj["op"].get<std::string>();
    n.name = what;
    n.output = "n" + std::to_string(k);
    n.attrs = nj.value("attrs", nlohmann::json::object());
    for (const auto& r : nj["inputs"]) {
      if (!r.is_string()) throw LoomError(what + ".inputs: expected \"inK\" or \"nK\" references");
      n.inputs.push_back(r.get<std::string>());
    }
    g.nodes.push_back(std::move(n));
  }
  g.outputs = {g.nodes.back().output};
  g.validate();
  return g;
}

}  // namespace

ComputeDAG subgraph_dag(const nlohmann::json& s) {
  Graph g = subgraph_graph(s);
  std::map<std::string, Tensor> tensors;
  std::vector<Tensor> inputs;
  for (const auto& in : g.inputs) {
    inputs.push_back(placeholder(op_detail::ir_shape(in.shape), in.name));
    tensors[in.name] = inputs.back();
  }
  Tensor out;
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& n = g.nodes[k];
    std::vector<Tensor> args;
    for (const auto& v : n.inputs) args.push_back(tensors.at(v));
    out = find_op(n.op)->lower(args, n.attrs, n.op + std::to_string(k));
    tensors[n.output] = out;
  }
  // Inputs no stage reads (e.g. a gemm bias scaled by beta = 0 still reads
  // it) are kept: the task's signature is the subgraph's. Weights are
  // constants, so schedules may rewrite their layout.
  ComputeDAG dag(inputs, {out});
  for (size_t i = 0; i < s["inputs"].size(); ++i)
    if (s["inputs"][i].value("constant", false)) dag.mark_constant(g.inputs[i].name);
  return dag;
}

std::optional<EquivalentWorkload> equivalent_workload(const nlohmann::json& s) {
  const Graph g = subgraph_graph(s);
  const Node& main = g.nodes.front();
  auto attr = [&](const std::string& key, std::vector<int64_t> fallback) {
    if (!main.attrs.contains(key)) return fallback;
    return main.attrs[key].get<std::vector<int64_t>>();
  };
  auto all_equal = [](const std::vector<int64_t>& v) {
    return std::adjacent_find(v.begin(), v.end(), std::not_equal_to<>()) == v.end();
  };
  // The ops after the main one, as the leaves_out text names them.
  std::string rest;
  for (size_t k = 1; k < g.nodes.size(); ++k) rest += (rest.empty() ? "" : "+") + g.nodes[k].op;
  EquivalentWorkload w;
  if (main.op == "conv2d") {
    const Shape& x = g.shape(main.inputs[0]);
    const Shape& wt = g.shape(main.inputs[1]);
    const auto strides = attr("strides", {1, 1}), pads = attr("pads", {0, 0, 0, 0}), dil = attr("dilations", {1, 1});
    const int64_t group = main.attrs.value("group", int64_t{1});
    if (x.size() != 4 || !all_equal(strides) || !all_equal(pads) || !all_equal(dil) || wt[2] != wt[3]) return std::nullopt;
    const bool bias = main.inputs.size() > 2;
    w.params = {{"N", x[0]}, {"C", x[1]}, {"H", x[2]}, {"W", x[3]}, {"R", wt[2]}, {"S", wt[3]},
                {"stride", strides[0]}, {"pad", pads[0]}, {"dilation", dil[0]}};
    if (group == 1 && bias && rest == "relu") {
      w.workload = "conv2d_bias_relu";
      w.params["K"] = wt[0];
      return w;
    }
    if (group == 1) {
      w.workload = "conv2d";
      w.params["K"] = wt[0];
    } else if (group == x[1] && wt[0] == x[1] && wt[1] == 1) {
      w.workload = "depthwise_conv2d";
    } else {
      return std::nullopt;
    }
  } else if (main.op == "gemm" || main.op == "matmul") {
    const Shape& a = g.shape(main.inputs[0]);
    const Shape& out = g.shape(main.output);
    if (a.size() != 2 || out.size() != 2) return std::nullopt;
    w.workload = "matmul";
    w.params = {{"M", a[0]}, {"K", a[1]}, {"N", out[1]}};
    if (main.op == "gemm" && main.inputs.size() > 2) rest = rest.empty() ? "bias" : "bias+" + rest;
  } else {
    return std::nullopt;
  }
  if (main.op == "conv2d" && main.inputs.size() > 2) rest = rest.empty() ? "bias" : "bias+" + rest;
  w.leaves_out = rest;
  return w;
}

std::string subgraph_ops(const nlohmann::json& s) {
  std::string ops;
  if (!s.is_object()) return ops;
  for (const auto& n : s.value("nodes", nlohmann::json::array()))
    ops += (ops.empty() ? "" : "+") + n.value("op", std::string("?"));
  return ops;
}

std::string subgraph_summary(const nlohmann::json& s) {
  const std::string ops = subgraph_ops(s);
  try {
    Graph g = subgraph_graph(s);
    return ops + " " + shape_string(g.shape(g.outputs[0]));
  } catch (const LoomError&) {
    return ops;
  }
}

std::string subgraph_inputs_summary(const nlohmann::json& s) {
  std::string out;
  if (!s.is_object() || !s.contains("inputs") || !s["inputs"].is_array()) return out;
  for (const auto& in : s["inputs"]) {
    std::string shape = "?";  // a malformed input is only described, not judged, here
    bool constant = false;
    try {
      shape = shape_string(in.at("shape").get<Shape>());
      constant = in.value("constant", false);
    } catch (const std::exception&) {
    }
    out += (out.empty() ? "" : ", ") + shape + (constant ? "*" : "");
  }
  return out;
}

double NetworkTasks::total_flops() const {
  double total = 0;
  for (const auto& t : tasks) total += t.flops * t.weight;
  return total;
}

NetworkTasks extract_tasks(const Graph& g) {
  NetworkTasks out;
  out.graph = run_standard_passes(g);
  std::map<std::string, int> task_index;
  // A group that is one contiguous slice of a computed value is no kernel:
  // its readers read the block in place (a slice of a slice, offsets added).
  // A group of such slices (a chain: each has one input) is one block too.
  std::map<std::string, GroupInput> in_place;
  auto read_through = [&](const GroupInput& in) {
    auto p = in_place.find(in.value);
    return p == in_place.end() ? in : GroupInput{p->second.value, p->second.offset + in.offset};
  };
  auto block_of = [&](const FusedGroup& group) -> std::optional<GroupInput> {
    std::map<std::string, GroupInput> local;
    for (int i : group.nodes) {
      const Node& n = out.graph.nodes[i];
      const int64_t offset = in_place_slice_offset(out.graph, n);
      if (offset < 0) return std::nullopt;
      auto l = local.find(n.inputs[0]);
      const GroupInput from = l != local.end() ? l->second : read_through({n.inputs[0], 0});
      local[n.output] = {from.value, from.offset + offset};
    }
    return local.at(group.output(out.graph));
  };
  const auto& outputs = out.graph.outputs;
  for (auto& group : fuse_ops(out.graph)) {
    if (std::find(outputs.begin(), outputs.end(), group.output(out.graph)) == outputs.end()) {
      if (auto block = block_of(group)) {
        in_place[group.output(out.graph)] = *block;
        continue;
      }
    }
    std::vector<GroupInput> inputs;
    nlohmann::json s = group_subgraph(out.graph, group, &inputs);
    for (auto& in : inputs) in = read_through(in);
    out.groups.push_back(std::move(group));
    out.group_inputs.push_back(inputs);
    const std::string key = s.dump();
    auto it = task_index.find(key);
    if (it == task_index.end()) {
      NetworkTask t;
      t.subgraph = s;
      t.key = key;
      t.flops = subgraph_dag(s).flop_count();
      it = task_index.emplace(key, static_cast<int>(out.tasks.size())).first;
      out.tasks.push_back(std::move(t));
    }
    NetworkTask& t = out.tasks[it->second];
    ++t.weight;
    t.groups.push_back(static_cast<int>(out.task_of_group.size()));
    out.task_of_group.push_back(it->second);
  }
  return out;
}

}  // namespace loom::graph
