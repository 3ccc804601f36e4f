// SP, FSP, FFSP: splitting a loop into several nested loops.
#include "ir/error.h"
#include "ir/steps.h"

namespace loom {
using namespace step_util;

namespace {

// Replaces leaf `iter_pos` of stage by the split children.
void split_iterator(StateNode& n, int stage_id, int iter_pos, std::vector<int64_t> lengths,
                    bool inner_to_outer, int64_t expected_extent) {
  Stage& st = stage_at(n, stage_id);
  if (st.op->is_placeholder) throw LoomError("cannot split placeholder " + st.name());
  int id = leaf_at(st, iter_pos);
  Iterator parent = st.iters[id];
  if (expected_extent > 0 && expected_extent != parent.extent)
    throw LoomError("extent " + std::to_string(expected_extent) + " does not match iterator " +
                    parent.name + " of extent " + std::to_string(parent.extent));
  if (lengths.empty()) throw LoomError("split needs at least one length");
  int64_t prod = 1;
  for (int64_t l : lengths) {
    if (l <= 0) throw LoomError("split lengths must be positive");
    prod *= l;
    if (prod > parent.extent)
      throw LoomError("split lengths do not fit iterator " + parent.name + " of extent " +
                      std::to_string(parent.extent));
  }
  if (parent.annotation != IterAnnotation::kNone)
    throw LoomError("cannot split annotated iterator " + parent.name);
  IterRelation rel;
  rel.kind = IterRelation::kSplit;
  rel.parents = {id};
  rel.lengths = lengths;
  rel.inner_to_outer = inner_to_outer;
  int64_t rest = (parent.extent + prod - 1) / prod;
  std::vector<int64_t> ext;
  if (inner_to_outer) ext.push_back(rest);
  ext.insert(ext.end(), lengths.begin(), lengths.end());
  if (!inner_to_outer) ext.push_back(rest);
  std::vector<int> children;
  for (size_t k = 0; k < ext.size(); ++k) {
    Iterator c{parent.name + "." + std::to_string(k), ext[k], parent.kind};
    children.push_back(static_cast<int>(st.iters.size()));
    st.iters.push_back(c);
  }
  rel.children = children;
  st.relations.push_back(rel);
  st.leaves.erase(st.leaves.begin() + iter_pos);
  st.leaves.insert(st.leaves.begin() + iter_pos, children.begin(), children.end());
  // Stages computed at the split loop stay at the innermost new loop, so they
  // keep computing the same region; a pragma moves to the outermost loop.
  for (auto& other : n.stages)
    if (other.compute_at == ComputeAtKind::kIter && other.attach_stage == stage_id &&
        other.attach_iter == id)
      other.attach_iter = children.back();
  if (st.pragma_iter == id) st.pragma_iter = children.front();
}

const SplitStep& split_source(const StateNode& n, int src_step) {
  if (src_step < 0 || src_step >= static_cast<int>(n.steps.size()))
    throw LoomError("source step " + std::to_string(src_step) + " out of range");
  auto* sp = dynamic_cast<const SplitStep*>(n.steps[src_step].get());
  if (!sp) throw LoomError("source step " + std::to_string(src_step) + " is not a split (SP)");
  return *sp;
}

}  // namespace

void SplitStep::apply(StateNode& n) const {
  split_iterator(n, stage, iter, lengths, inner_to_outer, extent);
}

nlohmann::json SplitStep::to_json() const {
  return {"SP", stage, iter, extent, lengths, inner_to_outer ? 1 : 0};
}

std::vector<int64_t> FollowSplitStep::lengths(const StateNode& n) const {
  const SplitStep& src = split_source(n, src_step);
  if (n_split < 1 || n_split > static_cast<int>(src.lengths.size()))
    throw LoomError("n_split " + std::to_string(n_split) + " out of range for source split");
  std::vector<int64_t> out(src.lengths.begin(), src.lengths.begin() + (n_split - 1));
  int64_t last = 1;
  for (size_t j = n_split - 1; j < src.lengths.size(); ++j) last *= src.lengths[j];
  out.push_back(last);
  return out;
}

void FollowSplitStep::apply(StateNode& n) const {
  split_iterator(n, stage, iter, lengths(n), true, 0);
}

nlohmann::json FollowSplitStep::to_json() const {
  return {"FSP", stage, iter, src_step, n_split};
}

int64_t FollowFusedSplitStep::length(const StateNode& n) const {
  if (src_steps.empty()) throw LoomError("FFSP needs at least one source step");
  int64_t len = 1;
  for (int s : src_steps) {
    const SplitStep& src = split_source(n, s);
    if (level < 0 || level >= static_cast<int>(src.lengths.size()))
      throw LoomError("level " + std::to_string(level) + " out of range for source split");
    len *= src.lengths[level];
  }
  return len;
}

void FollowFusedSplitStep::apply(StateNode& n) const {
  split_iterator(n, stage, iter, {length(n)}, factor_or_nparts, 0);
}

nlohmann::json FollowFusedSplitStep::to_json() const {
  return {"FFSP", stage, iter, src_steps, level, factor_or_nparts ? 1 : 0};
}

void register_split_steps(std::map<std::string, StepFactory>& r) {
  register_step_kind(r, "SP", [](const nlohmann::json& j) -> StepPtr {
    expect_size(j, 6, "SP");
    auto s = std::make_shared<SplitStep>();
    s->stage = static_cast<int>(json_int(j, 1, "SP stage"));
    s->iter = static_cast<int>(json_int(j, 2, "SP iterator"));
    s->extent = j[3].is_null() ? 0 : json_int(j, 3, "SP extent");
    s->lengths = json_int_list(j, 4, "SP lengths");
    s->inner_to_outer = json_int(j, 5, "SP inner_to_outer") != 0;
    return s;
  });
  register_step_kind(r, "FSP", [](const nlohmann::json& j) -> StepPtr {
    expect_size(j, 5, "FSP");
    auto s = std::make_shared<FollowSplitStep>();
    s->stage = static_cast<int>(json_int(j, 1, "FSP stage"));
    s->iter = static_cast<int>(json_int(j, 2, "FSP iterator"));
    s->src_step = static_cast<int>(json_int(j, 3, "FSP source step"));
    s->n_split = static_cast<int>(json_int(j, 4, "FSP n_split"));
    return s;
  });
  register_step_kind(r, "FFSP", [](const nlohmann::json& j) -> StepPtr {
    expect_size(j, 6, "FFSP");
    auto s = std::make_shared<FollowFusedSplitStep>();
    s->stage = static_cast<int>(json_int(j, 1, "FFSP stage"));
    s->iter = static_cast<int>(json_int(j, 2, "FFSP iterator"));
    for (int64_t v : json_int_list(j, 3, "FFSP source steps")) s->src_steps.push_back(static_cast<int>(v));
    s->level = static_cast<int>(json_int(j, 4, "FFSP level"));
    s->factor_or_nparts = json_int(j, 5, "FFSP factor_or_nparts") != 0;
    return s;
  });
}

}  // namespace loom
