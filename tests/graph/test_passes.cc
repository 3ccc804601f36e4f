// Graph passes: constant folding, batch-norm folding, dead-node elimination,
// and the standard pipeline. Each keeps the interpreter's outputs.
#include <gtest/gtest.h>

#include "graph/interpreter.h"
#include "graph/passes/pass.h"
#include "ir/reference.h"
#include "tests/graph/graph_builder.h"

namespace loom::graph {
namespace {

using nlohmann::json;
using testing::GraphBuilder;

std::vector<std::string> node_names(const Graph& g) {
  std::vector<std::string> names;
  for (const auto& n : g.nodes) names.push_back(n.name);
  return names;
}

std::vector<std::string> constant_names(const Graph& g) {
  std::vector<std::string> names;
  for (const auto& [name, c] : g.constants) names.push_back(name);
  return names;
}

// Every graph output of `after` equals that of `before` on the same random
// inputs, within rtol.
void expect_same_outputs(const Graph& before, const Graph& after, double rtol = 0, double atol = 0) {
  ASSERT_EQ(before.outputs, after.outputs);
  Values in = random_graph_inputs(before, 11);
  Values a = interpret(before, in), b = interpret(after, in);
  for (const auto& o : before.outputs) {
    SCOPED_TRACE("output " + o);
    if (rtol == 0 && atol == 0) {
      EXPECT_EQ(b.at(o), a.at(o));
    } else {
      EXPECT_EQ(compare_outputs(b.at(o), a.at(o), rtol, atol), "");
    }
  }
}

// ---- fold_constants -----------------------------------------------------------

TEST(FoldConstants, NodeOverConstantsBecomesAConstant) {
  Graph g = GraphBuilder()
                .input("x", {3})
                .constant("c1", {3}, {1, 2, 3})
                .constant("c2", {3}, {10, 20, 30})
                .node("add", {"c1", "c2"}, "s")
                .node("mul", {"x", "s"}, "y")
                .build({"y"});
  Graph f = make_fold_constants_pass()->run(g);
  EXPECT_EQ(node_names(f), (std::vector<std::string>{"y"}));
  ASSERT_TRUE(f.is_constant("s"));
  EXPECT_EQ(f.constants.at("s").shape, (Shape{3}));
  EXPECT_EQ(f.constants.at("s").data, (std::vector<float>{11, 22, 33}));
  expect_same_outputs(g, f);
}

TEST(FoldConstants, ChainOfNodesOverConstantsFoldsToTheEnd) {
  Graph g = GraphBuilder()
                .input("x", {2})
                .constant("c", {2}, {1, -4})
                .node("abs", {"c"}, "a")
                .node("sqrt", {"a"}, "b")
                .node("add", {"x", "b"}, "y")
                .build({"y"});
  Graph f = make_fold_constants_pass()->run(g);
  EXPECT_EQ(node_names(f), (std::vector<std::string>{"y"}));
  EXPECT_EQ(f.constants.at("b").data, (std::vector<float>{1, 2}));
  expect_same_outputs(g, f);
}

TEST(FoldConstants, GraphOutputComputedFromConstantsAloneBecomesAConstant) {
  Graph g = GraphBuilder()
                .constant("c", {2, 2}, {1, 2, 3, 4})
                .node("transpose", {"c"}, "y")
                .build({"y"});
  Graph f = make_fold_constants_pass()->run(g);
  EXPECT_TRUE(f.nodes.empty());
  EXPECT_EQ(f.constants.at("y").data, (std::vector<float>{1, 3, 2, 4}));
  EXPECT_EQ(interpret(f, {}).at("y"), (std::vector<float>{1, 3, 2, 4}));
}

TEST(FoldConstants, NodeReadingAGraphInputStays) {
  Graph g = GraphBuilder()
                .input("x", {2})
                .constant("c", {2}, {1, 2})
                .node("add", {"x", "c"}, "a")
                .node("relu", {"a"}, "y")
                .build({"y"});
  Graph f = make_fold_constants_pass()->run(g);
  EXPECT_EQ(node_names(f), (std::vector<std::string>{"a", "y"}));
  EXPECT_EQ(constant_names(f), (std::vector<std::string>{"c"}));
}

TEST(FoldConstants, FoldedInputsStayForDeadNodeElimination) {
  Graph g = GraphBuilder()
                .input("x", {2})
                .constant("c", {2}, {1, 2})
                .node("neg", {"c"}, "n")
                .node("add", {"x", "n"}, "y")
                .build({"y"});
  EXPECT_EQ(constant_names(make_fold_constants_pass()->run(g)), (std::vector<std::string>{"c", "n"}));
}

// ---- fold_batch_norm ----------------------------------------------------------

// x [1, 2, 4, 4] -> conv2d (3 filters, 3x3, pads 1, bias when `bias`) -> "c"
// -> batch_norm -> "y".
GraphBuilder conv_bn(bool bias) {
  GraphBuilder b;
  b.input("x", {1, 2, 4, 4})
      .pattern_constant("w", {3, 2, 3, 3}, 1)
      .constant("scale", {3}, {1.5f, -0.5f, 2})
      .constant("beta", {3}, {0.1f, 0.2f, -0.3f})
      .constant("mean", {3}, {0.05f, -0.1f, 0.2f})
      .constant("var", {3}, {0.5f, 1.25f, 2});
  std::vector<std::string> conv_in = {"x", "w"};
  if (bias) {
    b.constant("b", {3}, {0.3f, -0.2f, 0.1f});
    conv_in.push_back("b");
  }
  b.node("conv2d", conv_in, "c", {{"pads", {1, 1, 1, 1}}})
      .node("batch_norm", {"c", "scale", "beta", "mean", "var"}, "y", {{"epsilon", 1e-3}});
  return b;
}

TEST(FoldBatchNorm, ConvFollowedByBatchNormBecomesOneConvWithSameOutput) {
  Graph g = conv_bn(true).build({"y"});
  Graph f = make_fold_batch_norm_pass()->run(g);
  ASSERT_EQ(f.nodes.size(), 1u);
  const Node& n = f.nodes[0];
  EXPECT_EQ(n.op, "conv2d");
  EXPECT_EQ(n.output, "y");
  ASSERT_EQ(n.inputs.size(), 3u);
  EXPECT_EQ(n.inputs[0], "x");
  EXPECT_TRUE(f.is_constant(n.inputs[1]));
  EXPECT_TRUE(f.is_constant(n.inputs[2]));
  EXPECT_EQ(n.attrs["pads"], json({1, 1, 1, 1}));
  expect_same_outputs(g, f, 1e-5, 1e-6);
}

TEST(FoldBatchNorm, ConvWithoutBiasGetsOne) {
  Graph g = conv_bn(false).build({"y"});
  Graph f = make_fold_batch_norm_pass()->run(g);
  ASSERT_EQ(f.nodes.size(), 1u);
  ASSERT_EQ(f.nodes[0].inputs.size(), 3u);
  EXPECT_EQ(f.shape(f.nodes[0].inputs[2]), (Shape{3}));
  expect_same_outputs(g, f, 1e-5, 1e-6);
}

TEST(FoldBatchNorm, DepthwiseConvFoldsPerOutputChannel) {
  Graph g = GraphBuilder()
                .input("x", {1, 3, 4, 4})
                .pattern_constant("w", {3, 1, 3, 3}, 2)
                .constant("scale", {3}, {1.5f, -0.5f, 2})
                .constant("beta", {3}, {0.1f, 0.2f, -0.3f})
                .constant("mean", {3}, {0.05f, -0.1f, 0.2f})
                .constant("var", {3}, {0.5f, 1.25f, 2})
                .node("conv2d", {"x", "w"}, "c", {{"group", 3}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}})
                .node("batch_norm", {"c", "scale", "beta", "mean", "var"}, "y")
                .build({"y"});
  Graph f = make_fold_batch_norm_pass()->run(g);
  ASSERT_EQ(f.nodes.size(), 1u);
  EXPECT_EQ(f.nodes[0].attrs["group"], 3);
  expect_same_outputs(g, f, 1e-5, 1e-6);
}

TEST(FoldBatchNorm, FoldedWeightsAreNewConstantsAndTheOriginalsAreKept) {
  Graph g = conv_bn(true).build({"y"});
  Graph f = make_fold_batch_norm_pass()->run(g);
  EXPECT_NE(f.nodes[0].inputs[1], "w");
  EXPECT_NE(f.nodes[0].inputs[2], "b");
  EXPECT_EQ(f.constants.at("w").data, g.constants.at("w").data);  // dropped later if unused
}

TEST(FoldBatchNorm, NotFoldedWhenTheConvOutputHasASecondReader) {
  Graph g = conv_bn(true).node("relu", {"c"}, "r").build({"y", "r"});
  Graph f = make_fold_batch_norm_pass()->run(g);
  EXPECT_EQ(node_names(f), (std::vector<std::string>{"c", "y", "r"}));
  EXPECT_EQ(f.nodes[1].op, "batch_norm");
}

TEST(FoldBatchNorm, NotFoldedWhenTheConvOutputIsAGraphOutput) {
  Graph g = conv_bn(true).build({"y", "c"});
  Graph f = make_fold_batch_norm_pass()->run(g);
  EXPECT_EQ(node_names(f), (std::vector<std::string>{"c", "y"}));
  EXPECT_EQ(f.nodes[1].op, "batch_norm");
}

TEST(FoldBatchNorm, NotFoldedWhenTheWeightIsNotAConstant) {
  Graph g = GraphBuilder()
                .input("x", {1, 1, 2, 2})
                .input("w", {1, 1, 1, 1})
                .constant("one", {1}, {1})
                .constant("zero", {1}, {0})
                .node("conv2d", {"x", "w"}, "c")
                .node("batch_norm", {"c", "one", "zero", "zero", "one"}, "y")
                .build({"y"});
  EXPECT_EQ(make_fold_batch_norm_pass()->run(g).nodes.size(), 2u);
}

TEST(FoldBatchNorm, NotFoldedWhenABatchNormParameterIsNotAConstant) {
  Graph g = GraphBuilder()
                .input("x", {1, 1, 2, 2})
                .input("mean", {1})
                .constant("w", {1, 1, 1, 1}, {2})
                .constant("one", {1}, {1})
                .constant("zero", {1}, {0})
                .node("conv2d", {"x", "w"}, "c")
                .node("batch_norm", {"c", "one", "zero", "mean", "one"}, "y")
                .build({"y"});
  EXPECT_EQ(make_fold_batch_norm_pass()->run(g).nodes.size(), 2u);
}

TEST(FoldBatchNorm, BatchNormAfterAnotherOpStays) {
  Graph g = GraphBuilder()
                .input("x", {1, 1, 2, 2})
                .constant("one", {1}, {1})
                .constant("zero", {1}, {0})
                .node("relu", {"x"}, "r")
                .node("batch_norm", {"r", "one", "zero", "zero", "one"}, "y")
                .build({"y"});
  EXPECT_EQ(node_names(make_fold_batch_norm_pass()->run(g)), (std::vector<std::string>{"r", "y"}));
}

TEST(FoldBatchNorm, NodesBetweenTheConvAndItsBatchNormKeepTheirOrder) {
  // "z" sits between the conv and its batch norm and reads neither.
  GraphBuilder b;
  b.input("x", {1, 1, 2, 2})
      .constant("w", {1, 1, 1, 1}, {2})
      .constant("one", {1}, {1})
      .constant("zero", {1}, {0})
      .node("conv2d", {"x", "w"}, "c")
      .node("neg", {"x"}, "z")
      .node("batch_norm", {"c", "one", "zero", "zero", "one"}, "y")
      .node("add", {"y", "z"}, "out");
  Graph g = b.build({"out"});
  Graph f = make_fold_batch_norm_pass()->run(g);
  EXPECT_EQ(node_names(f), (std::vector<std::string>{"z", "c", "out"}));
  expect_same_outputs(g, f, 1e-5, 1e-6);
}

// ---- eliminate_dead_nodes -------------------------------------------------------

TEST(EliminateDeadNodes, NodesNoOutputDependsOnAreDropped) {
  Graph g = GraphBuilder()
                .input("x", {2})
                .node("relu", {"x"}, "a")
                .node("exp", {"x"}, "dead1")
                .node("tanh", {"dead1"}, "dead2")
                .node("neg", {"a"}, "y")
                .build({"y"});
  Graph f = make_eliminate_dead_nodes_pass()->run(g);
  EXPECT_EQ(node_names(f), (std::vector<std::string>{"a", "y"}));
  expect_same_outputs(g, f);
}

TEST(EliminateDeadNodes, ConstantsNothingLiveReadsAreDropped) {
  Graph g = GraphBuilder()
                .input("x", {2})
                .constant("used", {2}, {1, 2})
                .constant("read_by_dead", {2}, {3, 4})
                .constant("unread", {2}, {5, 6})
                .node("add", {"x", "used"}, "y")
                .node("mul", {"x", "read_by_dead"}, "dead")
                .build({"y"});
  Graph f = make_eliminate_dead_nodes_pass()->run(g);
  EXPECT_EQ(constant_names(f), (std::vector<std::string>{"used"}));
  EXPECT_EQ(node_names(f), (std::vector<std::string>{"y"}));
}

TEST(EliminateDeadNodes, UnusedGraphInputsStay) {
  Graph g = GraphBuilder().input("x", {2}).input("unused", {3}).node("relu", {"x"}, "y").build({"y"});
  Graph f = make_eliminate_dead_nodes_pass()->run(g);
  ASSERT_EQ(f.inputs.size(), 2u);
  EXPECT_EQ(f.inputs[1].name, "unused");
}

TEST(EliminateDeadNodes, ConstantThatIsAGraphOutputStays) {
  Graph g = GraphBuilder().input("x", {2}).constant("c", {2}, {1, 2}).node("relu", {"x"}, "y").build({"y", "c"});
  EXPECT_EQ(constant_names(make_eliminate_dead_nodes_pass()->run(g)), (std::vector<std::string>{"c"}));
}

// ---- drop_padding_taps ------------------------------------------------------------

// A 3x3 conv with dilation 6 on a 5x5 map (ASPP's case): only the centre
// tap ever reads the input, so it is a 1x1 conv.
TEST(DropPaddingTaps, ADilatedConvWiderThanItsInputBecomesOneByOne) {
  Graph g = GraphBuilder()
                .input("x", {1, 4, 5, 5})
                .pattern_constant("w", {3, 4, 3, 3}, 1)
                .pattern_constant("b", {3}, 2)
                .node("conv2d", {"x", "w", "b"}, "y", {{"pads", {6, 6, 6, 6}}, {"dilations", {6, 6}}})
                .build({"y"});
  Graph f = make_drop_padding_taps_pass()->run(g);
  ASSERT_EQ(f.nodes.size(), 1u);
  const Node& n = f.nodes[0];
  EXPECT_EQ(f.constants.at(n.inputs[1]).shape, (Shape{3, 4, 1, 1}));
  EXPECT_EQ(n.attrs["pads"], json({0, 0, 0, 0}));
  EXPECT_EQ(n.attrs["dilations"], json({1, 1}));
  EXPECT_EQ(f.shape("y"), (Shape{1, 3, 5, 5}));
  expect_same_outputs(g, f, 1e-6, 1e-6);
}

// A 3x3 conv over a single row: the top and bottom kernel rows read only
// padding; the columns all read data.
TEST(DropPaddingTaps, AConvOverOneRowKeepsTheMiddleKernelRow) {
  Graph g = GraphBuilder()
                .input("x", {1, 2, 1, 6})
                .pattern_constant("w", {4, 2, 3, 3}, 3)
                .node("conv2d", {"x", "w"}, "y", {{"pads", {1, 1, 1, 1}}, {"strides", {1, 2}}})
                .build({"y"});
  Graph f = make_drop_padding_taps_pass()->run(g);
  const Node& n = f.nodes[0];
  EXPECT_EQ(f.constants.at(n.inputs[1]).shape, (Shape{4, 2, 1, 3}));
  EXPECT_EQ(n.attrs["pads"], json({0, 1, 0, 1}));
  EXPECT_EQ(f.shape("y"), g.shape("y"));
  expect_same_outputs(g, f, 1e-6, 1e-6);
}

// A dilated conv on a map large enough that every tap reads data for some
// output (dilation 3 on 8x8) and a plain padded 3x3 conv are left alone.
TEST(DropPaddingTaps, LeavesConvsWhoseEveryTapReadsData) {
  Graph g = GraphBuilder()
                .input("x", {1, 2, 8, 8})
                .pattern_constant("w", {2, 2, 3, 3}, 4)
                .node("conv2d", {"x", "w"}, "a", {{"pads", {3, 3, 3, 3}}, {"dilations", {3, 3}}})
                .node("conv2d", {"a", "w"}, "y", {{"pads", {1, 1, 1, 1}}})
                .build({"y"});
  Graph f = make_drop_padding_taps_pass()->run(g);
  EXPECT_EQ(constant_names(f), constant_names(g));
  EXPECT_EQ(f.nodes[0].inputs, g.nodes[0].inputs);
  EXPECT_EQ(f.nodes[1].inputs, g.nodes[1].inputs);
}

// ---- the standard pipeline -------------------------------------------------------

TEST(StandardPasses, AreFoldConstantsFoldBatchNormDropPaddingTapsEliminateDeadNodesInOrder) {
  std::vector<std::string> names;
  for (const auto& p : standard_passes()) names.push_back(p->name());
  EXPECT_EQ(names, (std::vector<std::string>{"fold_constants", "fold_batch_norm", "drop_padding_taps",
                                             "eliminate_dead_nodes"}));
}

TEST(StandardPasses, BatchNormWithComputedParametersFoldsAndLeavesOnlyTheConvAndItsConstants) {
  // The variance is computed from constants (var0 + 0.25): constant folding
  // makes it a constant, so the batch norm folds into the conv.
  GraphBuilder b = conv_bn(true);
  Graph g = b.constant("var0", {3}, {0.25f, 1, 1.75f})
                .constant("quarter", {}, {0.25f})
                .node("add", {"var0", "quarter"}, "var_computed")
                .raw({"y"});
  g.nodes = {g.nodes[2], g.nodes[0], g.nodes[1]};  // the add first
  g.nodes[2].inputs[4] = "var_computed";
  g.constants.erase("var");
  g.validate();
  Graph f = run_standard_passes(g);
  ASSERT_EQ(f.nodes.size(), 1u);
  EXPECT_EQ(f.nodes[0].op, "conv2d");
  EXPECT_EQ(f.constants.size(), 2u);  // the folded weight and bias
  expect_same_outputs(g, f, 1e-5, 1e-6);
}

}  // namespace
}  // namespace loom::graph
