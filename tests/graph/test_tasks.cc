// Task extraction (graph/tasks.h): fused groups as self-contained subgraphs,
// deduplicated into weighted tasks, and the subgraphs as ComputeDAGs.
#include <gtest/gtest.h>

#include "graph/interpreter.h"
#include "graph/tasks.h"
#include "ir/reference.h"
#include "tests/graph/graph_builder.h"

namespace loom::graph {
namespace {

using nlohmann::json;
using testing::error_of;
using testing::GraphBuilder;
using testing::one_line;

const json kPad1 = {{"pads", {1, 1, 1, 1}}};

// x [1, 2, 4, 4] -> conv(w1) -> relu -> conv(w2) -> relu; w2 has
// `second_filters` filters.
Graph two_conv_relu_blocks(int64_t second_filters = 2) {
  return GraphBuilder()
      .input("x", {1, 2, 4, 4})
      .pattern_constant("w1", {2, 2, 3, 3}, 1)
      .pattern_constant("w2", {second_filters, 2, 3, 3}, 2)
      .node("conv2d", {"x", "w1"}, "c1", kPad1)
      .node("relu", {"c1"}, "r1")
      .node("conv2d", {"r1", "w2"}, "c2", kPad1)
      .node("relu", {"c2"}, "r2")
      .build({"r2"});
}

TEST(ExtractTasks, TwoIdenticalConvReluBlocksAreOneTaskWithWeightTwo) {
  NetworkTasks t = extract_tasks(two_conv_relu_blocks());
  ASSERT_EQ(t.groups.size(), 2u);
  ASSERT_EQ(t.tasks.size(), 1u);
  EXPECT_EQ(t.tasks[0].weight, 2);
  EXPECT_EQ(t.tasks[0].groups, (std::vector<int>{0, 1}));
  EXPECT_EQ(t.task_of_group, (std::vector<int>{0, 0}));
  EXPECT_EQ(t.tasks[0].key, t.tasks[0].subgraph.dump());
  EXPECT_EQ(subgraph_summary(t.tasks[0].subgraph), "conv2d+relu 1x2x4x4");
}

TEST(ExtractTasks, DifferentShapesAreTwoTasks) {
  NetworkTasks t = extract_tasks(two_conv_relu_blocks(3));
  ASSERT_EQ(t.tasks.size(), 2u);
  EXPECT_EQ(t.tasks[0].weight, 1);
  EXPECT_EQ(t.tasks[1].weight, 1);
  EXPECT_EQ(t.task_of_group, (std::vector<int>{0, 1}));
  EXPECT_EQ(subgraph_summary(t.tasks[1].subgraph), "conv2d+relu 1x3x4x4");
}

TEST(ExtractTasks, DifferentAttributesOnEqualShapesAreTwoTasks) {
  // Dilation 2 with pads 2 keeps the 4x4 output of the first block.
  Graph g = two_conv_relu_blocks();
  g.nodes[2].attrs = {{"pads", {2, 2, 2, 2}}, {"dilations", {2, 2}}};
  g.validate();
  NetworkTasks t = extract_tasks(g);
  EXPECT_EQ(t.tasks.size(), 2u);
}

TEST(ExtractTasks, TasksAreInOrderOfFirstOccurrence) {
  // conv+relu, then a different pooling group, then the first task again.
  Graph g = GraphBuilder()
                .input("x", {1, 2, 4, 4})
                .pattern_constant("w1", {2, 2, 3, 3}, 1)
                .pattern_constant("w2", {2, 2, 3, 3}, 2)
                .node("conv2d", {"x", "w1"}, "c1", kPad1)
                .node("relu", {"c1"}, "r1")
                .node("max_pool2d", {"r1"}, "p", {{"kernel", {3, 3}}, {"pads", {1, 1, 1, 1}}})
                .node("conv2d", {"p", "w2"}, "c2", kPad1)
                .node("relu", {"c2"}, "r2")
                .build({"r2"});
  NetworkTasks t = extract_tasks(g);
  ASSERT_EQ(t.tasks.size(), 2u);
  EXPECT_EQ(t.task_of_group, (std::vector<int>{0, 1, 0}));
  EXPECT_EQ(t.tasks[0].weight, 2);
  EXPECT_EQ(t.tasks[0].groups, (std::vector<int>{0, 2}));
}

TEST(ExtractTasks, RunsTheStandardPassesFirst) {
  Graph g = GraphBuilder()
                .input("x", {1, 2, 4, 4})
                .pattern_constant("w", {2, 2, 3, 3}, 1)
                .constant("one", {2}, {1, 1})
                .constant("zero", {2}, {0, 0})
                .node("conv2d", {"x", "w"}, "c", kPad1)
                .node("batch_norm", {"c", "one", "zero", "zero", "one"}, "b")
                .node("relu", {"b"}, "y")
                .build({"y"});
  NetworkTasks t = extract_tasks(g);
  ASSERT_EQ(t.graph.nodes.size(), 2u);  // the batch norm is folded
  ASSERT_EQ(t.tasks.size(), 1u);
  EXPECT_EQ(subgraph_summary(t.tasks[0].subgraph), "conv2d+relu 1x2x4x4");
  EXPECT_EQ(t.tasks[0].subgraph["inputs"].size(), 3u);  // data, folded weight, folded bias
}

TEST(ExtractTasks, TotalFlopsCountEveryOccurrenceAndMatchTheGraph) {
  NetworkTasks t = extract_tasks(two_conv_relu_blocks());
  EXPECT_GT(t.tasks[0].flops, 0);
  EXPECT_DOUBLE_EQ(t.total_flops(), 2 * t.tasks[0].flops);
  EXPECT_DOUBLE_EQ(t.total_flops(), t.graph.flop_count());
}

TEST(GroupSubgraph, NamesNoNetworkValueAndRefersToInputsAndNodesByPosition) {
  Graph g = GraphBuilder()
                .input("image", {1, 1, 3, 3})
                .constant("kernel_weight", {1, 1, 1, 1}, {2})
                .constant("bias_value", {1}, {0.5})
                .node("conv2d", {"image", "kernel_weight", "bias_value"}, "conv_out")
                .node("relu", {"conv_out"}, "relu_out")
                .build({"relu_out"});
  std::vector<FusedGroup> groups = fuse_ops(g);
  ASSERT_EQ(groups.size(), 1u);
  std::vector<GroupInput> inputs;
  json s = group_subgraph(g, groups[0], &inputs);
  EXPECT_EQ(inputs, (std::vector<GroupInput>{{"image", 0}, {"kernel_weight", 0}, {"bias_value", 0}}));
  const json conv_attrs = {{"strides", {1, 1}}, {"pads", {0, 0, 0, 0}}, {"dilations", {1, 1}}, {"group", 1}};
  const json want = {
      {"inputs",
       {{{"shape", {1, 1, 3, 3}}},
        {{"shape", {1, 1, 1, 1}}, {"constant", true}},
        {{"shape", json::array({1})}, {"constant", true}}}},
      {"nodes",
       {{{"op", "conv2d"}, {"attrs", conv_attrs}, {"inputs", {"in0", "in1", "in2"}}},
        {{"op", "relu"}, {"attrs", json::object()}, {"inputs", json::array({"n0"})}}}}};
  EXPECT_EQ(s, want);
  const std::string text = s.dump();
  for (const char* name : {"image", "kernel_weight", "bias_value", "conv_out", "relu_out"})
    EXPECT_EQ(text.find(name), std::string::npos) << name;
}

TEST(GroupSubgraph, AValueReadTwiceIsOneInput) {
  Graph g = GraphBuilder().input("x", {2}).node("mul", {"x", "x"}, "y").build({"y"});
  std::vector<GroupInput> inputs;
  json s = group_subgraph(g, fuse_ops(g)[0], &inputs);
  EXPECT_EQ(inputs, (std::vector<GroupInput>{{"x", 0}}));
  EXPECT_EQ(s["nodes"][0]["inputs"], json({"in0", "in0"}));
}

TEST(ExtractTasks, GroupInputsAreTheNetworkValuesOfEachGroupsInputs) {
  NetworkTasks t = extract_tasks(two_conv_relu_blocks());
  EXPECT_EQ(t.group_inputs, (std::vector<std::vector<GroupInput>>{{{"x", 0}, {"w1", 0}}, {{"r1", 0}, {"w2", 0}}}));
}

// ---- slices read in place ----------------------------------------------------

json slice_attrs(std::vector<int64_t> starts, std::vector<int64_t> sizes) {
  return {{"starts", starts}, {"steps", std::vector<int64_t>(starts.size(), 1)}, {"sizes", sizes}};
}

TEST(ContiguousSliceOffset, RowsOfAMatrixAreOneBlockAtTheirFirstElement) {
  EXPECT_EQ(contiguous_slice_offset({32, 384}, slice_attrs({5, 0}, {1, 384})), 5 * 384);
  EXPECT_EQ(contiguous_slice_offset({32, 384}, slice_attrs({4, 0}, {3, 384})), 4 * 384);
  EXPECT_EQ(contiguous_slice_offset({1, 6, 4}, slice_attrs({0, 2, 1}, {1, 1, 3})), 2 * 4 + 1);
}

TEST(ContiguousSliceOffset, ColumnsAndStridedRowsAreNot) {
  EXPECT_EQ(contiguous_slice_offset({32, 384}, slice_attrs({0, 128}, {32, 128})), -1);
  EXPECT_EQ(contiguous_slice_offset({32, 384}, slice_attrs({0, 0}, {2, 383})), -1);
  EXPECT_EQ(contiguous_slice_offset({8, 4}, {{"starts", {0, 0}}, {"steps", {2, 1}}, {"sizes", {4, 4}}}), -1);
  // One index taken backwards is still one element.
  EXPECT_EQ(contiguous_slice_offset({8, 4}, {{"starts", {3, 0}}, {"steps", {-1, 1}}, {"sizes", {1, 4}}}), 12);
}

TEST(ExtractTasks, ContiguousSlicesOfAnOutsideValueAreReadInPlaceSoTheStepsAreOneTask) {
  Graph g = GraphBuilder()
                .input("x", {3, 6})
                .node("relu", {"x"}, "h")  // an outside value, computed by its own group
                .node("slice", {"h"}, "r0", slice_attrs({0, 0}, {1, 6}))
                .node("sigmoid", {"r0"}, "y0")
                .node("slice", {"h"}, "r2", slice_attrs({2, 0}, {1, 6}))
                .node("sigmoid", {"r2"}, "y2")
                .build({"y0", "y2", "h"});
  NetworkTasks t = extract_tasks(g);
  int sigmoid_task = -1;
  for (size_t k = 0; k < t.tasks.size(); ++k)
    if (subgraph_ops(t.tasks[k].subgraph) == "sigmoid") sigmoid_task = static_cast<int>(k);
  ASSERT_GE(sigmoid_task, 0) << "no task is the sigmoid alone";
  EXPECT_EQ(t.tasks[sigmoid_task].weight, 2);
  EXPECT_EQ(t.tasks[sigmoid_task].subgraph["inputs"], json({{{"shape", {1, 6}}}}));
  std::vector<GroupInput> reads;
  for (int gi : t.tasks[sigmoid_task].groups) reads.push_back(t.group_inputs[gi][0]);
  EXPECT_EQ(reads, (std::vector<GroupInput>{{"h", 0}, {"h", 12}}));
}

TEST(ExtractTasks, AGroupThatIsOnlyARowSliceIsNoKernelItsReadersReadTheRowInPlace) {
  // The slice cannot fuse into the gemm that reads it: alone it would be a copy.
  Graph g = GraphBuilder()
                .input("x", {4, 3})
                .pattern_constant("w", {3, 2})
                .node("relu", {"x"}, "h")
                .node("slice", {"h"}, "rows", slice_attrs({2, 0}, {2, 3}))
                .node("slice", {"rows"}, "row", slice_attrs({1, 0}, {1, 3}))
                .node("matmul", {"row", "w"}, "y")
                .build({"y", "h"});
  NetworkTasks t = extract_tasks(g);
  std::vector<std::string> ops;
  for (const auto& task : t.tasks) ops.push_back(subgraph_ops(task.subgraph));
  EXPECT_EQ(ops, (std::vector<std::string>{"relu", "matmul"}));
  ASSERT_EQ(t.groups.size(), 2u);
  EXPECT_EQ(t.group_inputs[1][0], (GroupInput{"h", 3 * 3}));
}

TEST(ExtractTasks, ASliceOfColumnsStaysANodeOfItsGroup) {
  Graph g = GraphBuilder()
                .input("x", {3, 6})
                .node("relu", {"x"}, "h")
                .node("slice", {"h"}, "c", slice_attrs({0, 2}, {3, 2}))
                .node("sigmoid", {"c"}, "y")
                .build({"y", "h"});
  NetworkTasks t = extract_tasks(g);
  std::vector<std::string> ops;
  for (const auto& task : t.tasks) ops.push_back(subgraph_ops(task.subgraph));
  EXPECT_NE(std::find(ops.begin(), ops.end(), "slice+sigmoid"), ops.end());
}

// ---- subgraph_dag -------------------------------------------------------------

TEST(SubgraphDag, InputsArePlaceholdersInKAndTheOutputIsTheLastNodesStage) {
  Graph g = GraphBuilder()
                .input("x", {1, 2, 4, 4})
                .pattern_constant("w", {2, 2, 3, 3})
                .pattern_constant("b", {1, 2, 1, 1})
                .node("conv2d", {"x", "w"}, "c", kPad1)
                .node("add", {"c", "b"}, "a")
                .node("relu", {"a"}, "y")
                .build({"y"});
  std::vector<GroupInput> inputs;
  ComputeDAG dag = subgraph_dag(group_subgraph(g, fuse_ops(g)[0], &inputs));
  EXPECT_EQ(dag.input_names(), (std::vector<std::string>{"in0", "in1", "in2"}));
  EXPECT_EQ(dag.output_names(), (std::vector<std::string>{"relu2"}));
  EXPECT_GE(dag.op_index("conv2d0"), 0);
  EXPECT_GE(dag.op_index("conv2d0_pad"), 0);
  EXPECT_GE(dag.op_index("add1"), 0);
}

TEST(SubgraphDag, ABatchOneResidualAddReadsEachOperandAtItsOwnAxes) {
  // Dims of 1 against output dims of 1 are not broadcasts: the add is
  // element-wise in its conv operand (what fusing the conv into it needs);
  // the bias [1, 2, 1, 1] broadcasts over h and w only.
  Graph g = GraphBuilder()
                .input("x", {1, 2, 4, 4})
                .input("r", {1, 2, 4, 4})
                .pattern_constant("w", {2, 2, 3, 3})
                .pattern_constant("b", {1, 2, 1, 1})
                .node("conv2d", {"x", "w"}, "c", kPad1)
                .node("add", {"c", "b"}, "cb")
                .node("add", {"cb", "r"}, "y")
                .build({"y"});
  std::vector<GroupInput> inputs;
  ComputeDAG dag = subgraph_dag(group_subgraph(g, fuse_ops(g)[0], &inputs));
  auto indices = [&](const std::string& op, const std::string& tensor) {
    std::vector<std::string> out;
    for (const auto& acc : dag.accesses(dag.op_index(op)))
      if (acc.tensor == tensor)
        for (const Expr& e : acc.indices) out.push_back(e->kind == ExprKind::kVar ? "axis" : to_string(e));
    return out;
  };
  EXPECT_EQ(indices("add1", "conv2d0"), (std::vector<std::string>{"axis", "axis", "axis", "axis"}));
  EXPECT_EQ(indices("add1", "in2"), (std::vector<std::string>{"axis", "axis", "0", "0"}));
}

// A small network of several group kinds: conv+bias+relu, a residual block,
// pooling, a reshape and a dense layer with softmax.
Graph mixed_network() {
  return GraphBuilder()
      .input("x", {1, 2, 5, 5})
      .pattern_constant("w1", {3, 2, 3, 3}, 1)
      .pattern_constant("b1", {3}, 2)
      .pattern_constant("w2", {3, 3, 3, 3}, 3)
      .pattern_constant("fc", {3, 4}, 5)
      .pattern_constant("fcb", {4}, 6)
      .node("conv2d", {"x", "w1", "b1"}, "c1", kPad1)
      .node("relu", {"c1"}, "r1")
      .node("conv2d", {"r1", "w2"}, "c2", kPad1)
      .node("add", {"r1", "c2"}, "res")
      .node("relu", {"res"}, "r2")
      .node("avg_pool2d", {"r2"}, "p", {{"kernel", {2, 2}}, {"strides", {2, 2}}, {"ceil_mode", 1}})
      .node("global_avg_pool2d", {"p"}, "gap")
      .node("reshape", {"gap"}, "flat", {{"shape", {1, -1}}})
      .node("gemm", {"flat", "fc", "fcb"}, "logits")
      .node("softmax", {"logits"}, "y")
      .build({"y"});
}

TEST(SubgraphDag, ReferenceEvaluationOfEachGroupEqualsTheInterpretersValue) {
  NetworkTasks t = extract_tasks(mixed_network());
  ASSERT_GE(t.groups.size(), 5u);
  Values values = interpret(t.graph, random_graph_inputs(t.graph, 3));
  for (size_t k = 0; k < t.groups.size(); ++k) {
    SCOPED_TRACE("group " + std::to_string(k) + ": " + subgraph_summary(t.tasks[t.task_of_group[k]].subgraph));
    ComputeDAG dag = subgraph_dag(t.tasks[t.task_of_group[k]].subgraph);
    std::map<std::string, TensorData> feed;
    for (size_t i = 0; i < t.group_inputs[k].size(); ++i) {
      const auto& [v, offset] = t.group_inputs[k][i];
      const auto begin = values.at(v).begin() + offset;
      const Shape shape = t.tasks[t.task_of_group[k]].subgraph["inputs"][i]["shape"].get<Shape>();
      feed["in" + std::to_string(i)].assign(begin, begin + num_elements(shape));
    }
    auto out = evaluate_reference(dag, feed);
    ASSERT_EQ(dag.output_names().size(), 1u);
    EXPECT_EQ(compare_outputs(out.at(dag.output_names()[0]), values.at(t.groups[k].output(t.graph)), 1e-6, 1e-7),
              "");
  }
}

// A subgraph of two nodes (relu over input 0, then `second`).
json two_node_subgraph(const json& second) {
  return {{"inputs", {{{"shape", {2, 3}}}}},
          {"nodes", {{{"op", "relu"}, {"attrs", json::object()}, {"inputs", json::array({"in0"})}}, second}}};
}

std::string dag_error(const json& s) {
  const std::string msg = error_of([&] { subgraph_dag(s); });
  EXPECT_TRUE(one_line(msg)) << msg;
  return msg;
}

TEST(SubgraphDag, UnknownOpNamesTheNode) {
  const std::string msg = dag_error(two_node_subgraph({{"op", "foo"}, {"inputs", json::array({"n0"})}}));
  EXPECT_EQ(msg.rfind("node 'subgraph.nodes[1]' (foo): unknown op", 0), 0u) << msg;
}

TEST(SubgraphDag, ReferenceToAMissingInputNamesTheNode) {
  EXPECT_EQ(dag_error(two_node_subgraph({{"op", "relu"}, {"inputs", json::array({"in4"})}})),
            "node 'subgraph.nodes[1]' (relu): input 'in4' is not defined before the node");
}

TEST(SubgraphDag, ReferenceToALaterNodeNamesTheNode) {
  json s = two_node_subgraph({{"op", "neg"}, {"inputs", json::array({"n0"})}});
  s["nodes"][0]["inputs"] = {"n1"};
  EXPECT_EQ(dag_error(s), "node 'subgraph.nodes[0]' (relu): input 'n1' is not defined before the node");
}

TEST(SubgraphDag, ReferenceThatIsNotInKOrNKNamesTheNode) {
  EXPECT_EQ(dag_error(two_node_subgraph({{"op", "relu"}, {"inputs", json::array({"x"})}})),
            "node 'subgraph.nodes[1]' (relu): input 'x' is not defined before the node");
}

TEST(SubgraphDag, ShapeErrorNamesTheNode) {
  json s = two_node_subgraph({{"op", "add"}, {"inputs", {"n0", "in1"}}});
  s["inputs"].push_back({{"shape", {4, 5}}});
  EXPECT_EQ(dag_error(s), "node 'subgraph.nodes[1]' (add): shapes 2x3 and 4x5 do not broadcast");
}

TEST(SubgraphDag, AttributeErrorNamesTheNode) {
  EXPECT_EQ(dag_error(two_node_subgraph({{"op", "neg"}, {"inputs", json::array({"n0"})}, {"attrs", {{"bad", 1}}}})),
            "node 'subgraph.nodes[1]' (neg): attribute 'bad' is not one of neg's (none)");
}

TEST(SubgraphDag, UnknownKeyInANodeIsNamed) {
  EXPECT_EQ(dag_error(two_node_subgraph({{"op", "relu"}, {"inputs", json::array({"n0"})}, {"name", "r"}})),
            "subgraph.nodes[1].name: unknown key");
}

TEST(SubgraphDag, NodeWithoutAnOpIsNamed) {
  EXPECT_EQ(dag_error(two_node_subgraph({{"inputs", json::array({"n0"})}})),
            "subgraph.nodes[1]: expected {\"op\": ..., \"attrs\": {...}, \"inputs\": [...]}");
}

TEST(SubgraphDag, EmptyNodeListIsAnError) {
  EXPECT_EQ(dag_error({{"inputs", json::array()}, {"nodes", json::array()}}),
            "subgraph.nodes: expected a non-empty array");
}

TEST(SubgraphDag, InputWithoutAShapeIsNamed) {
  json s = two_node_subgraph({{"op", "neg"}, {"inputs", json::array({"n0"})}});
  s["inputs"].push_back({{"dims", {2}}});
  EXPECT_EQ(dag_error(s), "subgraph.inputs[1]: expected {\"shape\": [...]}");
}

}  // namespace
}  // namespace loom::graph
