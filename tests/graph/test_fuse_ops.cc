// Operator fusion (graph/passes/fuse_ops.h): which nodes share a kernel.
// A node's group takes everything up to the node's immediate post-dominator
// when the group, the post-dominator and every node on the way allow it:
//   conv, gemm, pools (first phase)  element-wise or broadcast nodes and
//                                    post-dominator;
//   element-wise, broadcast (first)  injective nodes on the way, an
//                                    injective or reduction post-dominator;
//   injective (second phase)         injective nodes and an element-wise,
//                                    broadcast or injective post-dominator;
//   reductions, opaque ops           nothing.
#include <gtest/gtest.h>

#include <map>

#include "graph/passes/fuse_ops.h"
#include "tests/graph/graph_builder.h"

namespace loom::graph {
namespace {

using Groups = std::vector<std::vector<std::string>>;
using testing::GraphBuilder;

// The groups as lists of node names, and a check that they partition the
// nodes, keep graph order inside a group, and come after every group whose
// output they read.
Groups fused(const Graph& g, std::vector<FusedGroup>* out = nullptr) {
  std::vector<FusedGroup> groups = fuse_ops(g);
  std::map<std::string, size_t> group_of_value;
  for (size_t k = 0; k < groups.size(); ++k)
    for (int n : groups[k].nodes) group_of_value[g.nodes[n].output] = k;
  std::vector<int> seen(g.nodes.size(), 0);
  Groups names;
  for (size_t k = 0; k < groups.size(); ++k) {
    names.emplace_back();
    for (size_t i = 0; i < groups[k].nodes.size(); ++i) {
      const int n = groups[k].nodes[i];
      ++seen[n];
      if (i > 0) EXPECT_LT(groups[k].nodes[i - 1], n) << "group " << k << " is not in graph order";
      for (const auto& v : g.nodes[n].inputs) {
        auto it = group_of_value.find(v);
        if (it == group_of_value.end() || it->second == k) continue;
        EXPECT_LT(it->second, k) << "group " << k << " reads " << v << " of a later group";
        EXPECT_EQ(v, groups[it->second].output(g)) << "group " << k << " reads " << v << ", inside another group";
      }
      names.back().push_back(g.nodes[n].name);
    }
  }
  for (size_t n = 0; n < seen.size(); ++n) EXPECT_EQ(seen[n], 1) << "node " << g.nodes[n].name;
  if (out) *out = groups;
  return names;
}

const nlohmann::json kPad1 = {{"pads", {1, 1, 1, 1}}};

// x [1, 2, 4, 4] and two 2 -> 2 channel 3x3 weights.
GraphBuilder convs() {
  GraphBuilder b;
  b.input("x", {1, 2, 4, 4}).pattern_constant("w1", {2, 2, 3, 3}, 1).pattern_constant("w2", {2, 2, 3, 3}, 2);
  return b;
}

TEST(FuseOps, ConvBiasAddReluIsOneGroup) {
  Graph g = convs()
                .pattern_constant("b", {1, 2, 1, 1})
                .node("conv2d", {"x", "w1"}, "c", kPad1)
                .node("add", {"c", "b"}, "a")
                .node("relu", {"a"}, "y")
                .build({"y"});
  std::vector<FusedGroup> groups;
  EXPECT_EQ(fused(g, &groups), (Groups{{"c", "a", "y"}}));
  EXPECT_EQ(groups[0].pattern, OpPattern::kOutEWiseFusable);
  EXPECT_EQ(groups[0].output(g), "y");
}

TEST(FuseOps, BatchNormJoinsTheConv) {
  Graph g = convs()
                .pattern_constant("p", {2})
                .node("conv2d", {"x", "w1"}, "c", kPad1)
                .node("batch_norm", {"c", "p", "p", "p", "p"}, "y")
                .build({"y"});
  EXPECT_EQ(fused(g), (Groups{{"c", "y"}}));
}

TEST(FuseOps, AddOfTwoConvsJoinsTheEarlierConv) {
  Graph g = convs()
                .node("conv2d", {"x", "w1"}, "c1", kPad1)
                .node("conv2d", {"x", "w2"}, "c2", kPad1)
                .node("add", {"c1", "c2"}, "a")
                .node("relu", {"a"}, "y")
                .build({"y"});
  EXPECT_EQ(fused(g), (Groups{{"c2"}, {"c1", "a", "y"}}));
}

TEST(FuseOps, AddOfTwoConvsJoinsTheEarlierConvWhateverTheInputOrder) {
  Graph g = convs()
                .node("conv2d", {"x", "w1"}, "c1", kPad1)
                .node("conv2d", {"x", "w2"}, "c2", kPad1)
                .node("add", {"c2", "c1"}, "a")
                .node("relu", {"a"}, "y")
                .build({"y"});
  EXPECT_EQ(fused(g), (Groups{{"c2"}, {"c1", "a", "y"}}));
}

TEST(FuseOps, ResidualAddJoinsTheConvNotTheShortcut) {
  // r1 feeds both the conv and the add; the path through the conv is no
  // element-wise path, so r1's group ends and the add joins the conv.
  Graph g = convs()
                .node("conv2d", {"x", "w1"}, "c1", kPad1)
                .node("relu", {"c1"}, "r1")
                .node("conv2d", {"r1", "w2"}, "c2", kPad1)
                .node("add", {"r1", "c2"}, "a")
                .node("relu", {"a"}, "y")
                .build({"y"});
  EXPECT_EQ(fused(g), (Groups{{"c1", "r1"}, {"c2", "a", "y"}}));
}

TEST(FuseOps, AddSkipsAnInputWhoseGroupCannotTakeIt) {
  // The softmax group takes nothing; the add joins the conv.
  Graph g = convs()
                .node("softmax", {"x"}, "s")
                .node("conv2d", {"x", "w1"}, "c", kPad1)
                .node("add", {"s", "c"}, "y")
                .build({"y"});
  EXPECT_EQ(fused(g), (Groups{{"s"}, {"c", "y"}}));
}

TEST(FuseOps, TwoConvsInARowAreTwoGroups) {
  Graph g = convs()
                .node("conv2d", {"x", "w1"}, "c1", kPad1)
                .node("conv2d", {"c1", "w2"}, "c2", kPad1)
                .build({"c2"});
  EXPECT_EQ(fused(g), (Groups{{"c1"}, {"c2"}}));
}

TEST(FuseOps, AValueReadByTwoBranchesThatMeetOnlyAtTheOutputsEndsItsGroup) {
  Graph g = convs()
                .node("conv2d", {"x", "w1"}, "c", kPad1)
                .node("relu", {"c"}, "r")
                .node("sigmoid", {"r"}, "s")
                .node("tanh", {"r"}, "t")
                .build({"s", "t"});
  EXPECT_EQ(fused(g), (Groups{{"c", "r"}, {"s"}, {"t"}}));
}

TEST(FuseOps, AGraphOutputEndsItsGroup) {
  Graph g = convs().node("conv2d", {"x", "w1"}, "c", kPad1).node("relu", {"c"}, "y").build({"c", "y"});
  EXPECT_EQ(fused(g), (Groups{{"c"}, {"y"}}));
}

TEST(FuseOps, ElementwiseDiamondIsOneGroup) {
  // Both branches from r meet again at the add, its post-dominator.
  Graph g = convs()
                .node("relu", {"x"}, "r")
                .node("sigmoid", {"r"}, "s")
                .node("tanh", {"r"}, "t")
                .node("add", {"s", "t"}, "y")
                .build({"y"});
  EXPECT_EQ(fused(g), (Groups{{"r", "s", "t", "y"}}));
}

TEST(FuseOps, ConvTakesAnElementwiseDiamondLikeGelu) {
  // c * (1 + erf(c / sqrt 2)), without the 0.5.
  Graph g = convs()
                .constant("sqrt2", {}, {1.41421356f})
                .constant("one", {}, {1})
                .node("conv2d", {"x", "w1"}, "c", kPad1)
                .node("div", {"c", "sqrt2"}, "d")
                .node("erf", {"d"}, "e")
                .node("add", {"e", "one"}, "p")
                .node("mul", {"c", "p"}, "y")
                .build({"y"});
  EXPECT_EQ(fused(g), (Groups{{"c", "d", "e", "p", "y"}}));
}

TEST(FuseOps, DiamondThroughAnOpaqueNodeDoesNotFuse) {
  Graph g = GraphBuilder()
                .input("x", {2, 3})
                .node("relu", {"x"}, "r")
                .node("softmax", {"r"}, "s")
                .node("add", {"r", "s"}, "y")
                .build({"y"});
  EXPECT_EQ(fused(g), (Groups{{"r"}, {"s"}, {"y"}}));
}

TEST(FuseOps, ConvDoesNotTakeADiamondWithAnInjectiveBranch) {
  // The transpose is no element-wise path; it fuses forward with the add.
  Graph g = convs()
                .node("conv2d", {"x", "w1"}, "c", kPad1)
                .node("transpose", {"c"}, "t", {{"perm", {0, 1, 3, 2}}})
                .node("add", {"c", "t"}, "y")
                .build({"y"});
  EXPECT_EQ(fused(g), (Groups{{"c"}, {"t", "y"}}));
}

TEST(FuseOps, ReshapeTransposeChainFuses) {
  Graph g = GraphBuilder()
                .input("x", {2, 3, 4})
                .node("reshape", {"x"}, "r", {{"shape", {6, 4}}})
                .node("transpose", {"r"}, "y")
                .build({"y"});
  std::vector<FusedGroup> groups;
  EXPECT_EQ(fused(g, &groups), (Groups{{"r", "y"}}));
  EXPECT_EQ(groups[0].pattern, OpPattern::kInjective);
}

TEST(FuseOps, ElementwiseAndInjectiveOpsFuseInAnyOrder) {
  Graph g = GraphBuilder()
                .input("x", {2, 3})
                .input("z", {3, 2})
                .node("relu", {"x"}, "a")
                .node("transpose", {"a"}, "t")
                .node("add", {"t", "z"}, "s")
                .node("flatten", {"s"}, "y")
                .build({"y"});
  EXPECT_EQ(fused(g), (Groups{{"a", "t", "s", "y"}}));
}

TEST(FuseOps, ConcatTakesEveryElementwiseProducer) {
  Graph g = GraphBuilder()
                .input("x", {2, 2})
                .node("relu", {"x"}, "a")
                .node("neg", {"x"}, "b")
                .node("concat", {"a", "b"}, "y", {{"axis", 0}})
                .build({"y"});
  EXPECT_EQ(fused(g), (Groups{{"a", "b", "y"}}));
}

TEST(FuseOps, ReduceTakesAnElementwiseProducer) {
  Graph g = GraphBuilder().input("x", {2, 3}).node("exp", {"x"}, "e").node("reduce_sum", {"e"}, "y").build({"y"});
  std::vector<FusedGroup> groups;
  EXPECT_EQ(fused(g, &groups), (Groups{{"e", "y"}}));
  EXPECT_EQ(groups[0].pattern, OpPattern::kCommReduce);
}

TEST(FuseOps, ReduceDoesNotTakeAnInjectiveProducer) {
  Graph g = GraphBuilder()
                .input("x", {2, 3})
                .node("transpose", {"x"}, "t")
                .node("reduce_mean", {"t"}, "y", {{"axes", {1}}})
                .build({"y"});
  EXPECT_EQ(fused(g), (Groups{{"t"}, {"y"}}));
}

TEST(FuseOps, ElementwiseBeforeAnInjectiveOpBeforeAReduceStaysWithTheInjectiveOp) {
  Graph g = GraphBuilder()
                .input("x", {2, 3})
                .node("relu", {"x"}, "r")
                .node("transpose", {"r"}, "t")
                .node("reduce_sum", {"t"}, "y")
                .build({"y"});
  EXPECT_EQ(fused(g), (Groups{{"r", "t"}, {"y"}}));
}

TEST(FuseOps, InjectiveProducersFuseOnlyAfterContractionsTookTheirEpilogues) {
  // The relu goes with the conv's add in the first phase; the transpose,
  // fused second, then finds a contraction group and stays alone.
  Graph g = convs()
                .node("transpose", {"x"}, "t", {{"perm", {0, 1, 3, 2}}})
                .node("relu", {"t"}, "r")
                .node("conv2d", {"x", "w1"}, "c", kPad1)
                .node("add", {"r", "c"}, "y")
                .build({"y"});
  EXPECT_EQ(fused(g), (Groups{{"t"}, {"r", "c", "y"}}));
}

TEST(FuseOps, ReduceDoesNotJoinAConv) {
  Graph g = convs()
                .node("conv2d", {"x", "w1"}, "c", kPad1)
                .node("reduce_mean", {"c"}, "y", {{"axes", {2, 3}}})
                .build({"y"});
  EXPECT_EQ(fused(g), (Groups{{"c"}, {"y"}}));
}

TEST(FuseOps, ElementwiseAfterAReduceStartsANewGroup) {
  Graph g = GraphBuilder().input("x", {2, 3}).node("reduce_max", {"x"}, "m").node("relu", {"m"}, "y").build({"y"});
  EXPECT_EQ(fused(g), (Groups{{"m"}, {"y"}}));
}

TEST(FuseOps, InjectiveAfterAConvStartsANewGroup) {
  Graph g = convs().node("conv2d", {"x", "w1"}, "c", kPad1).node("flatten", {"c"}, "y").build({"y"});
  EXPECT_EQ(fused(g), (Groups{{"c"}, {"y"}}));
}

TEST(FuseOps, ConvAfterElementwiseStartsANewGroup) {
  Graph g = convs().node("relu", {"x"}, "r").node("conv2d", {"r", "w1"}, "y", kPad1).build({"y"});
  EXPECT_EQ(fused(g), (Groups{{"r"}, {"y"}}));
}

TEST(FuseOps, PoolingAndGemmTakeElementwiseEpilogues) {
  Graph g = GraphBuilder()
                .input("x", {1, 2, 4, 4})
                .pattern_constant("w", {2, 3})
                .pattern_constant("b", {3})
                .node("max_pool2d", {"x"}, "p", {{"kernel", {2, 2}}, {"strides", {2, 2}}})
                .node("relu", {"p"}, "r")
                .node("global_avg_pool2d", {"r"}, "gap")
                .node("flatten", {"gap"}, "f")
                .node("gemm", {"f", "w"}, "m")
                .node("add", {"m", "b"}, "y")
                .build({"y"});
  EXPECT_EQ(fused(g), (Groups{{"p", "r"}, {"gap"}, {"f"}, {"m", "y"}}));
}

TEST(FuseOps, SoftmaxIsAGroupOfItsOwn) {
  Graph g = GraphBuilder()
                .input("x", {2, 3})
                .node("relu", {"x"}, "r")
                .node("softmax", {"r"}, "s")
                .node("relu", {"s"}, "y")
                .build({"y"});
  std::vector<FusedGroup> groups;
  EXPECT_EQ(fused(g, &groups), (Groups{{"r"}, {"s"}, {"y"}}));
  EXPECT_EQ(groups[1].pattern, OpPattern::kOpaque);
}

TEST(FuseOps, LayerNormIsAGroupOfItsOwn) {
  Graph g = GraphBuilder()
                .input("x", {2, 3})
                .pattern_constant("gamma", {3})
                .node("neg", {"x"}, "n")
                .node("layer_norm", {"n", "gamma"}, "l")
                .node("relu", {"l"}, "y")
                .build({"y"});
  EXPECT_EQ(fused(g), (Groups{{"n"}, {"l"}, {"y"}}));
}

TEST(FuseOps, NodesOverGraphInputsAndConstantsOnlyStartGroups) {
  Graph g = GraphBuilder()
                .input("x", {2})
                .constant("c", {2}, {1, 2})
                .node("add", {"x", "c"}, "a")
                .node("mul", {"x", "c"}, "m")
                .build({"a", "m"});
  EXPECT_EQ(fused(g), (Groups{{"a"}, {"m"}}));
}

}  // namespace
}  // namespace loom::graph
