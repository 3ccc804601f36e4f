// The backbone property (DESIGN.md §6): every program that sketch generation
// plus random annotation can produce lowers, compiles and computes what the
// reference computes. Random states of every registry workload (small
// parameters), of a matmul with prime extents (non-divisible tiles) and of
// the fused subgraphs are checked with the C backend.
//
// LOOM_LONG_TESTS=1 samples many more states per workload (nightly).
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

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
  return out;
}

int states_per_case() {
  const char* longmode = std::getenv("LOOM_LONG_TESTS");
  return longmode && std::string(longmode) == "1" ? 400 : 16;
}

class SampledPrograms : public ::testing::TestWithParam<Case> {};

TEST_P(SampledPrograms, MatchTheReference) {
  const Case& c = GetParam();
  SketchPolicy policy(testing::sketch_task(c.workload, c.params, c.threads));
  std::mt19937_64 rng(std::hash<std::string>()(c.name));
  std::vector<State> states = policy.sample(states_per_case(), rng);
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
}

INSTANTIATE_TEST_SUITE_P(Registry, SampledPrograms, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace loom
