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

// The transposed conv as its definition scatters it: every input element
// times every kernel tap, added at y*stride + r - pad.
std::vector<float> scattered_transposed_conv(const std::vector<float>& x, const std::vector<float>& w, int64_t C,
                                             int64_t H, int64_t W, int64_t K, int64_t R, int64_t S, int64_t st,
                                             int64_t pad) {
  const int64_t Ho = (H - 1) * st - 2 * pad + R, Wo = (W - 1) * st - 2 * pad + S;
  std::vector<float> out(K * Ho * Wo, 0.0f);
  for (int64_t c = 0; c < C; ++c)
    for (int64_t y = 0; y < H; ++y)
      for (int64_t xx = 0; xx < W; ++xx)
        for (int64_t k = 0; k < K; ++k)
          for (int64_t r = 0; r < R; ++r)
            for (int64_t s = 0; s < S; ++s) {
              const int64_t h = y * st + r - pad, o = xx * st + s - pad;
              if (h < 0 || h >= Ho || o < 0 || o >= Wo) continue;
              out[(k * Ho + h) * Wo + o] += x[(c * H + y) * W + xx] * w[((c * K + k) * R + r) * S + s];
            }
  return out;
}

// Strides that divide the kernel and strides that do not, odd and even
// outputs, padding 0 and more.
TEST(Workloads, TransposedConvPhasesComputeTheScatteredDefinition) {
  struct Case { int64_t C, H, W, K, R, S, stride, pad; };
  for (const Case& c : {Case{3, 4, 5, 2, 4, 4, 2, 1}, Case{2, 5, 3, 3, 3, 3, 2, 1}, Case{2, 4, 4, 2, 3, 5, 3, 0},
                        Case{1, 3, 3, 2, 2, 2, 2, 0}, Case{2, 3, 4, 2, 5, 4, 1, 2}}) {
    ComputeDAG dag = make_workload("transposed_conv2d", {{"C", c.C}, {"H", c.H}, {"W", c.W}, {"K", c.K}, {"R", c.R},
                                                         {"S", c.S}, {"stride", c.stride}, {"pad", c.pad}});
    auto in = random_inputs(dag, 3);
    auto got = evaluate_reference(dag, in).at("conv");
    auto want = scattered_transposed_conv(in.at("data"), in.at("kernel"), c.C, c.H, c.W, c.K, c.R, c.S, c.stride,
                                          c.pad);
    EXPECT_EQ(compare_outputs(got, want), "") << "R=" << c.R << " S=" << c.S << " stride=" << c.stride;
  }
}

// The FLOPs reported are the dilated form's (every tap of every output), so
// GFLOP/s compare with the libraries'; the phases multiply a quarter of them
// at stride 2.
TEST(Workloads, TransposedConvCountsTheNominalFlops) {
  ComputeDAG dag = make_workload("transposed_conv2d", {{"C", 8}, {"H", 6}, {"W", 6}, {"K", 4}, {"R", 4}, {"S", 4},
                                                       {"stride", 2}, {"pad", 1}});
  const double ho = (6 - 1) * 2 - 2 + 4;  // 12
  EXPECT_DOUBLE_EQ(dag.flop_count(), 2.0 * 4 * ho * ho * 8 * 4 * 4);
  double multiplies = 1;
  for (int64_t e : dag.op("phases")->shape) multiplies *= static_cast<double>(e);
  EXPECT_DOUBLE_EQ(multiplies * 8 * 2 * 2, 4 * ho * ho * 8 * 4 * 4 / 4);
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
