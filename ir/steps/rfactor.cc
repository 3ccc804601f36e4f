// RF: reduction factorization. C[s] = R_k f(s, k) with k's loops split becomes
//   C_rf[s, kf] = R_{other reduce loops} f(s, k(kf, ...))   and   C[s] = R_kf C_rf[s, kf]
// so the factored loop kf can be parallelized or vectorized.
#include <limits>

#include "ir/error.h"
#include "ir/iter_graph.h"
#include "ir/simplify.h"
#include "ir/steps.h"

namespace loom {
using namespace step_util;

namespace {
Expr reduce_identity(ReduceKind k) {
  switch (k) {
    case ReduceKind::kSum: return float_imm(0.0);
    case ReduceKind::kMax: return float_imm(-std::numeric_limits<float>::infinity());
    case ReduceKind::kMin: return float_imm(std::numeric_limits<float>::infinity());
  }
  return float_imm(0.0);
}
}  // namespace

void RfactorStep::apply(StateNode& n) const {
  Stage& st = stage_at(n, stage);
  if (st.op->is_placeholder || st.op->body->kind != ExprKind::kReduce)
    throw LoomError("rfactor needs a reduction stage, " + st.name() + " is not one");
  if (st.compute_at == ComputeAtKind::kInlined) throw LoomError("cannot rfactor inlined " + st.name());
  int fid = leaf_at(st, iter);
  if (st.iters[fid].kind != IterKind::kReduce)
    throw LoomError("rfactor iterator " + st.iters[fid].name + " is not a reduce iterator");
  check_nothing_attached(n, stage, "rfactor");
  size_t n_axes = st.op->axes.size();
  if (factor_iter < 0 || factor_iter > static_cast<int>(n_axes))
    throw LoomError("factor_iter " + std::to_string(factor_iter) + " out of range");

  // One variable per leaf; reduce roots derived from the reduce leaves.
  std::vector<Expr> leaf_vals(st.iters.size());
  Var kf;
  std::vector<Var> other_reduce;
  for (int id : st.leaves) {
    Var v = make_var(st.iters[id].name, st.iters[id].extent);
    leaf_vals[id] = v;
    if (id == fid) kf = v;
    else if (st.iters[id].kind == IterKind::kReduce) other_reduce.push_back(v);
  }
  std::vector<int64_t> extents;
  for (const auto& it : st.iters) extents.push_back(it.extent);
  std::vector<Expr> vals = derive_iter_values(st, leaf_vals, extents);

  const Expr& red = st.op->body;
  std::vector<std::pair<Var, Expr>> subst;
  Expr guard = bool_imm(true);
  for (size_t r = 0; r < st.op->reduce_axes.size(); ++r) {
    Expr v = vals[n_axes + r];
    subst.emplace_back(st.op->reduce_axes[r], v);
    guard = guard && simplify(v < int_imm(st.op->reduce_axes[r]->extent));
  }
  Expr source = substitute(red->args[0], subst);
  if (!can_prove(guard)) source = select(guard, source, reduce_identity(red->reduce_kind));

  auto rf = std::make_shared<OpNode>();
  rf->name = st.name() + "_rf";
  rf->axes = st.op->axes;
  rf->axes.insert(rf->axes.begin() + factor_iter, kf);
  for (const auto& a : rf->axes) rf->shape.push_back(a->extent);
  rf->body = other_reduce.empty() ? source : reduce(red->reduce_kind, source, other_reduce);
  rf->reduce_axes = other_reduce;

  Var kr = make_var(st.iters[fid].name + "_v", st.iters[fid].extent);
  std::vector<Expr> idx(st.op->axes.begin(), st.op->axes.end());
  idx.insert(idx.begin() + factor_iter, kr);
  Op final_op = rebuild_op(st.op, st.op->name, reduce(red->reduce_kind, load(rf->name, idx), {kr}));

  replace_with_producer(n, stage, final_op, make_stage(rf));
}

nlohmann::json RfactorStep::to_json() const { return {"RF", stage, iter, factor_iter}; }

void register_rfactor_step(std::map<std::string, StepFactory>& r) {
  register_step_kind(r, "RF", [](const nlohmann::json& j) -> StepPtr {
    expect_size(j, 4, "RF");
    auto s = std::make_shared<RfactorStep>();
    s->stage = static_cast<int>(json_int(j, 1, "RF stage"));
    s->iter = static_cast<int>(json_int(j, 2, "RF iterator"));
    s->factor_iter = static_cast<int>(json_int(j, 3, "RF factor_iter"));
    return s;
  });
}

}  // namespace loom
