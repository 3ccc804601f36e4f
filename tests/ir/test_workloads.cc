#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <set>

#include "ir/reference.h"
#include "ir/workload_registry.h"

namespace loom {
namespace {

using nlohmann::json;

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const LoomError& e) {
    return e.what();
  }
  return "<no LoomError>";
}

bool is_c_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

TEST(Workloads, RegistryIsSortedUniqueAndHasTheSuite) {
  const auto& reg = workload_registry();
  for (size_t i = 1; i < reg.size(); ++i) EXPECT_LT(reg[i - 1].name, reg[i].name);
  for (const char* name :
       {"matmul", "batch_matmul", "conv1d", "conv2d", "conv3d", "group_conv2d", "dilated_conv2d",
        "depthwise_conv2d", "transposed_conv2d", "capsule_conv2d", "norm", "conv2d_bias_relu",
        "tbg", "dense_bias_relu", "softmax"}) {
    EXPECT_NE(find_workload(name), nullptr) << name;
  }
}

TEST(Workloads, EveryWorkloadBuildsWithDefaultParams) {
  for (const auto& w : workload_registry()) {
    ComputeDAG dag = make_workload(w.name, json::object());
    EXPECT_GT(dag.flop_count(), 0) << w.name;
    EXPECT_FALSE(w.description.empty()) << w.name;
  }
}

TEST(Workloads, EveryWorkloadEvaluatesWithSmallParams) {
  for (const auto& w : workload_registry()) {
    SCOPED_TRACE(w.name);
    ComputeDAG dag = make_workload(w.name, w.small_params);
    auto values = evaluate_reference(dag, random_inputs(dag, 7));
    for (const auto& out : dag.output_names()) {
      const auto& data = values.at(out);
      ASSERT_EQ(static_cast<int64_t>(data.size()), shape_size(dag.op(out)->shape));
      double mag = 0;
      for (float v : data) {
        ASSERT_TRUE(std::isfinite(v));
        mag += std::fabs(v);
      }
      EXPECT_GT(mag, 0.0) << "output " << out << " is all zeros";
    }
  }
}

TEST(Workloads, OpNamesAreUniqueCIdentifiers) {
  for (const auto& w : workload_registry()) {
    ComputeDAG dag = make_workload(w.name, w.small_params);
    std::set<std::string> names;
    for (const auto& op : dag.ops()) {
      EXPECT_TRUE(is_c_identifier(op->name)) << w.name << ": " << op->name;
      EXPECT_TRUE(names.insert(op->name).second) << w.name << ": duplicate " << op->name;
    }
  }
}

TEST(Workloads, MatmulFlopCountIsTwoMNK) {
  ComputeDAG dag = make_workload("matmul", {{"M", 32}, {"N", 48}, {"K", 16}});
  EXPECT_DOUBLE_EQ(dag.flop_count(), 2.0 * 32 * 48 * 16);
}

TEST(Workloads, MissingParamsTakeDefaults) {
  const WorkloadInfo* w = find_workload("conv2d");
  ASSERT_NE(w, nullptr);
  WorkloadParams p = resolve_params(*w, {{"K", 32}});
  EXPECT_EQ(p.at("K"), 32);
  EXPECT_EQ(p.at("C"), 64);
  EXPECT_EQ(p.at("dilation"), 1);
  EXPECT_EQ(p.size(), w->params.size());
}

TEST(Workloads, Conv2dHasPadStageAndConvOutput) {
  ComputeDAG dag = make_workload("conv2d", {{"C", 2}, {"H", 5}, {"W", 5}, {"K", 3}, {"pad", 1}});
  EXPECT_GE(dag.op_index("pad"), 0);
  ASSERT_EQ(dag.output_names().size(), 1u);
  EXPECT_EQ(dag.output_names()[0], "conv");
  EXPECT_EQ(dag.op("pad")->shape, (std::vector<int64_t>{1, 2, 7, 7}));
}

TEST(Workloads, Conv2dWithoutPaddingHasNoPadStage) {
  ComputeDAG dag = make_workload("conv2d", {{"C", 2}, {"H", 5}, {"W", 5}, {"K", 3}, {"pad", 0}});
  EXPECT_EQ(dag.op_index("pad"), -1);
  EXPECT_EQ(dag.op("conv")->shape, (std::vector<int64_t>{1, 3, 3, 3}));
}

// ---- errors --------------------------------------------------------------

TEST(WorkloadErrors, UnknownWorkloadListsKnownNames) {
  std::string msg = error_of([] { make_workload("foo", json::object()); });
  EXPECT_NE(msg.find("unknown workload 'foo'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("matmul"), std::string::npos) << msg;
}

TEST(WorkloadErrors, UnknownParamNamesTheField) {
  std::string msg = error_of([] { make_workload("matmul", {{"Q", 4}}); });
  EXPECT_NE(msg.find("params.Q"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown parameter"), std::string::npos) << msg;
}

TEST(WorkloadErrors, NonPositiveParamNamesTheField) {
  std::string msg = error_of([] { make_workload("matmul", {{"K", 0}}); });
  EXPECT_NE(msg.find("params.K: expected a positive integer"), std::string::npos) << msg;
  msg = error_of([] { make_workload("matmul", {{"M", -3}}); });
  EXPECT_NE(msg.find("params.M: expected a positive integer"), std::string::npos) << msg;
}

TEST(WorkloadErrors, NonIntegerParamNamesTheField) {
  EXPECT_NE(error_of([] { make_workload("matmul", {{"N", 2.5}}); }).find("params.N"),
            std::string::npos);
  EXPECT_NE(error_of([] { make_workload("matmul", {{"N", "8"}}); }).find("params.N"),
            std::string::npos);
  EXPECT_NE(error_of([] { make_workload("matmul", {{"N", true}}); }).find("params.N"),
            std::string::npos);
}

TEST(WorkloadErrors, ParamsMustBeAnObject) {
  std::string msg = error_of([] { make_workload("matmul", json::array({1, 2})); });
  EXPECT_NE(msg.find("params"), std::string::npos) << msg;
}

TEST(WorkloadErrors, PaddingMayBeZeroButNotNegative) {
  EXPECT_NO_THROW(make_workload("conv2d", {{"C", 2}, {"H", 4}, {"W", 4}, {"K", 2}, {"pad", 0}}));
  std::string msg = error_of([] { make_workload("conv2d", {{"pad", -1}}); });
  EXPECT_NE(msg.find("params.pad: expected a non-negative integer"), std::string::npos) << msg;
}

TEST(WorkloadErrors, GroupsMustDivideChannels) {
  std::string msg = error_of([] { make_workload("group_conv2d", {{"C", 6}, {"groups", 4}}); });
  EXPECT_NE(msg.find("params.C: must be divisible by params.groups"), std::string::npos) << msg;
}

TEST(WorkloadErrors, KernelLargerThanInputIsRejected) {
  std::string msg =
      error_of([] { make_workload("conv2d", {{"H", 2}, {"W", 8}, {"R", 5}, {"pad", 0}}); });
  EXPECT_NE(msg.find("kernel R"), std::string::npos) << msg;
}

}  // namespace
}  // namespace loom
