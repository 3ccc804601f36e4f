// AN and PR: loop annotations and the auto-unroll pragma.
#include "ir/error.h"
#include "ir/steps.h"

namespace loom {
using namespace step_util;

void AnnotationStep::apply(StateNode& n) const {
  Stage& st = stage_at(n, stage);
  int id = leaf_at(st, iter);
  Iterator& it = st.iters[id];
  // A parallel or block-bound reduce loop would race on the accumulator;
  // threadIdx.x is the GPU's cross-thread reduction, which the CUDA backend
  // emits as a block allreduce (codegen/cuda/cross_thread_reduction.h).
  if (it.kind == IterKind::kReduce && annotation != IterAnnotation::kNone &&
      annotation != IterAnnotation::kUnroll && annotation != IterAnnotation::kVectorize &&
      annotation != IterAnnotation::kThreadX)
    throw LoomError("cannot annotate reduce iterator " + it.name + " as " + annotation_name(annotation));
  it.annotation = annotation;
}

nlohmann::json AnnotationStep::to_json() const {
  return {"AN", stage, iter, annotation_name(annotation)};
}

void PragmaStep::apply(StateNode& n) const {
  Stage& st = stage_at(n, stage);
  int id = leaf_at(st, iter);
  const std::string key = "auto_unroll_max_step$";
  if (pragma.rfind(key, 0) != 0) throw LoomError("unknown pragma '" + pragma + "'");
  int64_t v = 0;
  try {
    size_t used = 0;
    v = std::stoll(pragma.substr(key.size()), &used);
    if (used != pragma.size() - key.size()) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    throw LoomError("pragma '" + pragma + "': expected an integer after '$'");
  }
  if (v < 0) throw LoomError("pragma '" + pragma + "': must not be negative");
  st.auto_unroll_max_step = v;
  st.pragma_iter = id;
}

nlohmann::json PragmaStep::to_json() const { return {"PR", stage, iter, pragma}; }

void register_annotation_steps(std::map<std::string, StepFactory>& r) {
  register_step_kind(r, "AN", [](const nlohmann::json& j) -> StepPtr {
    expect_size(j, 4, "AN");
    auto s = std::make_shared<AnnotationStep>();
    s->stage = static_cast<int>(json_int(j, 1, "AN stage"));
    s->iter = static_cast<int>(json_int(j, 2, "AN iterator"));
    s->annotation = parse_annotation(json_str(j, 3, "AN annotation"));
    return s;
  });
  register_step_kind(r, "PR", [](const nlohmann::json& j) -> StepPtr {
    expect_size(j, 4, "PR");
    auto s = std::make_shared<PragmaStep>();
    s->stage = static_cast<int>(json_int(j, 1, "PR stage"));
    s->iter = static_cast<int>(json_int(j, 2, "PR iterator"));
    s->pragma = json_str(j, 3, "PR pragma");
    return s;
  });
}

}  // namespace loom
