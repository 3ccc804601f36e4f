// Feature extraction on hand-built loop nests and lowered matmul schedules.
#include <gtest/gtest.h>

#include <cmath>

#include "costmodel/features.h"
#include "ir/lower.h"
#include "measure/task.h"
#include "tests/support/matmul_schedules.h"

namespace loom {
namespace {

float lg(double x) { return static_cast<float>(std::log2(1.0 + x)); }

float feat(const ProgramFeatures& p, int stmt, const std::string& name) {
  return p.row(stmt)[feature_index(name)];
}

TEST(Features, NamesMatchLayout) {
  EXPECT_EQ(feature_names().size(), static_cast<size_t>(kNumFeatures));
  EXPECT_EQ(feature_index("float_mad"), 0);
  EXPECT_EQ(feature_names().back(), "vec_effective");
  EXPECT_THROW(feature_index("no_such_feature"), LoomError);
}

// for i in 16: for j in 8 (vectorized): C[i*8+j] = A[i*8+j] + B[j]
LoweredFunc vector_add() {
  Var i = make_var("i", 16), j = make_var("j", 8);
  Expr idx = i * 8 + j;
  Stmt store = make_store("C", idx, load("A", {idx}) + load("B", {j}));
  LoweredFunc f;
  f.args = {{"A", {16, 8}, BufferScope::kGlobal}, {"B", {8}, BufferScope::kGlobal},
            {"C", {16, 8}, BufferScope::kGlobal}};
  f.body = make_for(i, 16, ForKind::kSerial, make_for(j, 8, ForKind::kVectorized, store), 64);
  return f;
}

TEST(Features, VectorizedStoreReportsItsVectorLength) {
  ProgramFeatures p = extract_features(vector_add());
  ASSERT_TRUE(p.valid);
  ASSERT_EQ(p.num_stmts, 1);
  EXPECT_FLOAT_EQ(feat(p, 0, "vec_len"), lg(8));
  EXPECT_FLOAT_EQ(feat(p, 0, "vec_num"), lg(1));
  EXPECT_FLOAT_EQ(feat(p, 0, "vec_prod"), lg(8));
  EXPECT_FLOAT_EQ(feat(p, 0, "vec_pos_inner_spatial"), 1);
  EXPECT_FLOAT_EQ(feat(p, 0, "vec_pos_none"), 0);
  EXPECT_FLOAT_EQ(feat(p, 0, "unroll_pos_none"), 1);
  EXPECT_FLOAT_EQ(feat(p, 0, "parallel_len"), 0);
  EXPECT_FLOAT_EQ(feat(p, 0, "auto_unroll_max_step"), lg(64));
}

TEST(Features, OpCountsAreWeightedByTripCount) {
  ProgramFeatures p = extract_features(vector_add());
  EXPECT_FLOAT_EQ(feat(p, 0, "float_addsub"), lg(16 * 8));
  EXPECT_FLOAT_EQ(feat(p, 0, "float_mul"), 0);
  // i*8 + j, twice (store index and A's index; B's index is a bare var).
  EXPECT_FLOAT_EQ(feat(p, 0, "int_mad"), lg(2 * 16 * 8));
  EXPECT_FLOAT_EQ(feat(p, 0, "outer_prod"), lg(128));
  EXPECT_FLOAT_EQ(feat(p, 0, "num_loops"), lg(2));
  EXPECT_FLOAT_EQ(feat(p, 0, "is_init"), 0);
}

TEST(Features, ReusedBufferReportsReuseCountAndDistance) {
  ProgramFeatures p = extract_features(vector_add());
  // Buffers by bytes then footprint then name: A (B0), C (B1), B (B2).
  EXPECT_FLOAT_EQ(feat(p, 0, "B0.acc_read"), 1);
  EXPECT_FLOAT_EQ(feat(p, 0, "B1.acc_write"), 1);
  EXPECT_FLOAT_EQ(feat(p, 0, "B2.acc_read"), 1);
  // B[j] is re-read by every iteration of i: loop-multiple-read, 16 times,
  // 8 iterations apart (the j loop inside i).
  EXPECT_FLOAT_EQ(feat(p, 0, "B2.reuse_loop_multiple_read"), 1);
  EXPECT_FLOAT_EQ(feat(p, 0, "B2.reuse_ct"), lg(16));
  EXPECT_FLOAT_EQ(feat(p, 0, "B2.reuse_dis_iter"), lg(8));
  // Within one i iteration all three buffers touch 8 floats each.
  EXPECT_FLOAT_EQ(feat(p, 0, "B2.reuse_dis_bytes"), lg(3 * 8 * 4));
  EXPECT_FLOAT_EQ(feat(p, 0, "B2.bytes"), lg(128 * 4));
  EXPECT_FLOAT_EQ(feat(p, 0, "B2.unique_bytes"), lg(8 * 4));
  EXPECT_FLOAT_EQ(feat(p, 0, "B2.bytes_d_reuse_ct"), lg(128 * 4 / 16.0));
  EXPECT_FLOAT_EQ(feat(p, 0, "B2.stride"), lg(1));
  // A is streamed: no reuse, 512 unique bytes, 16 rows x one 32-byte line.
  EXPECT_FLOAT_EQ(feat(p, 0, "B0.reuse_none"), 1);
  EXPECT_FLOAT_EQ(feat(p, 0, "B0.reuse_ct"), 0);
  EXPECT_FLOAT_EQ(feat(p, 0, "B0.unique_bytes"), lg(512));
  EXPECT_FLOAT_EQ(feat(p, 0, "B0.lines"), lg(16));
  EXPECT_FLOAT_EQ(feat(p, 0, "B0.unique_lines"), lg(8));
  // Only three buffers: slots 3 and 4 are empty.
  EXPECT_FLOAT_EQ(feat(p, 0, "B3.bytes"), 0);
  EXPECT_FLOAT_EQ(feat(p, 0, "B4.acc_read"), 0);
}

TEST(Features, StridedAccessReportsStrideAndLines) {
  // for i in 4: for j in 32: C[j*4+i] = A[j*4+i] (transposed walk: stride 4)
  Var i = make_var("i", 4), j = make_var("j", 32);
  Expr idx = j * 4 + i;
  LoweredFunc f;
  f.args = {{"A", {128}, BufferScope::kGlobal}, {"C", {128}, BufferScope::kGlobal}};
  f.body = make_for(i, 4, ForKind::kSerial, make_for(j, 32, ForKind::kSerial, make_store("C", idx, load("A", {idx}))));
  ProgramFeatures p = extract_features(f);
  EXPECT_FLOAT_EQ(feat(p, 0, "B0.stride"), lg(4));
  // 32 iterations x 16 bytes = 8 lines per i, 4 times.
  EXPECT_FLOAT_EQ(feat(p, 0, "B0.lines"), lg(32));
  EXPECT_FLOAT_EQ(feat(p, 0, "B0.unique_bytes"), lg(512));
}

std::shared_ptr<const ComputeDAG> matmul_dag(int64_t n) {
  return std::make_shared<const ComputeDAG>(make_workload("matmul", {{"M", n}, {"N", n}, {"K", n}}));
}

TEST(Features, NaiveMatmulReductionFeatures) {
  ProgramFeatures p = extract_features(State::initial(matmul_dag(16)));
  ASSERT_TRUE(p.valid);
  ASSERT_EQ(p.num_stmts, 2);  // init store, update store
  EXPECT_FLOAT_EQ(feat(p, 0, "is_init"), 1);
  EXPECT_FLOAT_EQ(feat(p, 1, "is_init"), 0);
  // n^3 multiply-adds, relative to the task's 2 n^3 FLOPs.
  EXPECT_FLOAT_EQ(feat(p, 1, "float_mad"), lg(16 * 16 * 16) - lg(2 * 16 * 16 * 16));
  // C is read and written (count 2): slot 0; re-accessed across rk (16 times).
  EXPECT_FLOAT_EQ(feat(p, 1, "B0.acc_readwrite"), 1);
  EXPECT_FLOAT_EQ(feat(p, 1, "B0.reuse_ct"), lg(16));
  EXPECT_FLOAT_EQ(feat(p, 1, "B0.reuse_dis_iter"), lg(1));
  // A[i,rk] is reused across j (rk inside: 16 iterations apart); B[rk,j]
  // across i (256 iterations apart).
  EXPECT_FLOAT_EQ(feat(p, 1, "B1.reuse_ct"), lg(16));
  EXPECT_FLOAT_EQ(feat(p, 1, "B1.reuse_dis_iter"), lg(16));
  EXPECT_FLOAT_EQ(feat(p, 1, "B2.reuse_dis_iter"), lg(256));
  EXPECT_FLOAT_EQ(feat(p, 1, "B2.stride"), lg(16));  // B[rk*16 + j] along rk
}

TEST(Features, TiledMatmulAnnotationsAndPragma) {
  auto dag = matmul_dag(64);
  MatmulTiles t{{2, 2, 4}, {2, 2, 8}, 4, 16};
  ProgramFeatures p = extract_features(matmul_state(dag, t));
  ASSERT_TRUE(p.valid);
  int upd = p.num_stmts - 1;
  EXPECT_FLOAT_EQ(feat(p, upd, "vec_len"), lg(8));
  EXPECT_FLOAT_EQ(feat(p, upd, "parallel_num"), lg(1));
  EXPECT_FLOAT_EQ(feat(p, upd, "parallel_len"), lg((64 / 16) * (64 / 32)));
  EXPECT_FLOAT_EQ(feat(p, upd, "auto_unroll_max_step"), lg(16));
  EXPECT_FLOAT_EQ(feat(p, upd, "float_mad"), lg(64.0 * 64 * 64) - lg(2.0 * 64 * 64 * 64));
}

TEST(Features, InnerLoopAccessesOfAVectorizedStore) {
  // C[i*8+j] = A[i*8+j] + B[j], j innermost and vectorized: all three
  // accesses move by one element along j; 8 lanes fill an 8-wide vector and
  // half of a 16-wide one.
  ProgramFeatures p = extract_features(vector_add());
  EXPECT_FLOAT_EQ(feat(p, 0, "inner_len"), lg(8));
  EXPECT_FLOAT_EQ(feat(p, 0, "inner_contiguous"), lg(3));
  EXPECT_FLOAT_EQ(feat(p, 0, "inner_broadcast"), 0);
  EXPECT_FLOAT_EQ(feat(p, 0, "inner_strided"), 0);
  EXPECT_FLOAT_EQ(feat(p, 0, "inner_store_invariant"), 0);
  EXPECT_FLOAT_EQ(feat(p, 0, "vec_waste_8"), 0);
  EXPECT_FLOAT_EQ(feat(p, 0, "vec_waste_16"), 0.5f);
  EXPECT_FLOAT_EQ(feat(p, 0, "vec_effective"), 1);
  // 1,056 bytes in all fit in L1: loaded once.
  EXPECT_FLOAT_EQ(feat(p, 0, "traffic_l1"), lg(512 + 512 + 32));
}

TEST(Features, ReductionInTheInnermostLoopIsADependenceChain) {
  // Naive matmul update C[i,j] += A[i,rk] * B[rk,j], rk innermost: C does
  // not move along rk (read and written: 2 accesses), A moves by 1, B by 16.
  ProgramFeatures p = extract_features(State::initial(matmul_dag(16)));
  EXPECT_FLOAT_EQ(feat(p, 1, "inner_store_invariant"), 1);
  EXPECT_FLOAT_EQ(feat(p, 1, "inner_broadcast"), lg(2));
  EXPECT_FLOAT_EQ(feat(p, 1, "inner_contiguous"), lg(1));
  EXPECT_FLOAT_EQ(feat(p, 1, "inner_strided"), lg(1));
  // One accumulator: nothing inside rk moves C.
  EXPECT_FLOAT_EQ(feat(p, 1, "acc_tile_inner"), lg(1));
  EXPECT_FLOAT_EQ(feat(p, 1, "acc_tile_outer"), lg(1));
  EXPECT_FLOAT_EQ(feat(p, 1, "vec_effective"), 0);
  // The init store accumulates nothing.
  EXPECT_FLOAT_EQ(feat(p, 0, "acc_tile_inner"), 0);
}

TEST(Features, VectorizedReductionLoopRunsLaneByLane) {
  // for i in 4: for k in 16 (vectorized): S[i] = S[i] + A[i*16+k]
  Var i = make_var("i", 4), k = make_var("k", 16);
  LoweredFunc f;
  f.args = {{"A", {64}, BufferScope::kGlobal}, {"S", {4}, BufferScope::kGlobal}};
  f.body = make_for(i, 4, ForKind::kSerial,
                    make_for(k, 16, ForKind::kVectorized, make_store("S", i, load("S", {i}) + load("A", {i * 16 + k}))));
  ProgramFeatures p = extract_features(f);
  EXPECT_FLOAT_EQ(feat(p, 0, "vec_len"), lg(16));
  EXPECT_FLOAT_EQ(feat(p, 0, "vec_effective"), 0);
}

TEST(Features, TrafficCountsReloadsOfWhatDoesNotFitInCache) {
  // for i in 64: for j in 4096: C[j] = C[j] + A[i*4096+j]. One i iteration
  // touches 16 KiB of A and 16 KiB of C: 32 KiB, which fits L1; the whole
  // nest (1 MiB of A) does not, so C is reloaded every i: 64 x 32 KiB.
  Var i = make_var("i", 64), j = make_var("j", 4096);
  LoweredFunc f;
  f.args = {{"A", {64 * 4096}, BufferScope::kGlobal}, {"C", {4096}, BufferScope::kGlobal}};
  f.body = make_for(i, 64, ForKind::kSerial,
                    make_for(j, 4096, ForKind::kSerial, make_store("C", j, load("C", {j}) + load("A", {i * 4096 + j}))));
  ProgramFeatures p = extract_features(f);
  EXPECT_FLOAT_EQ(feat(p, 0, "traffic_l1"), lg(64.0 * 32768));
  // L2 (512 KiB) cannot hold the whole nest either.
  EXPECT_FLOAT_EQ(feat(p, 0, "traffic_l2"), lg(64.0 * 32768));
  // i does not move C: it is the reduce-like loop, and the 4096 elements of
  // C updated inside it are the accumulators.
  EXPECT_FLOAT_EQ(feat(p, 0, "acc_tile_inner"), lg(4096));
}

TEST(Features, UnrolledBodyFollowsTheAutoUnrollStep) {
  // for i in 4: for j in 4: for k in 8 (vectorized): C[i*32+j*8+k] = A[same]
  // under an auto-unroll step: the emitter unrolls a serial loop whose nest
  // has at most that many statement instances (the vector loop counts once).
  auto nest = [](int64_t step) {
    Var i = make_var("i", 4), j = make_var("j", 4), k = make_var("k", 8);
    Expr idx = i * 32 + j * 8 + k;
    LoweredFunc f;
    f.args = {{"A", {128}, BufferScope::kGlobal}, {"C", {128}, BufferScope::kGlobal}};
    f.body = make_for(i, 4, ForKind::kSerial,
                      make_for(j, 4, ForKind::kSerial,
                               make_for(k, 8, ForKind::kVectorized, make_store("C", idx, load("A", {idx})))),
                      step);
    return extract_features(f);
  };
  EXPECT_FLOAT_EQ(feat(nest(16), 0, "unrolled_body"), lg(16));  // i (16 instances) and j (4)
  EXPECT_FLOAT_EQ(feat(nest(8), 0, "unrolled_body"), lg(4));    // only j
  EXPECT_FLOAT_EQ(feat(nest(0), 0, "unrolled_body"), lg(1));    // no step: nothing
}

TEST(Features, InvalidStateHasNoRows) {
  ProgramFeatures p = extract_features(State());
  EXPECT_FALSE(p.valid);
  EXPECT_EQ(p.num_stmts, 0);
}

TEST(Features, ParallelExtractionMatchesSerial) {
  auto dag = matmul_dag(128);
  auto states = random_matmul_states(dag, 128, 128, 128, 64, 3);
  auto serial = extract_features(states, FeatureOptions{1});
  auto parallel = extract_features(states, FeatureOptions{4});
  ASSERT_EQ(serial.size(), parallel.size());
  for (size_t i = 0; i < serial.size(); ++i) {
    ASSERT_TRUE(serial[i].valid);
    EXPECT_EQ(serial[i].values, parallel[i].values);
  }
}

// One schedule of two matmul shapes, the larger 8x the FLOPs: its amounts
// (op counts, bytes touched, outer trips) are the same relative to the
// task's FLOPs, so a model sees a new shape as a familiar one; shape-free
// features (the vector length) are as they were.
TEST(Features, AmountsAreRelativeToTheTaskFlops) {
  const MatmulTiles tiles{{1, 2, 8}, {1, 4, 16}, 8, 0};
  auto at = [&](int64_t n) {
    Task task = Task::make("matmul", {{"M", n}, {"N", n}, {"K", n}}, Target::parse("cpu -threads=1"));
    return extract_features(matmul_state(task.dag, tiles));
  };
  ProgramFeatures small = at(64), large = at(128);
  ASSERT_TRUE(small.valid && large.valid);
  ASSERT_EQ(small.num_stmts, large.num_stmts);
  const int s = small.num_stmts - 1;  // the update statement
  for (const char* name : {"float_mad", "B0.bytes", "outer_prod"}) {
    EXPECT_NEAR(feat(small, s, name), feat(large, s, name), 0.01) << name;
    EXPECT_LT(feat(small, s, name), 4.0f) << name << ": not the absolute log count (18 and more)";
  }
  EXPECT_EQ(feat(small, s, "vec_len"), feat(large, s, "vec_len"));
  // The absolute form, without the task: the larger shape's op count is 8x.
  Task task = Task::make("matmul", {{"M", 64}, {"N", 64}, {"K", 64}}, Target::parse("cpu -threads=1"));
  LowerOptions options;
  options.full_tiles = false;
  ProgramFeatures absolute = extract_features(lower(matmul_state(task.dag, tiles), options));
  EXPECT_NEAR(feat(absolute, s, "float_mad"), lg(64.0 * 64 * 64), 0.01);
}

}  // namespace
}  // namespace loom
