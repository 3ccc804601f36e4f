#include "ir/state.h"

#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ir/error.h"
#include "ir/step.h"
#include "ir/steps.h"

namespace loom {

bool is_gpu_binding(IterAnnotation a) {
  switch (a) {
    case IterAnnotation::kVThread:
    case IterAnnotation::kBlockX:
    case IterAnnotation::kBlockY:
    case IterAnnotation::kBlockZ:
    case IterAnnotation::kThreadX:
    case IterAnnotation::kThreadY:
    case IterAnnotation::kThreadZ: return true;
    case IterAnnotation::kNone:
    case IterAnnotation::kParallel:
    case IterAnnotation::kVectorize:
    case IterAnnotation::kUnroll: return false;
  }
  return false;
}

const char* annotation_name(IterAnnotation a) {
  switch (a) {
    case IterAnnotation::kNone: return "none";
    case IterAnnotation::kParallel: return "parallel";
    case IterAnnotation::kVectorize: return "vectorize";
    case IterAnnotation::kUnroll: return "unroll";
    case IterAnnotation::kVThread: return "vthread";
    case IterAnnotation::kBlockX: return "blockIdx.x";
    case IterAnnotation::kBlockY: return "blockIdx.y";
    case IterAnnotation::kBlockZ: return "blockIdx.z";
    case IterAnnotation::kThreadX: return "threadIdx.x";
    case IterAnnotation::kThreadY: return "threadIdx.y";
    case IterAnnotation::kThreadZ: return "threadIdx.z";
  }
  return "?";
}

IterAnnotation parse_annotation(const std::string& s) {
  for (int a = 0; a <= static_cast<int>(IterAnnotation::kThreadZ); ++a)
    if (s == annotation_name(static_cast<IterAnnotation>(a))) return static_cast<IterAnnotation>(a);
  throw LoomError("unknown annotation '" + s + "'");
}

int Stage::leaf_position(int iter_id) const {
  for (size_t i = 0; i < leaves.size(); ++i)
    if (leaves[i] == iter_id) return static_cast<int>(i);
  return -1;
}

bool Stage::loops_untouched() const {
  if (!relations.empty() || !storage_order.empty()) return false;
  for (size_t p = 0; p < leaves.size(); ++p)
    if (leaves[p] != static_cast<int>(p) || iters[leaves[p]].annotation != IterAnnotation::kNone) return false;
  return true;
}

std::vector<int> Stage::storage_dims() const {
  if (!storage_order.empty()) return storage_order;
  std::vector<int> dims(op->axes.size());
  for (size_t d = 0; d < dims.size(); ++d) dims[d] = static_cast<int>(d);
  return dims;
}

int Stage::innermost_storage_dim() const {
  if (op->axes.empty()) return -1;
  return storage_order.empty() ? static_cast<int>(op->axes.size()) - 1 : storage_order.back();
}

State State::initial(std::shared_ptr<const ComputeDAG> dag) {
  auto n = std::make_shared<StateNode>();
  n->dag = dag;
  for (const auto& op : dag->ops()) n->stages.push_back(step_util::make_stage(op));
  return State(n);
}

State State::replay(std::shared_ptr<const ComputeDAG> dag, const std::vector<StepPtr>& steps) {
  State s = initial(std::move(dag));
  for (size_t i = 0; i < steps.size(); ++i) {
    try {
      s = s.apply(steps[i]);
    } catch (const LoomError& e) {
      throw LoomError("step " + std::to_string(i) + " (" + steps[i]->tag() + "): " + e.what());
    }
  }
  return s;
}

State State::from_json(std::shared_ptr<const ComputeDAG> dag, const nlohmann::json& steps) {
  return replay(std::move(dag), steps_from_json(steps));
}

const Stage& State::stage(int i) const {
  if (i < 0 || i >= static_cast<int>(node_->stages.size()))
    throw LoomError("stage " + std::to_string(i) + " out of range");
  return node_->stages[i];
}

int State::stage_index(const std::string& name) const {
  for (size_t i = 0; i < node_->stages.size(); ++i)
    if (node_->stages[i].name() == name) return static_cast<int>(i);
  return -1;
}

State State::apply(const StepPtr& step) const {
  auto n = std::make_shared<StateNode>(*node_);  // copy-on-write
  step->apply(*n);
  n->steps.push_back(step);
  return State(n);
}

namespace {
template <typename T>
std::shared_ptr<T> make_step() { return std::make_shared<T>(); }
}  // namespace

State State::split(int stage, int iter, std::vector<int64_t> lengths, bool inner_to_outer) const {
  auto s = make_step<SplitStep>();
  s->stage = stage;
  s->iter = iter;
  s->extent = this->stage(stage).iters.at(step_util::leaf_at(this->stage(stage), iter)).extent;
  s->lengths = std::move(lengths);
  s->inner_to_outer = inner_to_outer;
  return apply(s);
}
State State::follow_split(int stage, int iter, int src_step, int n_split) const {
  auto s = make_step<FollowSplitStep>();
  s->stage = stage; s->iter = iter; s->src_step = src_step; s->n_split = n_split;
  return apply(s);
}
State State::follow_fused_split(int stage, int iter, std::vector<int> src_steps, int level,
                                bool factor_or_nparts) const {
  auto s = make_step<FollowFusedSplitStep>();
  s->stage = stage; s->iter = iter; s->src_steps = std::move(src_steps); s->level = level;
  s->factor_or_nparts = factor_or_nparts;
  return apply(s);
}
State State::fuse(int stage, std::vector<int> iters) const {
  auto s = make_step<FuseStep>();
  s->stage = stage; s->iters = std::move(iters);
  return apply(s);
}
State State::reorder(int stage, std::vector<int> order) const {
  auto s = make_step<ReorderStep>();
  s->stage = stage; s->order = std::move(order);
  return apply(s);
}
State State::annotate(int stage, int iter, IterAnnotation a) const {
  auto s = make_step<AnnotationStep>();
  s->stage = stage; s->iter = iter; s->annotation = a;
  return apply(s);
}
State State::compute_at(int stage, int target_stage, int target_iter) const {
  auto s = make_step<ComputeAtStep>();
  s->stage = stage; s->target_stage = target_stage; s->target_iter = target_iter;
  return apply(s);
}
State State::compute_inline(int stage) const {
  auto s = make_step<ComputeInlineStep>();
  s->stage = stage;
  return apply(s);
}
State State::compute_root(int stage) const {
  auto s = make_step<ComputeRootStep>();
  s->stage = stage;
  return apply(s);
}
State State::cache_read(int stage, BufferScope scope, std::vector<int> readers) const {
  auto s = make_step<CacheReadStep>();
  s->stage = stage; s->scope = scope; s->readers = std::move(readers);
  return apply(s);
}
State State::storage_layout(int stage, std::vector<int> dims) const {
  auto s = make_step<StorageLayoutStep>();
  s->stage = stage; s->dims = std::move(dims);
  return apply(s);
}
State State::layout_rewrite(int stage) const {
  auto s = make_step<LayoutRewriteStep>();
  s->stage = stage;
  return apply(s);
}
State State::fuse_dims(int stage, int dim) const {
  auto s = make_step<FuseDimsStep>();
  s->stage = stage; s->dim = dim;
  return apply(s);
}
State State::cache_write(int stage, BufferScope scope) const {
  auto s = make_step<CacheWriteStep>();
  s->stage = stage; s->scope = scope;
  return apply(s);
}
State State::rfactor(int stage, int iter, int factor_iter) const {
  auto s = make_step<RfactorStep>();
  s->stage = stage; s->iter = iter; s->factor_iter = factor_iter;
  return apply(s);
}
State State::pragma(int stage, int iter, const std::string& pragma) const {
  auto s = make_step<PragmaStep>();
  s->stage = stage; s->iter = iter; s->pragma = pragma;
  return apply(s);
}

nlohmann::json State::steps_json() const {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& s : node_->steps) j.push_back(s->to_json());
  return j;
}

std::string State::fingerprint() const {
  std::ostringstream os;
  for (const auto& st : node_->stages) {
    os << st.name() << "|" << static_cast<int>(st.compute_at) << "," << st.attach_stage << ","
       << st.attach_iter << "," << static_cast<int>(st.scope) << "," << st.auto_unroll_max_step
       << "," << st.pragma_iter << "," << st.pretransformed << "|body:" << loom::to_string(st.op->body) << "|";
    for (const auto& it : st.iters)
      os << it.name << ":" << it.extent << ":" << static_cast<int>(it.kind) << ":"
         << static_cast<int>(it.annotation) << ";";
    os << "|leaves:";
    for (int l : st.leaves) os << l << ",";
    os << "|layout:";
    for (int d : st.storage_order) os << d << ",";
    os << "|rel:";
    for (const auto& r : st.relations) {
      os << static_cast<int>(r.kind) << "(";
      for (int p : r.parents) os << p << ",";
      os << "->";
      for (int c : r.children) os << c << ",";
      os << ")";
    }
    os << "\n";
  }
  return os.str();
}

std::string State::to_string() const {
  std::ostringstream os;
  for (size_t i = 0; i < node_->stages.size(); ++i) {
    const Stage& st = node_->stages[i];
    if (st.op->is_placeholder) continue;
    os << "stage " << i << " " << st.name();
    switch (st.compute_at) {
      case ComputeAtKind::kRoot: os << " (root)"; break;
      case ComputeAtKind::kInlined: os << " (inlined)"; break;
      case ComputeAtKind::kIter:
        os << " (at " << node_->stages[st.attach_stage].name() << "."
           << node_->stages[st.attach_stage].iters[st.attach_iter].name << ")";
        break;
    }
    if (st.scope != BufferScope::kGlobal) os << " scope=" << buffer_scope_name(st.scope);
    if (st.auto_unroll_max_step) os << " auto_unroll_max_step=" << st.auto_unroll_max_step;
    if (st.pretransformed) os << " pre-transformed";
    if (!st.storage_order.empty()) {
      os << " layout=[";
      for (size_t k = 0; k < st.storage_order.size(); ++k) os << (k ? "," : "") << st.storage_order[k];
      os << "]";
    }
    os << ":";
    for (int l : st.leaves) {
      const Iterator& it = st.iters[l];
      os << " " << it.name << "(" << it.extent;
      if (it.kind == IterKind::kReduce) os << " r";
      if (it.annotation != IterAnnotation::kNone) os << " " << annotation_name(it.annotation);
      os << ")";
    }
    os << "\n";
  }
  return os.str();
}

std::vector<int> direct_consumers(const State& s, int stage) {
  std::vector<int> out;
  const std::string& name = s.stage(stage).name();
  for (size_t i = 0; i < s.stages().size(); ++i) {
    if (op_reads(s.stages()[i].op, name)) out.push_back(static_cast<int>(i));
  }
  return out;
}


std::vector<int> effective_consumers(const State& s, int stage) {
  std::vector<int> out;
  std::set<int> seen;
  for (int c : direct_consumers(s, stage)) {
    if (s.stage(c).compute_at == ComputeAtKind::kInlined) {
      for (int cc : effective_consumers(s, c))
        if (seen.insert(cc).second) out.push_back(cc);
    } else if (seen.insert(c).second) {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace loom
