// The schedule a network's task runs with until it is tuned: every
// element-wise stage that is not an output inlined into its readers; in each
// remaining stage the reduction loops moved inside the spatial ones but
// outside the innermost spatial loop, which is vectorized (split by the
// vector width when longer), and the other spatial loops fused into one
// parallel loop when there are several threads. Simple and always valid; the
// tuner replaces it.
#pragma once

#include <memory>

#include "ir/state.h"

namespace loom::graph {

State default_schedule(const std::shared_ptr<const ComputeDAG>& dag, int threads, int vector_width);

}  // namespace loom::graph
