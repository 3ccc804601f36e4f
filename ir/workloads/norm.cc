// Norm workloads: NRM, the Frobenius (matrix 2-) norm sqrt(sum_{i,j} A[i,j]^2),
// and layer normalization over the rows of a matrix (a transformer's).
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

  WorkloadInfo ln;
  ln.name = "layer_norm";
  ln.description =
      "layer normalization of each row: (X - mean) / sqrt(var + 1e-5) * gamma + beta; stages 'rowsum', "
      "'rowsqsum' (the variance from the centred values: no cancellation) and 'layer_norm'";
  ln.params = {{"M", 128, "rows (a BERT-base layer's sequence)"}, {"N", 768, "row length, the normalized axis"}};
  ln.small_params = {{"M", 5}, {"N", 13}};
  ln.build = [](const WorkloadParams& p) {
    const int64_t M = get(p, "M"), N = get(p, "N");
    Tensor X = placeholder({M, N}, "X");
    Tensor gamma = placeholder({N}, "gamma");
    Tensor beta = placeholder({N}, "beta");
    const Expr inv_n = float_imm(1.0 / static_cast<double>(N));
    Var r1 = reduce_axis(N, "rj1"), r2 = reduce_axis(N, "rj2");
    Tensor s = compute({M}, [&](Var i) { return sum(X(i, r1), {r1}); }, "rowsum");
    Tensor q = compute(
        {M},
        [&](Var i) {
          Expr c = X(i, r2) - s(i) * inv_n;
          return sum(c * c, {r2});
        },
        "rowsqsum");
    Tensor y = compute(
        {M, N},
        [&](Var i, Var j) {
          return (X(i, j) - s(i) * inv_n) / sqrt(q(i) * inv_n + float_imm(1e-5)) * gamma(j) + beta(j);
        },
        "layer_norm");
    return ComputeDAG({X, gamma, beta}, {y});
  };
  out.push_back(std::move(ln));
}

}  // namespace workload_detail
}  // namespace loom
