// C backend: hand-built loop nests are emitted as C, compiled with the system
// compiler, run, and checked against values computed here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "codegen/c/compile.h"
#include "codegen/c/source.h"
#include "ir/error.h"
#include "tests/support/loop_nest.h"

namespace loom {
namespace {

using namespace loop_nest;

TEST(CSource, VectorAdd) {
  const int64_t n = 1000;
  Var i = make_var("i", n);
  auto f = func("vadd", {buf("A", {n}), buf("B", {n}), buf("C", {n})},
                make_for(i, n, ForKind::kSerial, make_store("C", i, ld("A", i) + ld("B", i))));
  auto m = CompiledCModule::from_func(f);
  std::vector<float> a(n), b(n), c(n, -1.f);
  for (int64_t k = 0; k < n; ++k) a[k] = 0.5f * k, b[k] = 3.f - k;
  m.run({a.data(), b.data(), c.data()});
  for (int64_t k = 0; k < n; ++k) ASSERT_EQ(c[k], a[k] + b[k]) << k;
}

TEST(CSource, PackedEntryAndTypedFunctionAreEmitted) {
  Var i = make_var("i", 4);
  auto f = func("my.op", {buf("A", {4}), buf("B", {4})},
                make_for(i, 4, ForKind::kSerial, make_store("B", i, ld("A", i))));
  std::string src = emit_c_source(f);
  EXPECT_EQ(c_function_name(f), "my_op");
  EXPECT_NE(src.find("void my_op(float* restrict A, float* restrict B)"), std::string::npos) << src;
  EXPECT_NE(src.find("void my_op_packed(float** args)"), std::string::npos) << src;
}

TEST(CSource, MatmulWithReductionLoop) {
  const int64_t M = 13, N = 17, K = 29;
  Var i = make_var("i", M), j = make_var("j", N), k = make_var("k", K);
  Expr c_idx = i * N + j;
  Stmt body = make_seq({make_store("C", c_idx, Expr(0.0f)),
                        make_for(k, K, ForKind::kSerial,
                                 make_store("C", c_idx, ld("C", c_idx) + ld("A", i * K + k) * ld("B", k * N + j)))});
  auto f = func("matmul", {buf("A", {M, K}), buf("B", {K, N}), buf("C", {M, N})},
                make_for(i, M, ForKind::kSerial, make_for(j, N, ForKind::kSerial, body)));
  auto m = CompiledCModule::from_func(f);
  std::vector<float> a(M * K), b(K * N), c(M * N, 123.f);
  for (size_t x = 0; x < a.size(); ++x) a[x] = static_cast<float>((x * 7) % 11) - 5.f;
  for (size_t x = 0; x < b.size(); ++x) b[x] = static_cast<float>((x * 5) % 13) * 0.25f;
  m.run({a.data(), b.data(), c.data()});
  for (int64_t y = 0; y < M; ++y)
    for (int64_t x = 0; x < N; ++x) {
      float ref = 0.f;
      for (int64_t z = 0; z < K; ++z) ref += a[y * K + z] * b[z * N + x];
      ASSERT_NEAR(c[y * N + x], ref, 1e-4f * (1.f + std::fabs(ref))) << y << "," << x;
    }
}

int64_t floordiv_ref(int64_t a, int64_t b) { return static_cast<int64_t>(std::floor(double(a) / double(b))); }
int64_t floormod_ref(int64_t a, int64_t b) { return a - floordiv_ref(a, b) * b; }

TEST(CSource, FloorDivModWithNegativeOperands) {
  const int64_t n = 20;
  Var i = make_var("i", n);
  Expr x = i - 10;  // in [-10, 9]
  Stmt body = make_seq({make_store("D", i, cast(DType::kFloat, x / 3)),
                        make_store("R", i, cast(DType::kFloat, x % 3)),
                        make_store("D2", i, cast(DType::kFloat, make_binary(ExprKind::kDiv, x, int_imm(-4)))),
                        make_store("R2", i, cast(DType::kFloat, make_binary(ExprKind::kMod, x, int_imm(-4))))});
  auto f = func("floordivmod", {buf("D", {n}), buf("R", {n}), buf("D2", {n}), buf("R2", {n})},
                make_for(i, n, ForKind::kSerial, body));
  std::string src = emit_c_source(f);
  EXPECT_NE(src.find("loom_floordiv("), std::string::npos) << src;
  auto m = CompiledCModule::from_func(f);
  std::vector<float> d(n), r(n), d2(n), r2(n);
  m.run({d.data(), r.data(), d2.data(), r2.data()});
  for (int64_t k = 0; k < n; ++k) {
    int64_t v = k - 10;
    EXPECT_EQ(d[k], floordiv_ref(v, 3)) << v;
    EXPECT_EQ(r[k], floormod_ref(v, 3)) << v;
    EXPECT_EQ(d2[k], floordiv_ref(v, -4)) << v;
    EXPECT_EQ(r2[k], floormod_ref(v, -4)) << v;
  }
}

TEST(CSource, NonNegativeDivisionUsesPlainOperators) {
  Var i = make_var("i", 64);
  auto f = func("plain_div", {buf("A", {64}), buf("B", {16})},
                make_for(i, 64, ForKind::kSerial,
                         make_store("B", (i / 4) % 16, ld("A", i))));
  std::string src = emit_c_source(f);
  std::string body = src.substr(src.find("void plain_div("));
  EXPECT_EQ(body.find("loom_floor"), std::string::npos) << src;
  EXPECT_NE(src.find("((i / 4) % 16)"), std::string::npos) << src;
}

TEST(CSource, SelectIsLazyAndGuardsOutOfBoundsRead) {
  const int64_t n = 8, out_n = 12;
  Var i = make_var("i", out_n);
  // For i >= n the load index is ~2^40: evaluating it eagerly would crash.
  Expr idx = i + (i / n) * (int64_t{1} << 40);
  auto f = func("guarded", {buf("A", {n}), buf("B", {out_n})},
                make_for(i, out_n, ForKind::kSerial,
                         make_store("B", i, select(i < n, ld("A", idx), Expr(-1.0f)))));
  auto m = CompiledCModule::from_func(f);
  std::vector<float> a(n), b(out_n);
  for (int64_t k = 0; k < n; ++k) a[k] = 10.f + k;
  m.run({a.data(), b.data()});
  for (int64_t k = 0; k < out_n; ++k) EXPECT_EQ(b[k], k < n ? 10.f + k : -1.f) << k;
}

TEST(CSource, LocalTempBufferOnStack) {
  const int64_t rows = 5, w = 16;
  Var i = make_var("i", rows), j = make_var("j", w), j2 = make_var("j", w);
  Stmt fill = make_for(j, w, ForKind::kSerial, make_store("T.local", j, ld("A", i * w + j) * 2.0f));
  Stmt use = make_for(j2, w, ForKind::kSerial,
                      make_store("B", i * w + j2, ld("T.local", (w - 1) - j2) + 1.0f));
  auto f = func("local_temp", {buf("A", {rows, w}), buf("B", {rows, w})},
                make_for(i, rows, ForKind::kSerial, make_allocate("T.local", make_seq({fill, use}))),
                {buf("T.local", {w}, BufferScope::kLocal)});
  std::string src = emit_c_source(f);
  EXPECT_NE(src.find("float T_local[16]"), std::string::npos) << src;
  auto m = CompiledCModule::from_func(f);
  std::vector<float> a(rows * w), b(rows * w);
  for (size_t k = 0; k < a.size(); ++k) a[k] = static_cast<float>(k);
  m.run({a.data(), b.data()});
  for (int64_t y = 0; y < rows; ++y)
    for (int64_t x = 0; x < w; ++x) EXPECT_EQ(b[y * w + x], a[y * w + (w - 1 - x)] * 2.f + 1.f);
}

TEST(CSource, LargeTempBufferOnHeap) {
  const int64_t n = 1 << 15;  // 128 KiB of floats
  Var i = make_var("i", n), i2 = make_var("i", n);
  Stmt body = make_allocate("T", make_seq({make_for(i, n, ForKind::kSerial, make_store("T", i, ld("A", i) + 1.0f)),
                                           make_for(i2, n, ForKind::kSerial, make_store("B", i2, ld("T", i2) * 3.0f))}));
  auto f = func("heap_temp", {buf("A", {n}), buf("B", {n})}, body, {buf("T", {n})});
  std::string src = emit_c_source(f);
  EXPECT_NE(src.find("loom_alloc("), std::string::npos) << src;
  EXPECT_NE(src.find("free(T);"), std::string::npos) << src;
  auto m = CompiledCModule::from_func(f);
  std::vector<float> a(n), b(n);
  for (int64_t k = 0; k < n; ++k) a[k] = static_cast<float>(k % 97);
  m.run({a.data(), b.data()});
  for (int64_t k = 0; k < n; ++k) ASSERT_EQ(b[k], (a[k] + 1.f) * 3.f) << k;
}

LoweredFunc parallel_scale(int64_t n) {
  Var i = make_var("i", n);
  return func("par", {buf("A", {n}), buf("B", {n})},
              make_for(i, n, ForKind::kParallel, make_store("B", i, ld("A", i) * 2.0f + 1.0f)));
}

TEST(CSource, ParallelLoopIsSerialByDefault) {
  auto f = parallel_scale(1000);
  std::string src = emit_c_source(f);
  EXPECT_EQ(src.find("#pragma omp"), std::string::npos) << src;
  auto m = CompiledCModule::from_func(f);
  std::vector<float> a(1000), b(1000);
  for (int k = 0; k < 1000; ++k) a[k] = k * 0.5f;
  m.run({a.data(), b.data()});
  for (int k = 0; k < 1000; ++k) ASSERT_EQ(b[k], a[k] * 2.f + 1.f);
}

TEST(CSource, ParallelLoopWithOpenMP) {
  auto f = parallel_scale(1000);
  CSourceOptions opts;
  opts.parallel = CParallel::kOpenMP;
  std::string src = emit_c_source(f, opts);
  EXPECT_NE(src.find("#pragma omp parallel for"), std::string::npos) << src;
  auto m = CompiledCModule::from_func(f, opts);
  std::vector<float> a(1000), b(1000);
  for (int k = 0; k < 1000; ++k) a[k] = k * 0.5f;
  m.run({a.data(), b.data()});
  for (int k = 0; k < 1000; ++k) ASSERT_EQ(b[k], a[k] * 2.f + 1.f);
}

TEST(CSource, VectorizedUnrolledAndAutoUnrollLoops) {
  const int64_t n = 8, v = 16;
  Var i = make_var("i", n), j = make_var("j", v), u = make_var("u", 4);
  Stmt inner = make_for(j, v, ForKind::kVectorized, make_store("B", i * v + j, ld("A", i * v + j) + 1.0f));
  Stmt unrolled = make_for(u, 4, ForKind::kUnrolled, make_store("C", i * 4 + u, cast(DType::kFloat, u)));
  auto f = func("kinds", {buf("A", {n * v}), buf("B", {n * v}), buf("C", {n * 4})},
                make_for(i, n, ForKind::kSerial, make_seq({inner, unrolled}), /*auto_unroll=*/16));
  CSourceOptions opts;
  opts.ivdep = true;
  std::string src = emit_c_source(f, opts);
  EXPECT_NE(src.find("LOOM_IVDEP"), std::string::npos) << src;
  EXPECT_NE(src.find("#pragma GCC unroll 4"), std::string::npos) << src;
  auto m = CompiledCModule::from_func(f, opts);
  std::vector<float> a(n * v), b(n * v), c(n * 4);
  for (size_t k = 0; k < a.size(); ++k) a[k] = static_cast<float>(k);
  m.run({a.data(), b.data(), c.data()});
  for (size_t k = 0; k < b.size(); ++k) ASSERT_EQ(b[k], a[k] + 1.f);
  for (size_t k = 0; k < c.size(); ++k) ASSERT_EQ(c[k], static_cast<float>(k % 4));
}

TEST(CSource, GpuBindingLoopsRunSerially) {
  Var bx = make_var("blockIdx.x", 4), tx = make_var("threadIdx.x", 32);
  auto f = func("gpu_like", {buf("A", {128}), buf("B", {128})},
                make_for(bx, 4, ForKind::kBlockX,
                         make_for(tx, 32, ForKind::kThreadX,
                                  make_store("B", bx * 32 + tx, ld("A", bx * 32 + tx) - 1.0f))));
  std::string src = emit_c_source(f);
  EXPECT_NE(src.find("bound to"), std::string::npos) << src;
  auto m = CompiledCModule::from_func(f);
  std::vector<float> a(128), b(128);
  for (int k = 0; k < 128; ++k) a[k] = k;
  m.run({a.data(), b.data()});
  for (int k = 0; k < 128; ++k) ASSERT_EQ(b[k], k - 1.f);
}

TEST(CSource, FloatLiteralsAreExact) {
  const std::vector<float> vals = {0.1f, -3.4e38f, 1e-40f, 1.0f / 3.0f, -0.0f, 16777217.0f};
  std::vector<Stmt> stores;
  for (size_t k = 0; k < vals.size(); ++k) stores.push_back(make_store("B", int_imm(k), float_imm(vals[k])));
  stores.push_back(make_store("B", int_imm(vals.size()), float_imm(INFINITY)));
  stores.push_back(make_store("B", int_imm(vals.size() + 1), float_imm(-INFINITY)));
  auto f = func("literals", {buf("B", {int64_t(vals.size() + 2)})}, make_seq(stores));
  std::string src = emit_c_source(f);
  EXPECT_NE(src.find("= 0.1f;"), std::string::npos) << src;
  auto m = CompiledCModule::from_func(f);
  std::vector<float> b(vals.size() + 2, 7.f);
  m.run({b.data()});
  for (size_t k = 0; k < vals.size(); ++k) EXPECT_EQ(std::memcmp(&b[k], &vals[k], 4), 0) << k << ": " << b[k];
  EXPECT_EQ(b[vals.size()], INFINITY);
  EXPECT_EQ(b[vals.size() + 1], -INFINITY);
}

TEST(CSource, MathCalls) {
  const int64_t n = 9;
  Var i = make_var("i", n);
  Expr x = cast(DType::kFloat, i) * 0.25f + 0.1f;
  std::vector<Expr> exprs = {exp(x), log(x), sqrt(x), tanh(x), erf(x), sigmoid(x),
                             fabs(x - 1.0f), pow(x, Expr(1.5f))};
  std::vector<Stmt> stores;
  for (size_t k = 0; k < exprs.size(); ++k) stores.push_back(make_store("B", i * int64_t(exprs.size()) + int64_t(k), exprs[k]));
  auto f = func("math", {buf("B", {n * int64_t(exprs.size())})}, make_for(i, n, ForKind::kSerial, make_seq(stores)));
  auto m = CompiledCModule::from_func(f);
  std::vector<float> b(n * exprs.size());
  m.run({b.data()});
  for (int64_t k = 0; k < n; ++k) {
    float v = k * 0.25f + 0.1f;
    std::vector<float> ref = {std::exp(v), std::log(v), std::sqrt(v), std::tanh(v), std::erf(v),
                              1.f / (1.f + std::exp(-v)), std::fabs(v - 1.f), std::pow(v, 1.5f)};
    for (size_t e = 0; e < ref.size(); ++e)
      EXPECT_NEAR(b[k * exprs.size() + e], ref[e], 1e-5f * (1.f + std::fabs(ref[e]))) << k << " fn " << e;
  }
}

TEST(CSource, IntMinMaxAndCasts) {
  const int64_t n = 10;
  Var i = make_var("i", n);
  Expr v = min(i, Expr(3)) + max(i - 5, Expr(0));
  Expr fv = max(cast(DType::kFloat, i) - 4.5f, Expr(0.0f));
  Expr tr = cast(DType::kInt, cast(DType::kFloat, i) * 0.75f - 2.0f);  // truncation toward zero
  auto f = func("minmax", {buf("B", {n * 3})},
                make_for(i, n, ForKind::kSerial,
                         make_seq({make_store("B", i * 3, cast(DType::kFloat, v)),
                                   make_store("B", i * 3 + 1, fv),
                                   make_store("B", i * 3 + 2, cast(DType::kFloat, tr))})));
  auto m = CompiledCModule::from_func(f);
  std::vector<float> b(n * 3);
  m.run({b.data()});
  for (int64_t k = 0; k < n; ++k) {
    EXPECT_EQ(b[k * 3], std::min<int64_t>(k, 3) + std::max<int64_t>(k - 5, 0));
    EXPECT_EQ(b[k * 3 + 1], std::max(k - 4.5f, 0.f));
    EXPECT_EQ(b[k * 3 + 2], static_cast<float>(static_cast<int64_t>(k * 0.75f - 2.f)));
  }
}

TEST(CSource, ConstantIntArithmeticIsSixtyFourBit) {
  // 65536 * 65536 overflows a C int; unfolded it must still be computed in int64.
  Expr big = make_binary(ExprKind::kMul, int_imm(65536), int_imm(65536));
  Expr idx = make_binary(ExprKind::kSub, big, int_imm(int64_t{1} << 32));  // == 0
  auto f = func("bigconst", {buf("B", {1})}, make_store("B", idx, Expr(5.0f)));
  auto m = CompiledCModule::from_func(f);
  float b = 0.f;
  m.run({&b});
  EXPECT_EQ(b, 5.f);
}

TEST(CSource, SanitizesAndUniquifiesNames) {
  Var a = make_var("i.outer", 2), b = make_var("i.outer", 3), c = make_var("int", 4);
  Stmt body = make_for(a, 2, ForKind::kSerial,
                       make_for(b, 3, ForKind::kSerial,
                                make_for(c, 4, ForKind::kSerial,
                                         make_store("out.0", a * 12 + b * 4 + c, cast(DType::kFloat, a * 12 + b * 4 + c)))));
  auto f = func("names", {buf("out.0", {24})}, body);
  std::string src = emit_c_source(f);
  EXPECT_NE(src.find("int64_t i_outer ="), std::string::npos) << src;
  EXPECT_NE(src.find("int64_t i_outer_" + std::to_string(b->var_id) + " ="), std::string::npos) << src;
  auto m = CompiledCModule::from_func(f);
  std::vector<float> o(24);
  m.run({o.data()});
  for (int k = 0; k < 24; ++k) ASSERT_EQ(o[k], k);
}

TEST(CSource, UnboundVariableThrows) {
  Var i = make_var("i", 4), stray = make_var("stray", 4);
  auto f = func("unbound", {buf("B", {4})}, make_for(i, 4, ForKind::kSerial, make_store("B", i, cast(DType::kFloat, stray))));
  EXPECT_THROW(emit_c_source(f), LoomError);
}

TEST(CSource, UnknownBufferThrows) {
  Var i = make_var("i", 4);
  auto f = func("unknown", {buf("B", {4})}, make_for(i, 4, ForKind::kSerial, make_store("B", i, ld("nope", i))));
  EXPECT_THROW(emit_c_source(f), LoomError);
}

TEST(CCompile, CompileErrorReportsDiagnostics) {
  try {
    CompiledCModule m("this is not C;", "entry");
    FAIL() << "expected a LoomError";
  } catch (const LoomError& e) {
    EXPECT_NE(std::string(e.what()).find("error"), std::string::npos) << e.what();
  }
}

TEST(CCompile, ClangCompilesEmittedSourceWithOpenMPAndIvdep) {
  if (std::system("clang --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no clang";
  auto f = parallel_scale(64);
  CSourceOptions src_opts;
  src_opts.ivdep = true;
  CCompileOptions cc;
  cc.compiler = "clang";
  cc.extra_flags = {"-Werror", "-Wall"};
  auto m = CompiledCModule::from_func(f, src_opts, cc);
  std::vector<float> a(64, 1.5f), b(64);
  m.run({a.data(), b.data()});
  for (float x : b) ASSERT_EQ(x, 4.f);
}

TEST(CCompile, WrongArgumentCountThrows) {
  auto m = CompiledCModule::from_func(parallel_scale(4));
  float x[4] = {};
  EXPECT_THROW(m.run({x}), LoomError);
}

}  // namespace
}  // namespace loom
