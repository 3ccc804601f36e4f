// Softmax over the rows of an M x N matrix, in four stages:
// maxelem (max-reduce), expv (exp of the shifted input), expsum (sum-reduce),
// softmax (normalise).
#include "ir/workload_registry.h"

namespace loom {
namespace workload_detail {

void register_softmax_workloads(std::vector<WorkloadInfo>& out) {
  WorkloadInfo w;
  w.name = "softmax";
  w.description =
      "row softmax: softmax[i,j] = exp(X[i,j] - max_k X[i,k]) / sum_k exp(X[i,k] - max)";
  w.params = {{"M", 512, "rows"}, {"N", 1024, "row length (softmax axis)"}};
  w.small_params = {{"M", 5}, {"N", 13}};
  w.build = [](const WorkloadParams& p) {
    const int64_t M = get(p, "M"), N = get(p, "N");
    Tensor X = placeholder({M, N}, "X");
    Var k1 = reduce_axis(N, "rk1"), k2 = reduce_axis(N, "rk2");
    Tensor mx = compute({M}, [&](Var i) { return max_reduce(X(i, k1), {k1}); }, "maxelem");
    Tensor e = compute({M, N}, [&](Var i, Var j) { return exp(X(i, j) - mx(i)); }, "expv");
    Tensor s = compute({M}, [&](Var i) { return sum(e(i, k2), {k2}); }, "expsum");
    Tensor y = compute({M, N}, [&](Var i, Var j) { return e(i, j) / s(i); }, "softmax");
    return ComputeDAG({X}, {y});
  };
  out.push_back(std::move(w));
}

}  // namespace workload_detail
}  // namespace loom
