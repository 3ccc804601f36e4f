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

}  // namespace
}  // namespace loom
