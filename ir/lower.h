// Lowering: State -> loop-nest statement tree.
//
// Each non-inlined stage becomes a loop nest over its leaf iterators. Inlined
// stages are substituted into their consumers. A stage computed at a loop of
// another gets exactly the region its consumers read inside that loop (bound
// inference, ir/bound.h), stored in a buffer of that region's shape allocated
// at the attach point. Splits that do not divide their extent are guarded.
// Reductions get an init nest placed just before their outermost reduce loop.
#pragma once

#include <string>

#include "ir/state.h"
#include "ir/stmt.h"

namespace loom {

struct LowerOptions {
  std::string func_name = "loom_kernel";
};

// Throws LoomError when the schedule cannot be lowered (an invalid schedule).
LoweredFunc lower(const State& state, const LowerOptions& options = {});

}  // namespace loom
