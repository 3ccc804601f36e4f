// FU and RE: fusing consecutive loops into one, and permuting loops.
#include <algorithm>

#include "ir/error.h"
#include "ir/steps.h"

namespace loom {
using namespace step_util;

void FuseStep::apply(StateNode& n) const {
  Stage& st = stage_at(n, stage);
  if (iters.empty()) throw LoomError("fuse needs at least one iterator");
  std::vector<int> ids;
  for (size_t k = 0; k < iters.size(); ++k) {
    ids.push_back(leaf_at(st, iters[k]));
    if (k > 0 && iters[k] != iters[k - 1] + 1)
      throw LoomError("fused iterators must be consecutive loops, outer to inner");
  }
  IterKind kind = st.iters[ids[0]].kind;
  int64_t extent = 1;
  std::string name;
  for (int id : ids) {
    const Iterator& it = st.iters[id];
    if (it.kind != kind) throw LoomError("cannot fuse spatial and reduce iterators");
    if (it.annotation != IterAnnotation::kNone) throw LoomError("cannot fuse annotated iterator " + it.name);
    extent *= it.extent;
    name += it.name + "@";
  }
  if (ids.size() == 1) return;  // fusing one loop is the identity
  int child = static_cast<int>(st.iters.size());
  st.iters.push_back({name, extent, kind});
  IterRelation rel;
  rel.kind = IterRelation::kFuse;
  rel.parents = ids;
  rel.children = {child};
  st.relations.push_back(rel);
  st.leaves.erase(st.leaves.begin() + iters.front(), st.leaves.begin() + iters.back() + 1);
  st.leaves.insert(st.leaves.begin() + iters.front(), child);
  for (auto& other : n.stages)
    if (other.compute_at == ComputeAtKind::kIter && other.attach_stage == stage &&
        std::find(ids.begin(), ids.end(), other.attach_iter) != ids.end())
      other.attach_iter = child;
  if (std::find(ids.begin(), ids.end(), st.pragma_iter) != ids.end()) st.pragma_iter = child;
}

nlohmann::json FuseStep::to_json() const { return {"FU", stage, iters}; }

void ReorderStep::apply(StateNode& n) const {
  Stage& st = stage_at(n, stage);
  if (order.size() != st.leaves.size())
    throw LoomError("reorder of stage " + st.name() + " must list all " +
                    std::to_string(st.leaves.size()) + " loops");
  std::vector<bool> seen(order.size(), false);
  std::vector<int> leaves;
  for (int p : order) {
    if (p < 0 || p >= static_cast<int>(order.size()) || seen[p])
      throw LoomError("reorder is not a permutation of the loops");
    seen[p] = true;
    leaves.push_back(st.leaves[p]);
  }
  st.leaves = leaves;
}

nlohmann::json ReorderStep::to_json() const { return {"RE", stage, order}; }

namespace {
std::vector<int> int_list(const nlohmann::json& j, size_t i, const char* what) {
  std::vector<int> out;
  for (int64_t v : json_int_list(j, i, what)) out.push_back(static_cast<int>(v));
  return out;
}
}  // namespace

void register_fuse_reorder_steps(std::map<std::string, StepFactory>& r) {
  register_step_kind(r, "FU", [](const nlohmann::json& j) -> StepPtr {
    expect_size(j, 3, "FU");
    auto s = std::make_shared<FuseStep>();
    s->stage = static_cast<int>(json_int(j, 1, "FU stage"));
    s->iters = int_list(j, 2, "FU iterators");
    return s;
  });
  register_step_kind(r, "RE", [](const nlohmann::json& j) -> StepPtr {
    expect_size(j, 3, "RE");
    auto s = std::make_shared<ReorderStep>();
    s->stage = static_cast<int>(json_int(j, 1, "RE stage"));
    s->order = int_list(j, 2, "RE order");
    return s;
  });
}

}  // namespace loom
