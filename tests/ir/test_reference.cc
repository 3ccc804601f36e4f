#include <gtest/gtest.h>

#include <cmath>

#include "ir/reference.h"
#include "ir/workload_registry.h"

namespace loom {
namespace {

using nlohmann::json;

// ---- the interpreter on hand-made DAGs -----------------------------------

TEST(Reference, MatmulMatchesNaiveLoop) {
  Tensor A = placeholder({3, 4}, "A");
  Tensor B = placeholder({4, 5}, "B");
  Var k = reduce_axis(4, "k");
  Tensor C = compute({3, 5}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  ComputeDAG dag({A, B}, {C});
  auto in = random_inputs(dag, 1);
  auto out = evaluate_reference(dag, in);
  TensorData want(15);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) {
      double s = 0;
      for (int kk = 0; kk < 4; ++kk) s += double(in["A"][i * 4 + kk]) * in["B"][kk * 5 + j];
      want[i * 5 + j] = float(s);
    }
  EXPECT_EQ(compare_outputs(out.at("C"), want, 1e-6, 1e-7), "");
}

TEST(Reference, ReturnsInputsAlongWithComputedTensors) {
  Tensor A = placeholder({4}, "A");
  Tensor B = compute({4}, [&](Var i) { return A(i) * 2.0f; }, "B");
  ComputeDAG dag({A}, {B});
  auto in = random_inputs(dag, 3);
  auto out = evaluate_reference(dag, in);
  EXPECT_EQ(out.at("A"), in.at("A"));
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(out.at("B")[i], 2 * in.at("A")[i]);
}

TEST(Reference, SelectDoesNotEvaluateTheUntakenBranch) {
  Tensor A = placeholder({4}, "A");
  Tensor B = compute({6}, [&](Var i) { return select(i < 4, A(i), Expr(-1.0f)); }, "B");
  ComputeDAG dag({A}, {B});
  auto out = evaluate_reference(dag, {{"A", {1, 2, 3, 4}}});
  EXPECT_EQ(out.at("B"), (TensorData{1, 2, 3, 4, -1, -1}));
}

TEST(Reference, OutOfBoundsLoadThrows) {
  Tensor A = placeholder({4}, "A");
  Tensor B = compute({5}, [&](Var i) { return A(i); }, "B");
  ComputeDAG dag({A}, {B});
  try {
    evaluate_reference(dag, {{"A", {1, 2, 3, 4}}});
    FAIL() << "no error";
  } catch (const LoomError& e) {
    EXPECT_NE(std::string(e.what()).find("out of bounds"), std::string::npos) << e.what();
  }
}

TEST(Reference, OutOfBoundsLoadInsideReductionThrows) {
  Tensor A = placeholder({3}, "A");
  Var k = reduce_axis(3, "rk");
  Tensor C = compute({2}, [&](Var i) { return sum(A(i + k), {k}); }, "C");
  ComputeDAG dag({A}, {C});
  EXPECT_THROW(evaluate_reference(dag, {{"A", {1, 2, 3}}}), LoomError);
}

TEST(Reference, ReductionWithNonAffineIndexMatchesLoop) {
  Tensor A = placeholder({4}, "A");
  Var k = reduce_axis(5, "rk");
  Tensor C = compute({2}, [&](Var i) { return sum(A((k * k + i) % 4) * 2.0f, {k}); }, "C");
  ComputeDAG dag({A}, {C});
  TensorData a = {1, 10, 100, 1000};
  auto out = evaluate_reference(dag, {{"A", a}});
  for (int i = 0; i < 2; ++i) {
    double s = 0;
    for (int kk = 0; kk < 5; ++kk) s += 2 * a[(kk * kk + i) % 4];
    EXPECT_FLOAT_EQ(out.at("C")[i], float(s));
  }
}

TEST(Reference, IntegerDivisionAndModuloAreFloor) {
  Tensor A = placeholder({1}, "A");
  Tensor Q = compute({7}, [&](Var i) { return cast(DType::kFloat, (i - 3) / 2) + A(0) * 0.0f; },
                     "Q");
  Tensor R = compute({7}, [&](Var i) { return cast(DType::kFloat, (i - 3) % 2) + A(0) * 0.0f; },
                     "R");
  ComputeDAG dag({A}, {Q, R});
  auto out = evaluate_reference(dag, {{"A", {0}}});
  EXPECT_EQ(out.at("Q"), (TensorData{-2, -1, -1, 0, 0, 1, 1}));
  EXPECT_EQ(out.at("R"), (TensorData{1, 0, 1, 0, 1, 0, 1}));
}

TEST(Reference, MathFunctionsMatchTheStandardLibrary) {
  Tensor A = placeholder({5}, "A");
  std::vector<std::pair<std::string, Tensor>> fns = {
      {"exp", compute({5}, [&](Var i) { return exp(A(i)); }, "t_exp")},
      {"log", compute({5}, [&](Var i) { return log(fabs(A(i)) + 1.0f); }, "t_log")},
      {"sqrt", compute({5}, [&](Var i) { return sqrt(fabs(A(i))); }, "t_sqrt")},
      {"tanh", compute({5}, [&](Var i) { return tanh(A(i)); }, "t_tanh")},
      {"erf", compute({5}, [&](Var i) { return erf(A(i)); }, "t_erf")},
      {"sigmoid", compute({5}, [&](Var i) { return sigmoid(A(i)); }, "t_sigmoid")},
      {"pow", compute({5}, [&](Var i) { return pow(fabs(A(i)), Expr(1.5f)); }, "t_pow")}};
  std::vector<Tensor> outs;
  for (auto& f : fns) outs.push_back(f.second);
  ComputeDAG dag({A}, outs);
  TensorData a = {-0.9f, -0.2f, 0.0f, 0.3f, 0.8f};
  auto out = evaluate_reference(dag, {{"A", a}});
  for (int i = 0; i < 5; ++i) {
    double x = a[i];
    EXPECT_FLOAT_EQ(out.at("t_exp")[i], float(std::exp(x)));
    EXPECT_FLOAT_EQ(out.at("t_log")[i], float(std::log(std::fabs(x) + 1)));
    EXPECT_FLOAT_EQ(out.at("t_sqrt")[i], float(std::sqrt(std::fabs(x))));
    EXPECT_FLOAT_EQ(out.at("t_tanh")[i], float(std::tanh(x)));
    EXPECT_FLOAT_EQ(out.at("t_erf")[i], float(std::erf(x)));
    EXPECT_FLOAT_EQ(out.at("t_sigmoid")[i], float(1 / (1 + std::exp(-x))));
    EXPECT_FLOAT_EQ(out.at("t_pow")[i], float(std::pow(std::fabs(x), 1.5)));
  }
}

TEST(Reference, MaxReductionOfNegativeValues) {
  Tensor A = placeholder({2, 3}, "A");
  Var k = reduce_axis(3, "k");
  Tensor M = compute({2}, [&](Var i) { return max_reduce(A(i, k), {k}); }, "M");
  ComputeDAG dag({A}, {M});
  auto out = evaluate_reference(dag, {{"A", {-5, -2, -3, -0.5f, -7, -1}}});
  EXPECT_EQ(out.at("M"), (TensorData{-2, -0.5f}));
}

TEST(Reference, MissingOrMisSizedInputThrows) {
  Tensor A = placeholder({4}, "A");
  Tensor B = compute({4}, [&](Var i) { return A(i) + 1.0f; }, "B");
  ComputeDAG dag({A}, {B});
  EXPECT_THROW(evaluate_reference(dag, {}), LoomError);
  EXPECT_THROW(evaluate_reference(dag, {{"A", {1, 2, 3}}}), LoomError);
}

// ---- random inputs and comparison ----------------------------------------

TEST(RandomInputs, AreDeterministicAndInRange) {
  ComputeDAG dag = make_workload("matmul", {{"M", 8}, {"N", 9}, {"K", 10}});
  auto a = random_inputs(dag, 42), b = random_inputs(dag, 42);
  EXPECT_EQ(a, b);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a.at("A").size(), 80u);
  for (const auto& kv : a)
    for (float v : kv.second) {
      EXPECT_GE(v, -1.0f);
      EXPECT_LT(v, 1.0f);
    }
}

TEST(RandomInputs, DifferBetweenSeedsAndTensors) {
  ComputeDAG dag = make_workload("matmul", {{"M", 8}, {"N", 8}, {"K", 8}});
  auto a = random_inputs(dag, 1), b = random_inputs(dag, 2);
  EXPECT_NE(a.at("A"), b.at("A"));
  EXPECT_NE(a.at("A"), a.at("B"));
}

TEST(CompareOutputs, EqualWithinToleranceGivesEmptyString) {
  EXPECT_EQ(compare_outputs({1.0f, 2.0f, 0.0f}, {1.0005f, 2.0f, 5e-5f}), "");
  EXPECT_EQ(compare_outputs({NAN}, {NAN}), "");
}

TEST(CompareOutputs, MismatchNamesIndexValuesAndCount) {
  std::string msg = compare_outputs({1, 2, 3, 4}, {1, 2.5f, 3, 9});
  EXPECT_NE(msg.find("2 of 4"), std::string::npos) << msg;
  EXPECT_NE(msg.find("worst at [3]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("first at [1]"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos);
}

TEST(CompareOutputs, NaNAndSizeMismatchAreReported) {
  EXPECT_NE(compare_outputs({NAN}, {1.0f}), "");
  EXPECT_NE(compare_outputs({1.0f}, {NAN}), "");
  EXPECT_NE(compare_outputs({1.0f}, {1.0f, 2.0f}).find("size mismatch"), std::string::npos);
}

// ---- workloads against hand-written loops --------------------------------

// Direct grouped conv2d, NCHW / K(C/G)RS, zero padding.
TensorData naive_conv2d(const TensorData& X, const TensorData& W, int N, int C, int H, int Wd,
                        int K, int R, int S, int st, int pad, int dil, int G) {
  int Ho = (H + 2 * pad - dil * (R - 1) - 1) / st + 1;
  int Wo = (Wd + 2 * pad - dil * (S - 1) - 1) / st + 1;
  int Cg = C / G, Kg = K / G;
  TensorData out(size_t(N) * K * Ho * Wo);
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k)
      for (int h = 0; h < Ho; ++h)
        for (int w = 0; w < Wo; ++w) {
          double s = 0;
          for (int c = 0; c < Cg; ++c)
            for (int r = 0; r < R; ++r)
              for (int q = 0; q < S; ++q) {
                int y = h * st - pad + r * dil, x = w * st - pad + q * dil;
                if (y < 0 || y >= H || x < 0 || x >= Wd) continue;
                int ci = (k / Kg) * Cg + c;
                s += double(X[((n * C + ci) * H + y) * Wd + x]) * W[((k * Cg + c) * R + r) * S + q];
              }
          out[((n * K + k) * Ho + h) * Wo + w] = float(s);
        }
  return out;
}

void check_conv2d(const std::string& workload, int N, int C, int H, int W, int K, int R, int S,
                  int st, int pad, int dil, int G) {
  json p = {{"N", N}, {"C", C}, {"H", H}, {"W", W}, {"R", R}, {"S", S},
            {"stride", st}, {"pad", pad}, {"dilation", dil}};
  if (workload != "depthwise_conv2d") p["K"] = K;
  if (workload == "group_conv2d") p["groups"] = G;
  ComputeDAG dag = make_workload(workload, p);
  auto in = random_inputs(dag, 11);
  auto got = evaluate_reference(dag, in).at("conv");
  auto want = naive_conv2d(in.at("data"), in.at("kernel"), N, C, H, W, K, R, S, st, pad, dil, G);
  EXPECT_EQ(compare_outputs(got, want, 1e-5, 1e-6), "")
      << workload << " st=" << st << " pad=" << pad << " dil=" << dil;
}

TEST(ReferenceWorkloads, Conv2dMatchesNaiveLoopWithStridePaddingDilation) {
  check_conv2d("conv2d", 2, 3, 7, 6, 4, 3, 2, 1, 0, 1, 1);
  check_conv2d("conv2d", 1, 3, 7, 6, 4, 3, 3, 2, 1, 1, 1);
  check_conv2d("conv2d", 1, 2, 9, 8, 3, 3, 2, 1, 2, 2, 1);
  check_conv2d("conv2d", 1, 2, 9, 10, 3, 2, 3, 3, 1, 2, 1);
  check_conv2d("dilated_conv2d", 1, 2, 9, 8, 3, 3, 3, 1, 2, 2, 1);
}

TEST(ReferenceWorkloads, GroupAndDepthwiseConvMatchNaiveLoop) {
  check_conv2d("group_conv2d", 1, 4, 6, 5, 6, 3, 3, 1, 1, 1, 2);
  check_conv2d("group_conv2d", 2, 6, 5, 5, 3, 2, 2, 2, 1, 1, 3);
  check_conv2d("depthwise_conv2d", 1, 3, 7, 6, 3, 3, 3, 2, 1, 1, 3);
}

TEST(ReferenceWorkloads, ConvBiasReluAddsBiasAndClamps) {
  json p = {{"C", 2}, {"H", 5}, {"W", 4}, {"K", 3}, {"R", 3}, {"S", 3}, {"pad", 1}};
  ComputeDAG dag = make_workload("conv2d_bias_relu", p);
  auto in = random_inputs(dag, 5);
  auto out = evaluate_reference(dag, in);
  auto conv = naive_conv2d(in.at("data"), in.at("kernel"), 1, 2, 5, 4, 3, 3, 3, 1, 1, 1, 1);
  TensorData want(conv.size());
  for (size_t i = 0; i < conv.size(); ++i) {
    int k = int(i / 20);
    want[i] = std::max(0.0f, conv[i] + in.at("bias")[k]);
  }
  EXPECT_EQ(compare_outputs(out.at("relu"), want, 1e-5, 1e-6), "");
}

TEST(ReferenceWorkloads, TransposedConv2dMatchesScatterDefinition) {
  const int N = 1, C = 2, H = 3, W = 4, K = 3, R = 4, S = 3, st = 2, pad = 1;
  ComputeDAG dag = make_workload("transposed_conv2d", {{"N", N}, {"C", C}, {"H", H}, {"W", W},
                                                       {"K", K}, {"R", R}, {"S", S},
                                                       {"stride", st}, {"pad", pad}});
  auto in = random_inputs(dag, 9);
  auto got = evaluate_reference(dag, in).at("conv");
  const int Ho = (H - 1) * st - 2 * pad + R, Wo = (W - 1) * st - 2 * pad + S;
  std::vector<double> acc(size_t(N) * K * Ho * Wo, 0.0);
  const auto &X = in.at("data"), &Wt = in.at("kernel");
  for (int c = 0; c < C; ++c)
    for (int i = 0; i < H; ++i)
      for (int j = 0; j < W; ++j)
        for (int k = 0; k < K; ++k)
          for (int r = 0; r < R; ++r)
            for (int s = 0; s < S; ++s) {
              int h = i * st - pad + r, w = j * st - pad + s;
              if (h < 0 || h >= Ho || w < 0 || w >= Wo) continue;
              acc[(k * Ho + h) * Wo + w] +=
                  double(X[(c * H + i) * W + j]) * Wt[((c * K + k) * R + r) * S + s];
            }
  TensorData want(acc.begin(), acc.end());
  EXPECT_EQ(compare_outputs(got, want, 1e-5, 1e-6), "");
}

TEST(ReferenceWorkloads, SoftmaxRowsSumToOne) {
  ComputeDAG dag = make_workload("softmax", {{"M", 4}, {"N", 17}});
  auto in = random_inputs(dag, 3);
  for (float& v : in["X"]) v *= 20;  // large values: needs the max shift
  auto y = evaluate_reference(dag, in).at("softmax");
  for (int i = 0; i < 4; ++i) {
    double s = 0;
    for (int j = 0; j < 17; ++j) {
      EXPECT_GE(y[i * 17 + j], 0.0f);
      s += y[i * 17 + j];
    }
    EXPECT_NEAR(s, 1.0, 1e-5) << "row " << i;
  }
}

TEST(ReferenceWorkloads, NormEqualsHandComputation) {
  ComputeDAG dag = make_workload("norm", {{"M", 3}, {"N", 2}});
  auto out = evaluate_reference(dag, {{"A", {1, -2, 2, 0, -4, 0}}});
  ASSERT_EQ(out.at("norm").size(), 1u);
  EXPECT_FLOAT_EQ(out.at("norm")[0], 5.0f);  // sqrt(1 + 4 + 4 + 16)
}

TEST(ReferenceWorkloads, TbgIsBatchedQueryTimesValueTransposed) {
  const int B = 2, L = 3, H = 2, D = 4;
  ComputeDAG dag = make_workload("tbg", {{"B", B}, {"L", L}, {"H", H}, {"D", D}});
  auto in = random_inputs(dag, 4);
  auto got = evaluate_reference(dag, in).at("out");
  const auto &Q = in.at("query"), &V = in.at("value");
  TensorData want(size_t(B) * H * L * L);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < L; ++i)
        for (int j = 0; j < L; ++j) {
          double s = 0;
          for (int d = 0; d < D; ++d)
            s += double(Q[((b * L + i) * H + h) * D + d]) * V[((b * L + j) * H + h) * D + d];
          want[((b * H + h) * L + i) * L + j] = float(s);
        }
  EXPECT_EQ(compare_outputs(got, want, 1e-5, 1e-6), "");
}

}  // namespace
}  // namespace loom
