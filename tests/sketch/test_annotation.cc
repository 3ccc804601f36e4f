// Random annotation and sampling: deterministic for a seed, distinct
// programs, tile sizes that divide the extents, and vectorize / parallel /
// unroll where the rules say.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "ir/lower.h"
#include "ir/steps.h"
#include "sketch/analysis.h"
#include "sketch/annotation.h"
#include "sketch/sketch_policy.h"
#include "tests/sketch/sketch_test_util.h"

namespace loom {
namespace {

using testing::sketch_task;

std::vector<std::string> steps_of(const std::vector<State>& states) {
  std::vector<std::string> out;
  for (const State& s : states) out.push_back(s.steps_json().dump());
  return out;
}

SketchTask matmul_task(int64_t n = 256, int threads = 4) {
  return sketch_task("matmul", {{"M", n}, {"N", n}, {"K", n}}, threads);
}

TEST(Sample, SameSeedGivesSamePrograms) {
  std::mt19937_64 a(123), b(123);
  EXPECT_EQ(steps_of(sample(matmul_task(), 40, a)), steps_of(sample(matmul_task(), 40, b)));
}

TEST(Sample, DifferentSeedsGiveDifferentPrograms) {
  std::mt19937_64 a(1), b(2);
  EXPECT_NE(steps_of(sample(matmul_task(), 20, a)), steps_of(sample(matmul_task(), 20, b)));
}

TEST(Sample, ReturnsDistinctPrograms) {
  std::mt19937_64 rng(7);
  auto states = sample(sketch_task("conv2d_bias_relu", nlohmann::json::object(), 2), 100, rng);
  ASSERT_EQ(states.size(), 100u);
  auto steps = steps_of(states);
  EXPECT_EQ(std::set<std::string>(steps.begin(), steps.end()).size(), 100u);
}

TEST(Sample, TinySpaceReturnsFewerRatherThanLooping) {
  // A 2x2 matmul has only a few hundred distinct programs at most.
  std::mt19937_64 rng(7);
  auto states = sample(sketch_task("matmul", {{"M", 1}, {"N", 1}, {"K", 1}}), 1000, rng);
  EXPECT_LT(states.size(), 1000u);
  EXPECT_GT(states.size(), 0u);
}

TEST(Sample, UsesEverySketch) {
  SketchPolicy policy(matmul_task());
  std::mt19937_64 rng(3);
  bool has_local = false, has_plain = false;
  for (const State& s : policy.sample(60, rng)) {
    (s.stage_index("C_local") >= 0 ? has_local : has_plain) = true;
  }
  EXPECT_TRUE(has_local);
  EXPECT_TRUE(has_plain);
}

TEST(Sample, ProgramsReplayFromTheirJson) {
  std::mt19937_64 rng(11);
  for (const State& s : sample(sketch_task("conv2d_bias_relu", nlohmann::json::object()), 20, rng)) {
    State again = State::from_json(s.dag_ptr(), s.steps_json());
    EXPECT_EQ(again.fingerprint(), s.fingerprint());
  }
}

std::vector<const SplitStep*> split_steps(const State& s) {
  std::vector<const SplitStep*> out;
  for (const auto& step : s.steps())
    if (auto* sp = dynamic_cast<const SplitStep*>(step.get())) out.push_back(sp);
  return out;
}

int64_t tile_product(const SplitStep& sp) {
  int64_t prod = 1;
  for (int64_t l : sp.lengths) prod *= l;
  return prod;
}

TEST(FillTileSizes, DivisibleLengthsMostOfTheTimeAndInnermostBounded) {
  SketchTask task = matmul_task(512);
  task.settings.non_divisible_split_probability = 0;
  SketchPolicy policy(task);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 50; ++i) {
    State s = policy.sample_one(rng);
    for (const SplitStep* sp : split_steps(s)) {
      EXPECT_EQ(sp->extent % tile_product(*sp), 0) << sp->to_json().dump();
      EXPECT_LE(sp->lengths.back(), task.settings.max_innermost_split_factor);
    }
  }
}

// 577 is prime: its divisible tilings are 1 or 577 wide. Half of its splits
// get the tiles of 580, 584, 592, 608 or 640 instead (a partial last tile).
TEST(FillTileSizes, APrimeExtentGetsTilesOfItsRoundedUpExtentHalfTheTime) {
  SketchPolicy policy(matmul_task(577, 1));
  std::mt19937_64 rng(5);
  int splits = 0, partial = 0;
  for (int i = 0; i < 100; ++i) {
    State s = policy.sample_one(rng);
    for (const SplitStep* sp : split_steps(s)) {
      const int64_t prod = tile_product(*sp);
      EXPECT_LE(prod, sp->extent);
      ++splits;
      if (sp->extent % prod != 0) {
        ++partial;
        int64_t rounded = 0;
        for (int64_t m : {4, 8, 16, 32, 64}) {
          const int64_t r = (sp->extent + m - 1) / m * m;
          if (r % prod == 0) rounded = r;
        }
        EXPECT_GT(rounded, 0) << sp->to_json().dump();
      }
    }
  }
  ASSERT_GT(splits, 100);
  EXPECT_GT(partial, splits / 4);
  EXPECT_LT(partial, splits * 3 / 4);
}

TEST(FillTileSizes, FactorizationSchemesOf8IntoTwoLengths) {
  SplitFactorizationMemo memo;
  auto schemes = memo.schemes(8, 2, 4);
  // (a, b) with a*b | 8 and b <= 4.
  std::set<std::vector<int64_t>> got(schemes.begin(), schemes.end());
  std::set<std::vector<int64_t>> want = {{1, 1}, {1, 2}, {1, 4}, {2, 1}, {2, 2}, {2, 4},
                                         {4, 1}, {4, 2}, {8, 1}};
  EXPECT_EQ(got, want);
}

bool has_annotation(const State& s, const std::string& stage, IterAnnotation a) {
  const Stage& st = s.stage(s.stage_index(stage));
  for (int id : st.leaves)
    if (st.iters[id].annotation == a) return true;
  return false;
}

TEST(Annotate, TiledMatmulGetsParallelOuterLoopVectorizedInnerLoopAndUnrollPragma) {
  SketchPolicy policy(matmul_task(512));
  std::mt19937_64 rng(9);
  int vectorized = 0, n = 0;
  std::set<int64_t> unroll_values;
  for (const State& s : policy.sample(40, rng)) {
    ++n;
    const Stage& c = s.stage(s.stage_index("C"));
    EXPECT_EQ(c.iters[c.leaves[0]].annotation, IterAnnotation::kParallel) << s.to_string();
    int tiled = s.stage_index("C_local") >= 0 ? s.stage_index("C_local") : s.stage_index("C");
    unroll_values.insert(s.stage(tiled).auto_unroll_max_step);
    EXPECT_EQ(s.stage(tiled).pragma_iter, s.stage(tiled).leaves[0]);
    // Innermost loop spatial with extent <= 64 -> vectorized.
    const Stage& t = s.stage(tiled);
    const Iterator& inner = t.iters[t.leaves.back()];
    if (inner.extent > 1 && inner.extent <= 64) {
      EXPECT_EQ(inner.annotation, IterAnnotation::kVectorize) << s.to_string();
      ++vectorized;
    }
  }
  EXPECT_GT(vectorized, n / 2);
  EXPECT_EQ(unroll_values, (std::set<int64_t>{0, 16, 64, 512}));
}

TEST(Annotate, ParallelLoopNeverCoversAReduceLoop) {
  SketchPolicy policy(sketch_task("norm", {{"M", 64}, {"N", 64}}, 4));
  std::mt19937_64 rng(2);
  for (const State& s : policy.sample(30, rng))
    for (const Stage& st : s.stages())
      for (int id : st.leaves)
        if (st.iters[id].annotation == IterAnnotation::kParallel)
          EXPECT_EQ(st.iters[id].kind, IterKind::kSpatial) << s.to_string();
}

TEST(Annotate, RfactorInnerPartIsVectorized) {
  SketchPolicy policy(sketch_task("norm", {{"M", 64}, {"N", 64}}, 4));
  std::mt19937_64 rng(4);
  int vectorized_rf = 0;
  for (const State& s : policy.sample(40, rng)) {
    int rf = s.stage_index("sumsq_rf");
    if (rf >= 0 && has_annotation(s, "sumsq_rf", IterAnnotation::kVectorize)) ++vectorized_rf;
  }
  EXPECT_GT(vectorized_rf, 0);
}

TEST(Annotate, FreeStagesGetEveryKindOfComputeLocation) {
  // conv2d's padding: inlined, at root, or at a loop of conv.
  SketchPolicy policy(sketch_task("conv2d", nlohmann::json::object()));
  std::mt19937_64 rng(8);
  std::set<ComputeAtKind> kinds;
  for (const State& s : policy.sample(60, rng)) kinds.insert(s.stage(s.stage_index("pad")).compute_at);
  EXPECT_EQ(kinds.size(), 3u);
}

TEST(Annotate, RowReductionsAreComputedPerRowNeverInsideALoopOverTheRow) {
  // layer_norm reads rowsum[i]: inside a loop made from its column axis j
  // (of more than one iteration), rowsum would be summed again for every
  // column tile.
  SketchPolicy policy(sketch_task("layer_norm", {{"M", 32}, {"N", 64}}, 1));
  std::mt19937_64 rng(3);
  int per_row = 0;
  for (const State& s : policy.sample(80, rng)) {
    for (const char* name : {"rowsum", "rowsqsum"}) {
      const Stage& st = s.stage(s.stage_index(name));
      if (st.compute_at != ComputeAtKind::kIter) continue;
      const Stage& at = s.stage(st.attach_stage);
      if (at.name() != "layer_norm" && at.name() != "layer_norm_local") continue;
      ++per_row;
      const int pos = static_cast<int>(std::find(at.leaves.begin(), at.leaves.end(), st.attach_iter) - at.leaves.begin());
      for (int p = 0; p <= pos; ++p) {
        const Iterator& loop = at.iters[at.leaves[p]];
        EXPECT_TRUE(loop.name.rfind("j", 0) == std::string::npos || loop.extent == 1)
            << name << " inside " << loop.name << ": " << s.steps_json().dump();
      }
    }
  }
  EXPECT_GT(per_row, 5);
}

TEST(Annotate, PackingCopyIsComputedInsideItsReaderAndVectorized) {
  std::mt19937_64 rng(5);
  int packed = 0;
  for (const State& s : sample(sketch_task("matmul", {{"M", 256}, {"N", 256}, {"K", 256}}, 1), 60, rng)) {
    const int b = s.stage_index("B_local");
    if (b < 0) continue;
    ++packed;
    const Stage& copy = s.stage(b);
    EXPECT_EQ(copy.compute_at, ComputeAtKind::kIter) << s.steps_json().dump();
    ASSERT_FALSE(copy.leaves.empty());
    EXPECT_EQ(copy.iters[copy.leaves.back()].annotation, IterAnnotation::kVectorize) << s.steps_json().dump();
  }
  EXPECT_GT(packed, 10);
}

// The stages of conv2d's padding at root, among `n` sampled programs.
std::vector<Stage> root_paddings(int threads, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Stage> out;
  for (const State& s : sample(sketch_task("conv2d", nlohmann::json::object(), threads), n, rng)) {
    const Stage& pad = s.stage(s.stage_index("pad"));
    if (pad.compute_at == ComputeAtKind::kRoot) out.push_back(pad);
  }
  return out;
}

TEST(Annotate, RootPaddingIsSplitAmongThreadsByTheRowsThatTheOutputRowsRead) {
  // pad[n, c, h, w]: the conv's output rows move its rows, the output
  // channels move none of it; rows outermost, each thread pads the rows its
  // part of the conv reads.
  const std::vector<Stage> pads = root_paddings(2, 120, 6);
  ASSERT_GT(pads.size(), 3u);
  for (const Stage& pad : pads) {
    const Iterator& outer = pad.iters[pad.leaves[0]];
    EXPECT_EQ(outer.annotation, IterAnnotation::kParallel);
    EXPECT_TRUE(sketch_analysis::descends_from(pad, pad.leaves[0], 2)) << outer.name;
    EXPECT_EQ(pad.iters[pad.leaves.back()].name, "l");  // the contiguous loop stays innermost
  }
}

TEST(Annotate, OneThreadKeepsTheRootPaddingInItsOwnOrder) {
  const std::vector<Stage> pads = root_paddings(1, 120, 6);
  ASSERT_GT(pads.size(), 3u);
  for (const Stage& pad : pads) EXPECT_TRUE(sketch_analysis::descends_from(pad, pad.leaves[0], 0));
}

}  // namespace
}  // namespace loom
