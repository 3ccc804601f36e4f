// LLVM backend on a tiled matmul shaped like Ansor's CPU sketches (register
// tile in a local buffer, unrolled rows, vectorized columns, parallel outer
// loop). Correctness here; its speed is measured by build/bench_llvm_kernels.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "codegen/llvm/llvm_jit.h"
#include "llvm_test_util.h"

namespace loom {
namespace {

using namespace llvm_test;

struct Tiling {
  int64_t M, N, K;
  int64_t mr = 8, nr = 32;  // register tile (rows unrolled, columns vectorized)
  int64_t nb = 256;         // column block of C per parallel task (multiple of nr)
  int64_t kb = 256;         // k block
  int64_t auto_unroll = 0;
};

// for io (parallel) x jb: for kb: alloc C.local[mr*nr] per (jo):
//   init/accumulate over k block / write back (C += local when kb > 0).
LoweredFunc tiled_matmul(const Tiling& t) {
  const int64_t M = t.M, N = t.N, K = t.K, mr = t.mr, nr = t.nr;
  const int64_t nbs = N / t.nb, njo = t.nb / nr, nkb = K / t.kb;
  Var io = make_var("io", M / mr * nbs), ko = make_var("ko", nkb), jo = make_var("jo", njo);
  Var ii = make_var("ii", mr), ji = make_var("ji", nr), k = make_var("k", t.kb);
  Var ii2 = make_var("ii2", mr), ji2 = make_var("ji2", nr), ii3 = make_var("ii3", mr),
      ji3 = make_var("ji3", nr);
  Expr row0 = (Expr(io) / nbs) * mr;
  Expr col0 = (Expr(io) % nbs) * t.nb + Expr(jo) * nr;
  Expr kk = Expr(ko) * t.kb + k;
  Stmt init = make_for(ii2, mr, ForKind::kUnrolled,
                       make_for(ji2, nr, ForKind::kVectorized, make_store("C.local", Expr(ii2) * nr + ji2, Expr(0.0f))));
  Expr lidx = Expr(ii) * nr + ji;
  Stmt update = make_for(
      k, t.kb, ForKind::kSerial,
      make_for(ii, mr, ForKind::kUnrolled,
               make_for(ji, nr, ForKind::kVectorized,
                        make_store("C.local", lidx,
                                   ld("C.local", lidx) + ld("A", (row0 + ii) * K + kk) * ld("B", kk * N + col0 + ji)))));
  Expr cidx = (row0 + ii3) * N + col0 + ji3;
  Stmt write = make_for(ii3, mr, ForKind::kUnrolled,
                        make_for(ji3, nr, ForKind::kVectorized,
                                 make_store("C", cidx, select(Expr(ko) == 0, Expr(0.0f), ld("C", cidx)) + ld("C.local", Expr(ii3) * nr + ji3))));
  Stmt body = make_for(io, M / mr * nbs, ForKind::kParallel,
                       make_for(ko, nkb, ForKind::kSerial,
                                make_for(jo, njo, ForKind::kSerial,
                                         make_allocate("C.local", make_seq({init, update, write})))),
                       t.auto_unroll);
  return func("matmul", {buf("A", {M, K}), buf("B", {K, N}), buf("C", {M, N})}, body,
              {buf("C.local", {mr, nr}, BufferScope::kLocal)});
}

void check_matmul(const LoweredFunc& f, int64_t M, int64_t N, int64_t K, int threads) {
  LLVMCompileOptions o;
  o.num_threads = threads;
  auto kern = compile_llvm(f, o);
  auto d = random_args(f);
  (*kern)(ptrs(d));
  for (int64_t i = 0; i < M; i += 7)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t q = 0; q < K; ++q) acc += double(d[0][i * K + q]) * d[1][q * N + j];
      ASSERT_NEAR(d[2][i * N + j], acc, 1e-3) << i << "," << j;
    }
}

TEST(LLVMMatmul, TiledMatmulIsCorrect) {
  Tiling t{128, 256, 192};
  t.nb = 128;
  t.kb = 64;
  check_matmul(tiled_matmul(t), t.M, t.N, t.K, 1);
  check_matmul(tiled_matmul(t), t.M, t.N, t.K, 2);
  t.mr = 4;
  t.nr = 48;  // 3 vector chunks per row
  t.nb = 96;
  t.N = 192;
  t.auto_unroll = 16;
  check_matmul(tiled_matmul(t), t.M, t.N, t.K, 2);
}

TEST(LLVMMatmul, CompileTimeIsReported) {
  Tiling t{1024, 1024, 1024};
  auto k = compile_llvm(tiled_matmul(t));
  std::printf("[ info ] tiled matmul compile time: %.1f ms\n", k->compile_seconds() * 1e3);
  EXPECT_GT(k->compile_seconds(), 0.0);
}

}  // namespace
}  // namespace loom
