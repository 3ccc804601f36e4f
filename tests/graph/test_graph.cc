// Graph: validation messages and the JSON form with its weights file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "graph/graph.h"
#include "graph/interpreter.h"
#include "tests/graph/graph_builder.h"
#include "tests/support/scratch_dir.h"

namespace loom::graph {
namespace {

using nlohmann::json;
using testing::error_of;
using testing::GraphBuilder;
using testing::one_line;

std::string validate_error(Graph g) {
  return error_of([&] { g.validate(); });
}

// ---- validate ----------------------------------------------------------------

TEST(GraphValidate, UnknownOpNamesTheNodeAndTheOp) {
  Graph g = GraphBuilder().input("x", {2}).node("frobnicate", {"x"}, "y").raw({"y"});
  const std::string msg = validate_error(g);
  EXPECT_EQ(msg.rfind("node 'y' (frobnicate): unknown op (known: ", 0), 0u) << msg;
  EXPECT_TRUE(one_line(msg)) << msg;
}

TEST(GraphValidate, TooManyInputsNamesTheExpectedCount) {
  Graph g = GraphBuilder().input("x", {2}).node("relu", {"x", "x"}, "y").raw({"y"});
  EXPECT_EQ(validate_error(g), "node 'y' (relu): 2 inputs, expected 1");
}

TEST(GraphValidate, TooFewInputsNamesTheAllowedRange) {
  Graph g = GraphBuilder().input("x", {1, 1, 3, 3}).node("conv2d", {"x"}, "y").raw({"y"});
  EXPECT_EQ(validate_error(g), "node 'y' (conv2d): 1 inputs, expected 2 to 3");
}

TEST(GraphValidate, UndefinedInputIsNamed) {
  Graph g = GraphBuilder().input("x", {2}).node("add", {"x", "nope"}, "y").raw({"y"});
  EXPECT_EQ(validate_error(g), "node 'y' (add): input 'nope' is not defined before the node");
}

TEST(GraphValidate, InputProducedByALaterNodeIsNotDefinedYet) {
  Graph g = GraphBuilder().input("x", {2}).node("relu", {"a"}, "b").node("relu", {"x"}, "a").raw({"b"});
  EXPECT_EQ(validate_error(g), "node 'b' (relu): input 'a' is not defined before the node");
}

TEST(GraphValidate, ShapesThatDoNotBroadcastAreNamed) {
  Graph g = GraphBuilder().input("a", {2, 3}).input("b", {4, 5}).node("add", {"a", "b"}, "y").raw({"y"});
  EXPECT_EQ(validate_error(g), "node 'y' (add): shapes 2x3 and 4x5 do not broadcast");
}

TEST(GraphValidate, UnknownAttributeNameListsTheOpsAttributes) {
  Graph g = GraphBuilder().input("x", {2}).node("clip", {"x"}, "y", {{"lo", 0.0}}).raw({"y"});
  EXPECT_EQ(validate_error(g), "node 'y' (clip): attribute 'lo' is not one of clip's (min, max)");
}

TEST(GraphValidate, AttributeOnAnOpWithoutAttributesSaysNone) {
  Graph g = GraphBuilder().input("x", {2}).node("relu", {"x"}, "y", {{"alpha", 0.1}}).raw({"y"});
  EXPECT_EQ(validate_error(g), "node 'y' (relu): attribute 'alpha' is not one of relu's (none)");
}

TEST(GraphValidate, MissingRequiredAttributeIsNamed) {
  Graph g = GraphBuilder().input("x", {2, 3}).node("reshape", {"x"}, "y").raw({"y"});
  EXPECT_EQ(validate_error(g), "node 'y' (reshape): attribute 'shape' is required");
}

TEST(GraphValidate, AttributeOfTheWrongKindShowsTheExpectedForm) {
  Graph g = GraphBuilder()
                .input("x", {1, 1, 3, 3})
                .constant("w", {1, 1, 1, 1}, {1})
                .node("conv2d", {"x", "w"}, "y", {{"group", 1.5}})
                .raw({"y"});
  EXPECT_EQ(validate_error(g), "node 'y' (conv2d): attribute 'group': expected a value like 1, got 1.5");
}

TEST(GraphValidate, RequiredAttributeOfTheWrongKindIsAOneLineErrorNamingTheNode) {
  Graph g = GraphBuilder().input("x", {2, 3}).node("reshape", {"x"}, "y", {{"shape", "6"}}).raw({"y"});
  const std::string msg = validate_error(g);
  EXPECT_EQ(msg.rfind("node 'y' (reshape): ", 0), 0u) << msg;
  EXPECT_TRUE(one_line(msg)) << msg;
}

TEST(GraphValidate, ValueDefinedTwiceIsAnError) {
  Graph g = GraphBuilder().input("x", {2}).node("relu", {"x"}, "x").raw({"x"});
  EXPECT_EQ(validate_error(g), "node 'x' (relu): output: value 'x' is defined twice");
}

TEST(GraphValidate, NodeNameUsedTwiceIsAnError) {
  Graph g = GraphBuilder().input("x", {2}).node("relu", {"x"}, "a").node("relu", {"a"}, "b").raw({"b"});
  g.nodes[1].name = "a";
  EXPECT_EQ(validate_error(g), "node 'a': the name is used twice");
}

TEST(GraphValidate, ConstantWithTheWrongNumberOfValuesIsNamed) {
  Graph g = GraphBuilder().input("x", {3}).constant("c", {3}, {1, 2}).node("add", {"x", "c"}, "y").raw({"y"});
  EXPECT_EQ(validate_error(g), "constant 'c': 2 values for shape 3");
}

TEST(GraphValidate, OutputThatIsNoValueIsNamed) {
  Graph g = GraphBuilder().input("x", {2}).node("relu", {"x"}, "y").raw({"z"});
  EXPECT_EQ(validate_error(g), "output 'z' is not a value of the graph");
}

TEST(GraphValidate, NonPositiveDimensionIsAnError) {
  Graph g = GraphBuilder().input("x", {2, 0}).node("relu", {"x"}, "y").raw({"y"});
  EXPECT_EQ(validate_error(g),
            "input 'x': value 'x' has a dimension 0 (shapes must be static and positive)");
}

TEST(GraphValidate, FillsInDefaultAttributesAndComputesShapes) {
  Graph g = GraphBuilder()
                .input("x", {1, 2, 5, 5})
                .pattern_constant("w", {4, 2, 3, 3})
                .node("conv2d", {"x", "w"}, "y", {{"strides", {2, 2}}})
                .build({"y"});
  EXPECT_EQ(g.nodes[0].attrs,
            json({{"strides", {2, 2}}, {"pads", {0, 0, 0, 0}}, {"dilations", {1, 1}}, {"group", 1}}));
  EXPECT_EQ(g.shape("y"), (Shape{1, 4, 2, 2}));
}

TEST(GraphQueries, ProducerAndConsumersFollowTheNodes) {
  Graph g = GraphBuilder()
                .input("x", {2})
                .node("relu", {"x"}, "a")
                .node("add", {"a", "a"}, "b")
                .node("neg", {"a"}, "c")
                .build({"b", "c"});
  EXPECT_EQ(g.producer("x"), nullptr);
  ASSERT_NE(g.producer("a"), nullptr);
  EXPECT_EQ(g.producer("a")->name, "a");
  auto readers = g.consumers("a");
  ASSERT_EQ(readers.size(), 2u);  // "b" reads it twice but is listed once
  EXPECT_EQ(readers[0]->name, "b");
  EXPECT_EQ(readers[1]->name, "c");
}

TEST(GraphQueries, FreshNameAvoidsEveryUsedName) {
  Graph g = GraphBuilder().input("x", {2}).node("relu", {"x"}, "y").node("relu", {"y"}, "y_1").build({"y_1"});
  EXPECT_EQ(g.fresh_name("z"), "z");
  EXPECT_EQ(g.fresh_name("y"), "y_2");
}

TEST(GraphShapeString, ScalarAndDims) {
  EXPECT_EQ(shape_string({}), "scalar");
  EXPECT_EQ(shape_string({1, 3, 224, 224}), "1x3x224x224");
}

// ---- JSON form ---------------------------------------------------------------

class GraphFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = loom::testing::scratch_dir() /
           ("loom_test_graph_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static json read_json(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return json::parse(ss.str());
  }

  std::filesystem::path dir_;
};

// A conv with a 2x1x3x3 weight (18 values: the weights file), a bias of 2
// values (inline) and a ReLU.
Graph small_network() {
  return GraphBuilder()
      .input("x", {1, 1, 4, 4})
      .pattern_constant("w", {2, 1, 3, 3}, 3)
      .constant("b", {2}, {0.25f, -0.5f})
      .node("conv2d", {"x", "w", "b"}, "c", {{"pads", {1, 1, 1, 1}}})
      .node("relu", {"c"}, "y")
      .build({"y"});
}

TEST(GraphJson, SmallConstantsAreInlineAndNeedNoWeightsFile) {
  Graph g = GraphBuilder().input("x", {2}).constant("c", {2}, {1.5f, -2}).node("add", {"x", "c"}, "y").build({"y"});
  json j = graph_to_json(g, "unused.bin");
  EXPECT_FALSE(j.contains("weights_file"));
  ASSERT_EQ(j["constants"].size(), 1u);
  EXPECT_EQ(j["constants"][0], json({{"name", "c"}, {"shape", {2}}, {"values", {1.5, -2.0}}}));
}

TEST(GraphJson, ConstantsOverSixteenValuesGoToTheWeightsFileAtConsecutiveOffsets) {
  Graph g = GraphBuilder()
                .input("x", {17})
                .pattern_constant("a", {17})
                .pattern_constant("b", {17}, 2)
                .node("add", {"x", "a"}, "s")
                .node("add", {"s", "b"}, "y")
                .build({"y"});
  json j = graph_to_json(g, "net.bin");
  EXPECT_EQ(j["weights_file"], "net.bin");
  EXPECT_EQ(j["constants"][0], json({{"name", "a"}, {"shape", {17}}, {"offset", 0}}));
  EXPECT_EQ(j["constants"][1], json({{"name", "b"}, {"shape", {17}}, {"offset", 17}}));
}

TEST_F(GraphFiles, SaveThenLoadGivesTheSameInterpreterOutput) {
  Graph g = small_network();
  const auto path = dir_ / "net.json";
  save_graph(g, path.string());
  json j = read_json(path);
  EXPECT_EQ(j["weights_file"], "net.bin");
  EXPECT_EQ(std::filesystem::file_size(dir_ / "net.bin"), 18 * sizeof(float));

  Graph loaded = graph_from_json(j, dir_.string());
  Values in = random_graph_inputs(g, 5);
  EXPECT_EQ(interpret(loaded, in).at("y"), interpret(g, in).at("y"));
  EXPECT_EQ(loaded.constants.at("w").data, g.constants.at("w").data);
  EXPECT_EQ(loaded.constants.at("b").data, g.constants.at("b").data);
}

TEST_F(GraphFiles, GraphWithOnlySmallConstantsWritesNoWeightsFile) {
  Graph g = GraphBuilder().input("x", {2}).constant("c", {2}, {1, 2}).node("mul", {"x", "c"}, "y").build({"y"});
  save_graph(g, (dir_ / "tiny.json").string());
  EXPECT_FALSE(std::filesystem::exists(dir_ / "tiny.bin"));
  Graph loaded = graph_from_json(read_json(dir_ / "tiny.json"), dir_.string());
  EXPECT_EQ(loaded.constants.at("c").data, (std::vector<float>{1, 2}));
}

TEST_F(GraphFiles, TruncatedWeightsFileIsAClearError) {
  save_graph(small_network(), (dir_ / "net.json").string());
  std::filesystem::resize_file(dir_ / "net.bin", 10 * sizeof(float));
  const std::string msg = error_of([&] { graph_from_json(read_json(dir_ / "net.json"), dir_.string()); });
  EXPECT_EQ(msg, "constant 'w': the weights file " + (dir_ / "net.bin").string() + " is too short");
}

TEST_F(GraphFiles, MissingWeightsFileIsNamed) {
  save_graph(small_network(), (dir_ / "net.json").string());
  std::filesystem::remove(dir_ / "net.bin");
  const std::string msg = error_of([&] { graph_from_json(read_json(dir_ / "net.json"), dir_.string()); });
  EXPECT_EQ(msg, "graph.weights_file: cannot open " + (dir_ / "net.bin").string());
}

TEST(GraphJson, LoadedGraphIsValidated) {
  json j = graph_to_json(GraphBuilder().input("x", {2}).node("relu", {"x"}, "y").build({"y"}), "");
  j["nodes"][0]["op"] = "frobnicate";
  const std::string msg = error_of([&] { graph_from_json(j, ""); });
  EXPECT_EQ(msg.rfind("node 'y' (frobnicate): unknown op", 0), 0u) << msg;
}

TEST(GraphJson, UnknownKeyIsNamed) {
  json j = graph_to_json(GraphBuilder().input("x", {2}).node("relu", {"x"}, "y").build({"y"}), "");
  j["extra"] = 1;
  EXPECT_EQ(error_of([&] { graph_from_json(j, ""); }), "graph.extra: unknown key");
}

TEST(GraphJson, OtherFormatIsRejected) {
  json j = graph_to_json(GraphBuilder().input("x", {2}).node("relu", {"x"}, "y").build({"y"}), "");
  j["format"] = "onnx";
  EXPECT_EQ(error_of([&] { graph_from_json(j, ""); }), "graph.format: expected \"loom-graph\"");
}

TEST(GraphJson, ConstantWithNeitherValuesNorOffsetIsNamed) {
  json j = graph_to_json(GraphBuilder().input("x", {2}).constant("c", {2}, {1, 2}).node("add", {"x", "c"}, "y").build({"y"}), "");
  j["constants"][0].erase("values");
  EXPECT_EQ(error_of([&] { graph_from_json(j, ""); }),
            "constant 'c': expected \"values\" or an \"offset\" into the weights file");
}

}  // namespace
}  // namespace loom::graph
