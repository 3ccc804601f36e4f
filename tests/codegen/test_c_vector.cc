// C backend, vector form (CSourceOptions::vector_width): hand-built loop
// nests run as explicit vector code and are checked against the scalar form
// (the oracle), values computed here or the LLVM backend; the emitted source
// is checked where the shape of the code is the behaviour.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "codegen/c/compile.h"
#include "codegen/c/source.h"
#include "codegen/llvm/llvm_jit.h"
#include "ir/error.h"
#include "llvm_test_util.h"
#include "vector_math_cases.h"

namespace loom {
namespace {

using namespace llvm_test;

CSourceOptions vec(int width) {
  CSourceOptions o;
  o.vector_width = width;
  return o;
}

// f's body as emitted (after the helpers).
std::string body_of(const LoweredFunc& f, const CSourceOptions& o) {
  std::string src = emit_c_source(f, o);
  return src.substr(src.find("void " + c_function_name(f) + "("));
}

// Every buffer after running f in form `o` on the standard random data.
std::vector<std::vector<float>> run(const LoweredFunc& f, const CSourceOptions& o, const CCompileOptions& cc = {}) {
  auto m = CompiledCModule::from_func(f, o, cc);
  auto d = random_args(f);
  m.run(ptrs(d));
  return d;
}

void expect_same_as_scalar(const LoweredFunc& f, const CSourceOptions& o, const CCompileOptions& cc = {}) {
  auto want = run(f, {}), got = run(f, o, cc);
  for (size_t i = 0; i < want.size(); ++i)
    for (size_t k = 0; k < want[i].size(); ++k) {
      const float x = got[i][k], y = want[i][k];
      if (std::isnan(x) && std::isnan(y)) continue;
      // FMA: the vector form fuses a*b+c, the scalar form rounds twice.
      ASSERT_NEAR(x, y, 1e-6f * (1.f + std::fabs(y))) << f.args[i].name << "[" << k << "]";
    }
}

TEST(CVector, ContiguousIndicesAreVectorLoadsAndStores) {
  const int64_t n = 64;
  Var i = make_var("i", n);
  auto f = func("axpb", {buf("A", {n}), buf("B", {n})},
                make_for(i, n, ForKind::kVectorized, make_store("B", i, ld("A", i) * 2.0f + 1.0f)));
  std::string body = body_of(f, vec(16));
  EXPECT_NE(body.find("loom_f32x16_store(B + "), std::string::npos) << body;
  EXPECT_NE(body.find("loom_f32x16_load(A + "), std::string::npos) << body;
  EXPECT_NE(body.find("loom_f32x16_fma("), std::string::npos) << body;
  EXPECT_EQ(body.find("gather"), std::string::npos) << body;
  expect_same_as_scalar(f, vec(16));
}

TEST(CVector, IndexWithoutTheLaneIsOneScalarLoad) {
  const int64_t rows = 3, e = 32;
  Var i = make_var("i", rows), j = make_var("j", e);
  auto f = func("bcast", {buf("A", {rows}), buf("B", {e}), buf("C", {rows, e})},
                make_for(i, rows, ForKind::kSerial,
                         make_for(j, e, ForKind::kVectorized, make_store("C", Expr(i) * e + j, ld("A", i) * ld("B", j)))));
  std::string body = body_of(f, vec(16));
  EXPECT_NE(body.find("loom_f32x16_splat(A[i])"), std::string::npos) << body;
  expect_same_as_scalar(f, vec(16));
}

TEST(CVector, IndexConstantPerChunkIsOneScalarLoad) {
  const int64_t e = 64;
  Var j = make_var("j", e);
  auto f = func("perchunk", {buf("A", {e / 16}), buf("B", {e})},
                make_for(j, e, ForKind::kVectorized, make_store("B", j, ld("A", Expr(j) / 16) - 1.0f)));
  std::string body = body_of(f, vec(16));
  EXPECT_EQ(body.find("gather"), std::string::npos) << body;
  EXPECT_NE(body.find("A[3]"), std::string::npos) << body;  // the fourth chunk's element
  expect_same_as_scalar(f, vec(16));
}

TEST(CVector, StridedAndNonLinearIndicesGatherAndScatter) {
  const int64_t e = 19;
  Var j = make_var("j", e), q = make_var("q", e);
  // B[j] = A[3j + 1]; D[(5q) % 19] = A[(7q) % 19]
  auto f = func("gather", {buf("A", {3 * e + 1}), buf("B", {e}), buf("D", {e})},
                make_seq({make_for(j, e, ForKind::kVectorized, make_store("B", j, ld("A", Expr(j) * 3 + 1))),
                          make_for(q, e, ForKind::kVectorized,
                                   make_store("D", (Expr(q) * 5) % 19, ld("A", (Expr(q) * 7) % 19)))}));
  std::string body = body_of(f, vec(16));
  EXPECT_NE(body.find("loom_f32x16_gather"), std::string::npos) << body;
  EXPECT_NE(body.find("loom_f32x16_scatter"), std::string::npos) << body;
  expect_same_as_scalar(f, vec(16));
}

TEST(CVector, AStrideTwoLoadIsTwoLoadsAndAShuffle) {
  // B[j] = A[2j] + A[2j + 1] with A exactly as long as the last lane reads.
  const int64_t e = 37;
  Var j = make_var("j", e);
  auto f = func("stride2", {buf("A", {2 * e}), buf("B", {e})},
                make_for(j, e, ForKind::kVectorized,
                         make_store("B", j, ld("A", Expr(j) * 2) + ld("A", Expr(j) * 2 + 1))));
  std::string body = body_of(f, vec(16));
  EXPECT_NE(body.find("loom_f32x16_load_stride2"), std::string::npos) << body;
  expect_same_as_scalar(f, vec(16));
}

// B[j] = A[j] * 3 - 1 for an extent that leaves a tail.
class CVectorTail : public ::testing::TestWithParam<std::tuple<int64_t, int>> {};

TEST_P(CVectorTail, TailIsOneChunkOfTheNextPowerOfTwoWithItsExtraLanesMasked) {
  const auto [e, w] = GetParam();
  Var j = make_var("j", e);
  auto f = func("tail", {buf("A", {e}), buf("B", {e})},
                make_for(j, e, ForKind::kVectorized, make_store("B", j, ld("A", j) * 3.0f - 1.0f)));
  std::string body = body_of(f, vec(w));
  const int64_t rest = e < w ? e : e % w, start = e - rest;
  int lanes = 1;
  while (lanes < rest) lanes *= 2;
  const std::string type = "loom_f32x" + std::to_string(lanes);
  if (rest == 1) EXPECT_NE(body.find("B[" + std::to_string(start) + "] = "), std::string::npos) << body;
  else if (lanes == rest) EXPECT_NE(body.find(type + "_store(B + " + std::to_string(start) + ","), std::string::npos) << body;
  else EXPECT_NE(body.find(type + "_mstore(B + " + std::to_string(start) + ","), std::string::npos) << body;
  expect_same_as_scalar(f, vec(w));
}

INSTANTIATE_TEST_SUITE_P(Extents, CVectorTail,
                         ::testing::Values(std::make_tuple<int64_t, int>(7, 16), std::make_tuple<int64_t, int>(13, 16),
                                           std::make_tuple<int64_t, int>(37, 16), std::make_tuple<int64_t, int>(7, 8),
                                           std::make_tuple<int64_t, int>(13, 8), std::make_tuple<int64_t, int>(37, 8),
                                           std::make_tuple<int64_t, int>(20, 16), std::make_tuple<int64_t, int>(17, 16)),
                         [](const auto& info) {
                           return "extent" + std::to_string(std::get<0>(info.param)) + "_width" +
                                  std::to_string(std::get<1>(info.param));
                         });

TEST(CVector, MaskedTailLanesComputeNoTrappingDivision) {
  // 100 / (15 - j) has no zero divisor for j < 13, but the last of the
  // three lanes past the end of a 13-lane tail (16 lanes) has j = 15: it
  // must not trap, and nothing of it is stored.
  const int64_t e = 13;
  Var j = make_var("j", e);
  auto f = func("tdiv", {buf("B", {e})},
                make_for(j, e, ForKind::kVectorized,
                         make_store("B", j, cast(DType::kFloat, make_binary(ExprKind::kDiv, Expr(100), 15 - Expr(j))))));
  auto m = CompiledCModule::from_func(f, vec(16));
  std::vector<float> b(e);
  m.run({b.data()});
  for (int64_t k = 0; k < e; ++k) EXPECT_EQ(b[k], static_cast<float>(100 / (15 - k))) << k;
}

TEST(CVector, SerialLoopWithIndependentIterationsIsVectorized) {
  // B[i] = exp(A[i]) / s[0], a plain loop: vectorized as the JIT's LLVM
  // vectorizes it.
  const int64_t n = 40;
  Var i = make_var("i", n);
  auto f = func("plain", {buf("A", {n}), buf("S", {1}), buf("B", {n})},
                make_for(i, n, ForKind::kSerial, make_store("B", i, exp(ld("A", i)) / ld("S", 0))));
  std::string body = body_of(f, vec(16));
  EXPECT_NE(body.find("loom_f32x16_exp("), std::string::npos) << body;
  expect_same_as_scalar(f, vec(16));
}

TEST(CVector, SerialLoopWithACarriedDependenceStaysScalar) {
  const int64_t n = 40;
  Var i = make_var("i", n - 1);
  auto f = func("carried", {buf("A", {n})},
                make_for(i, n - 1, ForKind::kSerial, make_store("A", Expr(i) + 1, ld("A", i) * 0.5f + 1.0f)));
  std::string body = body_of(f, vec(16));
  EXPECT_EQ(body.find("loom_f32x"), std::string::npos) << body;
  expect_same_as_scalar(f, vec(16));
}

TEST(CVector, VaryingGuardMasksTheStoresOfEachBranch) {
  const int64_t rows = 4, e = 19;
  Var i = make_var("i", rows), j = make_var("j", e);
  Expr idx = Expr(i) * e + j;
  Stmt body = make_if(Expr(j) < 7 + Expr(i), make_store("B", idx, ld("A", idx) * 2.0f),
                      make_if(Expr(j) % 2 == 0, make_store("B", idx, Expr(-1.0f))));
  auto f = func("guard", {buf("A", {rows, e}), buf("B", {rows, e})},
                make_for(i, rows, ForKind::kSerial, make_for(j, e, ForKind::kVectorized, body)));
  EXPECT_NE(body_of(f, vec(16)).find("loom_f32x16_mstore("), std::string::npos);
  auto before = random_args(f);
  auto d = run(f, vec(16));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < e; ++c) {
      const float want = c < 7 + r ? d[0][r * e + c] * 2.f : (c % 2 == 0 ? -1.f : before[1][r * e + c]);
      ASSERT_EQ(d[1][r * e + c], want) << r << "," << c;
    }
}

// `count` floats at the start (or end) of a read-write page whose neighbour
// before (after) it is PROT_NONE: reading past them faults.
class GuardedPages {
 public:
  GuardedPages() : page_(sysconf(_SC_PAGESIZE)) {
    base_ = static_cast<char*>(mmap(nullptr, 3 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (base_ == MAP_FAILED) throw LoomError("mmap failed");
    mprotect(base_, page_, PROT_NONE);
    mprotect(base_ + 2 * page_, page_, PROT_NONE);
  }
  ~GuardedPages() { munmap(base_, 3 * page_); }
  float* after_guard() { return reinterpret_cast<float*>(base_ + page_); }
  float* before_guard(int64_t count) { return reinterpret_cast<float*>(base_ + 2 * page_) - count; }

 private:
  long page_;
  char* base_;
};

TEST(CVector, MaskedLoadsNeverTouchInactiveLanes) {
  // B[j] = j < e-1 ? A[j+1] : 5 reads one past A in the last lane, and
  // C[j] = j >= 1 ? L[j-1] : 0 one before L in the first: both lanes are
  // inactive, and A and L border on unreadable pages.
  for (int w : {16, 8}) {
    for (int64_t e : {16, 19, 32}) {
      Var j = make_var("j", e);
      auto f = func("mselect", {buf("A", {e}), buf("L", {e}), buf("B", {e}), buf("C", {e})},
                    make_for(j, e, ForKind::kVectorized,
                             make_seq({make_store("B", j, select(Expr(j) < e - 1, ld("A", Expr(j) + 1), Expr(5.0f))),
                                       make_store("C", j, select(Expr(j) >= 1, ld("L", Expr(j) - 1), Expr(0.0f)))})));
      auto m = CompiledCModule::from_func(f, vec(w));
      GuardedPages pages;
      float* a = pages.before_guard(e);
      float* l = pages.after_guard();
      std::vector<float> b(e), c(e);
      for (int64_t k = 0; k < e; ++k) a[k] = l[k] = 1.f + k;
      m.run({a, l, b.data(), c.data()});
      for (int64_t k = 0; k < e; ++k) {
        ASSERT_EQ(b[k], k < e - 1 ? a[k + 1] : 5.f) << "width " << w << " extent " << e << " lane " << k;
        ASSERT_EQ(c[k], k >= 1 ? l[k - 1] : 0.f) << "width " << w << " extent " << e << " lane " << k;
      }
    }
  }
}

TEST(CVector, UniformLoadUnderAMaskRunsOnlyWhenALaneIsActive) {
  // Row i reads A[i] where i*16 + j < 40: no lane of row 3 is active, and
  // A[3] lies on an unreadable page.
  const int64_t rows = 4, e = 16;
  Var i = make_var("i", rows), j = make_var("j", e);
  Expr idx = Expr(i) * e + j;
  auto f = func("uguard", {buf("A", {3}), buf("B", {rows, e})},
                make_for(i, rows, ForKind::kSerial,
                         make_for(j, e, ForKind::kVectorized, make_if(idx < 40, make_store("B", idx, ld("A", i))))));
  auto m = CompiledCModule::from_func(f, vec(16));
  GuardedPages pages;
  float* a = pages.before_guard(3);
  for (int k = 0; k < 3; ++k) a[k] = 10.f + k;
  std::vector<float> b(rows * e, -1.f);
  m.run({a, b.data()});
  for (int64_t k = 0; k < rows * e; ++k) ASSERT_EQ(b[k], k < 40 ? a[k / e] : -1.f) << k;
}

int64_t floordiv_ref(int64_t a, int64_t b) { return static_cast<int64_t>(std::floor(double(a) / double(b))); }
int64_t floormod_ref(int64_t a, int64_t b) { return a - floordiv_ref(a, b) * b; }

TEST(CVector, FloorDivisionAndModuloOfNegativeLanes) {
  const int64_t n = 20;
  Var j = make_var("j", n);
  Expr x = Expr(j) - 10;         // in [-10, 9]
  Expr d = Expr(j) % 3 + 1;      // a varying divisor in [1, 3]
  const std::vector<std::pair<Expr, int64_t>> divisors = {{int_imm(3), 3}, {int_imm(-4), -4}, {int_imm(4), 4}};
  std::vector<Stmt> stores;
  std::vector<Buffer> bufs;
  for (size_t k = 0; k < divisors.size(); ++k) {
    const std::string q = "Q" + std::to_string(k), r = "R" + std::to_string(k);
    stores.push_back(make_store(q, j, cast(DType::kFloat, make_binary(ExprKind::kDiv, x, divisors[k].first))));
    stores.push_back(make_store(r, j, cast(DType::kFloat, make_binary(ExprKind::kMod, x, divisors[k].first))));
    bufs.push_back(buf(q, {n}));
    bufs.push_back(buf(r, {n}));
  }
  stores.push_back(make_store("QV", j, cast(DType::kFloat, make_binary(ExprKind::kDiv, x, -d))));
  stores.push_back(make_store("RV", j, cast(DType::kFloat, make_binary(ExprKind::kMod, x, -d))));
  bufs.push_back(buf("QV", {n}));
  bufs.push_back(buf("RV", {n}));
  auto f = func("floordivmod", bufs, make_for(j, n, ForKind::kVectorized, make_seq(stores)));
  auto out = run(f, vec(16));
  for (int64_t k = 0; k < n; ++k) {
    const int64_t v = k - 10, dv = -(k % 3 + 1);
    for (size_t i = 0; i < divisors.size(); ++i) {
      EXPECT_EQ(out[2 * i][k], floordiv_ref(v, divisors[i].second)) << v << " / " << divisors[i].second;
      EXPECT_EQ(out[2 * i + 1][k], floormod_ref(v, divisors[i].second)) << v << " % " << divisors[i].second;
    }
    EXPECT_EQ(out[6][k], floordiv_ref(v, dv)) << v << " / " << dv;
    EXPECT_EQ(out[7][k], floormod_ref(v, dv)) << v << " % " << dv;
  }
}

TEST(CVector, CastsComparisonsMinMaxAndSelects) {
  const int64_t e = 21;
  Var j = make_var("j", e);
  Expr a = ld("A", j);
  std::vector<Expr> vals = {cast(DType::kFloat, Expr(j) / 4 + Expr(j) % 4 * 10 + min(Expr(j), 5)),
                            cast(DType::kFloat, cast(DType::kInt, a * 10.0f)),
                            cast(DType::kFloat, a > 0.0f && Expr(j) % 3 != 0),
                            max(a, Expr(0.0f)), min(a, Expr(0.25f)),
                            select(a > 0.0f, a, a * 0.1f),
                            select(Expr(j) < 11, cast(DType::kFloat, max(Expr(j) - 4, Expr(2))), fabs(a))};
  std::vector<Stmt> stores;
  for (size_t r = 0; r < vals.size(); ++r) stores.push_back(make_store("B", Expr(int64_t(r) * e) + j, vals[r]));
  auto f = func("vmisc", {buf("A", {e}), buf("B", {int64_t(vals.size()), e})},
                make_for(j, e, ForKind::kVectorized, make_seq(stores)));
  expect_same_as_scalar(f, vec(16));
  expect_same_as_scalar(f, vec(4));
}

TEST(CVector, AScalarSquareRootIsTheErrnoFreeHelper) {
  // Y[j] = X[j] * sqrt(S[0]): sqrtf may set errno, so a compiler without
  // -fno-math-errno would keep it inside the loop; the helper is hoisted.
  const int64_t n = 40;
  Var j = make_var("j", n);
  auto f = func("vsqrt", {buf("X", {n}), buf("S", {1}), buf("Y", {n})},
                make_for(j, n, ForKind::kSerial, make_store("Y", j, ld("X", j) * sqrt(fabs(ld("S", 0))))));
  std::string body = body_of(f, vec(16));
  EXPECT_NE(body.find("loom_f32_sqrt("), std::string::npos) << body;
  EXPECT_EQ(body.find("sqrtf("), std::string::npos) << body;
  expect_same_as_scalar(f, vec(16));
}

TEST(CVector, ReductionIntoOneElementStaysScalar) {
  const int64_t e = 37;
  Var k = make_var("k", e);
  auto f = func("vsum", {buf("A", {e}), buf("S", {1})},
                make_for(k, e, ForKind::kVectorized, make_store("S", 0, ld("S", 0) + ld("A", k))));
  std::string body = body_of(f, vec(16));
  EXPECT_EQ(body.find("loom_f32x"), std::string::npos) << body;
  expect_same_as_scalar(f, vec(16));
}

// Every math function over 2^16 floats spread over all bit patterns and the
// special values: within its ulp bound of the correctly rounded result
// (tests/codegen/test_vector_math.cc's bounds for the JIT) and within one
// ulp of what the JIT computes.
class CVectorMath : public ::testing::TestWithParam<int> {};

TEST_P(CVectorMath, MatchesTheJitWithinItsUlpBounds) {
  const int w = GetParam();
  const auto cases = math_cases::cases();
  std::vector<float> in;
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 65537) in.push_back(math_cases::from_bits(uint32_t(b)));
  in.insert(in.end(), std::begin(math_cases::kSpecial), std::end(math_cases::kSpecial));
  const int64_t n = static_cast<int64_t>(in.size()), m = static_cast<int64_t>(cases.size());
  std::vector<Stmt> loops;
  for (int64_t c = 0; c < m; ++c) {
    Var i = make_var("i", n);
    loops.push_back(make_for(i, n, ForKind::kVectorized, make_store("B", Expr(c * n) + i, cases[c].expr(ld("A", i)))));
  }
  auto f = func("vmath", {buf("A", {n}), buf("B", {m, n})}, make_seq(loops));
  LLVMCompileOptions lo;
  lo.vector_width = w;
  auto jit = compile_llvm(f, lo);
  auto c_unit = CompiledCModule::from_func(f, vec(w));
  std::vector<float> want(m * n), got(m * n);
  (*jit)({in.data(), want.data()});
  c_unit.run({in.data(), got.data()});
  for (int64_t c = 0; c < m; ++c) {
    double worst = 0, apart = 0;
    for (int64_t k = 0; k < n; ++k) {
      const float g = got[c * n + k];
      worst = std::max(worst, math_cases::ulp_error(g, cases[c].reference(in[k])));
      apart = std::max(apart, math_cases::ulp_error(g, want[c * n + k]));
    }
    EXPECT_LE(worst, cases[c].max_ulp) << cases[c].name << " width " << w;
    EXPECT_LE(apart, 1.0) << cases[c].name << " width " << w << ": ulp from the JIT's result";
  }
}

INSTANTIATE_TEST_SUITE_P(Widths, CVectorMath, ::testing::Values(16, 8, 4, 2),
                         [](const auto& info) { return "width" + std::to_string(info.param); });

TEST(CVector, VectorMathIsInlineCode) {
  const int64_t n = 64;
  Var i = make_var("i", n);
  auto f = func("vexp", {buf("A", {n}), buf("B", {n})},
                make_for(i, n, ForKind::kVectorized, make_store("B", i, exp(ld("A", i)) + tanh(ld("A", i)))));
  std::string body = body_of(f, vec(16));
  EXPECT_NE(body.find("loom_f32x16_exp("), std::string::npos) << body;
  EXPECT_EQ(body.find("expf("), std::string::npos) << body;
}

// A unit using every kind of vector code: masks, gathers, vector math, a
// varying divisor, in every width.
LoweredFunc everything(int64_t e) {
  Var j = make_var("j", e);
  Expr a = ld("A", j);
  Stmt body = make_seq(
      {make_store("B", j, select(a > 0.0f, exp(a) + log(a + 2.0f), tanh(a) * erf(a) + sigmoid(a))),
       make_if(Expr(j) % 3 == 1, make_store("C", (Expr(j) * 7) % e, pow(fabs(a), Expr(1.5f)) + sqrt(fabs(a))),
               make_store("C", (Expr(j) * 7) % e, cast(DType::kFloat, (Expr(j) - 9) / (Expr(j) % 4 + 1)))),
       make_store("D", j, ld("A", (Expr(j) * 5) % e) + cast(DType::kFloat, Expr(j) % 5) * pow(a, Expr(0.7f)))});
  return func("everything", {buf("A", {e}), buf("B", {e}), buf("C", {e}), buf("D", {e})},
              make_for(j, e, ForKind::kVectorized, body));
}

TEST(CVector, UnitsCompileWithoutWarnings) {
  std::vector<std::string> compilers = {"gcc"};
  if (std::system("clang --version > /dev/null 2>&1") == 0) compilers.push_back("clang");
  for (const auto& compiler : compilers) {
    for (int w : {2, 4, 8, 16}) {
      CCompileOptions cc;
      cc.compiler = compiler;
      cc.extra_flags = {"-Wall", "-Wextra", "-Werror"};
      EXPECT_NO_THROW(CompiledCModule::from_func(everything(31), vec(w), cc)) << compiler << " width " << w;
    }
  }
}

TEST(CVector, GenericFormsWithoutTheTargetsIntrinsics) {
  // Without -march=native (x86-64's baseline: SSE2 only) every helper but a
  // few 4-lane ones takes its portable form.
  CCompileOptions cc;
  cc.march_native = false;
  cc.extra_flags = {"-Wall", "-Werror"};
  for (int w : {4, 8, 16}) expect_same_as_scalar(everything(31), vec(w), cc);
}

TEST(CVector, InvalidVectorWidthThrows) {
  Var i = make_var("i", 4);
  auto f = func("bad", {buf("B", {4})}, make_for(i, 4, ForKind::kVectorized, make_store("B", i, Expr(1.0f))));
  EXPECT_THROW(emit_c_source(f, vec(3)), LoomError);
}

}  // namespace
}  // namespace loom
