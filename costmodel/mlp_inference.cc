#include "costmodel/mlp_inference.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

namespace loom {

FrozenLinear FrozenLinear::from_out_by_in(int out, int in, const float* weight, const float* bias) {
  FrozenLinear l;
  l.in = in;
  l.out = out;
  l.stride = (out + 15) / 16 * 16;
  l.w.assign(static_cast<size_t>(in) * l.stride, 0.0f);
  l.b.assign(static_cast<size_t>(l.stride), 0.0f);
  for (int n = 0; n < out; ++n) {
    for (int k = 0; k < in; ++k) l.w[static_cast<size_t>(k) * l.stride + n] = weight[static_cast<size_t>(n) * in + k];
    l.b[n] = bias[n];
  }
  return l;
}

namespace {

// Y[r][0..stride) = X[r][0..in) * W + b (ReLU optionally), for `rows` rows;
// X has row stride ldx, Y row stride layer.stride.
using DenseFn = void (*)(const float* x, int ldx, int rows, const FrozenLinear& layer, bool relu, float* y);

// A register tile of MR rows by NV vectors of 16 outputs, accumulated over
// all of K: each step loads NV weight vectors once and uses them for MR rows
// (6 x 4 = 24 of the 32 zmm registers hold accumulators).
template <int MR, int NV>
__attribute__((target("avx512f"))) void tile_avx512(const float* x, int ldx, int k_end, const float* w, int ldw,
                                                      const float* b, bool relu, float* y, int ldy) {
  __m512 acc[MR][NV];
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) {
    const __m512 bias = _mm512_loadu_ps(b + 16 * v);
#pragma GCC unroll 8
    for (int m = 0; m < MR; ++m) acc[m][v] = bias;
  }
  for (int k = 0; k < k_end; ++k) {
    __m512 wv[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) wv[v] = _mm512_loadu_ps(w + static_cast<size_t>(k) * ldw + 16 * v);
#pragma GCC unroll 8
    for (int m = 0; m < MR; ++m) {
      const __m512 xv = _mm512_set1_ps(x[static_cast<size_t>(m) * ldx + k]);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[m][v] = _mm512_fmadd_ps(xv, wv[v], acc[m][v]);
    }
  }
  const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 8
  for (int m = 0; m < MR; ++m) {
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      const __m512 r = relu ? _mm512_max_ps(acc[m][v], zero) : acc[m][v];
      _mm512_storeu_ps(y + static_cast<size_t>(m) * ldy + 16 * v, r);
    }
  }
}

template <int NV>
__attribute__((target("avx512f"))) void panel_avx512(const float* x, int ldx, int rows, const FrozenLinear& l,
                                                       int n0, bool relu, float* y) {
  const float* w = l.w.data() + n0;
  const float* b = l.b.data() + n0;
  int r = 0;
  for (; r + 6 <= rows; r += 6)
    tile_avx512<6, NV>(x + static_cast<size_t>(r) * ldx, ldx, l.in, w, l.stride, b, relu,
                       y + static_cast<size_t>(r) * l.stride + n0, l.stride);
  const float* xr = x + static_cast<size_t>(r) * ldx;
  float* yr = y + static_cast<size_t>(r) * l.stride + n0;
  switch (rows - r) {
    case 5: tile_avx512<5, NV>(xr, ldx, l.in, w, l.stride, b, relu, yr, l.stride); break;
    case 4: tile_avx512<4, NV>(xr, ldx, l.in, w, l.stride, b, relu, yr, l.stride); break;
    case 3: tile_avx512<3, NV>(xr, ldx, l.in, w, l.stride, b, relu, yr, l.stride); break;
    case 2: tile_avx512<2, NV>(xr, ldx, l.in, w, l.stride, b, relu, yr, l.stride); break;
    case 1: tile_avx512<1, NV>(xr, ldx, l.in, w, l.stride, b, relu, yr, l.stride); break;
    default: break;
  }
}

__attribute__((target("avx512f"))) void dense_avx512(const float* x, int ldx, int rows, const FrozenLinear& l,
                                                       bool relu, float* y) {
  for (int n0 = 0; n0 < l.stride; n0 += 64) {
    switch (std::min(4, (l.stride - n0) / 16)) {
      case 4: panel_avx512<4>(x, ldx, rows, l, n0, relu, y); break;
      case 3: panel_avx512<3>(x, ldx, rows, l, n0, relu, y); break;
      case 2: panel_avx512<2>(x, ldx, rows, l, n0, relu, y); break;
      default: panel_avx512<1>(x, ldx, rows, l, n0, relu, y); break;
    }
  }
}

void dense_portable(const float* x, int ldx, int rows, const FrozenLinear& l, bool relu, float* y) {
  for (int r = 0; r < rows; ++r) {
    float* yr = y + static_cast<size_t>(r) * l.stride;
    std::memcpy(yr, l.b.data(), sizeof(float) * l.stride);
    const float* xr = x + static_cast<size_t>(r) * ldx;
    for (int k = 0; k < l.in; ++k) {
      const float xv = xr[k];
      const float* wk = l.w.data() + static_cast<size_t>(k) * l.stride;
      for (int n = 0; n < l.stride; ++n) yr[n] += xv * wk[n];
    }
    if (relu)
      for (int n = 0; n < l.stride; ++n) yr[n] = std::max(yr[n], 0.0f);
  }
}

// `rows` rows (x, row stride *ld) through `layers`, each followed by a ReLU,
// alternating between the two buffers; returns the last output (row stride
// and width in *ld and *width; x itself when there are no layers).
const float* through_relu_layers(DenseFn dense, const std::vector<FrozenLinear>& layers, const float* x, int rows,
                                 float* bufs[2], int* ld, int* width) {
  int which = 0;
  for (const FrozenLinear& l : layers) {
    if (rows > 0) dense(x, *ld, rows, l, true, bufs[which]);
    x = bufs[which];
    *ld = l.stride;
    *width = l.out;
    which ^= 1;
  }
  return x;
}

// A buffer of the pair that does not hold `x`.
float* other_than(float* bufs[2], const float* x) { return x == bufs[0] ? bufs[1] : bufs[0]; }

// Rows are scored in chunks of whole programs of about this many rows, so
// that a chunk's activations stay in the L2 cache across the nets.
constexpr int kChunkRows = 192;

}  // namespace

bool mlp_inference_uses_avx512() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return yes;
}

std::vector<float> mlp_scores(const FrozenMlp& mlp, const std::vector<ProgramFeatures>& programs, bool vector_isa) {
  std::vector<float> scores(programs.size(), 0.0f);
  if (mlp.nets.empty()) return scores;
  const DenseFn dense = vector_isa && mlp_inference_uses_avx512() ? dense_avx512 : dense_portable;
  auto rows_of = [&](size_t p) { return programs[p].valid ? programs[p].num_stmts : 0; };
  size_t total_rows = 0;
  for (size_t p = 0; p < programs.size(); ++p) total_rows += static_cast<size_t>(rows_of(p));
  // LibTorch's forward returns zeros for a batch without a single row.
  if (total_rows == 0) return scores;

  int widest = kNumFeatures;
  for (const auto& net : mlp.nets) {
    for (const auto& l : net.hidden) widest = std::max(widest, l.stride);
    for (const auto& l : net.head) widest = std::max(widest, l.stride);
  }
  std::vector<float> normalized, act_a, act_b, sums, head_a, head_b;
  size_t begin = 0;
  while (begin < programs.size()) {
    // A chunk: whole programs, at least one, up to about kChunkRows rows.
    size_t end = begin;
    int rows = 0;
    while (end < programs.size() && (end == begin || rows + rows_of(end) <= kChunkRows)) rows += rows_of(end++);
    const size_t nprog = end - begin;
    normalized.resize(static_cast<size_t>(std::max(rows, 1)) * kNumFeatures);
    act_a.resize(static_cast<size_t>(std::max(rows, 1)) * widest);
    act_b.resize(act_a.size());
    sums.resize(nprog * widest);
    head_a.resize(nprog * widest);
    head_b.resize(nprog * widest);

    // Standardized once for all the nets.
    const float clip = static_cast<float>(mlp.input_clip);
    float* dst = normalized.data();
    for (size_t p = begin; p < end; ++p) {
      for (int s = 0; s < rows_of(p); ++s, dst += kNumFeatures) {
        const float* src = programs[p].row(s);
        for (int f = 0; f < kNumFeatures; ++f) {
          float v = (src[f] - mlp.mean[f]) * mlp.inv_std[f];
          if (clip > 0) v = std::min(std::max(v, -clip), clip);
          dst[f] = v;
        }
      }
    }
    for (const FrozenNet& net : mlp.nets) {
      float* bufs[2] = {act_a.data(), act_b.data()};
      int ldx = kNumFeatures, width = kNumFeatures;
      const float* x = through_relu_layers(dense, net.hidden, normalized.data(), rows, bufs, &ldx, &width);
      // The output layer per row (one output: column 0 of a 16-wide
      // product), summed per program; with a head, the sum of the
      // program's last hidden vectors too.
      float* row_out = other_than(bufs, x);
      if (rows > 0) dense(x, ldx, rows, net.out, false, row_out);
      const bool has_head = net.head_out.in > 0;
      size_t row = 0;
      for (size_t p = begin; p < end; ++p) {
        float* sum = sums.data() + (p - begin) * widest;
        if (has_head) std::fill(sum, sum + width, 0.0f);
        float s = 0;
        for (int i = 0; i < rows_of(p); ++i, ++row) {
          s += row_out[row * net.out.stride];
          if (has_head) {
            const float* xr = x + row * ldx;
            for (int f = 0; f < width; ++f) sum[f] += xr[f];
          }
        }
        scores[p] += s;
      }
      if (!has_head) continue;
      float* hbufs[2] = {head_a.data(), head_b.data()};
      int ldh = widest, head_width = width;
      const float* h = through_relu_layers(dense, net.head, sums.data(), static_cast<int>(nprog), hbufs, &ldh,
                                           &head_width);
      float* head_out = other_than(hbufs, h);
      dense(h, ldh, static_cast<int>(nprog), net.head_out, false, head_out);
      for (size_t p = begin; p < end; ++p) scores[p] += head_out[(p - begin) * net.head_out.stride];
    }
    begin = end;
  }
  const float inv = 1.0f / static_cast<float>(mlp.nets.size());
  for (size_t p = 0; p < programs.size(); ++p) scores[p] = programs[p].valid ? scores[p] * inv : 0.0f;
  return scores;
}

}  // namespace loom
