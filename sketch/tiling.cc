#include "sketch/tiling.h"

#include <algorithm>
#include <map>

#include "ir/error.h"

namespace loom {

namespace {

// Loop order (as old leaf positions) putting `groups` one after another,
// followed by the leaves in no group.
std::vector<int> order_of(const Stage& st, const std::vector<std::vector<int>>& groups) {
  std::vector<int> order;
  std::vector<bool> used(st.leaves.size(), false);
  for (const auto& g : groups)
    for (int id : g) {
      int pos = st.leaf_position(id);
      order.push_back(pos);
      used[pos] = true;
    }
  for (size_t p = 0; p < st.leaves.size(); ++p)
    if (!used[p]) order.push_back(static_cast<int>(p));
  return order;
}

bool is_identity(const std::vector<int>& order) {
  for (size_t k = 0; k < order.size(); ++k)
    if (order[k] != static_cast<int>(k)) return false;
  return true;
}

}  // namespace

State multi_level_tile(const State& state, int stage, const std::string& structure,
                       std::vector<int>* spatial_split_steps) {
  const int n_space = static_cast<int>(std::count(structure.begin(), structure.end(), 'S'));
  const int n_reduce = static_cast<int>(std::count(structure.begin(), structure.end(), 'R'));
  if (n_space < 1 || n_space + n_reduce != static_cast<int>(structure.size()))
    throw LoomError("tiling structure '" + structure + "' must consist of S and R with at least one S");
  std::vector<std::vector<int>> space_levels(n_space), reduce_levels(std::max(n_reduce, 1));
  State s = state;
  spatial_split_steps->clear();
  // Split steps by spatial axis id: the loops may have been reordered before
  // tiling (vector_axis_layout), but a follower matches axes by position.
  std::map<int, int> split_step_of_axis;
  const std::vector<int> original = s.stage(stage).leaves;
  for (int id : original) {
    const Stage& st = s.stage(stage);
    int pos = st.leaf_position(id);
    bool spatial = st.iters[id].kind == IterKind::kSpatial;
    int levels = spatial ? n_space : n_reduce;
    auto& out = spatial ? space_levels : reduce_levels;
    if (levels <= 1) {
      out[0].push_back(id);
      continue;
    }
    s = s.split(stage, pos, std::vector<int64_t>(levels - 1, 1));
    const Stage& after = s.stage(stage);
    for (int l = 0; l < levels; ++l) out[l].push_back(after.leaves[pos + l]);
    if (spatial) split_step_of_axis[id] = static_cast<int>(s.steps().size()) - 1;
  }
  for (const auto& [axis, step] : split_step_of_axis) spatial_split_steps->push_back(step);
  std::vector<std::vector<int>> groups;
  int si = 0, ri = 0;
  for (char c : structure) groups.push_back(c == 'S' ? space_levels[si++] : reduce_levels[ri++]);
  std::vector<int> order = order_of(s.stage(stage), groups);
  return is_identity(order) ? s : s.reorder(stage, order);
}

State follow_tiling(const State& state, int stage, const std::vector<int>& split_steps, int level) {
  if (level < 1) throw LoomError("follow_tiling: level must be >= 1");
  State s = state;
  std::vector<std::vector<int>> levels(level + 1);
  size_t next_src = 0;
  const std::vector<int> original = s.stage(stage).leaves;
  for (int id : original) {
    const Stage& st = s.stage(stage);
    if (st.iters[id].kind != IterKind::kSpatial) continue;
    if (next_src >= split_steps.size())
      throw LoomError("follow_tiling: " + st.name() + " has more spatial loops than the producer");
    int pos = st.leaf_position(id);
    s = s.follow_split(stage, pos, split_steps[next_src++], level);
    const Stage& after = s.stage(stage);
    for (int l = 0; l <= level; ++l) levels[l].push_back(after.leaves[pos + l]);
  }
  if (next_src != split_steps.size())
    throw LoomError("follow_tiling: " + s.stage(stage).name() + " has fewer spatial loops than the producer");
  std::vector<int> order = order_of(s.stage(stage), levels);
  return is_identity(order) ? s : s.reorder(stage, order);
}

std::vector<State> tile_into_consumer(const State& s, int stage, int consumer) {
  const std::string structure = "SSRSRS";
  std::vector<int> split_steps;
  State tiled = multi_level_tile(s, stage, structure, &split_steps);
  const int n_space = static_cast<int>(split_steps.size());
  std::vector<State> out;
  for (int level : {1, 2}) {
    if (structure[level - 1] != 'S' || n_space == 0) continue;
    State fused = follow_tiling(tiled, consumer, split_steps, level);
    out.push_back(fused.compute_at(stage, consumer, level * n_space - 1));
  }
  return out;
}

}  // namespace loom
