// A task's SketchTask takes the vector width the LLVM backend emits for its
// target, so the sketch rules decide with the lanes the program will have.
#include <gtest/gtest.h>

#include "codegen/runtime/host_cpu.h"
#include "ir/error.h"
#include "search/search_policy.h"

namespace loom {
namespace {

Task conv_task(const std::string& target) {
  // Output width 24: whole vectors of 8 lanes, not of 16; 32 output channels
  // fill both.
  return Task::make("conv2d", {{"N", 1}, {"C", 16}, {"H", 24}, {"W", 24}, {"K", 32}, {"R", 3}, {"S", 3}},
                    Target::parse(target));
}

TEST(MakeSketchTask, TakesTheTargetsVectorWidth) {
  EXPECT_EQ(make_sketch_task(conv_task("cpu -threads=1 -isa=avx2")).vector_width, 8);
  EXPECT_EQ(make_sketch_task(conv_task("cpu -threads=1 -isa=avx512")).vector_width, 16);
  EXPECT_EQ(make_sketch_task(conv_task("cpu -threads=1 -isa=sse4")).vector_width, 4);
}

TEST(MakeSketchTask, WithoutAnIsaTakesTheHostsVectorWidth) {
  EXPECT_EQ(make_sketch_task(conv_task("cpu -threads=1")).vector_width, host_vector_width());
}

TEST(MakeSketchTask, TakesThreadsAndGpuFromTheTarget) {
  SketchTask st = make_sketch_task(conv_task("cpu -threads=3"));
  EXPECT_EQ(st.threads, 3);
  EXPECT_FALSE(st.is_gpu);
  EXPECT_TRUE(make_sketch_task(conv_task("cuda -arch=sm_90")).is_gpu);
}

// With 16 lanes the output width (24) does not fill whole vectors and the
// channels become the vector axis (vector_axis_layout's two extra sketches);
// with 8 lanes the width fills them and those sketches are not derived.
TEST(MakeSketchTask, EightLanesDeriveNoChannelsInnermostSketchWhereTheWidthFillsThem) {
  const size_t with_16 = generate_sketches(make_sketch_task(conv_task("cpu -threads=1 -isa=avx512"))).size();
  const size_t with_8 = generate_sketches(make_sketch_task(conv_task("cpu -threads=1 -isa=avx2"))).size();
  EXPECT_EQ(with_16, with_8 + 2);
}

TEST(MakeSketchTask, UnknownIsaIsNamed) {
  try {
    Target::parse("cpu -isa=avx9");
    FAIL() << "accepted -isa=avx9";
  } catch (const LoomError& e) {
    EXPECT_NE(std::string(e.what()).find("-isa expects avx512, avx2 or sse4, got 'avx9'"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace loom
