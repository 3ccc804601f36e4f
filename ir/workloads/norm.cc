// Norm workloads: NRM, the Frobenius (matrix 2-) norm sqrt(sum_{i,j} A[i,j]^2).
#include "ir/workload_registry.h"

namespace loom {
namespace workload_detail {

void register_norm_workloads(std::vector<WorkloadInfo>& out) {
  WorkloadInfo w;
  w.name = "norm";
  w.description = "NRM: norm[0] = sqrt(sum_{i,j} A[i,j]^2); stages 'sumsq' (reduction) and 'norm'";
  w.params = {{"M", 1024, "rows of A"}, {"N", 1024, "columns of A"}};
  w.small_params = {{"M", 7}, {"N", 9}};
  w.build = [](const WorkloadParams& p) {
    const int64_t M = get(p, "M"), N = get(p, "N");
    Tensor A = placeholder({M, N}, "A");
    Var ri = reduce_axis(M, "ri"), rj = reduce_axis(N, "rj");
    Tensor S = compute({1}, [&](Var) { return sum(A(ri, rj) * A(ri, rj), {ri, rj}); }, "sumsq");
    Tensor R = compute({1}, [&](Var i) { return sqrt(S(i)); }, "norm");
    return ComputeDAG({A}, {R});
  };
  out.push_back(std::move(w));
}

}  // namespace workload_detail
}  // namespace loom
