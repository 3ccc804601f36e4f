// Crossover: a child that takes, stage by stage, the decisions of one parent
// or the other. Parents must share their step structure (same sketch and the
// same annotation steps: same tags acting on the same stages); the child
// takes every step acting on a given stage from the parent drawn for that
// stage, and is kept only if it replays.
#pragma once

#include <optional>
#include <random>

#include "ir/state.h"

namespace loom {

std::optional<State> crossover(const State& a, const State& b, std::mt19937_64& rng);

}  // namespace loom
