// Matrix multiplication workloads: matmul (GMM) and batch_matmul (BMM).
#include "ir/workload_registry.h"

namespace loom {
namespace workload_detail {

void register_matmul_workloads(std::vector<WorkloadInfo>& out) {
  {
    WorkloadInfo w;
    w.name = "matmul";
    w.description = "GEMM: C[i,j] = sum_k A[i,k] * B[k,j]; A is MxK, B is KxN (row-major)";
    w.params = {{"M", 512, "rows of A and C"},
                {"N", 512, "columns of B and C"},
                {"K", 512, "reduction length"}};
    w.small_params = {{"M", 8}, {"N", 12}, {"K", 10}};
    w.build = [](const WorkloadParams& p) {
      int64_t M = get(p, "M"), N = get(p, "N"), K = get(p, "K");
      Tensor A = placeholder({M, K}, "A");
      Tensor B = placeholder({K, N}, "B");
      Var k = reduce_axis(K, "rk");
      Tensor C = compute({M, N}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
      return ComputeDAG({A, B}, {C});
    };
    out.push_back(std::move(w));
  }
  {
    WorkloadInfo w;
    w.name = "batch_matmul";
    w.description = "BMM: C[b,i,j] = sum_k A[b,i,k] * B[b,k,j]";
    w.params = {{"B", 16, "batch size"},
                {"M", 128, "rows of A and C"},
                {"N", 128, "columns of B and C"},
                {"K", 64, "reduction length"}};
    w.small_params = {{"B", 2}, {"M", 6}, {"N", 5}, {"K", 7}};
    w.build = [](const WorkloadParams& p) {
      int64_t Bt = get(p, "B"), M = get(p, "M"), N = get(p, "N"), K = get(p, "K");
      Tensor A = placeholder({Bt, M, K}, "A");
      Tensor B = placeholder({Bt, K, N}, "B");
      Var k = reduce_axis(K, "rk");
      Tensor C = compute(
          {Bt, M, N}, [&](Var b, Var i, Var j) { return sum(A(b, i, k) * B(b, k, j), {k}); }, "C");
      return ComputeDAG({A, B}, {C});
    };
    out.push_back(std::move(w));
  }
}

}  // namespace workload_detail
}  // namespace loom
