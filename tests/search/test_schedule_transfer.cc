// Programs of measured tasks carried over to other tasks: split lengths
// re-fitted to other extents, the re-fitted programs valid and correct, and
// the library's choice of sources.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ir/lower.h"
#include "measure/records.h"
#include "search/schedule_transfer.h"
#include "search/search_policy.h"
#include "sketch/sketch_policy.h"
#include "tests/support/schedule_check.h"

namespace loom {
namespace {

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

TEST(RefitSplitLengths, LengthsThatStillDivideAreKept) {
  EXPECT_EQ(refit_split_lengths({4, 8, 16}, 1024), (std::vector<int64_t>{4, 8, 16}));
  EXPECT_EQ(refit_split_lengths({4, 8, 16}, 512), (std::vector<int64_t>{4, 8, 16}));
}

TEST(RefitSplitLengths, TheInnermostIsFittedFirst) {
  // 96 = 16 * 6: the innermost 16 stays, the 8 next to it becomes 6.
  EXPECT_EQ(refit_split_lengths({8, 16}, 96), (std::vector<int64_t>{6, 16}));
  // An outer-to-inner split (inner_to_outer false) fits its first length
  // first.
  EXPECT_EQ(refit_split_lengths({16, 8}, 96, /*inner_to_outer=*/false), (std::vector<int64_t>{16, 6}));
}

TEST(RefitSplitLengths, ALengthWithNoNearDivisorIsKeptAsAPartialSplit) {
  // 23 is prime: 8 does not divide it and neither 1 nor 23 is near 8.
  EXPECT_EQ(refit_split_lengths({8}, 23), (std::vector<int64_t>{8}));
  // A length past the extent shrinks to the extent.
  EXPECT_EQ(refit_split_lengths({64}, 7), (std::vector<int64_t>{7}));
}

TEST(RefitSplitLengths, TheProductNeverExceedsTheExtent) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 500; ++i) {
    std::vector<int64_t> lengths(1 + rng() % 4);
    for (auto& l : lengths) l = 1 + static_cast<int64_t>(rng() % 32);
    const int64_t extent = 1 + static_cast<int64_t>(rng() % 300);
    const auto fitted = refit_split_lengths(lengths, extent, rng() % 2 == 0);
    ASSERT_EQ(fitted.size(), lengths.size());
    EXPECT_LE(product(fitted), extent) << "extent " << extent;
    for (int64_t l : fitted) EXPECT_GE(l, 1);
  }
}

// Random programs of one matmul, re-fitted to a matmul of other extents
// (none dividing the first's), replay there and compute its result.
TEST(RefitProgram, ProgramsOfOneShapeComputeAnotherShapeCorrectly) {
  auto from = testing::workload("matmul", R"({"M": 64, "N": 48, "K": 32})");
  auto to = testing::workload("matmul", R"({"M": 40, "N": 72, "K": 27})");
  std::mt19937_64 rng(9);
  SketchTask st{from};
  int checked = 0;
  for (const State& s : sample(st, 6, rng)) {
    State fitted = refit_program(to, s.steps());
    EXPECT_EQ(fitted.steps().size(), s.steps().size());
    EXPECT_EQ(testing::check_with_c_backend(fitted), "") << fitted.to_string();
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST(RefitProgram, AConvProgramServesAConvOfAnotherImageAndChannelCount) {
  auto from = testing::workload("conv2d", R"({"N": 1, "C": 16, "H": 14, "W": 14, "K": 32, "R": 3, "S": 3, "pad": 1})");
  auto to = testing::workload("conv2d", R"({"N": 1, "C": 24, "H": 10, "W": 10, "K": 20, "R": 3, "S": 3, "pad": 1})");
  std::mt19937_64 rng(4);
  for (const State& s : sample(SketchTask{from}, 4, rng))
    EXPECT_EQ(testing::check_with_c_backend(refit_program(to, s.steps())), "");
}

TEST(RefitProgram, AProgramOfOtherStagesDoesNotReplay) {
  auto matmul = testing::workload("matmul", R"({"M": 16, "N": 16, "K": 16})");
  auto conv = testing::workload("conv2d", R"({"N": 1, "C": 4, "H": 6, "W": 6, "K": 4, "R": 3, "S": 3, "pad": 1})");
  std::mt19937_64 rng(2);
  std::vector<State> programs = sample(SketchTask{conv}, 4, rng);
  ASSERT_FALSE(programs.empty());
  bool any_failed = false;
  for (const State& s : programs) {
    try {
      refit_program(matmul, s.steps());
    } catch (const LoomError& e) {
      any_failed = true;
      EXPECT_NE(std::string(e.what()).find("step "), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(any_failed);
}

TEST(ExtentDistance, IsZeroForTheSameExtentsAndGrowsWithTheirRatio) {
  auto a = testing::workload("matmul", R"({"M": 64, "N": 64, "K": 64})");
  auto b = testing::workload("matmul", R"({"M": 128, "N": 64, "K": 64})");
  auto c = testing::workload("matmul", R"({"M": 512, "N": 64, "K": 64})");
  EXPECT_EQ(extent_distance(*a, *a), 0);
  EXPECT_GT(extent_distance(*a, *b), 0);
  EXPECT_LT(extent_distance(*a, *b), extent_distance(*a, *c));
  auto conv = testing::workload("conv2d", R"({"N": 1, "C": 4, "H": 6, "W": 6, "K": 4, "R": 3, "S": 3, "pad": 1})");
  EXPECT_TRUE(std::isinf(extent_distance(*a, *conv)));
}

MeasureRecord record_of(const Task& task, const State& s, double seconds) {
  MeasureRecord r{task, s.steps_json(), {}};
  r.result.costs_s = {seconds};
  return r;
}

TEST(ScheduleLibrary, TheSameTaskGetsItsBestProgramAndOthersTheNearestTasksRefitted) {
  Task near = Task::make("matmul", {{"M", 64}, {"N", 64}, {"K", 64}}, Target{});
  Task far = Task::make("matmul", {{"M", 128}, {"N", 128}, {"K", 128}}, Target{});
  Task wanted = Task::make("matmul", {{"M", 48}, {"N", 64}, {"K", 64}}, Target{});
  std::mt19937_64 rng(3);
  std::vector<State> near_programs = sample(make_sketch_task(near), 3, rng);
  std::vector<State> far_programs = sample(make_sketch_task(far), 2, rng);
  ASSERT_GE(near_programs.size(), 2u);
  ASSERT_FALSE(far_programs.empty());
  std::vector<MeasureRecord> records = {record_of(near, near_programs[0], 2e-3), record_of(near, near_programs[1], 1e-3),
                                        record_of(far, far_programs[0], 1e-3)};
  ScheduleLibrary library(records, /*per_task=*/2);
  EXPECT_EQ(library.tasks(), 2u);

  ASSERT_TRUE(library.same_task(near).has_value());
  EXPECT_EQ(library.same_task(near)->steps_json(), near_programs[1].steps_json());  // the faster one
  EXPECT_FALSE(library.same_task(wanted).has_value());

  std::vector<State> offered = library.similar(wanted, /*nearest=*/1);
  ASSERT_EQ(offered.size(), 2u);  // the nearest task's two programs, the best first
  EXPECT_EQ(offered[0].steps_json(), refit_program(wanted.dag, near_programs[1].steps()).steps_json());
  // The task itself is never its own source.
  for (const State& s : library.similar(near, 2)) EXPECT_NE(s.steps_json(), near_programs[1].steps_json());
}

TEST(ScheduleLibrary, ATaskTooFarApartIsNoSource) {
  Task source = Task::make("matmul", {{"M", 1024}, {"N", 1024}, {"K", 1024}}, Target{});
  Task wanted = Task::make("matmul", {{"M", 16}, {"N", 16}, {"K", 16}}, Target{});
  ASSERT_GT(extent_distance(*source.dag, *wanted.dag), ScheduleLibrary::kMaxDistance);
  std::mt19937_64 rng(4);
  std::vector<State> programs = sample(make_sketch_task(source), 1, rng);
  ScheduleLibrary library({record_of(source, programs.at(0), 1e-3)});
  EXPECT_TRUE(library.similar(wanted).empty());
  EXPECT_FALSE(library.similar(wanted, 4, /*max_distance=*/100).empty());
}

}  // namespace
}  // namespace loom
