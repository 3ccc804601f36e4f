// Multi-level tiling of a stage and tiling a consumer to follow it; shared by
// the tiling rules. Split lengths are left at 1: the random annotation fills
// every split of a sketch (fill_tile_sizes).
#pragma once

#include <string>
#include <vector>

#include "ir/state.h"

namespace loom {

// Tiles `stage` with a structure such as "SSRSRS": every spatial loop is split
// into as many levels as there are 'S' in it, every reduce loop into as many
// as there are 'R', and the levels are ordered as the letters (within a
// level, loops keep their order). Returns the new state; the indices (into
// the state's steps) of the spatial SP steps go to `spatial_split_steps`, in
// the order of the op's spatial axes (whatever the loop order).
State multi_level_tile(const State& s, int stage, const std::string& structure,
                       std::vector<int>* spatial_split_steps);

// Splits every spatial loop of `stage` (element-wise matched with the stage
// that the SP steps tiled) so that its outer `level` + 1 loops follow them:
// the outer `level` levels of the producer's tiles, then one loop for the
// rest. Loops are ordered by level; reduce loops (if any) stay innermost.
State follow_tiling(const State& s, int stage, const std::vector<int>& split_steps, int level);

// Tiling with fusion (CPU levels 1 and 2, as Ansor): `stage` tiled "SSRSRS",
// `consumer` split to follow its outer `level` spatial levels and the stage
// computed at the consumer's last loop of that level. One state per level.
std::vector<State> tile_into_consumer(const State& s, int stage, int consumer);

}  // namespace loom
