// The data-movement ops (slice, pad, expand, tile, take, resize) and the
// newer element-wise ones through the reference interpreter: hand-computed
// values, and one-line validation errors for bad attributes. ONNX's own
// conformance cases check them further (test_onnx_import.cc).
#include <gtest/gtest.h>

#include "graph/interpreter.h"
#include "graph/ops.h"
#include "ir/reference.h"
#include "tests/graph/graph_builder.h"

namespace loom::graph {
namespace {

using nlohmann::json;
using testing::error_of;
using testing::GraphBuilder;
using testing::one_line;

// y = op(x) on the given data, interpreted.
std::vector<float> run_one(const std::string& op, const Shape& shape, std::vector<float> x, const json& attrs,
                           Shape* out_shape = nullptr) {
  GraphBuilder b;
  b.input("x", shape);
  Graph g = b.node(op, {"x"}, "y", attrs).build({"y"});
  if (out_shape) *out_shape = g.shape("y");
  return interpret(g, {{"x", std::move(x)}}).at("y");
}

// The validation error of y = op(x) for an input of `shape`.
std::string error_for(const std::string& op, const Shape& shape, const json& attrs) {
  GraphBuilder b;
  b.input("x", shape);
  Graph g = b.node(op, {"x"}, "y", attrs).raw({"y"});
  const std::string msg = error_of([&] { g.validate(); });
  EXPECT_TRUE(one_line(msg)) << msg;
  EXPECT_NE(msg.find("node 'y' (" + op + ")"), std::string::npos) << msg;
  return msg;
}

TEST(Slice, NegativeStepReadsBackwards) {
  Shape s;
  auto y = run_one("slice", {5}, {0, 1, 2, 3, 4}, {{"starts", {4}}, {"steps", {-2}}, {"sizes", {3}}}, &s);
  EXPECT_EQ(s, Shape({3}));
  EXPECT_EQ(y, std::vector<float>({4, 2, 0}));
}

TEST(Slice, ReadingPastTheInputIsAnError) {
  const std::string msg = error_for("slice", {5}, {{"starts", {2}}, {"steps", {2}}, {"sizes", {3}}});
  EXPECT_NE(msg.find("leave the input's 5"), std::string::npos) << msg;
}

TEST(Slice, AStepOfZeroIsAnError) {
  EXPECT_NE(error_for("slice", {5}, {{"starts", {0}}, {"steps", {0}}, {"sizes", {1}}}).find("a step of 0"),
            std::string::npos);
}

TEST(Pad, ReflectMirrorsWithoutTheEdgeAndEdgeRepeatsIt) {
  EXPECT_EQ(run_one("pad", {3}, {1, 2, 3}, {{"pads", {2, 2}}, {"mode", "reflect"}}),
            std::vector<float>({3, 2, 1, 2, 3, 2, 1}));
  EXPECT_EQ(run_one("pad", {3}, {1, 2, 3}, {{"pads", {1, 2}}, {"mode", "edge"}}),
            std::vector<float>({1, 1, 2, 3, 3, 3}));
  EXPECT_EQ(run_one("pad", {2}, {1, 2}, {{"pads", {1, 0}}, {"value", 7.5}}), std::vector<float>({7.5, 1, 2}));
}

TEST(Pad, ReflectPadsAsLargeAsTheDimAreAnError) {
  EXPECT_NE(error_for("pad", {3}, {{"pads", {3, 0}}, {"mode", "reflect"}}).find("reach past dim 0 of size 3"),
            std::string::npos);
}

TEST(Pad, NegativePadsAndAWrongCountAreErrors) {
  EXPECT_NE(error_for("pad", {3}, {{"pads", {-1, 0}}}).find("negative pads"), std::string::npos);
  EXPECT_NE(error_for("pad", {3}, {{"pads", {1}}}).find("expected 2"), std::string::npos);
}

TEST(Pad, AnUnknownModeIsAnError) {
  EXPECT_NE(error_for("pad", {3}, {{"pads", {1, 1}}, {"mode", "wrap"}}).find("mode"), std::string::npos);
}

TEST(Expand, BroadcastsBothWays) {
  Shape s;
  auto y = run_one("expand", {2, 1}, {1, 2}, {{"shape", {1, 3}}}, &s);
  EXPECT_EQ(s, Shape({2, 3}));
  EXPECT_EQ(y, std::vector<float>({1, 1, 1, 2, 2, 2}));
}

TEST(Expand, AnIncompatibleShapeIsAnError) { error_for("expand", {2, 3}, {{"shape", {4, 3}}}); }

TEST(Tile, RepeatsEachDim) {
  EXPECT_EQ(run_one("tile", {1, 2}, {1, 2}, {{"repeats", {2, 2}}}), std::vector<float>({1, 2, 1, 2, 1, 2, 1, 2}));
}

TEST(Tile, ACountBelowOneOrAWrongLengthIsAnError) {
  EXPECT_NE(error_for("tile", {2}, {{"repeats", {0}}}).find("below 1"), std::string::npos);
  EXPECT_NE(error_for("tile", {2}, {{"repeats", {1, 2}}}).find("has 2 entries"), std::string::npos);
}

TEST(Take, PicksRowsInAnyOrder) {
  EXPECT_EQ(run_one("take", {3, 2}, {0, 1, 10, 11, 20, 21}, {{"axis", 0}, {"indices", {2, 0, 2}}}),
            std::vector<float>({20, 21, 0, 1, 20, 21}));
}

TEST(Take, AnIndexOutOfRangeIsAnError) {
  EXPECT_NE(error_for("take", {3, 2}, {{"axis", 0}, {"indices", {3}}}).find("index 3 is out of range"),
            std::string::npos);
}

TEST(Resize, NearestAsymmetricFloorRepeatsEachElement) {
  EXPECT_EQ(run_one("resize", {1, 2}, {1, 2},
                    {{"sizes", {1, 4}}, {"scale_num", {1, 2}}, {"scale_den", {1, 1}}, {"mode", "nearest"},
                     {"coordinate_transformation_mode", "asymmetric"}, {"nearest_mode", "floor"}}),
            std::vector<float>({1, 1, 2, 2}));
}

// half_pixel: x_in = (o + 0.5) / 2 - 0.5, clamped into [0, 1].
TEST(Resize, LinearHalfPixelInterpolatesAndClampsAtTheEdges) {
  EXPECT_EQ(run_one("resize", {2}, {0, 4},
                    {{"sizes", {4}}, {"scale_num", {2}}, {"scale_den", {1}}, {"mode", "linear"}}),
            std::vector<float>({0, 1, 3, 4}));
}

TEST(Resize, SizesOfTheWrongLengthAndAnUnknownModeAreErrors) {
  EXPECT_NE(error_for("resize", {2, 2}, {{"sizes", {4}}, {"scale_num", {2}}, {"scale_den", {1}}})
                .find("one entry per input dim"),
            std::string::npos);
  error_for("resize", {2}, {{"sizes", {4}}, {"scale_num", {2}}, {"scale_den", {1}}, {"mode", "cubic"}});
}

TEST(Activations, MatchTheirFormulas) {
  const std::vector<float> x = {-2, -0.5, 0, 1, 4};
  const auto hs = run_one("hard_sigmoid", {5}, x, json::object());
  const std::vector<float> want = {0.1f, 0.4f, 0.5f, 0.7f, 1};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(hs[i], want[i], 1e-6) << i;
  EXPECT_EQ(run_one("hard_swish", {5}, {-4, -3, 0, 3, 4}, json::object()), std::vector<float>({-0.f, -0.f, 0, 3, 4}));
  EXPECT_EQ(run_one("leaky_relu", {5}, x, {{"alpha", 0.5}}), std::vector<float>({-1, -0.25, 0, 1, 4}));
  auto sp = run_one("softplus", {5}, {-100, 0, 100, 1, -1}, json::object());
  EXPECT_FLOAT_EQ(sp[0], 0.0f);
  EXPECT_FLOAT_EQ(sp[1], std::log(2.0f));
  EXPECT_FLOAT_EQ(sp[2], 100.0f);  // no overflow
}

TEST(Activations, AnUnknownAttributeIsAnError) {
  EXPECT_NE(error_for("leaky_relu", {2}, {{"slope", 0.1}}).find("slope"), std::string::npos);
}

TEST(Where, PicksByAConditionOfOnesAndZerosWithBroadcasting) {
  GraphBuilder b;
  b.input("c", {2, 1}).input("a", {2, 2}).constant("fill", {}, {9});
  Graph g = b.node("where", {"c", "a", "fill"}, "y").build({"y"});
  EXPECT_EQ(interpret(g, {{"c", {1, 0}}, {"a", {1, 2, 3, 4}}}).at("y"), std::vector<float>({1, 2, 9, 9}));
}

// Attention's scores as einsum, against the same product spelled as matmul.
TEST(Einsum, BatchedScoresEqualMatmulWithTheTransposedKeys) {
  GraphBuilder b;
  b.input("q", {2, 3, 4}).input("k", {2, 5, 4});
  Graph g = b.node("einsum", {"q", "k"}, "s", {{"equation", "bid,bjd->bij"}})
                .node("transpose", {"k"}, "kt", {{"perm", {0, 2, 1}}})
                .node("matmul", {"q", "kt"}, "m")
                .build({"s", "m"});
  EXPECT_EQ(g.shape("s"), Shape({2, 3, 5}));
  Values v = interpret(g, random_graph_inputs(g, 4));
  EXPECT_EQ(compare_outputs(v.at("s"), v.at("m")), "");
}

TEST(Einsum, ImplicitOutputSumsRepeatedSubscriptsAndKeepsTheOthersSorted) {
  GraphBuilder b;
  b.input("a", {2, 3}).input("c", {3});
  Graph g = b.node("einsum", {"a", "c"}, "y", {{"equation", "ij,j"}}).build({"y"});
  EXPECT_EQ(g.shape("y"), Shape({2}));
  EXPECT_EQ(interpret(g, {{"a", {1, 2, 3, 4, 5, 6}}, {"c", {1, 0, -1}}}).at("y"), std::vector<float>({-2, -2}));
}

TEST(Einsum, MismatchedExtentsEllipsisAndDiagonalsAreErrors) {
  GraphBuilder b;
  b.input("a", {2, 3}).input("c", {4});
  auto err = [&](const std::string& eq) {
    Graph g = GraphBuilder(b).node("einsum", {"a", "c"}, "y", {{"equation", eq}}).raw({"y"});
    const std::string msg = error_of([&] { g.validate(); });
    EXPECT_TRUE(one_line(msg)) << msg;
    return msg;
  };
  EXPECT_NE(err("ij,j->i").find("subscript 'j' is 3 in one operand and 4 in another"), std::string::npos);
  EXPECT_NE(err("...j,k->jk").find("ellipsis is not supported"), std::string::npos);
  EXPECT_NE(err("ii,k->k").find("diagonal"), std::string::npos);
}

// C's fmod keeps the dividend's sign, floor modulo the divisor's.
TEST(Mod, FmodAndFloorModuloDifferInSignOnly) {
  GraphBuilder b;
  b.input("a", {4}).input("d", {4});
  Graph g = b.node("mod", {"a", "d"}, "c", {{"fmod", 1}}).node("mod", {"a", "d"}, "f").build({"c", "f"});
  Values v = interpret(g, {{"a", {7, -7, 7, -7.5f}}, {"d", {3, 3, -3, 2}}});
  EXPECT_EQ(v.at("c"), std::vector<float>({1, -1, 1, -1.5f}));
  EXPECT_EQ(v.at("f"), std::vector<float>({1, 2, -2, 0.5f}));
}

TEST(Comparisons, GiveOnesAndZeros) {
  GraphBuilder b;
  b.input("a", {3}).input("b", {3});
  Graph g = b.node("less", {"a", "b"}, "lt").node("equal", {"a", "b"}, "eq").node("or", {"lt", "eq"}, "le")
                .build({"lt", "eq", "le"});
  Values v = interpret(g, {{"a", {1, 2, 3}}, {"b", {2, 2, 2}}});
  EXPECT_EQ(v.at("lt"), std::vector<float>({1, 0, 0}));
  EXPECT_EQ(v.at("eq"), std::vector<float>({0, 1, 0}));
  EXPECT_EQ(v.at("le"), std::vector<float>({1, 1, 0}));
}

}  // namespace
}  // namespace loom::graph
