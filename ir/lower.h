// Lowering: State -> loop-nest statement tree.
//
// Each non-inlined stage becomes a loop nest over its leaf iterators. Inlined
// stages are substituted into their consumers. A stage computed at a loop of
// another gets exactly the region its consumers read inside that loop (bound
// inference, ir/bound.h), stored in a buffer of that region's shape allocated
// at the attach point. Splits that do not divide their extent are guarded;
// whole tiles run copies of their loops without the guards (LowerOptions).
// Reductions get an init nest placed just before their outermost reduce loop.
#pragma once

#include <string>

#include "ir/state.h"
#include "ir/stmt.h"

namespace loom {

struct LowerOptions {
  std::string func_name = "loom_kernel";
  // Whole tiles of non-divisible splits without their guards (ir/full_tile.h):
  // reduction nests in versions tested once per tile, loops split where the
  // test is on their own variable. Off, every guard stays in place (the cost
  // model's features read the program in that form). CPU only: ignored in a
  // schedule with GPU thread bindings.
  bool full_tiles = true;
};

// Throws LoomError when the schedule cannot be lowered (an invalid schedule).
LoweredFunc lower(const State& state, const LowerOptions& options = {});

// Identity of the program a schedule makes: a 64-bit digest (16 hex digits)
// of its lowered loop nest's text, guards in place (as the cost model's
// features read it); "" when it does not lower. Different steps can make
// one program (the tile sizes of a stage computed one element at a time,
// an auto-unroll step of 0). A digest, not the text (kilobytes), because
// searches and record loaders keep one per program; two different nests
// share one with probability about n^2 / 2^65 among n programs.
std::string loop_nest_key(const State& state);

}  // namespace loom
