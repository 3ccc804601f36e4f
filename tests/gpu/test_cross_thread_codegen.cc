// Cross-thread reductions in the CUDA backend (codegen/cuda/
// cross_thread_reduction.h), without a GPU: the emitted text (a register
// per thread, one block allreduce outside the thread loop, the result
// stored once), the nests it refuses, and NVRTC + ptxas on sm_90.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

#include "codegen/cuda/cuda_source.h"
#include "codegen/cuda/nvrtc.h"
#include "ir/error.h"
#include "ir/lower.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/support/schedule_check.h"

namespace loom {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// The line containing `what` (first occurrence) and its indentation.
std::string line_with(const std::string& text, const std::string& what, size_t* indent = nullptr) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (l.find(what) == std::string::npos) continue;
    if (indent) *indent = l.find_first_not_of(' ');
    return l;
  }
  return "";
}

State first_cross_thread_state(const std::string& w, const nlohmann::json& params, uint64_t seed = 1) {
  auto states = testing::cross_thread_states(w, params, 1, seed);
  if (states.empty()) throw LoomError("no cross-thread state for " + w);
  return states[0];
}

TEST(CudaCrossThread, NormAccumulatesInARegisterThenReducesOnceAcrossTheBlock) {
  CudaModuleSource m = emit_cuda_source(lower(first_cross_thread_state("norm", {{"M", 1024}, {"N", 1024}})));
  ASSERT_EQ(m.kernels.size(), 1u);  // sumsq and norm in one kernel
  EXPECT_TRUE(m.temps.empty());     // sumsq is a per-thread value, not a device buffer
  const std::string& c = m.code;
  EXPECT_EQ(count(c, "__shared__ float loom_red_buf[32];"), 1u);
  EXPECT_EQ(m.kernels[0].shared_bytes, 128);
  EXPECT_EQ(count(c, "loom_block_allreduce_sum(red_sumsq, loom_red_buf)"), 1u);
  EXPECT_EQ(count(c, "sumsq[0] = (sumsq[0]"), 0u);  // no shared accumulator
  // The register is declared, reduced and stored at one level, outside the
  // thread loop that accumulates into it (more deeply indented).
  size_t decl = 0, acc = 0, all = 0, store = 0;
  EXPECT_NE(line_with(c, "float red_sumsq = 0.0f;", &decl), "");
  EXPECT_NE(line_with(c, "red_sumsq = (red_sumsq + ", &acc), "");
  EXPECT_NE(line_with(c, "loom_block_allreduce_sum", &all), "");
  EXPECT_NE(line_with(c, "sumsq[0] = red_sumsq;", &store), "");
  EXPECT_EQ(all, decl);
  EXPECT_EQ(store, decl);
  EXPECT_GT(acc, decl);
  // The output: one store, by thread 0.
  EXPECT_EQ(count(c, "norm[0] ="), 1u);
  EXPECT_NE(line_with(c, "if (threadIdx.x == 0) norm[0] = sqrtf(sumsq[0]);"), "");
}

TEST(CudaCrossThread, SoftmaxRowKernelsReduceTheMaxThenTheSumPerBlock) {
  auto states = testing::cross_thread_states("softmax", {{"M", 512}, {"N", 1024}}, 16, 2);
  bool both = false;
  for (const State& s : states) {
    CudaModuleSource m = emit_cuda_source(lower(s));
    const bool max_ct = m.code.find("loom_block_allreduce_max(red_maxelem") != std::string::npos;
    const bool sum_ct = m.code.find("loom_block_allreduce_sum(red_expsum") != std::string::npos;
    if (!(max_ct && sum_ct)) continue;
    both = true;
    EXPECT_EQ(m.kernels.size(), 2u);  // maxelem + expv, expsum + softmax
    EXPECT_NE(m.code.find("float red_maxelem = (-INFINITY);"), std::string::npos);
    // Every thread keeps the row's value for its share of the row.
    EXPECT_NE(line_with(m.code, "maxelem[0] = red_maxelem;"), "");
    EXPECT_EQ(line_with(m.code, "if (threadIdx.x == 0) maxelem"), "");
    EXPECT_NE(m.code.find("/ expsum[0])"), std::string::npos);
  }
  EXPECT_TRUE(both);
}

TEST(CudaCrossThread, AGlobalResultIsWrittenOnceByThreadZero) {
  CudaModuleSource m = emit_cuda_source(lower(first_cross_thread_state("matmul", {{"M", 4}, {"N", 4}, {"K", 4096}})));
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_EQ(m.kernels[0].grid[0], 16);
  EXPECT_EQ(count(m.code, " C["), 1u);
  EXPECT_NE(line_with(m.code, "if (threadIdx.x == 0) C[i_j_] = red_C;"), "");
}

TEST(CudaCrossThread, AScalarOutputReductionIsOneKernel) {
  // No loop above the reduce loops: the init is at the top level of the
  // loop nest, and stays in the reduction's kernel.
  Tensor X = placeholder({40, 50}, "X");
  Var ri = reduce_axis(40, "ri"), rj = reduce_axis(50, "rj");
  Tensor total = compute({1}, [&](Var) { return sum(X(ri, rj), {ri, rj}); }, "total");
  SketchTask t;
  t.dag = std::make_shared<const ComputeDAG>(ComputeDAG({X}, {total}));
  t.is_gpu = true;
  auto states = testing::cross_thread_states(t, 2, 1);
  ASSERT_FALSE(states.empty());
  for (const State& s : states) {
    CudaModuleSource m = emit_cuda_source(lower(s));
    EXPECT_EQ(m.kernels.size(), 1u) << m.code;
    EXPECT_NE(line_with(m.code, "if (threadIdx.x == 0) total[0] = red_total;"), "") << m.code;
    EXPECT_EQ(testing::check_with_c_backend(s), "");
  }
}

// A hand-written nest: B (local) reduces A over a 64-thread loop, then out = B.
LoweredFunc hand_nest(bool with_init, double init_value = 0.0) {
  LoweredFunc f;
  f.name = "hand";
  f.args = {{"A", {64}, BufferScope::kGlobal}, {"out", {1}, BufferScope::kGlobal}};
  f.temps = {{"B", {1}, BufferScope::kLocal}};
  Var r = make_var("r", 64);
  Stmt acc = make_store("B", int_imm(0), load("B", {int_imm(0)}) + load("A", {r}));
  std::vector<Stmt> seq;
  if (with_init) seq.push_back(make_store("B", int_imm(0), float_imm(init_value)));
  seq.push_back(make_for(r, 64, ForKind::kThreadX, acc));
  seq.push_back(make_store("out", int_imm(0), load("B", {int_imm(0)})));
  f.body = make_allocate("B", make_seq(seq));
  return f;
}

TEST(CudaCrossThread, AnAccumulationAcrossThreadsIsOnlyAcceptedAsTheInitAndLoopPattern) {
  CudaModuleSource ok = emit_cuda_source(hand_nest(true));
  EXPECT_NE(ok.code.find("red_B = loom_block_allreduce_sum(red_B, loom_red_buf);"), std::string::npos);
  EXPECT_NE(ok.code.find("if (threadIdx.x == 0) out[0] = B[0];"), std::string::npos);
  // Without its init, or with an init that is not the sum's identity, the
  // same loop is a race on B: refused rather than emitted.
  EXPECT_THROW(emit_cuda_source(hand_nest(false)), LoomError);
  EXPECT_THROW(emit_cuda_source(hand_nest(true, 1.0)), LoomError);
}

TEST(CudaCrossThread, AValueComputedPerThreadIsNotStoredByThreadZero) {
  // out = B outside the thread loop, where each thread wrote its own B:
  // not a value every thread holds.
  LoweredFunc f = hand_nest(false);
  Var r = make_var("r", 64);
  f.body = make_allocate(
      "B", make_seq({make_for(r, 64, ForKind::kThreadX, make_store("B", int_imm(0), load("A", {r}))),
                     make_store("out", int_imm(0), load("B", {int_imm(0)}))}));
  EXPECT_THROW(emit_cuda_source(f), LoomError);
}

TEST(CudaNvrtc, CrossThreadKernelsCompileForSm90) {
  REQUIRE_NVRTC();
  const bool have_ptxas = !ptxas_path().empty();
  const std::vector<std::pair<std::string, nlohmann::json>> cases = {
      {"norm", {{"M", 1024}, {"N", 1024}}},
      {"softmax", {{"M", 512}, {"N", 1024}}},
      {"matmul", {{"M", 4}, {"N", 4}, {"K", 4096}}},
      {"dense_bias_relu", {{"M", 2}, {"N", 8}, {"K", 4096}}},
      {"min", {}},  // testing::min_reduce_task
  };
  for (const auto& [w, params] : cases) {
    auto states = w == "min" ? testing::cross_thread_states(testing::min_reduce_task(64, 3000), 8, 9)
                             : testing::cross_thread_states(w, params, 8, 9);
    ASSERT_FALSE(states.empty()) << w;
    std::string code;
    std::vector<std::string> kernels;
    for (size_t i = 0; i < states.size(); ++i) {
      LowerOptions o;
      o.func_name = "ct_" + w + "_" + std::to_string(i);
      CudaModuleSource m = emit_cuda_source(lower(states[i], o));
      code += m.code;
      for (const auto& k : m.kernels) kernels.push_back(k.name);
    }
    std::string ptx = compile_cuda_to_ptx(std::string(cuda_prelude()) + code, "sm_90");
    if (!have_ptxas) continue;
    PtxasReport r = run_ptxas(ptx, "sm_90");
    EXPECT_EQ(check_ptxas_limits(r), "") << w;
    int max_regs = 0;
    int64_t max_smem = 0;
    for (const auto& k : kernels) {
      ASSERT_EQ(r.kernels.count(k), 1u) << w << ": ptxas did not report " << k;
      max_regs = std::max(max_regs, r.kernels.at(k).registers);
      max_smem = std::max(max_smem, r.kernels.at(k).shared_bytes);
    }
    std::printf("  %-16s %2zu cross-thread states %2zu kernels  max %3d regs  max %5lld B smem\n", w.c_str(),
                states.size(), kernels.size(), max_regs, static_cast<long long>(max_smem));
  }
}

}  // namespace
}  // namespace loom
