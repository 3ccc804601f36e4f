// Virtual threads as a GPU runs them.
//
// Lowering keeps a vthread loop (ForKind::kVThread) as a loop around its
// stage's nest: run serially it is correct, but on a GPU it would repeat the
// whole nest — the shared-memory fetches and the reduction loop — once per
// virtual thread, each pass with a register tile 1/n of the one meant. The
// schedule's meaning is that the n iterations are independent threads'
// work done by one thread, interleaved. This pass makes that explicit:
// the vthread loop is removed and pushed down to the statements that depend
// on it, each becoming an unrolled loop of n copies (one per virtual
// thread); buffers allocated inside the loop that those statements write
// get one copy per virtual thread (a local tile becomes n tiles, a shared
// tile n slices, which together hold what the block's threads read); the
// rest (a fetch of data every virtual thread shares) runs once. The result
// computes what the serial loop computes: the iterations touch disjoint
// data, which is what a vthread annotation on a spatial loop guarantees.
//
// A vthread loop whose body this reordering could change is kept as it is:
// one that holds a cross-thread reduction, or a store into a buffer from
// outside the loop that neither depends on the virtual thread nor simply
// overwrites it.
#pragma once

#include "ir/stmt.h"

namespace loom {

LoweredFunc inject_virtual_threads(const LoweredFunc& f);

}  // namespace loom
