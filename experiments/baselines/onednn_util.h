// Private to the oneDNN baseline files (onednn_*.cc; nothing else includes
// oneDNN). A baseline is described as a Spec: the primitive's operands in the
// workload's own layouts plus a function creating the primitive descriptor
// from one memory descriptor per operand. run_spec() then measures the
// variants:
//
//   "<layout> direct"                      every activation in the workload's
//                                          own layout, no reorders at all
//   "<layout> in/out, reorders timed"      activations format_tag::any; the
//                                          reorders from and to the workload's
//                                          layout run inside the timed call
//   "preferred layouts, reorders outside"  the same primitive, activations
//                                          reordered once outside the timing
//
// Weights are format_tag::any and prepacked outside the timed region in all
// of them (optionally also a variant with plain weights, for GEMM's B). When
// oneDNN's preferred activation layouts are the workload's own, the last two
// variants are the direct one and are not repeated.
#pragma once

#include <omp.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "experiments/baselines/baseline.h"

namespace loom {
namespace onednn {

using dnnl::memory;
using dims = memory::dims;
using tag = memory::format_tag;
using dt = memory::data_type;

inline int64_t param(const Task& t, const char* k) { return t.params.at(k).get<int64_t>(); }

// Row-major (dense, last dim fastest) f32 descriptor.
memory::desc plain(const dims& d);
// A descriptor with explicit strides (elements).
memory::desc strided(const dims& d, const dims& strides);

enum class Role { kActivation, kWeight, kOutput };

struct Operand {
  int arg;                  // DNNL_ARG_SRC, ...
  memory::desc user;        // the workload's own layout of this tensor
  Role role;
  std::vector<float> data;  // inputs: values in the `user` layout; outputs: empty
};

struct Spec {
  std::string layout;  // name of the workload's layout: "row-major", "NCHW", ...
  std::vector<Operand> ops;  // exactly one kOutput
  // Creates the primitive descriptor for these descriptors (one per operand,
  // in `ops` order). May throw dnnl::error (e.g. unimplemented).
  std::function<dnnl::primitive_desc(const dnnl::engine&, const std::vector<memory::desc>&)> make;
  bool any_activations = true;     // false: the primitive needs defined activation layouts
  bool plain_weight_variant = false;  // also measure with weights in the user layout
  std::string weight_name = "weights";  // "B" for GEMM
};

// Measures every variant of `spec`; `want` is the reference output (in the
// output operand's user layout).
std::vector<BaselineResult> run_spec(const Spec& spec, const TimingOptions& timing,
                                     const std::vector<float>& want);

// post-ops attribute with one ReLU.
dnnl::primitive_attr relu_attr();

// Per-workload-family entry points; each returns results or throws dnnl::error.
std::vector<BaselineResult> matmul_family(const Task& task, const TimingOptions& timing,
                                          const TensorMap& in, const TensorMap& ref, bool* handled);
std::vector<BaselineResult> conv_family(const Task& task, const TimingOptions& timing,
                                        const TensorMap& in, const TensorMap& ref, bool* handled);

}  // namespace onednn
}  // namespace loom
