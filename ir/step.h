// Schedule steps: each is one JSON array led by a short tag (e.g. ["SP", ...]),
// read back through a tag -> factory registry. A step applies to a private
// copy of the state node and throws LoomError when invalid for that state.
//
// Random choices made by sketch annotation (split lengths, unroll depth,
// compute location) live on the step as its decision, so a mutation edits the
// decision and replays instead of appending steps.
//
// Adding a step kind:
//  1. its struct in ir/steps.h: the JSON form in a comment above it, the
//     fields, tag(), apply(), to_json(), stage_id();
//  2. apply(), to_json() and a register_<kind>_step() in ir/steps/<kind>.cc;
//     the parser checks every field (step_util::expect_size, json_int, ...),
//     and apply() throws LoomError naming what is wrong, in one line (it runs
//     on a private copy: a failed step leaves the state as it was);
//  3. the register function called once in ir/step_registry.cc, and the tag
//     added to Registry.KnowsEveryStepKind (tests/ir/test_steps.cc);
//  4. a State method that builds and applies it (ir/state.{h,cc});
//  5. lowering (ir/lower.cc) where the step sets something the loop nest
//     must show; a random decision is drawn in sketch/init/ and edited by a
//     mutation in search/mutations/ (listed in mutation_lists.cc);
//  6. tests: what it does to the loop nest, a JSON round trip and replay,
//     invalid uses (expect_invalid: a one-line error, the state unchanged).
#pragma once

#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/state.h"

namespace loom {

class Step {
 public:
  virtual ~Step() = default;
  virtual const char* tag() const = 0;
  virtual void apply(StateNode& node) const = 0;
  virtual nlohmann::json to_json() const = 0;
  // The stage this step acts on (at the time it is applied).
  virtual int stage_id() const = 0;
};

using StepFactory = std::function<StepPtr(const nlohmann::json&)>;

// Parses one step array. Throws LoomError naming the problem.
StepPtr step_from_json(const nlohmann::json& j);
std::vector<StepPtr> steps_from_json(const nlohmann::json& j);
// Tags known to the registry, in registration order.
std::vector<std::string> registered_step_tags();

// Used by the per-kind step files (ir/steps/*.cc), collected in one place in
// ir/step_registry.cc.
void register_step_kind(std::map<std::string, StepFactory>& registry, const std::string& tag,
                        StepFactory factory);

// Helpers shared by the step kinds.
namespace step_util {
Stage& stage_at(StateNode& n, int stage);             // throws on bad index
int leaf_at(const Stage& s, int leaf_pos);            // iterator id; throws on bad index
int64_t json_int(const nlohmann::json& j, size_t i, const char* what);
std::string json_str(const nlohmann::json& j, size_t i, const char* what);
std::vector<int64_t> json_int_list(const nlohmann::json& j, size_t i, const char* what);
void expect_size(const nlohmann::json& j, size_t n, const char* tag);
// Shifts attach targets >= `from` by `delta` (after inserting a stage).
void shift_stage_indices(StateNode& n, int from, int delta);
// Builds a fresh stage (initial iterators) for an op.
Stage make_stage(const Op& op, BufferScope scope = BufferScope::kGlobal);
// Throws "cannot WHAT STAGE: X is computed at it" when a stage is attached to
// `stage` (steps that replace a stage must come before compute_at).
void check_nothing_attached(const StateNode& n, int stage, const char* what);
// Replaces stage `stage` by a fresh stage of `consumer` that keeps the old
// stage's scope and compute location, and inserts `producer` just before it
// (stage indices from `stage` on shift by one): cache_write's local stage
// and rfactor's partial reduction.
void replace_with_producer(StateNode& n, int stage, const Op& consumer, Stage producer);
}  // namespace step_util

}  // namespace loom
