// `loom report`'s two ratios: against the fastest baseline variant, and
// against the fastest that read the inputs as given (nothing prepacked
// outside its timing), which is Loom's own contract.
#include <gtest/gtest.h>

#include "experiments/report.h"

namespace loom {
namespace {

BaselineResult variant(const std::string& name, double median_s, bool as_given) {
  BaselineResult b;
  b.library = "onednn";
  b.variant = name;
  b.supported = true;
  b.median_s = median_s;
  b.inputs_as_given = as_given;
  return b;
}

TaskReport gemm_report() {
  TaskReport r;
  r.flops = 2e9;
  r.loom_s = 0.016;
  r.baselines = {variant("plain B", 0.015, true), variant("B prepacked", 0.0125, false)};
  return r;
}

TEST(Report, RatioIsAgainstTheFastestVariant) {
  TaskReport r = gemm_report();
  EXPECT_EQ(r.best_baseline()->variant, "B prepacked");
  EXPECT_DOUBLE_EQ(r.ratio(), 0.0125 / 0.016);
}

TEST(Report, RatioAsGivenSkipsVariantsThatPrepackAnInput) {
  TaskReport r = gemm_report();
  ASSERT_NE(r.best_baseline_as_given(), nullptr);
  EXPECT_EQ(r.best_baseline_as_given()->variant, "plain B");
  EXPECT_DOUBLE_EQ(r.ratio_as_given(), 0.015 / 0.016);
}

TEST(Report, RatioAsGivenIsAbsentWhenEveryVariantPrepacks) {
  TaskReport r = gemm_report();
  r.baselines.erase(r.baselines.begin());
  EXPECT_EQ(r.best_baseline_as_given(), nullptr);
  EXPECT_EQ(r.ratio_as_given(), 0);
  EXPECT_GT(r.ratio(), 0);
}

TEST(Report, WrongOrUnsupportedVariantsAreNeverTheBaseline) {
  TaskReport r = gemm_report();
  r.baselines[1].check = "max error 1.0 at C[0]";
  r.baselines.push_back(variant("unsupported", 0.001, true));
  r.baselines.back().supported = false;
  EXPECT_EQ(r.best_baseline()->variant, "plain B");
  EXPECT_EQ(r.best_baseline_as_given()->variant, "plain B");
}

// Load that changes between rounds slows Loom and the baseline of a round
// alike: the median of per-round ratios sees through it, the ratio of the
// medians does not.
TEST(Report, RatioIsTheMedianOfPerRoundRatios) {
  TaskReport r = gemm_report();
  const double load[5] = {1.0, 1.6, 1.6, 1.0, 1.6};  // the machine's slowdown in each round
  for (double f : load) {
    r.loom_rounds.push_back(0.016 * f);
    r.baseline_rounds.resize(2);
    r.baseline_rounds[0].push_back(0.015 * f);
    r.baseline_rounds[1].push_back(0.0125 * (f == 1.6 ? 1.0 : 1.6));  // its loaded rounds are the others
  }
  r.loom_s = 0.016 * 1.6;       // the medians over the rounds
  r.baselines[0].median_s = 0.015 * 1.6;
  r.baselines[1].median_s = 0.0125 * 1.0;
  EXPECT_DOUBLE_EQ(r.ratio_as_given(), 0.015 / 0.016);
  EXPECT_DOUBLE_EQ(r.ratio_to(&r.baselines[1]), 0.0125 / (0.016 * 1.6));  // rounds 2, 3, 5 decide it
}

TEST(Report, RoundsWhereEitherSideFailedAreNotPaired) {
  TaskReport r = gemm_report();
  r.loom_rounds = {0.016, 0.0, 0.016};
  r.baseline_rounds = {{0.015, 0.001, 0.0}, {0.0125, 0.0125, 0.0125}};
  EXPECT_DOUBLE_EQ(r.ratio_as_given(), 0.015 / 0.016);  // only round 1 pairs
  EXPECT_DOUBLE_EQ(r.ratio(), 0.0125 / 0.016);
}

TEST(Report, MediansComeFromTheRoundsThatGaveATime) {
  TaskReport r;
  std::vector<BaselineResult> round = {variant("plain B", 0.015, true)};
  r.add_round(0.016, round);
  round[0].median_s = 0.017;
  r.add_round(0.0, round);  // Loom failed this round
  round[0].median_s = 0.019;
  r.add_round(0.018, round);
  round[0].check = "max error 1.0 at C[0]";  // a wrong result does not count
  round[0].median_s = 0.001;
  r.add_round(0.020, round);
  r.summarize_rounds();
  EXPECT_DOUBLE_EQ(r.loom_s, 0.018);
  EXPECT_DOUBLE_EQ(r.baselines[0].median_s, 0.017);
  EXPECT_DOUBLE_EQ(r.ratio_as_given(), 0.5 * (0.015 / 0.016 + 0.019 / 0.018));
}

// Round-to-round noise of a quiet machine (5-10% on a round's ratio) is
// not unsteadiness.
TEST(Report, RatiosWithinTheSpreadAreSteady) {
  TaskReport r = gemm_report();
  r.loom_rounds = {0.016, 0.018, 0.0165};
  r.baseline_rounds = {{0.015, 0.016, 0.017}, {0.0125, 0.014, 0.013}};
  r.tuned_s = 0.015;
  EXPECT_EQ(r.unsteady(), "");
}

TEST(Report, RatiosWhoseMiddleHalfSpreadsPastTheBoundAreUnsteady) {
  TaskReport r = gemm_report();
  r.loom_rounds = {0.016, 0.016, 0.016, 0.016, 0.016};
  // The prepacked variant ran at half its speed in two rounds of five: the
  // middle half of its ratios spans 0.78 to 1.56.
  r.baseline_rounds = {{0.015, 0.015, 0.015, 0.015, 0.015}, {0.0125, 0.025, 0.0125, 0.025, 0.0125}};
  r.summarize_rounds();
  const std::string why = r.unsteady();
  EXPECT_NE(why.find("ratios to onednn (B prepacked) spans 0.78-1.56"), std::string::npos) << why;
  EXPECT_EQ(why.find("plain B"), std::string::npos) << why;  // steady
}

// One disturbed round in nine moves neither the median nor the quartiles.
TEST(Report, OneOutlierRoundIsSteady) {
  TaskReport r = gemm_report();
  r.loom_rounds.assign(9, 0.016);
  r.loom_rounds[4] = 0.16;
  r.baseline_rounds = {std::vector<double>(9, 0.015), std::vector<double>(9, 0.0125)};
  EXPECT_EQ(r.unsteady(), "");
}

// Only the reported ratios count: a slower variant that is neither the
// fastest nor the fastest as given may be as noisy as it likes.
TEST(Report, SpreadOfAVariantOutsideTheRatiosDoesNotCount) {
  TaskReport r = gemm_report();
  r.baselines.push_back(variant("slow", 0.05, true));
  r.loom_rounds = {0.016, 0.016, 0.016};
  r.baseline_rounds = {{0.015, 0.015, 0.015}, {0.0125, 0.0125, 0.0125}, {0.05, 0.5, 0.05}};
  EXPECT_EQ(r.unsteady(), "");
}

TEST(Report, LoomFarBelowItsTunedSpeedIsUnsteady) {
  TaskReport r = gemm_report();  // re-measured at 0.016 s
  r.tuned_s = 0.010;             // the log's median of the same program
  const std::string why = r.unsteady();
  EXPECT_NE(why.find("Loom ran at 0.62 of its speed in the log"), std::string::npos) << why;
  r.tuned_s = 0.012;
  EXPECT_EQ(r.unsteady(), "");
}

}  // namespace
}  // namespace loom
