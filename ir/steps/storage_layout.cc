// SL: the order in which a stage's buffer stores its dimensions.
#include "ir/error.h"
#include "ir/steps.h"

namespace loom {
using namespace step_util;

void StorageLayoutStep::apply(StateNode& n) const {
  Stage& st = stage_at(n, stage);
  if (st.op->is_placeholder) throw LoomError("cannot change the storage layout of input " + st.name());
  if (n.dag->is_output(st.name()))
    throw LoomError("cannot change the storage layout of output " + st.name());
  if (st.compute_at == ComputeAtKind::kInlined)
    throw LoomError("cannot change the storage layout of inlined " + st.name() + " (it has no buffer)");
  const size_t ndim = st.op->axes.size();
  std::vector<bool> seen(ndim, false);
  bool ok = dims.size() == ndim;
  for (int d : dims) {
    if (!ok || d < 0 || d >= static_cast<int>(ndim) || seen[d]) { ok = false; break; }
    seen[d] = true;
  }
  if (!ok) throw LoomError("SL dims of " + st.name() + " are not a permutation of its " +
                           std::to_string(ndim) + " dimensions");
  st.storage_order = dims;
  // The identity is stored as "no layout", so that both spell one state.
  bool identity = true;
  for (size_t d = 0; d < ndim; ++d) identity = identity && dims[d] == static_cast<int>(d);
  if (identity) st.storage_order.clear();
}

nlohmann::json StorageLayoutStep::to_json() const { return {"SL", stage, dims}; }

void register_storage_layout_step(std::map<std::string, StepFactory>& r) {
  register_step_kind(r, "SL", [](const nlohmann::json& j) -> StepPtr {
    expect_size(j, 3, "SL");
    auto s = std::make_shared<StorageLayoutStep>();
    s->stage = static_cast<int>(json_int(j, 1, "SL stage"));
    for (int64_t v : json_int_list(j, 2, "SL dims")) s->dims.push_back(static_cast<int>(v));
    return s;
  });
}

}  // namespace loom
