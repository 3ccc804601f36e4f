// A sketch derivation rule (Ansor §4.1): looks at one stage of a partial
// sketch and says whether it applies; applying it gives one or more new
// partial sketches, each with the stage to derive next. Rules are applied to
// the stages from the output backwards; the ordered rule list for a target is
// built in one place (cpu_rules.cc).
//
// Adding a rule:
//  1. a class in sketch/rules/<name>.cc with name(), condition() and apply(),
//     and its factory declared in sketch/rules/rules.h;
//  2. the factory placed in cpu_sketch_rules() (cpu_rules.cc), or the GPU
//     list (sketch/gpu/gpu_rules.cc), with why it stands where it does
//     written beside the list: order decides which branches exist;
//  3. any decision its sketch leaves open (split lengths, locations) is
//     drawn by the annotation in sketch/init/, not by the rule;
//  4. tests in tests/sketch/test_sketch_generation.cc: the smallest workload
//     the rule applies to gets its sketch, and one it must not touch does
//     not; tests/sketch/test_sampled_programs.cc checks random programs of
//     every workload against the reference (C backend).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/state.h"
#include "sketch/sketch_task.h"

namespace loom {

// A partial sketch and the index of the next stage to derive (-1: done).
struct SketchState {
  State state;
  int stage = -1;
};

enum class RuleCondition {
  kSkip,               // the rule does not apply to this stage
  kApply,              // apply it, then also try the following rules
  kApplyAndSkipRest,   // apply it and try no further rule on this stage
};

class SketchRule {
 public:
  virtual ~SketchRule() = default;
  virtual std::string name() const = 0;
  virtual RuleCondition condition(const SketchTask& task, const State& state, int stage) const = 0;
  virtual std::vector<SketchState> apply(const SketchTask& task, const State& state, int stage) const = 0;
};

using SketchRulePtr = std::unique_ptr<const SketchRule>;

// Ansor's CPU rules in their order (cpu_rules.cc).
std::vector<SketchRulePtr> cpu_sketch_rules();
// The rules for a task's target (GPU: sketch/gpu/gpu_rules.cc).
std::vector<SketchRulePtr> sketch_rules_for(const SketchTask& task);

}  // namespace loom
