#include "ir/error.h"
#include "ir/step.h"
#include "ir/steps.h"

namespace loom {

// Each step kind's file provides one registration function.
void register_split_steps(std::map<std::string, StepFactory>& r);
void register_fuse_reorder_steps(std::map<std::string, StepFactory>& r);
void register_annotation_steps(std::map<std::string, StepFactory>& r);
void register_compute_location_steps(std::map<std::string, StepFactory>& r);
void register_cache_steps(std::map<std::string, StepFactory>& r);
void register_rfactor_step(std::map<std::string, StepFactory>& r);
void register_storage_layout_step(std::map<std::string, StepFactory>& r);
void register_layout_rewrite_step(std::map<std::string, StepFactory>& r);
void register_fuse_dims_step(std::map<std::string, StepFactory>& r);

namespace {
std::vector<std::string>& tag_order() {
  static std::vector<std::string> tags;
  return tags;
}

const std::map<std::string, StepFactory>& registry() {
  static const std::map<std::string, StepFactory> r = [] {
    std::map<std::string, StepFactory> m;
    register_split_steps(m);
    register_fuse_reorder_steps(m);
    register_annotation_steps(m);
    register_compute_location_steps(m);
    register_cache_steps(m);
    register_rfactor_step(m);
    register_storage_layout_step(m);
    register_layout_rewrite_step(m);
    register_fuse_dims_step(m);
    return m;
  }();
  return r;
}
}  // namespace

void register_step_kind(std::map<std::string, StepFactory>& registry, const std::string& tag,
                        StepFactory factory) {
  if (registry.count(tag)) throw LoomError("step tag " + tag + " registered twice");
  registry[tag] = std::move(factory);
  tag_order().push_back(tag);
}

std::vector<std::string> registered_step_tags() {
  registry();
  return tag_order();
}

StepPtr step_from_json(const nlohmann::json& j) {
  if (!j.is_array() || j.empty() || !j[0].is_string())
    throw LoomError("a step must be a JSON array led by a tag string, got " + j.dump());
  const std::string tag = j[0].get<std::string>();
  auto it = registry().find(tag);
  if (it == registry().end()) throw LoomError("unknown step tag '" + tag + "'");
  return it->second(j);
}

std::vector<StepPtr> steps_from_json(const nlohmann::json& j) {
  if (!j.is_array()) throw LoomError("steps: expected an array of steps");
  std::vector<StepPtr> out;
  for (size_t i = 0; i < j.size(); ++i) {
    try {
      out.push_back(step_from_json(j[i]));
    } catch (const LoomError& e) {
      throw LoomError("steps[" + std::to_string(i) + "]: " + e.what());
    }
  }
  return out;
}

BufferScope parse_scope(const std::string& s) {
  if (s == "global") return BufferScope::kGlobal;
  if (s == "local") return BufferScope::kLocal;
  if (s == "shared") return BufferScope::kShared;
  throw LoomError("unknown scope '" + s + "' (expected global, local or shared)");
}

namespace step_util {

Stage& stage_at(StateNode& n, int stage) {
  if (stage < 0 || stage >= static_cast<int>(n.stages.size()))
    throw LoomError("stage " + std::to_string(stage) + " out of range (" +
                    std::to_string(n.stages.size()) + " stages)");
  return n.stages[stage];
}

int leaf_at(const Stage& s, int leaf_pos) {
  if (leaf_pos < 0 || leaf_pos >= static_cast<int>(s.leaves.size()))
    throw LoomError("iterator " + std::to_string(leaf_pos) + " out of range (stage " + s.name() +
                    " has " + std::to_string(s.leaves.size()) + " loops)");
  return s.leaves[leaf_pos];
}

void expect_size(const nlohmann::json& j, size_t n, const char* tag) {
  if (j.size() != n)
    throw LoomError(std::string(tag) + " step needs " + std::to_string(n - 1) + " fields, got " +
                    std::to_string(j.size() - 1));
}

int64_t json_int(const nlohmann::json& j, size_t i, const char* what) {
  if (!j[i].is_number_integer()) throw LoomError(std::string(what) + ": expected an integer, got " + j[i].dump());
  return j[i].get<int64_t>();
}

std::string json_str(const nlohmann::json& j, size_t i, const char* what) {
  if (!j[i].is_string()) throw LoomError(std::string(what) + ": expected a string, got " + j[i].dump());
  return j[i].get<std::string>();
}

std::vector<int64_t> json_int_list(const nlohmann::json& j, size_t i, const char* what) {
  if (!j[i].is_array()) throw LoomError(std::string(what) + ": expected a list of integers");
  std::vector<int64_t> out;
  for (const auto& x : j[i]) {
    if (!x.is_number_integer()) throw LoomError(std::string(what) + ": expected integers, got " + x.dump());
    out.push_back(x.get<int64_t>());
  }
  return out;
}

void shift_stage_indices(StateNode& n, int from, int delta) {
  for (auto& st : n.stages)
    if (st.compute_at == ComputeAtKind::kIter && st.attach_stage >= from) st.attach_stage += delta;
}

Stage make_stage(const Op& op, BufferScope scope) {
  Stage st;
  st.op = op;
  st.scope = scope;
  if (!op->is_placeholder) {
    for (const auto& a : op->axes) st.iters.push_back({a->name, a->extent, IterKind::kSpatial});
    for (const auto& a : op->reduce_axes) st.iters.push_back({a->name, a->extent, IterKind::kReduce});
  }
  for (size_t i = 0; i < st.iters.size(); ++i) st.leaves.push_back(static_cast<int>(i));
  return st;
}

void check_nothing_attached(const StateNode& n, int stage, const char* what) {
  for (const auto& other : n.stages)
    if (other.compute_at == ComputeAtKind::kIter && other.attach_stage == stage)
      throw LoomError(std::string("cannot ") + what + " " + n.stages[stage].name() + ": " + other.name() +
                      " is computed at it");
}

void replace_with_producer(StateNode& n, int stage, const Op& consumer, Stage producer) {
  const Stage& old = n.stages[stage];
  Stage replaced = make_stage(consumer, old.scope);
  replaced.compute_at = old.compute_at;
  replaced.attach_stage = old.attach_stage;
  replaced.attach_iter = old.attach_iter;
  n.stages[stage] = std::move(replaced);
  shift_stage_indices(n, stage, 1);
  n.stages.insert(n.stages.begin() + stage, std::move(producer));
}

}  // namespace step_util
}  // namespace loom
