// Fused subgraphs from Ansor's evaluation: conv2d_bias_relu (ConvLayer),
// dense_bias_relu, tbg (transpose + batch matmul, as in BERT attention).
#include "ir/workload_registry.h"

namespace loom {
namespace workload_detail {

void register_subgraph_workloads(std::vector<WorkloadInfo>& out) {
  {
    WorkloadInfo w;
    w.name = "conv2d_bias_relu";
    w.description =
        "ConvLayer: relu[n,k,h,w] = max(conv[n,k,h,w] + bias[k], 0); conv2d NCHW/KCRS with "
        "a separate 'pad' stage";
    w.params = {{"N", 1, "batch"},          {"C", 64, "input channels"},
                {"H", 56, "input height"},  {"W", 56, "input width"},
                {"K", 64, "output channels"},
                {"R", 3, "kernel height"},  {"S", 3, "kernel width"},
                {"stride", 1, "stride (both dims)"},
                {"pad", 1, "zero padding on every side", 0},
                {"dilation", 1, "kernel dilation (both dims)"}};
    w.small_params = {{"C", 3}, {"H", 6}, {"W", 5}, {"K", 4}};
    w.build = [](const WorkloadParams& p) {
      ComputeDAG conv = make_workload("conv2d", nlohmann::json(p));
      // Rebuild on top of the conv2d DAG's tensors.
      Tensor X(conv.op("data")), Wt(conv.op("kernel")), C(conv.op("conv"));
      const int64_t K = get(p, "K");
      Tensor bias = placeholder({K}, "bias");
      Tensor relu = compute(
          C.shape(),
          [&](Var n, Var k, Var h, Var x) { return max(C(n, k, h, x) + bias(k), Expr(0.0f)); },
          "relu");
      return ComputeDAG({X, Wt, bias}, {relu});
    };
    out.push_back(std::move(w));
  }
  {
    WorkloadInfo w;
    w.name = "dense_bias_relu";
    w.description =
        "dense layer: relu[i,j] = max(sum_k X[i,k] * W[j,k] + bias[j], 0); stages 'dense', 'relu'";
    w.params = {{"M", 128, "rows (batch x tokens)"},
                {"N", 512, "output features"},
                {"K", 512, "input features"}};
    w.small_params = {{"M", 4}, {"N", 6}, {"K", 9}};
    w.build = [](const WorkloadParams& p) {
      const int64_t M = get(p, "M"), N = get(p, "N"), K = get(p, "K");
      Tensor X = placeholder({M, K}, "X");
      Tensor Wt = placeholder({N, K}, "W");
      Tensor bias = placeholder({N}, "bias");
      Var k = reduce_axis(K, "rk");
      Tensor D = compute({M, N}, [&](Var i, Var j) { return sum(X(i, k) * Wt(j, k), {k}); },
                         "dense");
      Tensor relu = compute(
          {M, N}, [&](Var i, Var j) { return max(D(i, j) + bias(j), Expr(0.0f)); }, "relu");
      return ComputeDAG({X, Wt, bias}, {relu});
    };
    out.push_back(std::move(w));
  }
  {
    WorkloadInfo w;
    w.name = "tbg";
    w.description =
        "TBG: query[B,L,H,D] -> query_T[B,H,L,D], value[B,L,H,D] -> value_T[B,H,D,L], "
        "out[b,h,i,j] = sum_d query_T[b,h,i,d] * value_T[b,h,d,j]";
    w.params = {{"B", 1, "batch"},
                {"L", 128, "sequence length"},
                {"H", 12, "attention heads"},
                {"D", 64, "head dimension (reduction length)"}};
    w.small_params = {{"B", 2}, {"L", 5}, {"H", 3}, {"D", 4}};
    w.build = [](const WorkloadParams& p) {
      const int64_t B = get(p, "B"), L = get(p, "L"), H = get(p, "H"), D = get(p, "D");
      Tensor Q = placeholder({B, L, H, D}, "query");
      Tensor V = placeholder({B, L, H, D}, "value");
      Tensor QT = compute({B, H, L, D}, [&](Var b, Var h, Var l, Var d) { return Q(b, l, h, d); },
                          "query_T");
      Tensor VT = compute({B, H, D, L}, [&](Var b, Var h, Var d, Var l) { return V(b, l, h, d); },
                          "value_T");
      Var k = reduce_axis(D, "rk");
      Tensor O = compute(
          {B, H, L, L},
          [&](Var b, Var h, Var i, Var j) { return sum(QT(b, h, i, k) * VT(b, h, k, j), {k}); },
          "out");
      return ComputeDAG({Q, V}, {O});
    };
    out.push_back(std::move(w));
  }
}

}  // namespace workload_detail
}  // namespace loom
