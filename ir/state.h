// A schedule: an immutable, cheap-to-copy State plus the replayable Steps that
// produced it from the DAG's initial state.
//
// Each stage (one per operation, cache stages included) keeps every iterator
// it ever had (`iters`, indexed by id: the op's axes first, then its reduce
// axes), the split/fuse relations between them, and the current loop order
// (`leaves`). Steps address stages and leaf iterators by position at the time
// the step is applied, as Ansor's records do.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ir/compute_dag.h"
#include "ir/stmt.h"

namespace loom {

enum class IterKind : uint8_t { kSpatial, kReduce };

enum class IterAnnotation : uint8_t {
  kNone, kParallel, kVectorize, kUnroll, kVThread,
  kBlockX, kBlockY, kBlockZ, kThreadX, kThreadY, kThreadZ,
};
const char* annotation_name(IterAnnotation a);
// A GPU binding: a block or thread index, or a virtual thread.
bool is_gpu_binding(IterAnnotation a);
IterAnnotation parse_annotation(const std::string& s);  // throws LoomError

struct Iterator {
  std::string name;
  int64_t extent = 1;  // nominal extent (over the stage's full domain)
  IterKind kind = IterKind::kSpatial;
  IterAnnotation annotation = IterAnnotation::kNone;
};

// Split: one parent, children outer->inner. Fuse: parents outer->inner, one child.
struct IterRelation {
  enum Kind : uint8_t { kSplit, kFuse } kind = kSplit;
  std::vector<int> parents;
  std::vector<int> children;
  // kSplit: the split lengths as given (see SplitStep) and their direction.
  std::vector<int64_t> lengths;
  bool inner_to_outer = true;
};

enum class ComputeAtKind : uint8_t { kRoot, kInlined, kIter };

struct Stage {
  Op op;
  std::vector<Iterator> iters;  // by id; ids [0, n_axes) are op axes, then reduce axes
  std::vector<int> leaves;      // loop order, outer -> inner (ids into iters)
  std::vector<IterRelation> relations;
  ComputeAtKind compute_at = ComputeAtKind::kRoot;
  int attach_stage = -1;  // kIter: target stage index
  int attach_iter = -1;   // kIter: target iterator id (a leaf of the target)
  BufferScope scope = BufferScope::kGlobal;
  int64_t auto_unroll_max_step = 0;  // pragma on the stage's outermost loop
  int pragma_iter = -1;              // iterator id carrying the pragma
  // Order of the op's dimensions in its buffer, outermost first (an SL step);
  // empty: the op's own order. Only the flat layout changes: loads, bounds
  // and loops still speak of the op's logical indices.
  std::vector<int> storage_order;
  // A copy of a constant input computed once outside the program, in the
  // blocked layout its reader's loops walk (an LR step, ir/layout.h). It
  // has no loop nest in the program; its buffer is an argument.
  bool pretransformed = false;

  const std::string& name() const { return op->name; }
  size_t num_root_iters() const { return op->axes.size() + op->reduce_axes.size(); }
  int leaf_position(int iter_id) const;  // -1 if not a leaf
  // The loops are the op's axes in order, none split, fused, reordered or
  // annotated, and the buffer has no storage layout.
  bool loops_untouched() const;
  // The op's dimensions in storage order, outermost first.
  std::vector<int> storage_dims() const;
  // The dimension that is contiguous in memory (-1 for a 0-d op).
  int innermost_storage_dim() const;
};

class Step;
using StepPtr = std::shared_ptr<const Step>;

struct StateNode {
  std::shared_ptr<const ComputeDAG> dag;
  std::vector<Stage> stages;
  std::vector<StepPtr> steps;
};

class State {
 public:
  State() = default;
  static State initial(std::shared_ptr<const ComputeDAG> dag);
  // Replays steps on the DAG's initial state. Throws LoomError naming the
  // first invalid step ("step 3 (SP): ...").
  static State replay(std::shared_ptr<const ComputeDAG> dag, const std::vector<StepPtr>& steps);
  static State from_json(std::shared_ptr<const ComputeDAG> dag, const nlohmann::json& steps);

  bool defined() const { return node_ != nullptr; }
  const ComputeDAG& dag() const { return *node_->dag; }
  const std::shared_ptr<const ComputeDAG>& dag_ptr() const { return node_->dag; }
  const std::vector<Stage>& stages() const { return node_->stages; }
  const Stage& stage(int i) const;
  int stage_index(const std::string& name) const;  // -1 if absent
  const std::vector<StepPtr>& steps() const { return node_->steps; }

  // Applies one step, returning the new state; `*this` is never changed.
  // Throws LoomError for a step that is invalid here.
  State apply(const StepPtr& step) const;

  // Convenience: build the step and apply it.
  State split(int stage, int iter, std::vector<int64_t> lengths, bool inner_to_outer = true) const;
  State follow_split(int stage, int iter, int src_step, int n_split) const;
  State follow_fused_split(int stage, int iter, std::vector<int> src_steps, int level,
                           bool factor_or_nparts) const;
  State fuse(int stage, std::vector<int> iters) const;
  State reorder(int stage, std::vector<int> order) const;
  State annotate(int stage, int iter, IterAnnotation a) const;
  State compute_at(int stage, int target_stage, int target_iter) const;
  State compute_inline(int stage) const;
  State compute_root(int stage) const;
  State cache_read(int stage, BufferScope scope, std::vector<int> readers) const;
  State cache_write(int stage, BufferScope scope) const;
  State rfactor(int stage, int iter, int factor_iter) const;
  State storage_layout(int stage, std::vector<int> dims) const;
  State pragma(int stage, int iter, const std::string& pragma) const;
  State layout_rewrite(int stage) const;
  State fuse_dims(int stage, int dim) const;

  nlohmann::json steps_json() const;
  // A canonical description of the schedule structure (for replay identity).
  std::string fingerprint() const;
  // Human-readable loop structure (iterators with extents and annotations).
  std::string to_string() const;

 private:
  explicit State(std::shared_ptr<StateNode> n) : node_(std::move(n)) {}
  std::shared_ptr<const StateNode> node_;
};

// Stages whose output is read by `stage` through inlined stages: i.e. which
// non-inlined stages consume stage's output.
std::vector<int> effective_consumers(const State& s, int stage);
std::vector<int> direct_consumers(const State& s, int stage);

}  // namespace loom
