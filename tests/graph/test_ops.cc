// The ops of graph/ops.h through the reference interpreter, checked against
// hand-computed values or a straightforward loop reference written here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "graph/interpreter.h"
#include "graph/ops.h"
#include "ir/reference.h"
#include "tests/graph/graph_builder.h"

namespace loom::graph {
namespace {

using nlohmann::json;
using testing::error_of;
using testing::GraphBuilder;
using testing::one_line;

struct Operand {
  Shape shape;
  std::vector<float> data;
};

// An operand of the given shape with deterministic values in [-1, 1).
Operand pattern_operand(const Shape& shape, uint32_t seed) {
  return {shape, GraphBuilder::pattern_values(num_elements(shape), seed)};
}

struct Result {
  Shape shape;
  std::vector<float> data;
};

// One node "y" of `op` over graph inputs x0, x1, ..., interpreted.
Result run_op(const std::string& op, const std::vector<Operand>& operands, const json& attrs = json::object()) {
  GraphBuilder b;
  Values in;
  std::vector<std::string> names;
  for (size_t i = 0; i < operands.size(); ++i) {
    const std::string name = "x" + std::to_string(i);
    b.input(name, operands[i].shape);
    in[name] = operands[i].data;
    names.push_back(name);
  }
  Graph g = b.node(op, names, "y", attrs).build({"y"});
  return {g.shape("y"), interpret(g, in).at("y")};
}

// The validation error of that node.
std::string op_error(const std::string& op, const std::vector<Shape>& shapes, const json& attrs = json::object()) {
  GraphBuilder b;
  std::vector<std::string> names;
  for (size_t i = 0; i < shapes.size(); ++i) {
    names.push_back("x" + std::to_string(i));
    b.input(names.back(), shapes[i]);
  }
  Graph g = b.node(op, names, "y", attrs).raw({"y"});
  const std::string msg = error_of([&] { g.validate(); });
  EXPECT_TRUE(one_line(msg)) << msg;
  return msg;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, double rtol = 1e-5,
                  double atol = 1e-6) {
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(compare_outputs(got, want, rtol, atol), "");
}

// ---- conv2d -------------------------------------------------------------------

struct ConvParams {
  int64_t sh = 1, sw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  int64_t dh = 1, dw = 1;
  int64_t group = 1;
  json attrs() const {
    return {{"strides", {sh, sw}}, {"pads", {pt, pl, pb, pr}}, {"dilations", {dh, dw}}, {"group", group}};
  }
};

Result conv2d_reference(const Operand& x, const Operand& w, const std::vector<float>* bias, const ConvParams& p) {
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t K = w.shape[0], Cg = w.shape[1], R = w.shape[2], S = w.shape[3];
  const int64_t OH = (H + p.pt + p.pb - p.dh * (R - 1) - 1) / p.sh + 1;
  const int64_t OW = (W + p.pl + p.pr - p.dw * (S - 1) - 1) / p.sw + 1;
  const int64_t Kg = K / p.group;
  Result r{{N, K, OH, OW}, {}};
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = 0;
          const int64_t g = k / Kg;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t i = 0; i < R; ++i)
              for (int64_t j = 0; j < S; ++j) {
                const int64_t ih = oh * p.sh - p.pt + i * p.dh, iw = ow * p.sw - p.pl + j * p.dw;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += double(x.data[((n * C + g * Cg + c) * H + ih) * W + iw]) *
                       w.data[((k * Cg + c) * R + i) * S + j];
              }
          if (bias) acc += (*bias)[k];
          r.data.push_back(static_cast<float>(acc));
        }
  return r;
}

void expect_conv_matches_reference(const Operand& x, const Operand& w, const ConvParams& p,
                                   const std::vector<float>* bias = nullptr) {
  std::vector<Operand> ins = {x, w};
  if (bias) ins.push_back({{static_cast<int64_t>(bias->size())}, *bias});
  Result got = run_op("conv2d", ins, p.attrs());
  Result want = conv2d_reference(x, w, bias, p);
  EXPECT_EQ(got.shape, want.shape);
  expect_close(got.data, want.data);
}

TEST(Conv2d, TwoByTwoKernelOnThreeByThreeInputMatchesHandComputation) {
  // w = [[1, 0], [0, -1]]: each output is x[i][j] - x[i+1][j+1] = -4.
  Result r = run_op("conv2d", {{{1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}}, {{1, 1, 2, 2}, {1, 0, 0, -1}}});
  EXPECT_EQ(r.shape, (Shape{1, 1, 2, 2}));
  EXPECT_EQ(r.data, (std::vector<float>{-4, -4, -4, -4}));
}

TEST(Conv2d, StridesAndAsymmetricPadsMatchLoopReference) {
  ConvParams p;
  p.sh = 2;
  p.pt = 1, p.pl = 0, p.pb = 2, p.pr = 1;
  expect_conv_matches_reference(pattern_operand({1, 2, 5, 6}, 1), pattern_operand({3, 2, 3, 2}, 2), p);
}

TEST(Conv2d, DilationMatchesLoopReference) {
  ConvParams p;
  p.dh = 2, p.dw = 3;
  p.pt = p.pl = p.pb = p.pr = 1;
  expect_conv_matches_reference(pattern_operand({1, 1, 6, 7}, 3), pattern_operand({2, 1, 2, 2}, 4), p);
}

TEST(Conv2d, GroupsConvolveTheirOwnChannelsMatchingLoopReference) {
  ConvParams p;
  p.group = 2;
  p.pt = p.pl = p.pb = p.pr = 1;
  expect_conv_matches_reference(pattern_operand({1, 4, 4, 4}, 5), pattern_operand({6, 2, 3, 3}, 6), p);
}

TEST(Conv2d, DepthwiseScalesEachChannelByItsOwnFilter) {
  Result r = run_op("conv2d", {{{1, 2, 1, 1}, {2, 3}}, {{2, 1, 1, 1}, {10, 100}}}, {{"group", 2}});
  EXPECT_EQ(r.data, (std::vector<float>{20, 300}));
}

TEST(Conv2d, DepthwiseWithStrideAndPadsMatchesLoopReference) {
  ConvParams p;
  p.group = 3;
  p.sh = p.sw = 2;
  p.pt = p.pl = p.pb = p.pr = 1;
  expect_conv_matches_reference(pattern_operand({1, 3, 5, 5}, 7), pattern_operand({3, 1, 3, 3}, 8), p);
}

TEST(Conv2d, BiasIsAddedPerOutputChannel) {
  // A 1x1 weight of zeros: the output is the bias alone.
  Result r = run_op("conv2d", {pattern_operand({1, 3, 2, 2}, 9), {{2, 3, 1, 1}, std::vector<float>(6, 0)}, {{2}, {0.5, -1}}});
  EXPECT_EQ(r.data, (std::vector<float>{0.5, 0.5, 0.5, 0.5, -1, -1, -1, -1}));
}

TEST(Conv2d, BiasWithBatchAndPadsMatchesLoopReference) {
  ConvParams p;
  p.pt = p.pl = p.pb = p.pr = 1;
  const std::vector<float> bias = {0.25f, -0.75f, 1.5f};
  expect_conv_matches_reference(pattern_operand({2, 2, 3, 3}, 10), pattern_operand({3, 2, 2, 2}, 11), p, &bias);
}

TEST(Conv2d, WeightInputChannelsMismatchIsAnError) {
  EXPECT_EQ(op_error("conv2d", {{1, 3, 5, 5}, {4, 2, 3, 3}}),
            "node 'y' (conv2d): the weight has 2 input channels per group, the data 3 channels in 1 groups");
}

TEST(Conv2d, GroupThatDoesNotDivideTheChannelsIsAnError) {
  EXPECT_EQ(op_error("conv2d", {{1, 4, 5, 5}, {3, 2, 3, 3}}, {{"group", 2}}),
            "node 'y' (conv2d): group 2 does not divide the channels (4 in, 3 out)");
}

TEST(Conv2d, BiasOfTheWrongSizeIsAnError) {
  EXPECT_EQ(op_error("conv2d", {{1, 2, 3, 3}, {4, 2, 1, 1}, {3}}),
            "node 'y' (conv2d): the bias has shape 3, expected 4");
}

TEST(Conv2d, WindowLargerThanThePaddedInputIsAnError) {
  EXPECT_EQ(op_error("conv2d", {{1, 1, 2, 2}, {1, 1, 3, 3}}),
            "node 'y' (conv2d): the window (3) is larger than the padded input (2)");
}

TEST(Conv2d, DataOfTheWrongRankIsAnError) {
  EXPECT_EQ(op_error("conv2d", {{1, 3, 5}, {4, 3, 3, 3}}),
            "node 'y' (conv2d): the data has 3 dims (1x3x5), expected 4");
}

// ---- pooling (PyTorch's semantics, pads generalized to top/left/bottom/right) --

struct PoolParams {
  int64_t kh, kw;
  int64_t sh = 1, sw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  int64_t dh = 1, dw = 1;
  bool ceil_mode = false;
  bool count_include_pad = false;
  json attrs() const {
    return {{"kernel", {kh, kw}},        {"strides", {sh, sw}},
            {"pads", {pt, pl, pb, pr}},  {"dilations", {dh, dw}},
            {"ceil_mode", ceil_mode ? 1 : 0}, {"count_include_pad", count_include_pad ? 1 : 0}};
  }
};

// PyTorch's pooling_output_shape: rounded up in ceil_mode, but the last
// window must start inside the input or the leading padding.
int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t before, int64_t after, int64_t d, bool ceil_mode) {
  const int64_t num = in + before + after - d * (k - 1) - 1;
  int64_t out = (ceil_mode ? (num + s - 1) / s : num / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + before) --out;
  return out;
}

Result max_pool_reference(const Operand& x, const PoolParams& p) {
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t OH = pool_out(H, p.kh, p.sh, p.pt, p.pb, p.dh, p.ceil_mode);
  const int64_t OW = pool_out(W, p.kw, p.sw, p.pl, p.pr, p.dw, p.ceil_mode);
  Result r{{N, C, OH, OW}, {}};
  for (int64_t nc = 0; nc < N * C; ++nc)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        float m = -std::numeric_limits<float>::infinity();
        for (int64_t i = 0; i < p.kh; ++i)
          for (int64_t j = 0; j < p.kw; ++j) {
            const int64_t ih = oh * p.sh - p.pt + i * p.dh, iw = ow * p.sw - p.pl + j * p.dw;
            if (ih >= 0 && ih < H && iw >= 0 && iw < W) m = std::max(m, x.data[(nc * H + ih) * W + iw]);
          }
        r.data.push_back(m);
      }
  return r;
}

// PyTorch's avg_pool2d: the divisor with count_include_pad is the window
// clipped to the padded input (never past the padding), without it the
// window clipped to the input.
Result avg_pool_reference(const Operand& x, const PoolParams& p) {
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t OH = pool_out(H, p.kh, p.sh, p.pt, p.pb, 1, p.ceil_mode);
  const int64_t OW = pool_out(W, p.kw, p.sw, p.pl, p.pr, 1, p.ceil_mode);
  Result r{{N, C, OH, OW}, {}};
  for (int64_t nc = 0; nc < N * C; ++nc)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t h0 = oh * p.sh - p.pt, w0 = ow * p.sw - p.pl;
        int64_t h1 = std::min(h0 + p.kh, H + p.pb), w1 = std::min(w0 + p.kw, W + p.pr);
        const int64_t padded_size = (h1 - h0) * (w1 - w0);
        h0 = std::max<int64_t>(h0, 0), w0 = std::max<int64_t>(w0, 0);
        h1 = std::min(h1, H), w1 = std::min(w1, W);
        double s = 0;
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw) s += x.data[(nc * H + ih) * W + iw];
        r.data.push_back(static_cast<float>(s / (p.count_include_pad ? padded_size : (h1 - h0) * (w1 - w0))));
      }
  return r;
}

TEST(MaxPool2d, PaddingNeverWinsOverNegativeInputs) {
  PoolParams p{2, 2};
  p.pt = p.pl = p.pb = p.pr = 1;
  Result r = run_op("max_pool2d", {{{1, 1, 2, 2}, {-1, -2, -3, -4}}}, p.attrs());
  EXPECT_EQ(r.shape, (Shape{1, 1, 3, 3}));
  EXPECT_EQ(r.data, (std::vector<float>{-1, -1, -2, -1, -1, -2, -3, -3, -4}));
}

TEST(MaxPool2d, StridesAndAsymmetricPadsMatchLoopReference) {
  PoolParams p{3, 3};
  p.sh = p.sw = 2;
  p.pt = 1, p.pl = 0, p.pb = 1, p.pr = 1;
  Operand x = pattern_operand({1, 2, 5, 6}, 12);
  Result got = run_op("max_pool2d", {x}, p.attrs());
  Result want = max_pool_reference(x, p);
  EXPECT_EQ(got.shape, want.shape);
  EXPECT_EQ(got.data, want.data);
}

TEST(MaxPool2d, DilationMatchesLoopReference) {
  PoolParams p{2, 2};
  p.dh = p.dw = 2;
  p.pt = p.pl = p.pb = p.pr = 1;
  Operand x = pattern_operand({1, 1, 5, 5}, 13);
  Result got = run_op("max_pool2d", {x}, p.attrs());
  Result want = max_pool_reference(x, p);
  EXPECT_EQ(got.shape, want.shape);
  EXPECT_EQ(got.data, want.data);
}

TEST(MaxPool2d, FloorModeDropsThePartialWindow) {
  PoolParams p{2, 2};
  p.sh = p.sw = 2;
  std::vector<float> x(25);
  for (int i = 0; i < 25; ++i) x[i] = static_cast<float>(i);
  Result r = run_op("max_pool2d", {{{1, 1, 5, 5}, x}}, p.attrs());
  EXPECT_EQ(r.shape, (Shape{1, 1, 2, 2}));
  EXPECT_EQ(r.data, (std::vector<float>{6, 8, 16, 18}));
}

TEST(MaxPool2d, CeilModeAddsThePartialWindowStartingInsideTheInput) {
  PoolParams p{2, 2};
  p.sh = p.sw = 2;
  p.ceil_mode = true;
  std::vector<float> x(25);
  for (int i = 0; i < 25; ++i) x[i] = static_cast<float>(i);
  Result r = run_op("max_pool2d", {{{1, 1, 5, 5}, x}}, p.attrs());
  EXPECT_EQ(r.shape, (Shape{1, 1, 3, 3}));
  EXPECT_EQ(r.data, (std::vector<float>{6, 8, 9, 16, 18, 19, 21, 23, 24}));
}

TEST(MaxPool2d, CeilModeDropsAWindowThatWouldStartInTheTrailingPadding) {
  // Width 5, pads 1 + 1, kernel 2, stride 3: windows start at padded 0 and
  // 3; one at 6 would start in the trailing padding.
  PoolParams p{1, 2};
  p.sw = 3;
  p.pl = p.pr = 1;
  p.ceil_mode = true;
  Operand x = pattern_operand({1, 1, 1, 5}, 14);
  Result got = run_op("max_pool2d", {x}, p.attrs());
  EXPECT_EQ(got.shape, (Shape{1, 1, 1, 2}));
  EXPECT_EQ(got.data, max_pool_reference(x, p).data);
}

TEST(AvgPool2d, WithoutCountIncludePadDividesByTheInputElementsInTheWindow) {
  PoolParams p{3, 3};
  p.pt = p.pl = p.pb = p.pr = 1;
  Result r = run_op("avg_pool2d", {{{1, 1, 3, 3}, std::vector<float>(9, 1)}}, p.attrs());
  EXPECT_EQ(r.shape, (Shape{1, 1, 3, 3}));
  expect_close(r.data, std::vector<float>(9, 1));
}

TEST(AvgPool2d, WithCountIncludePadDividesByTheWholeWindow) {
  PoolParams p{3, 3};
  p.pt = p.pl = p.pb = p.pr = 1;
  p.count_include_pad = true;
  Result r = run_op("avg_pool2d", {{{1, 1, 3, 3}, std::vector<float>(9, 1)}}, p.attrs());
  const float c = 4.0f / 9, e = 6.0f / 9;
  expect_close(r.data, {c, e, c, e, 1, e, c, e, c});
}

// x = [1, 2, 3, 4] (width 4), kernel 3, stride 2, pads 1 + 1, ceil_mode:
// windows at input columns [-1, 2), [1, 4) and [3, 6), the last reaching one
// column past the padding.
PoolParams ceil_avg_params(bool include_pad) {
  PoolParams p{1, 3};
  p.sw = 2;
  p.pl = p.pr = 1;
  p.ceil_mode = true;
  p.count_include_pad = include_pad;
  return p;
}

TEST(AvgPool2d, CeilModeWithCountIncludePadCountsThePaddingButNotPastIt) {
  Result r = run_op("avg_pool2d", {{{1, 1, 1, 4}, {1, 2, 3, 4}}}, ceil_avg_params(true).attrs());
  EXPECT_EQ(r.shape, (Shape{1, 1, 1, 3}));
  expect_close(r.data, {1, 3, 2});  // (0+1+2)/3, (2+3+4)/3, (4+0)/2
}

TEST(AvgPool2d, CeilModeWithoutCountIncludePadCountsTheInputOnly) {
  Result r = run_op("avg_pool2d", {{{1, 1, 1, 4}, {1, 2, 3, 4}}}, ceil_avg_params(false).attrs());
  expect_close(r.data, {1.5, 3, 4});  // (1+2)/2, (2+3+4)/3, 4/1
}

TEST(AvgPool2d, EveryCeilModeAndCountIncludePadMatchesLoopReference) {
  Operand x = pattern_operand({1, 2, 6, 6}, 15);
  for (bool ceil_mode : {false, true})
    for (bool include_pad : {false, true}) {
      SCOPED_TRACE("ceil_mode " + std::to_string(ceil_mode) + ", count_include_pad " + std::to_string(include_pad));
      PoolParams p{3, 2};
      p.sh = 2, p.sw = 2;
      p.pt = 1, p.pl = 1, p.pb = 1, p.pr = 0;  // ceil_mode adds a row and a column
      p.ceil_mode = ceil_mode;
      p.count_include_pad = include_pad;
      Result got = run_op("avg_pool2d", {x}, p.attrs());
      Result want = avg_pool_reference(x, p);
      EXPECT_EQ(got.shape, want.shape);
      expect_close(got.data, want.data);
    }
}

TEST(AvgPool2d, DilationOtherThanOneIsRefusedByValidation) {
  EXPECT_EQ(op_error("avg_pool2d", {{1, 1, 5, 5}}, {{"kernel", {2, 2}}, {"dilations", {2, 2}}}),
            "node 'y' (avg_pool2d): attribute 'dilations': avg_pool2d supports only 1");
}

TEST(MaxPool2d, KernelOfTheWrongLengthIsAnError) {
  EXPECT_EQ(op_error("max_pool2d", {{1, 1, 5, 5}}, {{"kernel", {2}}}),
            "node 'y' (max_pool2d): attribute 'kernel': expected 2 values, got 1");
}

TEST(GlobalAvgPool2d, MeansOverTheSpatialDims) {
  Result r = run_op("global_avg_pool2d", {{{1, 2, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40}}});
  EXPECT_EQ(r.shape, (Shape{1, 2, 1, 1}));
  expect_close(r.data, {2.5, 25});
}

// ---- normalization and softmax --------------------------------------------------

TEST(BatchNorm, NormalizesScalesAndShiftsEachChannel) {
  // Channel 0: (x - 1.5) / 0.5 * 2 + 0.1; channel 1: (x - 3) / 2 * 0.5 - 1.
  Result r = run_op("batch_norm",
                    {{{1, 2, 1, 2}, {1, 2, 3, 4}}, {{2}, {2, 0.5}}, {{2}, {0.1f, -1}}, {{2}, {1.5, 3}}, {{2}, {0.25, 4}}},
                    {{"epsilon", 0.0}});
  EXPECT_EQ(r.shape, (Shape{1, 2, 1, 2}));
  expect_close(r.data, {-1.9f, 2.1f, -1, -0.75f});
}

TEST(BatchNorm, EpsilonIsAddedToTheVariance) {
  Result r = run_op("batch_norm", {{{1, 1, 1, 1}, {3}}, {{1}, {1}}, {{1}, {0}}, {{1}, {1}}, {{1}, {0}}},
                    {{"epsilon", 4.0}});
  expect_close(r.data, {1});  // (3 - 1) / sqrt(0 + 4)
}

TEST(BatchNorm, ParameterOfTheWrongSizeIsAnError) {
  EXPECT_EQ(op_error("batch_norm", {{1, 2, 3, 3}, {2}, {2}, {3}, {2}}),
            "node 'y' (batch_norm): input 3 has shape 3, expected 2 (the channels)");
}

// Softmax of a [A, B, C] tensor along axis 1.
std::vector<float> softmax_middle_reference(const Operand& x) {
  const int64_t A = x.shape[0], B = x.shape[1], C = x.shape[2];
  std::vector<float> out(x.data.size());
  for (int64_t a = 0; a < A; ++a)
    for (int64_t c = 0; c < C; ++c) {
      double m = -1e30, s = 0;
      for (int64_t b = 0; b < B; ++b) m = std::max<double>(m, x.data[(a * B + b) * C + c]);
      for (int64_t b = 0; b < B; ++b) s += std::exp(x.data[(a * B + b) * C + c] - m);
      for (int64_t b = 0; b < B; ++b)
        out[(a * B + b) * C + c] = static_cast<float>(std::exp(x.data[(a * B + b) * C + c] - m) / s);
    }
  return out;
}

TEST(Softmax, AlongAMiddleAxisMatchesLoopReference) {
  Operand x = pattern_operand({2, 3, 2}, 16);
  Result r = run_op("softmax", {x}, {{"axis", 1}});
  EXPECT_EQ(r.shape, x.shape);
  expect_close(r.data, softmax_middle_reference(x));
}

TEST(Softmax, NegativeAxisCountsFromTheEnd) {
  Operand x = pattern_operand({2, 3, 2}, 17);
  expect_close(run_op("softmax", {x}, {{"axis", -2}}).data, softmax_middle_reference(x));
}

TEST(Softmax, DefaultAxisIsTheLastAndLargeInputsDoNotOverflow) {
  Result r = run_op("softmax", {{{1, 2}, {1000, 1001}}});
  const double e = std::exp(1.0);
  expect_close(r.data, {static_cast<float>(1 / (1 + e)), static_cast<float>(e / (1 + e))});
}

TEST(Softmax, AxisOutOfRangeIsAnError) {
  EXPECT_EQ(op_error("softmax", {{2, 3}}, {{"axis", 2}}), "node 'y' (softmax): axis 2 is out of range for 2 dims");
}

// Layer norm of x over its dims from `axis` on; scale and bias indexed by
// the position within the trailing `param_size` normalized elements.
std::vector<float> layer_norm_reference(const Operand& x, int64_t axis, const std::vector<float>& scale,
                                        const std::vector<float>* bias, double eps) {
  int64_t inner = 1;
  for (size_t d = axis; d < x.shape.size(); ++d) inner *= x.shape[d];
  const int64_t outer = num_elements(x.shape) / inner, P = static_cast<int64_t>(scale.size());
  std::vector<float> out(x.data.size());
  for (int64_t o = 0; o < outer; ++o) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < inner; ++i) mean += x.data[o * inner + i];
    mean /= inner;
    for (int64_t i = 0; i < inner; ++i) var += (x.data[o * inner + i] - mean) * (x.data[o * inner + i] - mean);
    var /= inner;
    for (int64_t i = 0; i < inner; ++i) {
      double y = (x.data[o * inner + i] - mean) / std::sqrt(var + eps) * scale[i % P];
      if (bias) y += (*bias)[i % P];
      out[o * inner + i] = static_cast<float>(y);
    }
  }
  return out;
}

TEST(LayerNorm, LastAxisWithScaleAndBiasMatchesLoopReference) {
  Operand x = pattern_operand({2, 4}, 18);
  const std::vector<float> scale = {1, 2, -0.5f, 0.25f}, bias = {0.1f, 0.2f, 0.3f, -0.4f};
  Result r = run_op("layer_norm", {x, {{4}, scale}, {{4}, bias}});
  EXPECT_EQ(r.shape, x.shape);
  expect_close(r.data, layer_norm_reference(x, 1, scale, &bias, 1e-5));
}

TEST(LayerNorm, AxisNormalizesEveryDimFromItWithScaleBroadcast) {
  Operand x = pattern_operand({2, 2, 3}, 19);
  const std::vector<float> scale = {2, 1, 0.5f};
  Result r = run_op("layer_norm", {x, {{3}, scale}}, {{"axis", 1}, {"epsilon", 1e-3}});
  expect_close(r.data, layer_norm_reference(x, 1, scale, nullptr, 1e-3));
}

TEST(LayerNorm, ScaleWithMoreDimsThanTheNormalizedOnesIsAnError) {
  EXPECT_EQ(op_error("layer_norm", {{2, 4}, {2, 4}}),
            "node 'y' (layer_norm): input 1 has shape 2x4, which does not broadcast to the normalized dims 4");
}

// ---- gemm and matmul ------------------------------------------------------------

TEST(Gemm, PlainProductMatchesHandComputation) {
  Result r = run_op("gemm", {{{2, 3}, {1, 2, 3, 4, 5, 6}}, {{3, 2}, {1, 0, 0, 1, 1, 1}}});
  EXPECT_EQ(r.shape, (Shape{2, 2}));
  EXPECT_EQ(r.data, (std::vector<float>{4, 5, 10, 11}));
}

// alpha * op(a) op(b) + beta * c, with a stored as K x M when trans_a and b
// as N x K when trans_b; c of shape [N] or [M, 1] broadcasts.
std::vector<float> gemm_reference(const Operand& a, const Operand& b, const Operand* c, bool ta, bool tb,
                                  double alpha, double beta) {
  const int64_t M = ta ? a.shape[1] : a.shape[0], K = ta ? a.shape[0] : a.shape[1];
  const int64_t N = tb ? b.shape[0] : b.shape[1];
  std::vector<float> out;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k)
        s += double(ta ? a.data[k * M + m] : a.data[m * K + k]) * (tb ? b.data[n * K + k] : b.data[k * N + n]);
      s *= alpha;
      if (c) {
        const bool row = c->shape.size() == 1;  // [N]; else [M, 1]
        s += beta * c->data[row ? n : m];
      }
      out.push_back(static_cast<float>(s));
    }
  return out;
}

TEST(Gemm, TransposedOperandsAlphaBetaAndRowBroadcastCMatchLoopReference) {
  Operand a = pattern_operand({3, 2}, 20), b = pattern_operand({4, 3}, 21), c = pattern_operand({4}, 22);  // M 2, K 3, N 4
  Result r = run_op("gemm", {a, b, c}, {{"trans_a", 1}, {"trans_b", 1}, {"alpha", 2.0}, {"beta", 0.5}});
  EXPECT_EQ(r.shape, (Shape{2, 4}));
  expect_close(r.data, gemm_reference(a, b, &c, true, true, 2.0, 0.5));
}

TEST(Gemm, ColumnCBroadcastsAlongEachRow) {
  Operand a = pattern_operand({2, 3}, 23), b = pattern_operand({3, 4}, 24), c = pattern_operand({2, 1}, 25);
  Result r = run_op("gemm", {a, b, c}, {{"beta", -1.0}});
  expect_close(r.data, gemm_reference(a, b, &c, false, false, 1.0, -1.0));
}

TEST(Gemm, MismatchedReductionExtentsAreAnError) {
  EXPECT_EQ(op_error("gemm", {{2, 3}, {4, 5}}), "node 'y' (gemm): the reduction extents differ: a gives 3, b 4");
}

TEST(Gemm, CThatDoesNotBroadcastIsAnError) {
  EXPECT_EQ(op_error("gemm", {{2, 3}, {3, 4}, {3}}), "node 'y' (gemm): shapes 3 and 2x4 do not broadcast");
}

TEST(Matmul, BatchDimsBroadcastMatchingLoopReference) {
  Operand a = pattern_operand({2, 1, 2, 3}, 26), b = pattern_operand({3, 3, 2}, 27);  // batch [2, 1] x [3] -> [2, 3]
  Result r = run_op("matmul", {a, b});
  EXPECT_EQ(r.shape, (Shape{2, 3, 2, 2}));
  std::vector<float> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int m = 0; m < 2; ++m)
        for (int n = 0; n < 2; ++n) {
          double s = 0;
          for (int k = 0; k < 3; ++k) s += double(a.data[(i * 2 + m) * 3 + k]) * b.data[(j * 3 + k) * 2 + n];
          want.push_back(static_cast<float>(s));
        }
  expect_close(r.data, want);
}

TEST(Matmul, VectorTimesMatrixDropsTheRowDim) {
  Result r = run_op("matmul", {{{3}, {1, 2, 3}}, {{3, 2}, {1, 0, 0, 1, 1, 1}}});
  EXPECT_EQ(r.shape, (Shape{2}));
  EXPECT_EQ(r.data, (std::vector<float>{4, 5}));
}

TEST(Matmul, MatrixTimesVectorDropsTheColumnDim) {
  Result r = run_op("matmul", {{{2, 3}, {1, 2, 3, 4, 5, 6}}, {{3}, {1, 0, -1}}});
  EXPECT_EQ(r.shape, (Shape{2}));
  EXPECT_EQ(r.data, (std::vector<float>{-2, -2}));
}

TEST(Matmul, VectorTimesVectorIsAScalar) {
  Result r = run_op("matmul", {{{3}, {1, 2, 3}}, {{3}, {4, 5, 6}}});
  EXPECT_EQ(r.shape, Shape{});
  EXPECT_EQ(r.data, (std::vector<float>{32}));
}

TEST(Matmul, VectorTimesBatchedMatrixKeepsTheBatch) {
  // b[i] = i-th 3x2 block; [1, 1, 1] sums its rows.
  Result r = run_op("matmul", {{{3}, {1, 1, 1}}, {{2, 3, 2}, {1, 2, 3, 4, 5, 6, 10, 20, 30, 40, 50, 60}}});
  EXPECT_EQ(r.shape, (Shape{2, 2}));
  EXPECT_EQ(r.data, (std::vector<float>{9, 12, 90, 120}));
}

TEST(Matmul, MismatchedReductionExtentsAreAnError) {
  EXPECT_EQ(op_error("matmul", {{2, 3}, {2, 3}}), "node 'y' (matmul): the reduction extents differ: 2x3 x 2x3");
}

// ---- data movement --------------------------------------------------------------

TEST(Reshape, ZeroCopiesTheInputDimAndMinusOneIsInferred) {
  Operand x = pattern_operand({2, 3, 4}, 28);
  Result r = run_op("reshape", {x}, {{"shape", {0, -1}}});
  EXPECT_EQ(r.shape, (Shape{2, 12}));
  EXPECT_EQ(r.data, x.data);
}

TEST(Reshape, InferredLeadingDimAndCopiedMiddleDim) {
  Operand x = pattern_operand({2, 3, 4}, 29);
  Result r = run_op("reshape", {x}, {{"shape", {-1, 0, 2}}});
  EXPECT_EQ(r.shape, (Shape{4, 3, 2}));
  EXPECT_EQ(r.data, x.data);
}

TEST(Reshape, WrongElementCountIsAnError) {
  EXPECT_EQ(op_error("reshape", {{2, 3}}, {{"shape", {4, 2}}}),
            "node 'y' (reshape): cannot reshape 2x3 (6 elements) to 4x2");
}

TEST(Reshape, MinusOneThatCannotBeInferredIsAnError) {
  EXPECT_EQ(op_error("reshape", {{2, 3}}, {{"shape", {4, -1}}}), "node 'y' (reshape): cannot reshape 2x3 to [4,-1]");
}

TEST(Reshape, TwoMinusOnesAreAnError) {
  EXPECT_EQ(op_error("reshape", {{2, 3}}, {{"shape", {-1, -1}}}),
            "node 'y' (reshape): attribute 'shape': more than one -1");
}

TEST(Flatten, DefaultAxisKeepsTheFirstDim) {
  Operand x = pattern_operand({2, 3, 4}, 30);
  Result r = run_op("flatten", {x});
  EXPECT_EQ(r.shape, (Shape{2, 12}));
  EXPECT_EQ(r.data, x.data);
}

TEST(Flatten, AxisSplitsTheDimsBeforeAndFromIt) {
  Operand x = pattern_operand({2, 3, 4}, 31);
  EXPECT_EQ(run_op("flatten", {x}, {{"axis", 2}}).shape, (Shape{6, 4}));
  EXPECT_EQ(run_op("flatten", {x}, {{"axis", 0}}).shape, (Shape{1, 24}));
  EXPECT_EQ(run_op("flatten", {x}, {{"axis", -1}}).shape, (Shape{6, 4}));
  EXPECT_EQ(run_op("flatten", {x}, {{"axis", 3}}).shape, (Shape{24, 1}));
}

TEST(Transpose, OutputDimIIsInputDimPermI) {
  Operand x = pattern_operand({2, 3, 4}, 32);
  Result r = run_op("transpose", {x}, {{"perm", {2, 0, 1}}});
  EXPECT_EQ(r.shape, (Shape{4, 2, 3}));
  std::vector<float> want;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) want.push_back(x.data[(i * 3 + j) * 4 + k]);
  EXPECT_EQ(r.data, want);
}

TEST(Transpose, EmptyPermReversesTheDims) {
  Result r = run_op("transpose", {{{2, 3}, {1, 2, 3, 4, 5, 6}}});
  EXPECT_EQ(r.shape, (Shape{3, 2}));
  EXPECT_EQ(r.data, (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(Transpose, PermThatIsNoPermutationIsAnError) {
  EXPECT_EQ(op_error("transpose", {{2, 3}}, {{"perm", {0, 0}}}),
            "node 'y' (transpose): attribute 'perm' [0,0] is not a permutation of 2 dims");
}

TEST(Concat, ThreeInputsJoinAlongTheAxisInOrder) {
  Result r = run_op("concat", {{{2, 1}, {1, 2}}, {{2, 2}, {10, 11, 20, 21}}, {{2, 3}, {100, 101, 102, 200, 201, 202}}},
                    {{"axis", 1}});
  EXPECT_EQ(r.shape, (Shape{2, 6}));
  EXPECT_EQ(r.data, (std::vector<float>{1, 10, 11, 100, 101, 102, 2, 20, 21, 200, 201, 202}));
}

TEST(Concat, NegativeAxisAndTheOuterDim) {
  Result r = run_op("concat", {{{1, 2}, {1, 2}}, {{2, 2}, {3, 4, 5, 6}}, {{1, 2}, {7, 8}}}, {{"axis", -2}});
  EXPECT_EQ(r.shape, (Shape{4, 2}));
  EXPECT_EQ(r.data, (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(Concat, OtherDimsThatDifferAreAnError) {
  EXPECT_EQ(op_error("concat", {{2, 1}, {3, 1}}, {{"axis", 1}}),
            "node 'y' (concat): input 1 has shape 3x1, input 0 2x1 (only dim 1 may differ)");
}

// ---- reductions -------------------------------------------------------------------

// Mean of a [2, 3, 4] tensor over axis 1, as [2, 4].
std::vector<float> mean_over_axis1(const Operand& x) {
  std::vector<float> out;
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 4; ++k) {
      double s = 0;
      for (int j = 0; j < 3; ++j) s += x.data[(i * 3 + j) * 4 + k];
      out.push_back(static_cast<float>(s / 3));
    }
  return out;
}

TEST(ReduceMean, KeepdimsOneKeepsTheReducedDimAsOne) {
  Operand x = pattern_operand({2, 3, 4}, 33);
  Result r = run_op("reduce_mean", {x}, {{"axes", {1}}, {"keepdims", 1}});
  EXPECT_EQ(r.shape, (Shape{2, 1, 4}));
  expect_close(r.data, mean_over_axis1(x));
}

TEST(ReduceMean, KeepdimsZeroDropsTheReducedDim) {
  Operand x = pattern_operand({2, 3, 4}, 33);
  Result r = run_op("reduce_mean", {x}, {{"axes", {1}}, {"keepdims", 0}});
  EXPECT_EQ(r.shape, (Shape{2, 4}));
  expect_close(r.data, mean_over_axis1(x));
}

TEST(ReduceMean, NegativeAndSeveralAxes) {
  Result r = run_op("reduce_mean", {{{2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}}}, {{"axes", {-1, 0}}, {"keepdims", 0}});
  EXPECT_EQ(r.shape, (Shape{2}));
  expect_close(r.data, {3.5, 5.5});  // (1+2+5+6)/4, (3+4+7+8)/4
}

TEST(ReduceMean, EmptyAxesReduceEverythingToAScalar) {
  Result r = run_op("reduce_mean", {{{2, 2}, {1, 2, 3, 6}}}, {{"keepdims", 0}});
  EXPECT_EQ(r.shape, Shape{});
  expect_close(r.data, {3});
}

TEST(ReduceMean, RepeatedAxisIsAnError) {
  EXPECT_EQ(op_error("reduce_mean", {{2, 3}}, {{"axes", {1, -1}}}),
            "node 'y' (reduce_mean): attribute 'axes' repeats an axis");
}

TEST(ReduceSumAndMax, ReduceTheGivenAxis) {
  Operand x{{2, 3}, {1, 5, 2, -1, -7, -3}};
  EXPECT_EQ(run_op("reduce_sum", {x}, {{"axes", {1}}, {"keepdims", 0}}).data, (std::vector<float>{8, -11}));
  EXPECT_EQ(run_op("reduce_max", {x}, {{"axes", {1}}, {"keepdims", 0}}).data, (std::vector<float>{5, -1}));
}

// ---- element-wise -----------------------------------------------------------------

TEST(Add, ColumnAndRowBroadcastToAMatrix) {
  Result r = run_op("add", {{{3, 1}, {1, 2, 3}}, {{4}, {10, 20, 30, 40}}});
  EXPECT_EQ(r.shape, (Shape{3, 4}));
  EXPECT_EQ(r.data, (std::vector<float>{11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43}));
}

TEST(Sub, BroadcastKeepsTheOperandOrder) {
  Result r = run_op("sub", {{{2}, {10, 20}}, {{2, 1}, {1, 2}}});
  EXPECT_EQ(r.shape, (Shape{2, 2}));
  EXPECT_EQ(r.data, (std::vector<float>{9, 19, 8, 18}));
}

TEST(Mul, ScalarBroadcastsToEveryElement) {
  Result r = run_op("mul", {{{2, 2}, {1, 2, 3, 4}}, {{}, {-2}}});
  EXPECT_EQ(r.shape, (Shape{2, 2}));
  EXPECT_EQ(r.data, (std::vector<float>{-2, -4, -6, -8}));
}

TEST(BinaryOps, ComputeTheirFunction) {
  Operand a{{3}, {1, 4, 9}}, b{{3}, {2, 0.5, 3}};
  EXPECT_EQ(run_op("div", {a, b}).data, (std::vector<float>{0.5, 8, 3}));
  EXPECT_EQ(run_op("max", {a, b}).data, (std::vector<float>{2, 4, 9}));
  EXPECT_EQ(run_op("min", {a, b}).data, (std::vector<float>{1, 0.5, 3}));
  expect_close(run_op("pow", {a, b}).data, {1, 2, 729});
}

TEST(UnaryOps, MatchTheirCMathFunctions) {
  const std::vector<float> x = {-2, -0.5f, 0.25f, 1.5f};
  const std::vector<float> pos = {0.5f, 1, 2, 9};
  auto each = [](const std::vector<float>& v, double (*f)(double)) {
    std::vector<float> out;
    for (float a : v) out.push_back(static_cast<float>(f(a)));
    return out;
  };
  expect_close(run_op("relu", {{{4}, x}}).data, {0, 0, 0.25f, 1.5f});
  expect_close(run_op("sigmoid", {{{4}, x}}).data, each(x, [](double a) { return 1 / (1 + std::exp(-a)); }));
  expect_close(run_op("tanh", {{{4}, x}}).data, each(x, std::tanh));
  expect_close(run_op("erf", {{{4}, x}}).data, each(x, std::erf));
  expect_close(run_op("exp", {{{4}, x}}).data, each(x, std::exp));
  expect_close(run_op("neg", {{{4}, x}}).data, {2, 0.5f, -0.25f, -1.5f});
  expect_close(run_op("abs", {{{4}, x}}).data, {2, 0.5f, 0.25f, 1.5f});
  expect_close(run_op("sqrt", {{{4}, pos}}).data, each(pos, std::sqrt));
  expect_close(run_op("log", {{{4}, pos}}).data, each(pos, std::log));
  expect_close(run_op("pow_scalar", {{{4}, pos}}, {{"exponent", 3}}).data, {0.125f, 1, 8, 729});
}

TEST(Gelu, DefaultIsTheErfForm) {
  const std::vector<float> x = {-3, -1, 0, 0.5f, 2};
  std::vector<float> want;
  for (float a : x) want.push_back(static_cast<float>(0.5 * a * (1 + std::erf(a / std::sqrt(2.0)))));
  expect_close(run_op("gelu", {{{5}, x}}).data, want);
}

TEST(Gelu, TanhApproximation) {
  const std::vector<float> x = {-3, -1, 0, 0.5f, 2};
  std::vector<float> want;
  for (float a : x) {
    const double t = std::tanh(std::sqrt(2 / M_PI) * (a + 0.044715 * a * a * a));
    want.push_back(static_cast<float>(0.5 * a * (1 + t)));
  }
  Result r = run_op("gelu", {{{5}, x}}, {{"approximate", "tanh"}});
  expect_close(r.data, want);
  // The two forms differ (by about 1e-3 at most).
  EXPECT_NE(r.data, run_op("gelu", {{{5}, x}}).data);
}

TEST(Gelu, UnknownApproximationIsAnError) {
  EXPECT_EQ(op_error("gelu", {{2}}, {{"approximate", "fast"}}),
            "node 'y' (gelu): attribute 'approximate': expected \"none\" or \"tanh\", got \"fast\"");
}

TEST(Clip, BoundsBelowAndAbove) {
  Result r = run_op("clip", {{{5}, {-5, -1, 0.5f, 2, 7}}}, {{"min", -1.0}, {"max", 2}});
  EXPECT_EQ(r.data, (std::vector<float>{-1, -1, 0.5f, 2, 2}));
}

TEST(Clip, WithoutBoundsPassesEveryValue) {
  const std::vector<float> x = {-1e30f, -1, 0, 1e30f};
  EXPECT_EQ(run_op("clip", {{{4}, x}}).data, x);
}

TEST(Clip, OnlyAMinimum) {
  EXPECT_EQ(run_op("clip", {{{3}, {-5, 0, 5}}}, {{"min", 0}}).data, (std::vector<float>{0, 0, 5}));
}

}  // namespace
}  // namespace loom::graph
