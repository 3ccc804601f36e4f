// LLVM backend: scalar code paths (loops, guards, integer floor div/mod,
// temps, math calls, unrolling) on hand-built loop nests.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "codegen/llvm/llvm_jit.h"
#include "ir/error.h"
#include "llvm_test_util.h"

namespace loom {
namespace {

using namespace llvm_test;

int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t floormod(int64_t a, int64_t b) { return a - floordiv(a, b) * b; }

TEST(LLVMBasic, ScalarLoop) {
  const int64_t n = 1000;
  Var i = make_var("i", n);
  auto f = func("saxpy", {buf("A", {n}), buf("B", {n}), buf("C", {n})},
                make_for(i, n, ForKind::kSerial,
                         make_store("C", i, ld("A", i) * 2.0f + ld("B", i))));
  auto k = compile_llvm(f);
  std::vector<float> a(n), b(n), c(n, -1.f);
  for (int64_t x = 0; x < n; ++x) a[x] = 0.25f * x, b[x] = 3.f - x;
  (*k)({a.data(), b.data(), c.data()});
  for (int64_t x = 0; x < n; ++x) ASSERT_FLOAT_EQ(c[x], a[x] * 2.f + b[x]) << x;
  EXPECT_GT(k->compile_seconds(), 0.0);
  EXPECT_EQ(k->num_args(), 3u);
  expect_matches_c(f);
}

TEST(LLVMBasic, FloorDivModWithNegativeOperands) {
  const int64_t n = 64;
  Var i = make_var("i", n);
  Expr x = Expr(i) - 30;
  // out[0*n+i] = x / 7, [1] = x % 7, [2] = x / -3, [3] = x % -3, [4] = x / 4,
  // [5] = x % 4, [6] = (i / 8) (non-negative fast path), [7] = i % 6,
  // [8] = x / (i % 5 - 2) when the divisor is non-zero.
  std::vector<Expr> vals = {x / 7, x % 7, x / -3, x % -3, x / 4, x % 4, Expr(i) / 8, Expr(i) % 6};
  std::vector<Stmt> stores;
  for (size_t r = 0; r < vals.size(); ++r)
    stores.push_back(make_store("O", Expr(int64_t(r) * n) + i, cast(DType::kFloat, vals[r])));
  Expr d = Expr(i) % 5 - 2;
  stores.push_back(make_if(d != 0, make_store("O", Expr(8 * n) + i, cast(DType::kFloat, x / d)),
                           make_store("O", Expr(8 * n) + i, Expr(0.0f))));
  stores.push_back(make_if(d != 0, make_store("O", Expr(9 * n) + i, cast(DType::kFloat, x % d)),
                           make_store("O", Expr(9 * n) + i, Expr(0.0f))));
  auto f = func("divmod", {buf("O", {10, n})}, make_for(i, n, ForKind::kSerial, make_seq(stores)));
  auto k = compile_llvm(f);
  std::vector<float> o(10 * n, -99.f);
  (*k)({o.data()});
  for (int64_t v = 0; v < n; ++v) {
    int64_t xv = v - 30, dv = floormod(v, 5) - 2;
    std::vector<int64_t> want = {floordiv(xv, 7), floormod(xv, 7), floordiv(xv, -3), floormod(xv, -3),
                                 floordiv(xv, 4), floormod(xv, 4), v / 8, v % 6,
                                 dv ? floordiv(xv, dv) : 0, dv ? floormod(xv, dv) : 0};
    for (size_t r = 0; r < want.size(); ++r)
      ASSERT_EQ(o[r * n + v], static_cast<float>(want[r])) << "row " << r << " i=" << v;
  }
  expect_matches_c(f);
}

TEST(LLVMBasic, DivisionByZeroInUntakenSelectArmDoesNotTrap) {
  const int64_t n = 40;
  for (ForKind kind : {ForKind::kSerial, ForKind::kVectorized}) {
    Var i = make_var("i", n);
    Expr d = Expr(i) % 5 - 2, x = Expr(i) - 17;
    auto f = func("divsel", {buf("B", {2, n})},
                  make_for(i, n, kind,
                           make_seq({make_store("B", i, select(d != 0, cast(DType::kFloat, x / d), Expr(0.0f))),
                                     make_store("B", Expr(n) + i, select(d != 0, cast(DType::kFloat, x % d), Expr(0.0f)))})));
    expect_matches_c(f);
  }
}

TEST(LLVMBasic, SelectGuardsOutOfBoundsLoad) {
  const int64_t n = 37;
  Var i = make_var("i", n);
  // B[i] = i >= 1 ? A[i-1] : 0 and i < n-1 ? A[i+1] : -1
  auto f = func("shift", {buf("A", {n}), buf("B", {n}), buf("C", {n})},
                make_for(i, n, ForKind::kSerial,
                         make_seq({make_store("B", i, select(Expr(i) >= 1, ld("A", Expr(i) - 1), Expr(0.0f))),
                                   make_store("C", i, select(Expr(i) < n - 1, ld("A", Expr(i) + 1),
                                                             Expr(-1.0f)))})));
  auto k = compile_llvm(f);
  std::vector<float> a(n), b(n), c(n);
  for (int64_t x = 0; x < n; ++x) a[x] = 1.5f * x;
  (*k)({a.data(), b.data(), c.data()});
  for (int64_t x = 0; x < n; ++x) {
    ASSERT_EQ(b[x], x >= 1 ? a[x - 1] : 0.f);
    ASSERT_EQ(c[x], x < n - 1 ? a[x + 1] : -1.f);
  }
}

TEST(LLVMBasic, IfElseAndIntMinMaxCasts) {
  const int64_t n = 50;
  Var i = make_var("i", n);
  Stmt body = make_if(Expr(i) % 3 == 0,
                      make_store("B", i, cast(DType::kFloat, min(Expr(i), 20) + max(Expr(i) - 40, 0))),
                      make_store("B", i, min(ld("A", i), Expr(0.25f)) + max(ld("A", i), Expr(-0.5f))));
  auto f = func("ifelse", {buf("A", {n}), buf("B", {n})}, make_for(i, n, ForKind::kSerial, body));
  expect_matches_c(f);
  // Float -> int casts truncate toward zero.
  Var j = make_var("j", 8);
  auto g = func("trunc_cast", {buf("A", {8}), buf("B", {8})},
                make_for(j, 8, ForKind::kSerial,
                         make_store("B", j, cast(DType::kFloat, cast(DType::kInt, ld("A", j) * 10.0f)))));
  expect_matches_c(g);
}

TEST(LLVMBasic, LocalTempBufferOnStack) {
  const int64_t rows = 6, cols = 10;
  Var i = make_var("i", rows), j = make_var("j", cols), j2 = make_var("j2", cols);
  Stmt fill = make_for(j, cols, ForKind::kSerial, make_store("T.local", j, ld("A", Expr(i) * cols + j) * 3.0f));
  Stmt use = make_for(j2, cols, ForKind::kSerial,
                      make_store("B", Expr(i) * cols + j2, ld("T.local", Expr(cols - 1) - j2) + 1.0f));
  auto f = func("local", {buf("A", {rows, cols}), buf("B", {rows, cols})},
                make_for(i, rows, ForKind::kSerial, make_allocate("T.local", make_seq({fill, use}))),
                {buf("T.local", {cols}, BufferScope::kLocal)});
  auto k = compile_llvm(f);
  auto data = random_args(f);
  (*k)(ptrs(data));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      ASSERT_NEAR(data[1][r * cols + c], data[0][r * cols + (cols - 1 - c)] * 3.f + 1.f, 1e-6f);
}

TEST(LLVMBasic, LargeTempBufferOnHeap) {
  const int64_t n = 100000;  // 400 KB: heap
  Var i = make_var("i", n), i2 = make_var("i2", n);
  Stmt body = make_allocate(
      "T", make_seq({make_for(i, n, ForKind::kSerial, make_store("T", i, ld("A", i) + 1.0f)),
                     make_for(i2, n, ForKind::kSerial, make_store("B", i2, ld("T", Expr(n - 1) - i2) * 2.0f))}));
  auto f = func("heap", {buf("A", {n}), buf("B", {n})}, body, {buf("T", {n})});
  auto k = compile_llvm(f);
  auto data = random_args(f);
  (*k)(ptrs(data));
  for (int64_t x = 0; x < n; ++x) ASSERT_FLOAT_EQ(data[1][x], (data[0][n - 1 - x] + 1.f) * 2.f);
}

TEST(LLVMBasic, MathCalls) {
  const int64_t n = 33;
  Var i = make_var("i", n);
  Expr a = ld("A", i);
  std::vector<Expr> vals = {exp(a), log(fabs(a) + 1.0f), sqrt(fabs(a)), tanh(a), erf(a), sigmoid(a),
                            fabs(a), pow(fabs(a) + 0.5f, Expr(1.7f))};
  std::vector<Stmt> stores;
  for (size_t r = 0; r < vals.size(); ++r) stores.push_back(make_store("B", Expr(int64_t(r) * n) + i, vals[r]));
  auto f = func("math", {buf("A", {n}), buf("B", {int64_t(vals.size()), n})},
                make_for(i, n, ForKind::kSerial, make_seq(stores)));
  auto k = compile_llvm(f);
  auto d = random_args(f);
  (*k)(ptrs(d));
  for (int64_t x = 0; x < n; ++x) {
    float v = d[0][x];
    std::vector<float> want = {std::exp(v), std::log(std::fabs(v) + 1.f), std::sqrt(std::fabs(v)),
                               std::tanh(v), std::erf(v), 1.f / (1.f + std::exp(-v)), std::fabs(v),
                               std::pow(std::fabs(v) + 0.5f, 1.7f)};
    for (size_t r = 0; r < want.size(); ++r)
      ASSERT_NEAR(d[1][r * n + x], want[r], 1e-5f * (1.f + std::fabs(want[r]))) << "fn " << r;
  }
  expect_matches_c(f);
}

TEST(LLVMBasic, UnrolledLoop) {
  const int64_t n = 20, m = 4;
  Var i = make_var("i", n), j = make_var("j", m);
  auto f = func("unroll", {buf("A", {n, m}), buf("B", {n, m})},
                make_for(i, n, ForKind::kSerial,
                         make_for(j, m, ForKind::kUnrolled,
                                  make_store("B", Expr(i) * m + j, ld("A", Expr(i) * m + j) * cast(DType::kFloat, j)))));
  LLVMCompileOptions o;
  o.dump_ir = true;
  auto k = compile_llvm(f, o);
  std::string before = k->ir_text().substr(0, k->ir_text().find("after optimization"));
  EXPECT_EQ(before.find("j.loop"), std::string::npos) << before;
  EXPECT_NE(before.find("i.loop"), std::string::npos) << before;
  EXPECT_FALSE(k->asm_text().empty());
  expect_matches_c(f);
}

TEST(LLVMBasic, AutoUnrollMaxStep) {
  const int64_t n = 16, m = 4, p = 8;
  Var i = make_var("i", n), j = make_var("j", m), q = make_var("q", p);
  // Pragma 64 on i: the j nest (4*8 = 32 steps) unrolls, i (512 steps) does not.
  Stmt inner = make_for(j, m, ForKind::kSerial,
                        make_for(q, p, ForKind::kSerial,
                                 make_store("B", (Expr(i) * m + j) * p + q, ld("A", (Expr(i) * m + j) * p + q) + 1.0f)));
  auto f = func("autounroll", {buf("A", {n, m, p}), buf("B", {n, m, p})},
                make_for(i, n, ForKind::kSerial, inner, /*auto_unroll=*/64));
  LLVMCompileOptions o;
  o.dump_ir = true;
  auto k = compile_llvm(f, o);
  std::string before = k->ir_text().substr(0, k->ir_text().find("after optimization"));
  EXPECT_EQ(before.find("j.loop"), std::string::npos);
  EXPECT_EQ(before.find("q.loop"), std::string::npos);
  EXPECT_NE(before.find("i.loop"), std::string::npos);
  expect_matches_c(f);
}

TEST(LLVMBasic, Errors) {
  Var i = make_var("i", 4);
  auto unknown = func("unk", {buf("A", {4})}, make_for(i, 4, ForKind::kSerial, make_store("Z", i, Expr(1.0f))));
  EXPECT_THROW(compile_llvm(unknown), LoomError);
  Var k = make_var("k", 4);
  auto red = func("red", {buf("A", {4}), buf("B", {4})},
                  make_for(i, 4, ForKind::kSerial, make_store("B", i, sum(ld("A", k), {k}))));
  EXPECT_THROW(compile_llvm(red), LoomError);
  Var u = make_var("u", 4);
  auto unbound = func("unb", {buf("A", {4})}, make_for(i, 4, ForKind::kSerial, make_store("A", u, Expr(1.0f))));
  EXPECT_THROW(compile_llvm(unbound), LoomError);
  auto ok = func("ok", {buf("A", {4})}, make_for(i, 4, ForKind::kSerial, make_store("A", i, Expr(1.0f))));
  auto kernel = compile_llvm(ok);
  std::vector<float> a(4);
  EXPECT_THROW((*kernel)({}), LoomError);
  (*kernel)({a.data()});
  EXPECT_EQ(a[3], 1.0f);
}

TEST(LLVMBasic, ConcurrentCompilesFromSeveralThreads) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < 4; ++r) {
        const int64_t n = 40 + t;
        Var i = make_var("i", n);
        auto f = func("conc", {buf("A", {n})},
                      make_for(i, n, ForKind::kVectorized, make_store("A", i, ld("A", i) * 2.0f + float(t))));
        auto k = compile_llvm(f);
        std::vector<float> a(n, 1.f);
        (*k)({a.data()});
        for (float v : a)
          if (v != 2.f + t) failures++;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(LLVMBasic, ManyKernelsAreReleased) {
  for (int r = 0; r < 40; ++r) {
    Var i = make_var("i", 8);
    auto f = func("rel", {buf("A", {8})},
                  make_for(i, 8, ForKind::kSerial, make_store("A", i, ld("A", i) + float(r))));
    auto k = compile_llvm(f);
    std::vector<float> a(8, 1.f);
    (*k)({a.data()});
    ASSERT_EQ(a[7], 1.f + r);
  }
  EXPECT_FALSE(llvm_host_cpu_description().empty());
  EXPECT_GE(llvm_native_vector_width(), 4);
}

}  // namespace
}  // namespace loom
