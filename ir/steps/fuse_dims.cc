// FD: two adjacent dimensions of an intermediate stage become one.
#include "ir/error.h"
#include "ir/steps.h"

namespace loom {
using namespace step_util;

void FuseDimsStep::apply(StateNode& n) const {
  Stage& st = stage_at(n, stage);
  const std::string name = st.name();
  if (st.op->is_placeholder) throw LoomError("cannot fuse the dimensions of input " + name);
  if (n.dag->is_output(name)) throw LoomError("cannot fuse the dimensions of output " + name);
  if (!st.loops_untouched() || st.compute_at != ComputeAtKind::kRoot || st.pretransformed || st.pragma_iter >= 0)
    throw LoomError("FD of " + name + " must come before its loops, layout or location are changed");
  check_nothing_attached(n, stage, "fuse the dimensions of");
  const OpNode& op = *st.op;
  if (dim < 0 || dim + 1 >= static_cast<int>(op.axes.size()))
    throw LoomError("FD dim " + std::to_string(dim) + " of " + name + ": needs dimensions " +
                    std::to_string(dim) + " and " + std::to_string(dim + 1) + " of its " +
                    std::to_string(op.axes.size()));
  const int64_t inner = op.shape[dim + 1];

  std::vector<int64_t> shape;
  for (int d = 0; d < static_cast<int>(op.shape.size()); ++d)
    if (d == dim) shape.push_back(op.shape[d] * inner);
    else if (d != dim + 1) shape.push_back(op.shape[d]);
  Tensor fused = compute_with_axes(
      shape,
      [&](const std::vector<Var>& v) {
        std::vector<std::pair<Var, Expr>> map;
        for (int d = 0; d < static_cast<int>(op.axes.size()); ++d) {
          if (d < dim) map.push_back({op.axes[d], v[d]});
          else if (d == dim) map.push_back({op.axes[d], v[dim] / Expr(inner)});
          else if (d == dim + 1) map.push_back({op.axes[d], v[dim] % Expr(inner)});
          else map.push_back({op.axes[d], v[d - 1]});
        }
        return substitute(op.body, map);
      },
      name);

  // Readers index the fused dimension as outer * inner + inner index.
  for (auto& rs : n.stages) {
    if (&rs == &st || !op_reads(rs.op, name)) continue;
    Expr body = mutate(rs.op->body, [&](const Expr& e) -> Expr {
      if (e->kind != ExprKind::kLoad || e->name != name) return Expr();
      std::vector<Expr> idx;
      for (int d = 0; d < static_cast<int>(e->args.size()); ++d)
        if (d == dim) idx.push_back(e->args[d] * Expr(inner) + e->args[d + 1]);
        else if (d != dim + 1) idx.push_back(e->args[d]);
      return load(name, idx);
    });
    rs.op = rebuild_op(rs.op, rs.op->name, body);
  }
  const BufferScope scope = st.scope;
  st = make_stage(fused.op(), scope);
}

nlohmann::json FuseDimsStep::to_json() const { return {"FD", stage, dim}; }

void register_fuse_dims_step(std::map<std::string, StepFactory>& r) {
  register_step_kind(r, "FD", [](const nlohmann::json& j) -> StepPtr {
    expect_size(j, 3, "FD");
    auto s = std::make_shared<FuseDimsStep>();
    s->stage = static_cast<int>(json_int(j, 1, "FD stage"));
    s->dim = static_cast<int>(json_int(j, 2, "FD dim"));
    return s;
  });
}

}  // namespace loom
