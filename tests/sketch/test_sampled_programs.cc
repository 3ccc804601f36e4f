// The backbone property: every program that sketch generation
// plus random annotation can produce lowers, compiles and computes what the
// reference computes. Random states of every registry workload (small
// parameters), of a matmul with prime extents (non-divisible tiles) and of
// the fused subgraphs are checked with the C backend; small convs also with
// a vector width that makes their channels the vector axis.
//
// SampledProgramsLong (ctest label long) samples 25 times the states per workload.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "ir/step.h"
#include "sketch/sketch_policy.h"
#include "tests/sketch/sketch_test_util.h"
#include "tests/support/schedule_check.h"

namespace loom {
namespace {

struct Case {
  std::string name;  // test name
  std::string workload;
  nlohmann::json params;
  int threads;
  int vector_width = 16;
  std::vector<std::string> constants = {};  // inputs marked constant: their layout is rewritten
  bool fuses_dims = false;                  // some sampled state fuses a stage's last two dimensions
};

// gtest prints the parameter in test listings: the case name, not its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const auto& w : workload_registry()) out.push_back({w.name, w.name, w.small_params, 4});
  // Prime extents: no divisor but 1 and itself, so tiles are non-divisible
  // whenever the sampler draws the rare non-dividing lengths.
  out.push_back({"matmul_prime", "matmul", {{"M", 31}, {"N", 37}, {"K", 29}}, 4});
  // One thread: no rfactor sketches for small reductions, other parallel shape.
  out.push_back({"matmul_one_thread", "matmul", {{"M", 8}, {"N", 8}, {"K", 64}}, 1});
  out.push_back({"conv2d_bias_relu_one_thread", "conv2d_bias_relu", find_workload("conv2d_bias_relu")->small_params, 1});
  // Vector width 4: the output channels (4) fill vectors, the output width
  // (5, 6) does not, so vector_axis_layout sketches (channel-last
  // accumulators, transposed kernel packs) are sampled too.
  out.push_back({"conv2d_channel_vectors", "conv2d",
                 {{"N", 1}, {"C", 3}, {"H", 5}, {"W", 5}, {"K", 4}, {"R", 3}, {"S", 3}, {"stride", 1}, {"pad", 1}},
                 4, 4});
  out.push_back({"conv2d_bias_relu_channel_vectors", "conv2d_bias_relu",
                 find_workload("conv2d_bias_relu")->small_params, 1, 4});
  out.push_back({"dilated_conv2d_channel_vectors", "dilated_conv2d",
                 find_workload("dilated_conv2d")->small_params, 4, 4});
  // Constant weights: the layout rewrite's blocked copies, with tiles that
  // do not divide (prime extents) and with channels as the vector axis.
  out.push_back({"conv2d_constant_kernel", "conv2d", find_workload("conv2d")->small_params, 4, 16, {"kernel"}});
  out.push_back({"conv2d_constant_kernel_channel_vectors", "conv2d",
                 {{"N", 1}, {"C", 3}, {"H", 5}, {"W", 5}, {"K", 4}, {"R", 3}, {"S", 3}, {"stride", 1}, {"pad", 1}},
                 4, 4, {"kernel"}});
  // Groups of 4 output channels at vector width 4: the channels take the
  // vector loop and each vector reads one input channel.
  out.push_back({"group_conv2d_channel_vectors", "group_conv2d",
                 {{"N", 1}, {"C", 8}, {"H", 5}, {"W", 5}, {"K", 8}, {"R", 3}, {"S", 3}, {"stride", 1}, {"pad", 1},
                  {"groups", 2}},
                 1, 4, {"kernel"}});
  out.push_back({"depthwise_conv2d_constant_kernel", "depthwise_conv2d",
                 find_workload("depthwise_conv2d")->small_params, 1, 4, {"kernel"}});
  out.push_back({"matmul_prime_constant_B", "matmul", {{"M", 31}, {"N", 37}, {"K", 29}}, 4, 16, {"B"}});
  // 1x1 convolutions whose 3 x 5 map (width 5: no whole vectors of 4) is
  // also tiled as one dimension of 15 (fuse_contiguous_dims), into a
  // cache-write stage and into a bias + ReLU consumer.
  const nlohmann::json pointwise = {{"N", 1}, {"C", 3}, {"H", 3}, {"W", 5}, {"K", 4},
                                    {"R", 1}, {"S", 1}, {"stride", 1}, {"pad", 0}};
  out.push_back({"conv2d_pointwise", "conv2d", pointwise, 4, 4, {}, true});
  out.push_back({"conv2d_bias_relu_pointwise_constant_kernel", "conv2d_bias_relu", pointwise, 1, 4,
                 {"kernel", "bias"}, true});
  return out;
}

// `n` sampled programs of the case, each checked against the reference.
void check_sampled_programs(const Case& c, int n) {
  SketchTask task = testing::sketch_task(c.workload, c.params, c.threads);
  task.vector_width = c.vector_width;
  if (!c.constants.empty()) {
    auto dag = std::make_shared<ComputeDAG>(*task.dag);
    for (const auto& name : c.constants) dag->mark_constant(name);
    task.dag = dag;
  }
  SketchPolicy policy(task);
  std::mt19937_64 rng(std::hash<std::string>()(c.name));
  std::vector<State> states = policy.sample(n, rng);
  ASSERT_FALSE(states.empty());
  int failures = 0;
  for (const State& s : states) {
    std::string err;
    try {
      err = testing::check_with_c_backend(s);
    } catch (const std::exception& e) {
      err = std::string("exception: ") + e.what();
    }
    if (!err.empty() && ++failures <= 3)
      ADD_FAILURE() << c.name << ": " << err << "\nsteps: " << s.steps_json().dump() << "\n" << s.to_string();
  }
  EXPECT_EQ(failures, 0) << "of " << states.size() << " sampled states";
  if (!c.constants.empty()) {
    int rewritten = 0;
    for (const State& s : states)
      for (const Stage& st : s.stages()) rewritten += st.pretransformed;
    EXPECT_GT(rewritten, 0) << "no sampled state pre-transforms a constant";
  }
  if (c.fuses_dims) {
    int fused = 0;
    for (const State& s : states)
      for (const auto& step : s.steps()) fused += std::string(step->tag()) == "FD";
    EXPECT_GT(fused, 0) << "no sampled state fuses dimensions";
  }
  if (c.vector_width != 16 && c.constants.empty() && !c.fuses_dims) {
    int with_layout = 0;
    for (const State& s : states)
      for (const Stage& st : s.stages()) with_layout += !st.storage_order.empty();
    EXPECT_GT(with_layout, 0) << "no sampled state has a channels-last stage";
  }
}

class SampledPrograms : public ::testing::TestWithParam<Case> {};
TEST_P(SampledPrograms, MatchTheReference) { check_sampled_programs(GetParam(), 16); }
INSTANTIATE_TEST_SUITE_P(Registry, SampledPrograms, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

// ctest label long (a run by hand: --gtest_also_run_disabled_tests): 25
// times the programs.
class SampledProgramsLong : public ::testing::TestWithParam<Case> {};
TEST_P(SampledProgramsLong, MatchTheReference) { check_sampled_programs(GetParam(), 400); }
INSTANTIATE_TEST_SUITE_P(DISABLED_Registry, SampledProgramsLong, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace loom
