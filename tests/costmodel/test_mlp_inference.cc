// The MLP's own inference (mlp_inference.h) scores every program as
// LibTorch's forward pass of the same networks does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "costmodel/cost_model.h"
#include "costmodel/mlp_inference.h"
#include "costmodel/mlp_model.h"

namespace loom {
namespace {

// Programs of 0-7 dense random rows, one of 250 rows (more than a chunk of
// the inference), one that is not valid and one valid without rows; labels
// from the first features so that a fit has something to learn.
struct Programs {
  std::vector<ProgramFeatures> programs;
  std::vector<float> labels;
  std::vector<int> groups;
};

Programs random_programs(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  Programs d;
  for (size_t p = 0; p < n; ++p) {
    ProgramFeatures f;
    f.valid = p != 3;
    f.num_stmts = !f.valid || p == 5 ? 0 : p == 7 ? 250 : static_cast<int>(rng() % 8);
    float label = 0;
    for (int s = 0; s < f.num_stmts; ++s)
      for (int k = 0; k < kNumFeatures; ++k) {
        f.values.push_back(normal(rng));
        if (k < 3) label += f.values.back() * static_cast<float>(k + 1);
      }
    d.programs.push_back(std::move(f));
    d.labels.push_back(1.0f / (1.0f + std::exp(-label / 8)));
    d.groups.push_back(static_cast<int>(p % 3));
  }
  return d;
}

void expect_scores_near(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i])  // equal: also both the invalid score
      EXPECT_NEAR(got[i], want[i], 1e-4 * std::max(1.0f, std::fabs(want[i]))) << "program " << i;
}

TEST(MlpInference, ScoresAsLibTorchDoesBeforeAndAfterAFit) {
  auto mlp = make_cost_model("mlp", {{"max_epochs", 3}, {"members", 2}});
  const Programs d = random_programs(400, 1);
  expect_scores_near(mlp->predict_features(d.programs), mlp_libtorch_scores(*mlp, d.programs));
  mlp->fit(d.programs, d.labels, d.groups);
  const std::vector<float> fitted = mlp->predict_features(d.programs);
  expect_scores_near(fitted, mlp_libtorch_scores(*mlp, d.programs));
  EXPECT_EQ(fitted[3], kInvalidProgramScore);
}

TEST(MlpInference, ANetworkOfOddWidthsAndADeeperHeadScoresAsLibTorchDoes) {
  auto mlp = make_cost_model("mlp", {{"max_epochs", 2}, {"members", 1}, {"hidden", 37}, {"layers", 3},
                                     {"head_layers", 2}});
  const Programs d = random_programs(120, 2);
  mlp->fit(d.programs, d.labels, d.groups);
  expect_scores_near(mlp->predict_features(d.programs), mlp_libtorch_scores(*mlp, d.programs));
}

TEST(MlpInference, ABatchWithoutAnyRowsScoresZeroAsLibTorchDoes) {
  auto mlp = make_cost_model("mlp", {{"members", 1}});
  std::vector<ProgramFeatures> empty(2);
  empty[0].valid = true;
  expect_scores_near(mlp->predict_features(empty), mlp_libtorch_scores(*mlp, empty));
}

FrozenLinear random_linear(int out, int in, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f / std::sqrt(static_cast<float>(in)));
  std::vector<float> w(static_cast<size_t>(out) * in), b(out);
  for (float& v : w) v = normal(rng);
  for (float& v : b) v = normal(rng);
  return FrozenLinear::from_out_by_in(out, in, w.data(), b.data());
}

TEST(MlpInference, VectorTilesAndThePortableLoopNestAgree) {
  std::mt19937_64 rng(3);
  FrozenMlp mlp;
  mlp.mean.assign(kNumFeatures, 0.5f);
  mlp.inv_std.assign(kNumFeatures, 0.8f);
  mlp.input_clip = 3;
  for (int width : {128, 70}) {
    FrozenNet net;
    net.hidden = {random_linear(width, kNumFeatures, rng), random_linear(width, width, rng)};
    net.out = random_linear(1, width, rng);
    net.head = {random_linear(width, width, rng)};
    net.head_out = random_linear(1, width, rng);
    mlp.nets.push_back(std::move(net));
  }
  const Programs d = random_programs(300, 4);
  expect_scores_near(mlp_scores(mlp, d.programs, true), mlp_scores(mlp, d.programs, false));
}

}  // namespace
}  // namespace loom
