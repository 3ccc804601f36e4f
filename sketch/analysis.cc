#include "sketch/analysis.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "ir/simplify.h"

namespace loom::sketch_analysis {

namespace {

// Index is axis `v` plus an optional integer constant.
bool is_const_shift_of(const Expr& e, const Var& v) {
  auto is_v = [&](const Expr& x) { return x->kind == ExprKind::kVar && x->var_id == v->var_id; };
  if (is_v(e)) return true;
  if (e->kind == ExprKind::kAdd || e->kind == ExprKind::kSub) {
    if (is_v(e->args[0]) && is_const_int(e->args[1])) return true;
    if (e->kind == ExprKind::kAdd && is_const_int(e->args[0]) && is_v(e->args[1])) return true;
  }
  return false;
}

struct AccessPattern {
  bool simple = true;           // every index is an axis + constant, or a constant
  bool axis_missing = false;    // some axis of the reader is not used
  bool axis_duplicated = false;
  bool same_order = true;       // axes appear in the reader's axis order
};

AccessPattern classify_access(const OpNode& reader, const std::vector<Expr>& indices) {
  AccessPattern p;
  std::vector<int> count(reader.axes.size(), 0);
  std::vector<int> order;
  for (const Expr& idx : indices) {
    if (is_const_int(idx)) continue;
    bool found = false;
    for (size_t a = 0; a < reader.axes.size() && !found; ++a) {
      if (is_const_shift_of(idx, reader.axes[a])) {
        ++count[a];
        order.push_back(static_cast<int>(a));
        found = true;
      }
    }
    if (!found) {
      p.simple = false;
      return p;
    }
  }
  for (int c : count) {
    if (c == 0) p.axis_missing = true;
    if (c > 1) p.axis_duplicated = true;
  }
  for (size_t k = 1; k < order.size(); ++k)
    if (order[k] < order[k - 1]) p.same_order = false;
  return p;
}

// Reads of other tensors grouped by tensor, in first-read order.
std::vector<std::pair<std::string, std::vector<std::vector<Expr>>>> reads_by_tensor(const OpNode& op) {
  std::vector<std::pair<std::string, std::vector<std::vector<Expr>>>> out;
  std::map<std::string, size_t> index;
  for (const auto& acc : collect_accesses(op.body)) {
    auto it = index.find(acc.tensor);
    if (it == index.end()) {
      index[acc.tensor] = out.size();
      out.push_back({acc.tensor, {acc.indices}});
    } else {
      out[it->second].second.push_back(acc.indices);
    }
  }
  return out;
}

// The variables an access's indices use.
std::set<int64_t> index_vars(const std::vector<Expr>& indices) {
  std::set<int64_t> vars;
  for (const Expr& idx : indices)
    visit(idx, [&](const Expr& e) {
      if (e->kind == ExprKind::kVar) vars.insert(e->var_id);
    });
  return vars;
}

// Some spatial axis of extent > 1 is not among `vars`: an access using only
// `vars` is reused across that axis.
bool misses_an_axis(const OpNode& op, const std::set<int64_t>& vars) {
  for (const Var& a : op.axes)
    if (a->extent > 1 && !vars.count(a->var_id)) return true;
  return false;
}

// The (last) dimension whose index is exactly `axis`; -1 if none.
int dim_indexed_by(const std::vector<Expr>& indices, const Var& axis) {
  int dim = -1;
  for (size_t d = 0; d < indices.size(); ++d)
    if (indices[d]->kind == ExprKind::kVar && indices[d]->var_id == axis->var_id) dim = static_cast<int>(d);
  return dim;
}

bool has_branch_or_expensive_call(const Expr& body) {
  // Ansor treats only exp as expensive; Loom counts every transcendental
  // call, for the same reason: inlining would evaluate it once per read.
  static const std::set<std::string> kExpensive = {"exp", "log", "pow", "tanh", "erf", "sigmoid"};
  bool found = false;
  visit(body, [&](const Expr& e) {
    if (e->kind == ExprKind::kSelect) found = true;
    if (e->kind == ExprKind::kCall && kExpensive.count(e->name)) found = true;
  });
  return found;
}

}  // namespace

bool descends_from(const Stage& st, int iter_id, int root_id) {
  std::vector<bool> reach(st.iters.size(), false);
  reach[root_id] = true;
  for (const auto& r : st.relations) {
    bool any = false;
    for (int p : r.parents) any = any || reach[p];
    if (any)
      for (int c : r.children) reach[c] = true;
  }
  return reach[iter_id];
}

bool has_loops(const Stage& st) {
  return !st.op->is_placeholder && st.compute_at != ComputeAtKind::kInlined && !st.pretransformed;
}

bool has_reduce_iter(const Stage& st) {
  for (int id : st.leaves)
    if (st.iters[id].kind == IterKind::kReduce) return true;
  return false;
}

bool is_output(const State& s, int stage) { return s.dag().is_output(s.stage(stage).name()); }

bool is_tiled(const Stage& st) { return !st.relations.empty(); }

bool needs_multi_level_tiling(const State& s, int stage) {
  const OpNode& op = *s.stage(stage).op;
  if (op.is_placeholder) return false;
  int n_missing = 0;
  for (const auto& [tensor, accesses] : reads_by_tensor(op)) {
    std::set<int64_t> vars;
    for (const auto& indices : accesses) vars.merge(index_vars(indices));
    // A scalar read at fixed indices (a where's fill value, a network's
    // constant factor) is broadcast, not reused across a tile: it does not
    // make an element-wise stage (a masked select) a contraction.
    if (vars.empty()) continue;
    if (misses_an_axis(op, vars)) ++n_missing;  // at most one per input tensor
    if (n_missing >= 2 || (n_missing >= 1 && !op.reduce_axes.empty())) return true;
  }
  return false;
}

int innermost_spatial_axis(const Stage& st) {
  for (auto it = st.leaves.rbegin(); it != st.leaves.rend(); ++it) {
    if (st.iters[*it].kind != IterKind::kSpatial) continue;
    // Walk split/fuse relations back to a root iterator (the innermost
    // parent of a fuse).
    int id = *it;
    for (size_t guard = 0; guard <= st.relations.size() && id >= static_cast<int>(st.op->axes.size());
         ++guard) {
      for (const auto& r : st.relations)
        if (std::find(r.children.begin(), r.children.end(), id) != r.children.end()) {
          id = r.parents.back();
          break;
        }
    }
    return id < static_cast<int>(st.op->axes.size()) ? id : -1;
  }
  return -1;
}

std::vector<PackableInput> packable_inputs(const State& s, int stage) {
  std::vector<PackableInput> out;
  const Stage& st = s.stage(stage);
  const OpNode& op = *st.op;
  if (op.is_placeholder || op.axes.empty()) return out;
  const int axis = innermost_spatial_axis(st);
  if (axis < 0) return out;
  const Var& innermost = op.axes[axis];
  if (innermost->extent <= 1) return out;
  for (const auto& [tensor, accesses] : reads_by_tensor(op)) {
    const int t = s.stage_index(tensor);
    if (t < 0 || accesses.size() != 1 || accesses[0].size() < 2) continue;
    const Stage& ts = s.stage(t);
    // Only tensors in main memory: not a cache stage, not an inlined one.
    if (ts.scope != BufferScope::kGlobal || ts.compute_at == ComputeAtKind::kInlined) continue;
    const std::vector<Expr>& indices = accesses[0];
    // One index is the innermost spatial axis itself: the packed tile,
    // stored with that dimension last, is contiguous along the vector loop.
    const int dim = dim_indexed_by(indices, innermost);
    if (dim < 0 || !misses_an_axis(op, index_vars(indices))) continue;
    // A copy that already stores that dimension last (attention's
    // transposed keys) is a packed tile wherever it is computed: its own
    // location, drawn by the random annotation, does what a second copy would.
    if (is_data_movement(s, t) && dim == static_cast<int>(indices.size()) - 1) continue;
    out.push_back({t, dim});
  }
  return out;
}

// Every read that depends on `axis` steps by 1 along it: a vector loop over
// it loads neighbouring elements (or, once packing stores them last,
// contiguous lanes). A stride-2 conv's output width reads every other
// input column: a gather.
bool reads_unit_stride(const OpNode& op, const Var& axis) {
  for (const auto& [tensor, accesses] : reads_by_tensor(op)) {
    for (const auto& indices : accesses) {
      for (size_t d = 0; d < indices.size(); ++d) {
        if (!uses_var(indices[d], axis)) continue;
        const Expr step = simplify(substitute(indices[d], {{axis, axis + int_imm(1)}}) - indices[d]);
        if (!is_const_value(step, 1)) return false;
      }
    }
  }
  return true;
}

namespace {

// Every use of `axis` in `e` is a quotient axis / c with c a multiple of
// `width` (a grouped conv's (k / Kg) * Cg + rc): constant over a vector
// chunk of `width` lanes that starts at a multiple of the width.
bool uses_only_as_chunk_quotient(const Expr& e, const Var& axis, int64_t width) {
  if (e->kind == ExprKind::kDiv && e->args[0]->kind == ExprKind::kVar && e->args[0]->var_id == axis->var_id) {
    int64_t c = 0;
    return is_const_int(e->args[1], &c) && c > 0 && c % width == 0;
  }
  if (e->kind == ExprKind::kVar) return e->var_id != axis->var_id;
  for (const Expr& a : e->args)
    if (!uses_only_as_chunk_quotient(a, axis, width)) return false;
  return true;
}

}  // namespace

int better_vector_axis(const SketchTask& task, const State& s, int stage) {
  const OpNode& op = *s.stage(stage).op;
  if (op.is_placeholder || op.axes.empty() || task.vector_width <= 1) return -1;
  auto fills_vectors = [&](const Var& a) { return a->extent % task.vector_width == 0; };
  if (fills_vectors(op.axes.back()) && reads_unit_stride(op, op.axes.back())) return -1;
  // Every input that depends on the axis must give contiguous vector lanes:
  // indexed by exactly the axis in its last dimension, or in another one
  // and reused (then pack_reused_input stores it last); or it must be the
  // same element for all lanes of a chunk (a grouped conv's data when each
  // group's output channels fill whole vectors: a broadcast). Otherwise the
  // vector loop would gather (a depthwise conv's data, a grouped conv's
  // with groups of fewer channels than a vector).
  auto serves_as_vector_axis = [&](const Var& axis) {
    bool indexed = false;
    for (const auto& [tensor, accesses] : reads_by_tensor(op)) {
      for (const auto& indices : accesses) {
        const std::set<int64_t> vars = index_vars(indices);
        if (!vars.count(axis->var_id)) continue;
        bool per_chunk = true;
        for (const Expr& idx : indices) per_chunk = per_chunk && uses_only_as_chunk_quotient(idx, axis, task.vector_width);
        if (per_chunk) continue;
        const int dim = dim_indexed_by(indices, axis);
        if (dim < 0) return false;
        if (dim != static_cast<int>(indices.size()) - 1 && !misses_an_axis(op, vars)) return false;
        indexed = true;
      }
    }
    return indexed;
  };
  for (int a = static_cast<int>(op.axes.size()) - 2; a >= 0; --a)
    if (fills_vectors(op.axes[a]) && serves_as_vector_axis(op.axes[a])) return a;
  return -1;
}

bool is_packing_copy(const State& s, int stage) {
  const Stage& st = s.stage(stage);
  return st.scope == BufferScope::kLocal && !st.op->is_placeholder && st.op->reduce_axes.empty() &&
         st.compute_at != ComputeAtKind::kInlined && !st.pretransformed && !is_tiled(st);
}

bool is_strictly_inlineable(const State& s, int stage) {
  const OpNode& op = *s.stage(stage).op;
  if (op.is_placeholder || !op.reduce_axes.empty()) return false;
  if (has_branch_or_expensive_call(op.body)) return false;
  for (const auto& [tensor, accesses] : reads_by_tensor(op)) {
    for (const auto& indices : accesses) {
      AccessPattern p = classify_access(op, indices);
      if (!p.simple || !p.same_order || p.axis_duplicated) return false;
    }
  }
  return true;
}

bool is_data_movement(const State& s, int stage) {
  const OpNode& op = *s.stage(stage).op;
  if (op.is_placeholder || !op.reduce_axes.empty() || op.body->kind != ExprKind::kLoad) return false;
  const auto reads = collect_accesses(op.body);
  if (reads.size() != 1) return false;
  AccessPattern p = classify_access(op, reads[0].indices);
  return p.simple && !p.axis_duplicated;
}

bool reads_without_innermost_axis(const State& s, int reader, int producer) {
  const Stage& r = s.stage(reader);
  const int axis = innermost_spatial_axis(r);
  if (axis < 0) return false;
  const int64_t var = r.op->axes[axis]->var_id;
  for (const auto& [tensor, accesses] : reads_by_tensor(*r.op)) {
    if (tensor != s.stage(producer).name()) continue;
    for (const auto& indices : accesses)
      if (index_vars(indices).count(var)) return false;
    return true;
  }
  return false;
}

bool unplaced_compute_stage(const State& s, int stage) {
  const Stage& st = s.stage(stage);
  return !st.op->is_placeholder && !is_output(s, stage) && !has_reduce_iter(st) &&
         st.scope == BufferScope::kGlobal && st.compute_at == ComputeAtKind::kRoot;
}

std::vector<int> elementwise_chain(const State& s, int producer, int consumer) {
  std::vector<int> chain;
  int cur = producer;
  for (size_t guard = 0; guard <= s.stages().size() && cur != consumer; ++guard) {
    std::vector<int> next = direct_consumers(s, cur);
    if (next.size() != 1) return {};
    const OpNode& cur_op = *s.stage(cur).op;
    const OpNode& next_op = *s.stage(next[0]).op;
    if (cur_op.shape != next_op.shape) return {};
    for (const auto& acc : collect_accesses(next_op.body)) {
      if (acc.tensor != cur_op.name) continue;
      AccessPattern p = classify_access(next_op, acc.indices);
      if (!p.simple || p.axis_missing || p.axis_duplicated || !p.same_order) return {};
      // Same position for every axis: no constant offsets either.
      for (size_t d = 0; d < acc.indices.size(); ++d) {
        const Expr& idx = acc.indices[d];
        if (idx->kind != ExprKind::kVar || idx->var_id != next_op.axes[d]->var_id) return {};
      }
    }
    cur = next[0];
    chain.push_back(cur);
  }
  if (cur != consumer) return {};
  return chain;
}

bool elementwise_match(const State& s, int producer, int consumer) {
  return !elementwise_chain(s, producer, consumer).empty();
}

int single_elementwise_matched_consumer(const State& s, int stage) {
  std::vector<int> consumers = effective_consumers(s, stage);
  if (consumers.size() != 1) return -1;
  int c = consumers[0];
  if (!elementwise_match(s, stage, c)) return -1;
  if (has_reduce_iter(s.stage(stage)) && has_reduce_iter(s.stage(c))) return -1;
  return c;
}

bool has_cache_write_stage(const State& s, int stage) {
  return s.stage(stage).scope == BufferScope::kLocal;
}

std::pair<int64_t, int64_t> space_and_reduce_length(const Stage& st) {
  int64_t space = 1, reduce = 1;
  for (int id : st.leaves) {
    const Iterator& it = st.iters[id];
    (it.kind == IterKind::kSpatial ? space : reduce) *= it.extent;
  }
  return {space, reduce};
}

bool needs_rfactor(const SketchTask& task, const State& s, int stage) {
  const Stage& st = s.stage(stage);
  if (st.op->is_placeholder || st.op->reduce_axes.empty()) return false;
  auto [space, reduce] = space_and_reduce_length(st);
  int64_t cores = task.threads;
  if (needs_multi_level_tiling(s, stage)) {
    // Enough parallelism in the spatial loops: tiling alone is better.
    return !(space > reduce || space > cores * 16);
  }
  return reduce > 1 && reduce > cores;
}

std::vector<int> stages_attached_at(const State& s, int stage, int iter_id) {
  std::vector<int> out;
  for (size_t i = 0; i < s.stages().size(); ++i) {
    const Stage& st = s.stages()[i];
    if (st.compute_at == ComputeAtKind::kIter && st.attach_stage == stage && st.attach_iter == iter_id)
      out.push_back(static_cast<int>(i));
  }
  return out;
}

namespace {

// The variables indexing `reader`'s reads of `tensor` (only the dimensions
// whose own axis is in `dims_of_interest`, when given); false if it does not
// read `tensor`.
bool vars_indexing(const OpNode& reader, const Stage& tensor, const std::set<int64_t>* dims_of_interest,
                   std::set<int64_t>* vars) {
  bool reads = false;
  for (const auto& [name, accesses] : reads_by_tensor(reader)) {
    if (name != tensor.name()) continue;
    reads = true;
    for (const auto& indices : accesses)
      for (size_t d = 0; d < indices.size(); ++d) {
        if (dims_of_interest && (d >= tensor.op->axes.size() ||
                                 !dims_of_interest->count(tensor.op->axes[d]->var_id)))
          continue;
        for (int64_t v : index_vars({indices[d]})) vars->insert(v);
      }
  }
  return reads;
}

// Some root axis that loop `leaf_pos` of `st` was made from is in `vars`.
bool loop_uses_any(const Stage& st, int leaf_pos, const std::set<int64_t>& vars) {
  const size_t n_axes = st.op->axes.size();
  for (size_t id = 0; id < n_axes + st.op->reduce_axes.size() && id < st.iters.size(); ++id) {
    const Var& axis = id < n_axes ? st.op->axes[id] : st.op->reduce_axes[id - n_axes];
    if (vars.count(axis->var_id) && descends_from(st, st.leaves[leaf_pos], static_cast<int>(id))) return true;
  }
  return false;
}

}  // namespace

bool loop_repeats_reads_of(const State& s, int loop_stage, int leaf_pos, int producer, int reader) {
  std::set<int64_t> vars;
  if (reader < 0 || reader == loop_stage) {
    if (!vars_indexing(*s.stage(loop_stage).op, s.stage(producer), nullptr, &vars)) return false;
  } else {
    // Through the reader computed inside loop_stage: the loop moves the
    // reads when it moves the part of the reader that reads differently.
    std::set<int64_t> reader_vars;
    if (!vars_indexing(*s.stage(reader).op, s.stage(producer), nullptr, &reader_vars)) return false;
    if (!vars_indexing(*s.stage(loop_stage).op, s.stage(reader), &reader_vars, &vars)) return false;
  }
  return !loop_uses_any(s.stage(loop_stage), leaf_pos, vars);
}

int dim_moved_by_first_reader_axis(const State& s, int producer) {
  const std::vector<int> readers = effective_consumers(s, producer);
  if (readers.size() != 1) return -1;
  const OpNode& reader = *s.stage(readers[0]).op;
  std::vector<std::vector<Expr>> reads;
  for (const auto& [name, accesses] : reads_by_tensor(reader))
    if (name == s.stage(producer).name()) reads = accesses;
  if (reads.empty()) return -1;
  for (const Var& axis : reader.axes) {
    if (axis->extent <= 1) continue;
    int found = -1;
    for (const auto& indices : reads)
      for (size_t d = 0; d < indices.size(); ++d)
        if (index_vars({indices[d]}).count(axis->var_id)) {
          if (found >= 0 && found != static_cast<int>(d)) return -1;
          found = static_cast<int>(d);
        }
    if (found >= 0) return found;
  }
  return -1;
}

int single_consumer_for_location(const State& s, int stage) {
  std::vector<int> consumers = effective_consumers(s, stage);
  if (consumers.empty()) return -1;
  if (consumers.size() == 1) return consumers[0];
  int common = -1;
  for (int c : consumers) {
    const Stage& cs = s.stage(c);
    int root = cs.compute_at == ComputeAtKind::kIter ? cs.attach_stage : c;
    if (common == -1) common = root;
    else if (common != root) return -1;
  }
  return common;
}

}  // namespace loom::sketch_analysis
