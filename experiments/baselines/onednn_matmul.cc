// oneDNN baselines for the matrix products: matmul, batch_matmul,
// dense_bias_relu (inner product + bias + ReLU post-op) and tbg (4-D matmul
// whose operands are strided views of query[B,L,H,D] and value[B,L,H,D], so
// the transposes are expressed by the memory descriptors).
#include "experiments/baselines/onednn_util.h"

namespace loom {
namespace onednn {

namespace {

dnnl::primitive_desc make_matmul(const dnnl::engine& eng, const std::vector<memory::desc>& d) {
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(d[0], d[1], d[2]), eng);
}

}  // namespace

std::vector<BaselineResult> matmul_family(const Task& task, const TimingOptions& timing,
                                          const TensorMap& in, const TensorMap& ref, bool* handled) {
  *handled = true;
  const std::string& w = task.workload;
  Spec sp;
  sp.layout = "row-major";
  if (w == "matmul" || w == "batch_matmul") {
    const bool batched = w == "batch_matmul";
    const int64_t M = param(task, "M"), N = param(task, "N"), K = param(task, "K");
    dims a{M, K}, b{K, N}, c{M, N};
    if (batched) {
      const int64_t B = param(task, "B");
      a.insert(a.begin(), B);
      b.insert(b.begin(), B);
      c.insert(c.begin(), B);
    }
    // GEMM's B is an input like A: measure it both as given and prepacked.
    sp.plain_weight_variant = true;
    sp.weight_name = "B";
    sp.ops = {{DNNL_ARG_SRC, plain(a), Role::kActivation, in.at("A")},
              {DNNL_ARG_WEIGHTS, plain(b), Role::kWeight, in.at("B")},
              {DNNL_ARG_DST, plain(c), Role::kOutput, {}}};
    sp.make = make_matmul;
    return run_spec(sp, timing, ref.at("C"));
  }
  if (w == "dense_bias_relu") {
    const int64_t M = param(task, "M"), N = param(task, "N"), K = param(task, "K");
    sp.plain_weight_variant = true;
    sp.weight_name = "W";
    sp.ops = {{DNNL_ARG_SRC, plain({M, K}), Role::kActivation, in.at("X")},
              {DNNL_ARG_WEIGHTS, plain({N, K}), Role::kWeight, in.at("W")},
              {DNNL_ARG_BIAS, plain({N}), Role::kWeight, in.at("bias")},
              {DNNL_ARG_DST, plain({M, N}), Role::kOutput, {}}};
    sp.make = [](const dnnl::engine& eng, const std::vector<memory::desc>& d) -> dnnl::primitive_desc {
      dnnl::inner_product_forward::desc desc(dnnl::prop_kind::forward_inference, d[0], d[1], d[2], d[3]);
      return dnnl::inner_product_forward::primitive_desc(desc, relu_attr(), eng);
    };
    return run_spec(sp, timing, ref.at("relu"));
  }
  if (w == "tbg") {
    const int64_t B = param(task, "B"), L = param(task, "L"), H = param(task, "H"), D = param(task, "D");
    // query_T[b,h,i,d] = query[b,i,h,d]; value_T[b,h,d,j] = value[b,j,h,d].
    sp.layout = "BLHD";
    sp.ops = {{DNNL_ARG_SRC, strided({B, H, L, D}, {L * H * D, D, H * D, 1}), Role::kActivation,
               in.at("query")},
              {DNNL_ARG_WEIGHTS, strided({B, H, D, L}, {L * H * D, D, 1, H * D}), Role::kActivation,
               in.at("value")},
              {DNNL_ARG_DST, plain({B, H, L, L}), Role::kOutput, {}}};
    sp.make = make_matmul;
    return run_spec(sp, timing, ref.at("out"));
  }
  *handled = false;
  return {};
}

}  // namespace onednn
}  // namespace loom
