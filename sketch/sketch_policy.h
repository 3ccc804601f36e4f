// Sketch generation and sampling of complete random programs for a task.
//
//   SketchTask task{dag, /*threads=*/1};
//   auto sketches = generate_sketches(task);          // a handful per DAG
//   std::mt19937_64 rng(42);
//   auto programs = sample(task, 64, rng);            // 64 distinct States
//
// SketchPolicy keeps the sketches and the factorization cache between calls
// (the search samples every round); the free functions make a fresh one.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "ir/state.h"
#include "sketch/sketch_task.h"
#include "sketch/split_factorization.h"

namespace loom {

// Every sketch of the task: the target's rules applied to each stage from
// the output backwards, all outcomes of every applicable rule enumerated.
// Deterministic order. Sketch splits have all lengths 1 (holes to fill).
std::vector<State> generate_sketches(const SketchTask& task);

class SketchPolicy {
 public:
  explicit SketchPolicy(SketchTask task);
  const SketchTask& task() const { return task_; }
  const std::vector<State>& sketches() const { return sketches_; }

  // One complete program from a random sketch.
  State sample_one(std::mt19937_64& rng);
  // One complete program from a given sketch.
  State annotate(const State& sketch, std::mt19937_64& rng);
  // `n` programs, distinct by their steps; fewer only when
  // n * settings.max_attempts_per_state draws found no more. Deterministic
  // for a given rng state.
  std::vector<State> sample(int n, std::mt19937_64& rng);

 private:
  SketchTask task_;
  std::vector<State> sketches_;
  SplitFactorizationMemo memo_;
};

std::vector<State> sample(const SketchTask& task, int n, std::mt19937_64& rng);

}  // namespace loom
