// CUDA code generation without a GPU: for every suite workload (default,
// full-size parameters) random GPU states are emitted as CUDA C, compiled
// by NVRTC for sm_90 and checked by ptxas (registers and shared memory
// within the limits). The states of one workload are compiled as one NVRTC
// program (kernel names differ) to keep the test fast. Skipped when this
// build has no CUDA toolkit.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "codegen/cuda/cuda_source.h"
#include "codegen/cuda/nvrtc.h"
#include "ir/lower.h"
#include "tests/gpu/gpu_test_util.h"

namespace loom {
namespace {

CudaModuleSource emit(const State& s, const std::string& name) {
  LowerOptions o;
  o.func_name = name;
  return emit_cuda_source(lower(s, o));
}

TEST(CudaSource, MatmulKernelUsesSharedMemoryAndBarriers) {
  auto states = testing::gpu_states("matmul", {{"M", 256}, {"N", 256}, {"K", 256}}, 8, 3);
  ASSERT_FALSE(states.empty());
  bool any_shared_fetch = false;
  for (const State& s : states) {
    CudaModuleSource m = emit(s, "mm");
    ASSERT_EQ(m.kernels.size(), 1u);
    EXPECT_NE(m.source.find("extern \"C\" __global__"), std::string::npos);
    EXPECT_NE(m.source.find("__shared__"), std::string::npos);
    EXPECT_NE(m.source.find("blockIdx.x"), std::string::npos);
    EXPECT_LE(m.kernels[0].threads(), 1024);
    if (m.source.find("threadIdx.x") != std::string::npos &&
        m.source.find("__syncthreads();") != std::string::npos)
      any_shared_fetch = true;
  }
  EXPECT_TRUE(any_shared_fetch);
}

TEST(CudaSource, RejectsTooManyThreads) {
  auto dag = std::make_shared<const ComputeDAG>(make_workload("matmul", {{"M", 64}, {"N", 64}, {"K", 8}}));
  State s = State::initial(dag);
  const int c = s.stage_index("C");
  s = s.fuse(c, {0, 1});
  s = s.annotate(c, 0, IterAnnotation::kThreadX);  // 4096 threads
  EXPECT_THROW(emit_cuda_source(lower(s)), LoomError);
}

TEST(CudaSource, OneKernelPerRootStage) {
  // softmax: maxelem, expsum, softmax (expv inlined) or, with cross-thread
  // reductions, fewer root stages (a reduction computed at its consumer).
  auto states = testing::gpu_states("softmax", {{"M", 64}, {"N", 100}}, 8, 9);
  ASSERT_FALSE(states.empty());
  for (const State& s : states) {
    CudaModuleSource m = emit(s, "sm");
    size_t roots = 0, root_temps = 0;
    for (const Stage& st : s.stages()) {
      if (st.op->is_placeholder || st.compute_at != ComputeAtKind::kRoot) continue;
      ++roots;
      if (!s.dag().is_output(st.name())) ++root_temps;
    }
    EXPECT_GE(m.kernels.size(), roots);  // a reduction's init at the top level is a kernel of its own
    EXPECT_EQ(m.temps.size(), root_temps);  // device buffers
    EXPECT_EQ(m.param_names().size(), 2 + root_temps);
  }
}

TEST(CudaNvrtc, CompilesAHandWrittenKernel) {
  REQUIRE_NVRTC();
  std::string ptx = compile_cuda_to_ptx(std::string(cuda_prelude()) +
                                            "extern \"C\" __global__ void k(float* a) { a[threadIdx.x] = "
                                            "loom_maxf(a[threadIdx.x], 0.0f); }\n",
                                        "sm_90");
  EXPECT_NE(ptx.find(".entry k"), std::string::npos);
  if (ptxas_path().empty()) GTEST_SKIP() << "ptxas not found";
  PtxasReport r = run_ptxas(ptx, "sm_90");
  ASSERT_EQ(r.kernels.count("k"), 1u) << r.log;
  EXPECT_GT(r.kernels.at("k").registers, 0);
  EXPECT_THROW(compile_cuda_to_ptx("this is not CUDA", "sm_90"), LoomError);
}

void check_every_suite_workload_compiles_for_sm90(int n) {
  REQUIRE_NVRTC();
  const bool have_ptxas = !ptxas_path().empty();
  for (const WorkloadInfo& w : workload_registry()) {
    auto t0 = std::chrono::steady_clock::now();
    auto states = testing::gpu_states(w.name, nlohmann::json::object(), n, 2024);
    ASSERT_GE(states.size(), std::min<size_t>(4, n)) << w.name;
    std::string code;
    std::vector<std::string> kernels;
    for (size_t i = 0; i < states.size(); ++i) {
      CudaModuleSource m;
      try {
        m = emit(states[i], w.name + "_s" + std::to_string(i));
      } catch (const LoomError& e) {
        ADD_FAILURE() << w.name << " state " << i << ": " << e.what() << "\n" << states[i].steps_json().dump();
        continue;
      }
      code += m.code;
      for (const auto& k : m.kernels) kernels.push_back(k.name);
    }
    std::string ptx;
    try {
      ptx = compile_cuda_to_ptx(std::string(cuda_prelude()) + code, "sm_90");
    } catch (const LoomError& e) {
      ADD_FAILURE() << w.name << ": " << e.what();
      continue;
    }
    int max_regs = 0;
    int64_t max_smem = 0;
    if (have_ptxas) {
      PtxasReport r = run_ptxas(ptx, "sm_90");
      for (const auto& k : kernels) {
        ASSERT_EQ(r.kernels.count(k), 1u) << w.name << ": ptxas did not report " << k;
        max_regs = std::max(max_regs, r.kernels.at(k).registers);
        max_smem = std::max(max_smem, r.kernels.at(k).shared_bytes);
      }
      EXPECT_EQ(check_ptxas_limits(r), "") << w.name;
    }
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("  %-18s %2zu states %3zu kernels  max %3d regs  max %6lld B smem  %.1f s\n", w.name.c_str(),
                states.size(), kernels.size(), max_regs, static_cast<long long>(max_smem), dt);
  }
}

TEST(CudaNvrtc, EverySuiteWorkloadCompilesForSm90) { check_every_suite_workload_compiles_for_sm90(12); }

// ctest label long (a run by hand: --gtest_also_run_disabled_tests): more programs.
TEST(DISABLED_CudaNvrtcLong, EverySuiteWorkloadCompilesForSm90) { check_every_suite_workload_compiles_for_sm90(48); }

}  // namespace
}  // namespace loom
