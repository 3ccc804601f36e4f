// Vendor-library baselines (oneDNN, OpenBLAS): every variant's output matches
// the reference evaluator on small instances of every suite workload, a
// wrong output is reported, and a workload a library cannot express says why.
#include <gtest/gtest.h>

#include <set>

#include "experiments/baselines/baseline.h"
#include "ir/reference.h"
#include "ir/workload_registry.h"

namespace loom {
namespace {

TimingOptions fast_timing() {
  TimingOptions t;
  t.repeat = 1;
  t.min_repeat_ms = 1;
  return t;
}

struct Case {
  Task task;
  TensorMap inputs, ref;
};

Case make_case(const std::string& workload, const nlohmann::json& params) {
  Case c;
  Target target;
  target.threads = 1;
  c.task = Task::make(workload, params, target);
  c.inputs = random_inputs(*c.task.dag, 7);
  c.ref = evaluate_reference(*c.task.dag, c.inputs);
  return c;
}

std::vector<BaselineResult> run_all(const Case& c) {
  auto r = run_onednn_baselines(c.task, fast_timing(), c.inputs, c.ref);
  for (auto& x : run_openblas_baselines(c.task, fast_timing(), c.inputs, c.ref)) r.push_back(x);
  return r;
}

const std::set<std::string> kOpenblasWorkloads = {"matmul", "batch_matmul", "dense_bias_relu", "tbg",
                                                  "norm"};

// Checks every result of `c`; returns the oneDNN variants measured.
std::vector<std::string> check_case(const Case& c) {
  std::vector<std::string> onednn_variants;
  bool openblas_ok = false;
  for (const auto& r : run_all(c)) {
    SCOPED_TRACE(c.task.description() + " " + r.library + " " + r.variant);
    if (!r.supported) {
      EXPECT_FALSE(r.reason.empty());
      // oneDNN expresses every suite workload; OpenBLAS only the products and norm.
      EXPECT_TRUE(r.library == "openblas" && !kOpenblasWorkloads.count(c.task.workload)) << r.reason;
      continue;
    }
    EXPECT_EQ(r.check, "");
    EXPECT_GT(r.median_s, 0);
    EXPECT_EQ(r.costs_s.size(), 1u);
    if (r.library == "onednn") onednn_variants.push_back(r.variant);
    if (r.library == "openblas") openblas_ok = true;
  }
  EXPECT_FALSE(onednn_variants.empty());
  EXPECT_EQ(openblas_ok, kOpenblasWorkloads.count(c.task.workload) == 1);
  return onednn_variants;
}

TEST(Baselines, EveryWorkloadSmallParamsMatchesReference) {
  for (const auto& w : workload_registry()) {
    SCOPED_TRACE(w.name);
    check_case(make_case(w.name, w.small_params));
  }
}

// Channel counts that fill oneDNN's blocked layouts (16-wide) and GEMM shapes
// past one micro-kernel tile.
TEST(Baselines, MediumShapesMatchReference) {
  const std::vector<std::pair<std::string, nlohmann::json>> cases = {
      {"matmul", {{"M", 64}, {"N", 48}, {"K", 40}}},
      {"batch_matmul", {{"B", 3}, {"M", 33}, {"N", 20}, {"K", 17}}},
      {"dense_bias_relu", {{"M", 20}, {"N", 48}, {"K", 36}}},
      {"tbg", {{"B", 1}, {"L", 20}, {"H", 3}, {"D", 16}}},
      {"conv2d_bias_relu", {{"C", 32}, {"H", 9}, {"W", 10}, {"K", 32}}},
      {"conv1d", {{"C", 16}, {"L", 20}, {"K", 32}}},
      {"conv3d", {{"C", 16}, {"D", 4}, {"H", 5}, {"W", 6}, {"K", 16}}},
      {"group_conv2d", {{"C", 32}, {"H", 8}, {"W", 8}, {"K", 32}, {"groups", 2}}},
      {"dilated_conv2d", {{"C", 16}, {"H", 11}, {"W", 10}, {"K", 16}}},
      {"depthwise_conv2d", {{"C", 32}, {"H", 9}, {"W", 8}, {"stride", 2}}},
      {"transposed_conv2d", {{"C", 16}, {"H", 5}, {"W", 6}, {"K", 32}}},
      {"capsule_conv2d", {{"H", 6}, {"W", 5}, {"C", 4}, {"K", 4}, {"capsule", 4}}},
      {"softmax", {{"M", 9}, {"N", 70}}},
      {"norm", {{"M", 33}, {"N", 70}}},
  };
  for (const auto& [w, p] : cases) {
    SCOPED_TRACE(w);
    check_case(make_case(w, p));
  }
}

TEST(Baselines, ConvIsMeasuredInOwnAndPreferredLayouts) {
  auto variants = check_case(make_case("conv2d_bias_relu", {{"C", 16}, {"H", 6}, {"W", 6}, {"K", 16}}));
  std::set<std::string> v(variants.begin(), variants.end());
  EXPECT_TRUE(v.count("NCHW direct")) << ::testing::PrintToString(variants);
  EXPECT_TRUE(v.count("NCHW in/out, reorders timed")) << ::testing::PrintToString(variants);
  EXPECT_TRUE(v.count("preferred layouts, reorders outside")) << ::testing::PrintToString(variants);
}

TEST(Baselines, MatmulHasPlainAndPrepackedB) {
  auto variants = check_case(make_case("matmul", {{"M", 32}, {"N", 32}, {"K", 32}}));
  ASSERT_GE(variants.size(), 2u);
  EXPECT_EQ(variants[0], "row-major direct, plain B");
  EXPECT_EQ(variants[1].rfind("row-major direct, B prepacked", 0), 0u) << variants[1];
}

// Loom's programs read B as given and pack inside their timing: only oneDNN's
// plain-B variant shares that contract. The reorder of B to oneDNN's blocked
// layout happens at 1024 (brgemm); OpenBLAS packs inside the call.
TEST(Baselines, OnlyVariantsThatPrepackNothingReadTheInputsAsGiven) {
  Case c = make_case("matmul", {{"M", 64}, {"N", 1024}, {"K", 64}});
  int plain = 0, prepacked = 0;
  for (const auto& r : run_all(c)) {
    if (!r.supported) continue;
    SCOPED_TRACE(r.library + " " + r.variant + " " + r.impl);
    if (r.library == "openblas" || r.variant == "row-major direct, plain B") {
      EXPECT_TRUE(r.inputs_as_given);
      ++plain;
    } else if (r.variant.rfind("row-major direct, B prepacked", 0) == 0) {
      EXPECT_FALSE(r.inputs_as_given);  // B reordered once, outside the timing
      ++prepacked;
    }
  }
  EXPECT_EQ(plain, 2);
  EXPECT_EQ(prepacked, 1) << "oneDNN kept B row-major: the prepacked variant no longer reorders it";
}

TEST(Baselines, WrongReferenceIsReported) {
  for (const char* w : {"matmul", "conv2d", "softmax"}) {
    SCOPED_TRACE(w);
    Case c = make_case(w, find_workload(w)->small_params);
    for (auto& [name, v] : c.ref) {
      if (!c.inputs.count(name)) v[0] += 1.0f;  // corrupt every computed tensor
    }
    int measured = 0;
    for (const auto& r : run_all(c)) {
      if (!r.supported) continue;
      ++measured;
      EXPECT_NE(r.check, "") << r.library << " " << r.variant;
    }
    EXPECT_GT(measured, 0);
  }
}

TEST(Baselines, InexpressibleCasesSayWhy) {
  Case c = make_case("capsule_conv2d", {{"N", 2}, {"H", 4}, {"W", 4}, {"C", 2}, {"K", 2}, {"capsule", 2}});
  auto r = run_onednn_baselines(c.task, fast_timing(), c.inputs, c.ref);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].supported);
  EXPECT_NE(r[0].reason.find("N > 1"), std::string::npos) << r[0].reason;

  Case s = make_case("softmax", find_workload("softmax")->small_params);
  auto b = run_openblas_baselines(s.task, fast_timing(), s.inputs, s.ref);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_FALSE(b[0].supported);
  EXPECT_NE(b[0].reason.find("softmax"), std::string::npos) << b[0].reason;
}

}  // namespace
}  // namespace loom
