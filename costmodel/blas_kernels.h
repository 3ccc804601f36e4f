// The BLAS under LibTorch is OpenBLAS on Debian (libblas.so.3 of
// openblas-pthread, the library the OpenBLAS baselines link too): one
// library, one kernel choice per process. OpenBLAS 0.3.21 (Debian 12) does
// not recognise newer CPUs (e.g. Intel family 6 model 207) and falls back to
// its Prescott (SSE3) kernels, several times slower than its AVX-512 ones
// (docs/results/2026-11-30-idle-threads-blas.md). Unless the user
// chose with OPENBLAS_CORETYPE, pick the kernels by ISA instead (SkylakeX
// with AVX-512, Haswell with AVX2+FMA), exactly as OPENBLAS_CORETYPE would.
// Idempotent and thread-safe; call before the first BLAS call (the MLP's
// constructor and the OpenBLAS baselines do). Returns a note for results:
// that the kernels were chosen by ISA, or that the user's OPENBLAS_CORETYPE
// gives an AVX-512 CPU no AVX-512 kernels ("" otherwise, or without OpenBLAS).
#pragma once

#include <string>

namespace loom {

const std::string& select_openblas_kernels();

// OpenBLAS's name for the kernels in use ("" when no OpenBLAS is loaded).
std::string openblas_core_name();

// OpenBLAS's own thread count, which LibTorch's at::set_num_threads leaves
// at the machine's cores: a one-thread PyTorch matmul would run on two, and
// an idle OpenBLAS worker spins on a core a timed run of Loom needs. Callers
// of LibTorch set it with the intra-op threads (nothing without OpenBLAS).
void set_openblas_threads(int threads);
// OpenBLAS's thread count; 0 when no OpenBLAS is loaded.
int openblas_threads();

}  // namespace loom
