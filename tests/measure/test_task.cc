// Task identity beyond the key: constant inputs, the task scheduler's
// similarity groups.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ir/error.h"
#include "measure/task.h"

namespace loom {
namespace {

Task subgraph(const std::string& op, const nlohmann::json& attrs, std::vector<std::vector<int64_t>> inputs) {
  nlohmann::json s = {{"inputs", nlohmann::json::array()}, {"nodes", nlohmann::json::array()}};
  nlohmann::json refs = nlohmann::json::array();
  for (size_t i = 0; i < inputs.size(); ++i) {
    s["inputs"].push_back({{"shape", inputs[i]}});
    refs.push_back("in" + std::to_string(i));
  }
  s["nodes"].push_back({{"op", op}, {"attrs", attrs}, {"inputs", refs}});
  return Task::make("subgraph", s, Target::parse("cpu -threads=1"));
}

TEST(Task, ARegistryTaskMarksTheInputsItListsConstant) {
  const nlohmann::json params = {{"M", 8}, {"N", 8}, {"K", 8}};
  Task plain = Task::make("matmul", params, Target::parse("cpu -threads=1"));
  Task weights = Task::make("matmul", params, Target::parse("cpu -threads=1"), {"B"});
  EXPECT_TRUE(weights.dag->is_constant("B"));
  EXPECT_FALSE(weights.dag->is_constant("A"));
  EXPECT_FALSE(plain.dag->is_constant("B"));
  EXPECT_NE(weights.key(), plain.key());
  EXPECT_FALSE(plain.to_json().contains("constants"));  // the records of before keep their keys
  Task again = Task::from_json(weights.to_json());
  EXPECT_EQ(again.key(), weights.key());
  EXPECT_TRUE(again.dag->is_constant("B"));
}

TEST(Task, AConstantThatIsNotAnInputIsAnErrorNamingTheInputs) {
  nlohmann::json j = {{"workload", "matmul"}, {"constants", {"W"}}};
  try {
    Task::from_json(j);
    FAIL() << "accepted " << j.dump();
  } catch (const LoomError& e) {
    EXPECT_EQ(std::string(e.what()), "task.constants: 'W' is not an input of matmul (inputs: A, B)");
  }
}

std::string make_error(const std::string& workload, const nlohmann::json& params, const std::string& target) {
  try {
    Task::make(workload, params, Target::parse(target));
  } catch (const LoomError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(Task, ATensorPast64BitElementCountsIsRefused) {
  const int64_t big = int64_t{1} << 40;
  EXPECT_EQ(make_error("matmul", {{"M", big}, {"N", big}, {"K", 1}}, "cpu -threads=1"),
            "params: matmul K=1 M=1099511627776 N=1099511627776: tensor C has more than 2^63 elements");
}

TEST(Task, ACudaTensorPast32BitIndicesIsRefused) {
  const nlohmann::json params = {{"M", 65536}, {"N", 32768}, {"K", 1}};  // C: 2^31 elements, 8.6 GB
  EXPECT_EQ(make_error("matmul", params, "cuda -arch=sm_90"),
            "params: matmul K=1 M=65536 N=32768: tensor C has 2147483648 elements, more than the 2^31 - 1 that CUDA "
            "kernels' 32-bit indices reach");
  EXPECT_EQ(make_error("matmul", {{"M", 1024}, {"N", 1024}, {"K", 1024}}, "cuda -arch=sm_90"), "accepted");
}

TEST(Task, ARegistryTaskIsSimilarToTheTasksOfItsWorkload) {
  Task a = Task::make("matmul", nlohmann::json{{"M", 8}, {"N", 8}, {"K", 8}}, Target::parse("cpu -threads=1"));
  EXPECT_EQ(a.similarity_group(), "matmul");
}

TEST(Task, ASubgraphIsSimilarToSubgraphsOfTheSameOpsWhateverTheirShapes) {
  Task conv = subgraph("conv2d", nlohmann::json::object(), {{1, 4, 8, 8}, {8, 4, 3, 3}});
  Task other_conv = subgraph("conv2d", nlohmann::json::object(), {{1, 16, 5, 5}, {2, 16, 1, 1}});
  Task gemm = subgraph("gemm", {{"trans_b", 1}}, {{1, 32}, {10, 32}});
  EXPECT_EQ(conv.similarity_group(), "subgraph conv2d");
  EXPECT_EQ(conv.similarity_group(), other_conv.similarity_group());
  EXPECT_EQ(gemm.similarity_group(), "subgraph gemm");
}

// A 1x1 conv and the depthwise conv after it have the same ops and output
// shape; their inputs tell them apart in logs, tables and tuning output.
TEST(Task, TwoSubgraphsOfTheSameOpsAndOutputShapeAreDescribedApart) {
  Task pointwise = subgraph("conv2d", nlohmann::json::object(), {{1, 4, 8, 8}, {8, 4, 1, 1}});
  Task depthwise = subgraph("conv2d", {{"group", 8}, {"pads", {1, 1, 1, 1}}}, {{1, 8, 8, 8}, {8, 1, 3, 3}});
  EXPECT_EQ(pointwise.description(), "subgraph conv2d 1x8x8x8 from 1x4x8x8, 8x4x1x1");
  EXPECT_EQ(depthwise.description(), "subgraph conv2d 1x8x8x8 from 1x8x8x8, 8x1x3x3");
}

}  // namespace
}  // namespace loom
