// LLVM backend on programs produced by lowering real schedules: every
// registered workload (small instance) and an Ansor-like tiled matmul, checked
// against the reference evaluator.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "codegen/llvm/llvm_jit.h"
#include "ir/error.h"
#include "ir/lower.h"
#include "ir/reference.h"
#include "ir/workload_registry.h"
#include "tests/support/schedule_check.h"

namespace loom {
namespace {

// "" when the LLVM kernel's outputs match the reference.
std::string check_with_llvm(const State& s, int threads = 1, uint64_t seed = 7) {
  const ComputeDAG& dag = s.dag();
  LoweredFunc f = lower(s);
  auto bufs = random_inputs(dag, seed);
  auto ref = evaluate_reference(dag, bufs);
  for (const auto& name : dag.output_names()) bufs[name].assign(shape_size(dag.op(name)->shape), -12345.0f);
  LLVMCompileOptions o;
  o.num_threads = threads;
  auto k = compile_llvm(f, o);
  add_pretransformed_arguments(f, bufs);
  std::vector<float*> args;
  for (const auto& b : f.args) args.push_back(bufs.at(b.name).data());
  (*k)(args);
  for (const auto& name : dag.output_names()) {
    std::string err = compare_outputs(bufs.at(name), ref.at(name));
    if (!err.empty()) return name + ": " + err + "\n" + to_string(f);
  }
  return "";
}

TEST(LLVMLowered, EveryWorkloadInitialState) {
  for (const auto& w : workload_registry()) {
    SCOPED_TRACE(w.name);
    auto dag = testing::workload(w.name, w.small_params.dump());
    State s = State::initial(dag);
    EXPECT_EQ(check_with_llvm(s), "");
  }
}

TEST(LLVMLowered, EveryWorkloadWithInnermostVectorizedAndOuterParallel) {
  for (const auto& w : workload_registry()) {
    SCOPED_TRACE(w.name);
    auto dag = testing::workload(w.name, w.small_params.dump());
    State s = State::initial(dag);
    for (int st = 0; st < static_cast<int>(s.stages().size()); ++st) {
      const Stage stage = s.stage(st);  // a copy: `s` is replaced below
      if (stage.op->is_placeholder || stage.compute_at == ComputeAtKind::kInlined) continue;
      int n = static_cast<int>(stage.leaves.size());
      if (n == 0) continue;
      bool inner_spatial = stage.iters[stage.leaves[n - 1]].kind == IterKind::kSpatial;
      bool outer_spatial = stage.iters[stage.leaves[0]].kind == IterKind::kSpatial;
      try {
        if (inner_spatial) s = s.annotate(st, n - 1, IterAnnotation::kVectorize);
        if (n > 1 && outer_spatial) s = s.annotate(st, 0, IterAnnotation::kParallel);
      } catch (const LoomError&) {
      }
    }
    EXPECT_EQ(check_with_llvm(s, 2), "");
  }
}

TEST(LLVMLowered, AnsorLikeTiledMatmul) {
  auto dag = testing::workload("matmul", R"({"M":64,"N":96,"K":40})");
  State s = State::initial(dag);
  int c = s.stage_index("C");
  s = s.cache_write(c, BufferScope::kLocal);  // C_local at c, C at c+1
  int out = c + 1;
  s = s.split(out, 0, {8}).split(out, 2, {32});  // i0 i1 j0 j1
  s = s.reorder(out, {0, 2, 1, 3});             // i0 j0 i1 j1
  s = s.fuse(out, {0, 1});                       // f i1 j1
  s = s.annotate(out, 0, IterAnnotation::kParallel);
  s = s.annotate(out, 2, IterAnnotation::kVectorize);
  s = s.compute_at(c, out, 0);
  // C_local: i j k -> k i j with i unrolled and j vectorized.
  s = s.reorder(c, {2, 0, 1});
  s = s.annotate(c, 1, IterAnnotation::kUnroll);
  s = s.annotate(c, 2, IterAnnotation::kVectorize);
  s = s.pragma(out, 0, "auto_unroll_max_step$16");
  std::string lowered = to_string(lower(s));
  EXPECT_EQ(check_with_llvm(s, 1), "") << lowered;
  EXPECT_EQ(check_with_llvm(s, 2), "") << lowered;
  EXPECT_EQ(testing::check_with_c_backend(s), "");
}

// The same schedule reading B pre-transformed: its blocked layout walks the
// fused parallel loop's j tile (f % 3), then k, then the vector lanes of j.
TEST(LLVMLowered, TiledMatmulReadsAConstantBInTheBlockedLayoutOfItsLoops) {
  auto dag = std::make_shared<ComputeDAG>(*testing::workload("matmul", R"({"M":64,"N":96,"K":40})"));
  dag->mark_constant("B");
  State s = State::initial(dag);
  const int b = s.stage_index("B");
  s = s.cache_read(b, BufferScope::kLocal, {s.stage_index("C")}).layout_rewrite(b + 1);
  int c = s.stage_index("C");
  s = s.cache_write(c, BufferScope::kLocal);
  int out = c + 1;
  s = s.split(out, 0, {8}).split(out, 2, {32}).reorder(out, {0, 2, 1, 3}).fuse(out, {0, 1});
  s = s.annotate(out, 0, IterAnnotation::kParallel).annotate(out, 2, IterAnnotation::kVectorize);
  s = s.compute_at(c, out, 0).reorder(c, {2, 0, 1}).annotate(c, 2, IterAnnotation::kVectorize);
  LoweredFunc f = lower(s);
  const Buffer* arg = f.find_buffer("B_local");
  ASSERT_TRUE(arg && arg->layout) << to_string(f);
  EXPECT_EQ(arg->layout->to_string(), "[B: d1/32, d0, d1%32]");
  EXPECT_EQ(check_with_llvm(s, 1), "") << to_string(f);
  EXPECT_EQ(check_with_llvm(s, 2), "") << to_string(f);
}

// A depthwise conv whose 3 x 3 taps are split 2 + 1 and unrolled, over 8
// channels per tile in a loop that LLVM vectorizes itself: each accumulator
// takes several taps' updates per iteration, each stored before the next
// is loaded. LLVM 14's interleaved access groups loaded them all before the
// first store (codegen/llvm/jit.cc turns the groups off).
TEST(LLVMLowered, AccumulatorsUpdatedByUnrolledTapsInALoopLLVMVectorizes) {
  auto dag = std::make_shared<ComputeDAG>(*testing::workload(
      "depthwise_conv2d", R"({"N":1,"C":16,"H":7,"W":7,"R":3,"S":3,"stride":1,"pad":1,"dilation":1})"));
  dag->mark_constant("kernel");
  const State s = State::from_json(dag, nlohmann::json::parse(
      R"([["CHR",2,"local",[3]],["LR",3],["CHW",4,"local"],["SP",4,0,1,[1,1,1],1],)"
      R"(["SP",4,4,16,[2,8,1],1],["SP",4,8,7,[1,7,1],1],["SP",4,12,7,[1,1,1],1],)"
      R"(["SP",4,16,3,[2],1],["SP",4,18,3,[2],1],)"
      R"(["RE",4,[0,4,8,12,1,5,9,13,16,18,2,6,10,14,17,19,3,7,11,15]],["FSP",5,0,3,2],)"
      R"(["FSP",5,3,4,2],["FSP",5,6,5,2],["FSP",5,9,6,2],["RE",5,[0,3,6,9,1,4,7,10,2,5,8,11]],)"
      R"(["CA",4,5,7],["CA",1,5,3],["FU",5,[0,1,2,3]],["AN",5,0,"parallel"],)"
      R"(["PR",4,0,"auto_unroll_max_step$64"],["AN",1,3,"vectorize"]])"));
  EXPECT_EQ(check_with_llvm(s), "");
}

}  // namespace
}  // namespace loom
