// The MLP ensemble's forward pass in plain C++: a frozen copy of the
// trained weights (mlp_model.cc makes one whenever the weights change) scores
// programs without LibTorch.
//
// Why not LibTorch's own forward: its matrix products run in whichever
// OpenBLAS kernels the process was given (an OPENBLAS_CORETYPE of the
// environment can hold an AVX-512 CPU to its AVX2 kernels) and in OpenBLAS's
// thread pool, whose idle workers keep spinning after the call, on the cores
// the next measurement needs. Here the products are AVX-512 register tiles
// where the CPU has it (a portable loop nest otherwise), on the calling
// thread only (measured against LibTorch in
// docs/results/2026-12-04-mlp-inference-zen5.md).
#pragma once

#include <cstddef>
#include <vector>

#include "costmodel/features.h"

namespace loom {

// A Linear layer laid out for the forward pass: w[k * stride + n] is the
// weight from input k to output n; `stride` is `out` rounded up to 16 and the
// padding columns (weights and bias) are zero.
struct FrozenLinear {
  int in = 0, out = 0, stride = 0;
  std::vector<float> w;  // in * stride
  std::vector<float> b;  // stride
  // From LibTorch's layout: weight[n * in + k] (out x in), bias[n].
  static FrozenLinear from_out_by_in(int out, int in, const float* weight, const float* bias);
};

// One network of the ensemble: statement rows through `hidden` (ReLU after
// each), `out` (one output, summed per program); with a head, the sum of a
// program's last hidden vectors through `head` (ReLU after each) and
// `head_out`, added to the program's score.
struct FrozenNet {
  std::vector<FrozenLinear> hidden;
  FrozenLinear out;
  std::vector<FrozenLinear> head;
  FrozenLinear head_out;  // in == 0: no head
};

// The nets share one standardization of the rows: clip((x - mean) * inv_std).
struct FrozenMlp {
  std::vector<float> mean, inv_std;
  double input_clip = 0;  // 0: no clipping
  std::vector<FrozenNet> nets;
};

// The mean of the nets' scores per program. Programs that are not valid get 0
// (the caller gives them its invalid score); a valid program without rows
// gets only its head's output on a zero sum, as LibTorch's forward does.
// `vector_isa` false forces the portable loop nest (tests compare the two).
std::vector<float> mlp_scores(const FrozenMlp& mlp, const std::vector<ProgramFeatures>& programs,
                              bool vector_isa = true);

// Whether mlp_scores runs its AVX-512 tiles on this CPU.
bool mlp_inference_uses_avx512();

}  // namespace loom
