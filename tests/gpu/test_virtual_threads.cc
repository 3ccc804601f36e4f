// Virtual threads (ir/virtual_threads.h): the vthread loop of a GPU program
// pushed down to the statements that depend on it, with one copy per
// virtual thread of the tiles they write; checked on the loop nest and by
// running the result serially (C backend) against the reference.
#include <gtest/gtest.h>

#include "ir/lower.h"
#include "ir/reference.h"
#include "ir/virtual_threads.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/support/schedule_check.h"

namespace loom {
namespace {

// A GPU matmul schedule: 2 virtual threads along j, each thread a 4x2
// register tile, A and B fetched into shared memory per 64-wide k step.
State matmul_with_two_vthreads() {
  auto dag = testing::gpu_task("matmul", {{"M", 64}, {"N", 128}, {"K", 128}}).dag;
  const nlohmann::json steps = nlohmann::json::parse(R"([
    ["CHW",2,"local"],["CHR",0,"shared",[2]],["CHR",2,"shared",[3]],
    ["SP",4,0,64,[1,8,4,1],1],["SP",4,5,128,[2,16,1,2],1],["SP",4,10,128,[16,4],1],
    ["RE",4,[0,5,1,6,2,7,10,11,3,8,12,4,9]],["FSP",5,0,3,3],["FSP",5,4,4,3],["RE",5,[0,4,1,5,2,6,3,7]],
    ["FU",5,[0,1]],["FU",5,[1,2]],["FU",5,[2,3]],
    ["AN",5,0,"blockIdx.x"],["AN",5,1,"vthread"],["AN",5,2,"threadIdx.x"],["CA",4,5,2],
    ["CA",1,4,6],["FU",1,[0,1]],["SP",1,0,8192,[1],1],["FFSP",1,0,[3,4],1,1],["AN",1,1,"threadIdx.x"],["AN",1,2,"vectorize"],
    ["CA",3,4,6],["FU",3,[0,1]],["SP",3,0,16384,[1],1],["FFSP",3,0,[3,4],1,1],["AN",3,1,"threadIdx.x"],["AN",3,2,"vectorize"]
  ])");
  return State::from_json(dag, steps);
}

int count_loops(const Stmt& s, ForKind kind) {
  int n = 0;
  visit_stmt(s, [&](const Stmt& x) { n += x->kind == StmtKind::kFor && x->for_kind == kind; });
  return n;
}

const Buffer& temp(const LoweredFunc& f, const std::string& name) {
  const Buffer* b = f.find_buffer(name);
  EXPECT_NE(b, nullptr) << name;
  return *b;
}

TEST(VirtualThreads, TheLoopBecomesCopiesOfTheStatementsThatDependOnIt) {
  const State s = matmul_with_two_vthreads();
  const LoweredFunc f = lower(s);
  ASSERT_EQ(count_loops(f.body, ForKind::kVThread), 1) << to_string(f);
  const LoweredFunc g = inject_virtual_threads(f);
  EXPECT_EQ(count_loops(g.body, ForKind::kVThread), 0) << to_string(g);
  // Each virtual thread its own register tile; the shared tiles, which
  // lowering sizes for all of them (32 rows of A, 64 columns of B per k
  // step of 64), are fetched once.
  EXPECT_EQ(temp(g, "C_local").size(), 2 * temp(f, "C_local").size());
  EXPECT_EQ(temp(g, "A_shared").size(), 32 * 64);
  EXPECT_EQ(temp(g, "B_shared").size(), 64 * 64);
  // The reduction loop runs once per thread, not once per virtual thread.
  int k_loops_f = 0, k_loops_g = 0;
  visit_stmt(f.body, [&](const Stmt& x) { k_loops_f += x->kind == StmtKind::kFor && x->loop_var->name == "rk.0"; });
  visit_stmt(g.body, [&](const Stmt& x) { k_loops_g += x->kind == StmtKind::kFor && x->loop_var->name == "rk.0"; });
  EXPECT_EQ(k_loops_f, 1);
  EXPECT_EQ(k_loops_g, 1);
}

TEST(VirtualThreads, TheInterleavedMatmulComputesTheReference) {
  const State s = matmul_with_two_vthreads();
  const ComputeDAG& dag = s.dag();
  const LoweredFunc g = inject_virtual_threads(lower(s));
  auto ref = evaluate_reference(dag, random_inputs(dag, 5));
  auto got = testing::run_c_backend(dag, g, 5);
  EXPECT_EQ(compare_outputs(got.at("C"), ref.at("C")), "") << to_string(g);
}

void check_sampled_states_of_every_workload_compute_the_reference(int n) {
  int with_vthreads = 0;
  for (const WorkloadInfo& w : workload_registry()) {
    for (const State& s : testing::gpu_states(w.name, w.small_params, n, 23)) {
      const ComputeDAG& dag = s.dag();
      const LoweredFunc f = lower(s);
      if (count_loops(f.body, ForKind::kVThread) == 0) continue;
      ++with_vthreads;
      const LoweredFunc g = inject_virtual_threads(f);
      auto ref = evaluate_reference(dag, random_inputs(dag, 9));
      auto got = testing::run_c_backend(dag, g, 9);
      for (const auto& name : dag.output_names())
        EXPECT_EQ(compare_outputs(got.at(name), ref.at(name)), "") << w.name << ": " << s.steps_json().dump();
    }
  }
  EXPECT_GT(with_vthreads, 10);
}

TEST(VirtualThreads, SampledStatesOfEveryWorkloadComputeTheReference) { check_sampled_states_of_every_workload_compute_the_reference(6); }

// ctest label long (a run by hand: --gtest_also_run_disabled_tests): more programs.
TEST(DISABLED_VirtualThreadsLong, SampledStatesOfEveryWorkloadComputeTheReference) { check_sampled_states_of_every_workload_compute_the_reference(24); }

}  // namespace
}  // namespace loom
