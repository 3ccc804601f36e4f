#include "ir/lower.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "ir/bound.h"
#include "ir/error.h"
#include "ir/full_tile.h"
#include "ir/iter_graph.h"
#include "ir/simplify.h"

namespace loom {

namespace {

ForKind for_kind_of(IterAnnotation a) {
  switch (a) {
    case IterAnnotation::kNone: return ForKind::kSerial;
    case IterAnnotation::kParallel: return ForKind::kParallel;
    case IterAnnotation::kVectorize: return ForKind::kVectorized;
    case IterAnnotation::kUnroll: return ForKind::kUnrolled;
    case IterAnnotation::kVThread: return ForKind::kVThread;
    case IterAnnotation::kBlockX: return ForKind::kBlockX;
    case IterAnnotation::kBlockY: return ForKind::kBlockY;
    case IterAnnotation::kBlockZ: return ForKind::kBlockZ;
    case IterAnnotation::kThreadX: return ForKind::kThreadX;
    case IterAnnotation::kThreadY: return ForKind::kThreadY;
    case IterAnnotation::kThreadZ: return ForKind::kThreadZ;
  }
  return ForKind::kSerial;
}

Expr reduce_init(ReduceKind k) {
  switch (k) {
    case ReduceKind::kSum: return float_imm(0.0);
    case ReduceKind::kMax: return float_imm(-std::numeric_limits<float>::infinity());
    case ReduceKind::kMin: return float_imm(std::numeric_limits<float>::infinity());
  }
  return float_imm(0.0);
}

Expr combine(ReduceKind k, Expr acc, Expr v) {
  switch (k) {
    case ReduceKind::kSum: return acc + v;
    case ReduceKind::kMax: return max(acc, v);
    case ReduceKind::kMin: return min(acc, v);
  }
  return acc + v;
}

// Everything lowering knows about one non-inlined stage.
struct StageInfo {
  bool lowered = false;        // has a loop nest (not placeholder, not inlined)
  Expr body;                   // op body with inlined producers substituted
  std::vector<int64_t> root_extents;
  std::vector<int64_t> extents;  // by iterator id
  std::vector<Var> leaf_vars;    // by leaf position
  std::vector<Expr> rel_axis;    // op axes+reduce axes, relative to the region start
  std::vector<Expr> base;        // region start per spatial axis (0 for root stages)
  std::vector<int64_t> shape;    // buffer shape (region or full)
  bool local = false;            // attached: buffer of the region shape
  std::set<int64_t> scope_vars;  // var ids fixed at this stage's attach point
};

class Lowerer {
 public:
  explicit Lowerer(const State& s) : s_(s), info_(s.stages().size()) {}

  LoweredFunc run(const LowerOptions& opt) {
    const auto& stages = s_.stages();
    validate_attachments();
    full_tiles_ = opt.full_tiles;
    // GPU nests synchronize threads inside their reduction loops (shared
    // memory fetches), so their guards stay where they are.
    for (const Stage& st : stages)
      for (const Iterator& it : st.iters)
        if (is_gpu_binding(it.annotation)) full_tiles_ = false;
    for (size_t i = 0; i < stages.size(); ++i) {
      const Stage& st = stages[i];
      if (st.op->is_placeholder || st.compute_at == ComputeAtKind::kInlined) continue;
      if (st.pretransformed) {
        validate_pretransformed(static_cast<int>(i));
        continue;
      }
      info_[i].lowered = true;
      info_[i].body = expanded_body(static_cast<int>(i));
    }
    // Consumers come after producers in stage order: infer regions backwards.
    for (size_t i = stages.size(); i-- > 0;)
      if (info_[i].lowered) prepare_stage(static_cast<int>(i));

    LoweredFunc f;
    f.name = opt.func_name;
    const ComputeDAG& dag = s_.dag();
    for (const auto& n : dag.input_names()) f.args.push_back({n, dag.op(n)->shape, BufferScope::kGlobal});
    for (const auto& n : dag.output_names()) f.args.push_back({n, dag.op(n)->shape, BufferScope::kGlobal});

    std::vector<Stmt> top;
    std::vector<std::string> root_temps;
    for (size_t i = 0; i < stages.size(); ++i) {
      const Stage& st = stages[i];
      if (!info_[i].lowered) continue;
      if (info_[i].local || !dag.is_output(st.name())) {
        BufferScope scope = info_[i].local && st.scope == BufferScope::kGlobal ? BufferScope::kLocal : st.scope;
        std::vector<int64_t> stored_shape;  // in storage order (an SL step)
        for (int d : st.storage_dims()) stored_shape.push_back(info_[i].shape[d]);
        temps_.push_back({st.name(), stored_shape, scope});
        if (!info_[i].local) root_temps.push_back(st.name());
      }
      if (st.compute_at == ComputeAtKind::kRoot) top.push_back(build_stage(static_cast<int>(i)));
    }
    Stmt body = make_seq(top);
    // Pre-transformed copies: their layout follows the loops that read them,
    // and their buffer takes the source input's place among the arguments.
    for (size_t i = 0; i < stages.size(); ++i) {
      const Stage& st = stages[i];
      if (!st.pretransformed || st.compute_at == ComputeAtKind::kInlined) continue;
      const std::string& source = st.op->body->name;
      auto layout = std::make_shared<BlockedLayout>(derive_blocked_layout(body, st.name(), source, st.op->shape));
      body = flatten_blocked_loads(body, st.name(), *layout);
      for (Buffer& a : f.args)
        if (a.name == source) a = Buffer{st.name(), layout->shape(), BufferScope::kGlobal, layout};
    }
    for (auto it = root_temps.rbegin(); it != root_temps.rend(); ++it) body = make_allocate(*it, body);
    f.temps = temps_;
    f.body = body;
    return f;
  }

 private:
  void validate_attachments() {
    const auto& stages = s_.stages();
    for (size_t i = 0; i < stages.size(); ++i) {
      const Stage& st = stages[i];
      if (st.compute_at != ComputeAtKind::kIter) continue;
      if (st.attach_stage < 0 || st.attach_stage >= static_cast<int>(stages.size()))
        throw LoomError(st.name() + " is computed at a stage that does not exist");
      const Stage& t = stages[st.attach_stage];
      if (t.compute_at == ComputeAtKind::kInlined || t.op->is_placeholder)
        throw LoomError(st.name() + " is computed at " + t.name() + ", which has no loops");
      if (t.leaf_position(st.attach_iter) < 0)
        throw LoomError(st.name() + " is computed at an iterator that is no longer a loop of " + t.name());
      attached_[{st.attach_stage, st.attach_iter}].push_back(static_cast<int>(i));
    }
  }

  // A pre-transformed copy (LR step) must still copy a constant input: a
  // later cache step on it or its source makes it copy a cache stage. (The
  // LR step checked that nothing else reads the source; a new reader of it
  // can only be such a cache stage, and nothing can move or attach to it.)
  void validate_pretransformed(int i) {
    const Stage& st = s_.stages()[i];
    const Expr& b = st.op->body;
    if (b->kind != ExprKind::kLoad || !s_.dag().is_constant(b->name))
      throw LoomError(st.name() + " is pre-transformed but no longer a copy of a constant input");
  }

  // Op body with inlined stages substituted for their loads.
  Expr expanded_body(int stage) { return expand_inlined(s_.stages()[stage].op->body); }

  Expr expand_inlined(const Expr& e) {
    return mutate(e, [&](const Expr& x) -> Expr {
      if (x->kind != ExprKind::kLoad) return Expr();
      int p = s_.stage_index(x->name);
      if (p < 0) throw LoomError("a stage reads unknown tensor " + x->name);
      const Stage& ps = s_.stages()[p];
      if (ps.compute_at != ComputeAtKind::kInlined) return Expr();
      std::vector<std::pair<Var, Expr>> map;
      for (size_t d = 0; d < ps.op->axes.size(); ++d)
        map.emplace_back(ps.op->axes[d], expand_inlined(x->args[d]));
      return substitute(expand_inlined(ps.op->body), map);
    });
  }

  // Leaf vars, extents, regions, axis values of one stage.
  void prepare_stage(int i) {
    const Stage& st = s_.stages()[i];
    StageInfo& inf = info_[i];
    size_t n_axes = st.op->axes.size();
    inf.root_extents.clear();
    for (size_t r = 0; r < st.num_root_iters(); ++r) inf.root_extents.push_back(st.iters[r].extent);
    inf.base.assign(n_axes, int_imm(0));
    inf.shape = st.op->shape;
    if (st.compute_at == ComputeAtKind::kIter) {
      inf.local = true;
      inf.scope_vars = scope_at(st.attach_stage, st.attach_iter);
      infer_stage_region(i);
      for (size_t d = 0; d < n_axes; ++d) inf.root_extents[d] = inf.shape[d];
    }
    inf.extents = infer_iter_extents(st, inf.root_extents);
    std::vector<Expr> leaf_vals(st.iters.size());
    inf.leaf_vars.clear();
    for (int id : st.leaves) {
      Var v = make_var(loop_var_name(st, id), inf.extents[id]);
      inf.leaf_vars.push_back(v);
      const IterAnnotation a = st.iters[id].annotation;
      if (a == IterAnnotation::kThreadX || a == IterAnnotation::kThreadY || a == IterAnnotation::kThreadZ ||
          a == IterAnnotation::kVThread)
        relaxed_for_shared_.insert(v->var_id);
      // A loop of extent 1 is not emitted: its variable is 0.
      leaf_vals[id] = inf.extents[id] == 1 ? int_imm(0) : v;
    }
    std::vector<Expr> vals = derive_iter_values(st, leaf_vals, inf.extents);
    inf.rel_axis.assign(vals.begin(), vals.begin() + st.num_root_iters());
  }

  // Loop variables are named after their iterators; a name already used by
  // another stage's loop gets the stage name in front, so the printed loop
  // nest is unambiguous.
  std::string loop_var_name(const Stage& st, int id) {
    std::string name = st.iters[id].name;
    if (!used_names_.insert(name).second) {
      name = st.name() + "." + name;
      used_names_.insert(name);
    }
    return name;
  }

  // Var ids fixed inside loop `iter_id` of stage `target` (and everything
  // that loop is nested in).
  std::set<int64_t> scope_at(int target, int iter_id) {
    const Stage& t = s_.stages()[target];
    StageInfo& ti = info_[target];
    std::set<int64_t> out = ti.scope_vars;
    int pos = t.leaf_position(iter_id);
    for (int k = 0; k <= pos; ++k) out.insert(ti.leaf_vars[k]->var_id);
    return out;
  }

  // Absolute value of each op axis of a prepared stage.
  std::vector<Expr> absolute_axes(int i) {
    const StageInfo& inf = info_[i];
    std::vector<Expr> out = inf.rel_axis;
    for (size_t d = 0; d < inf.base.size(); ++d) out[d] = simplify(inf.base[d] + out[d]);
    return out;
  }

  // Position of the loop of `target` under which `stage` ultimately sits, or
  // -1 if it is not nested inside target.
  int nesting_position(int stage, int target) {
    int s = stage;
    while (s_.stages()[s].compute_at == ComputeAtKind::kIter) {
      const Stage& st = s_.stages()[s];
      if (st.attach_stage == target) return s_.stages()[target].leaf_position(st.attach_iter);
      s = st.attach_stage;
    }
    return -1;
  }

  void infer_stage_region(int i) {
    const Stage& st = s_.stages()[i];
    StageInfo& inf = info_[i];
    int target_pos = s_.stages()[st.attach_stage].leaf_position(st.attach_iter);
    std::vector<std::optional<Region1D>> region(st.op->shape.size());
    std::vector<bool> full(st.op->shape.size(), false);
    bool any = false;
    // A shared-scope stage is filled cooperatively by all threads of a block:
    // loops bound to threadIdx or vthread do not fix its region (it covers
    // the tiles of every thread and virtual thread, and the GPU fetches it
    // once: ir/virtual_threads.h), as in TVM's bound inference for shared
    // memory.
    const bool relax_threads = st.scope == BufferScope::kShared;
    auto is_fixed = [&](const Expr& v) {
      return inf.scope_vars.count(v->var_id) > 0 && !(relax_threads && relaxed_for_shared_.count(v->var_id) > 0);
    };
    for (int c : effective_consumers(s_, i)) {
      if (c != st.attach_stage) {
        int pos = nesting_position(c, st.attach_stage);
        if (pos < target_pos)
          throw LoomError("consumer " + s_.stages()[c].name() + " of " + st.name() +
                          " is computed outside the loop " + st.name() + " is computed at");
      }
      std::vector<std::pair<Var, Expr>> map;
      const Stage& cs = s_.stages()[c];
      std::vector<Expr> axes = absolute_axes(c);
      for (size_t d = 0; d < cs.op->axes.size(); ++d) map.emplace_back(cs.op->axes[d], axes[d]);
      for (size_t r = 0; r < cs.op->reduce_axes.size(); ++r)
        map.emplace_back(cs.op->reduce_axes[r], axes[cs.op->axes.size() + r]);
      for (const auto& acc : collect_accesses(info_[c].body)) {
        if (acc.tensor != st.name()) continue;
        any = true;
        for (size_t d = 0; d < acc.indices.size(); ++d) {
          if (full[d]) continue;
          Expr idx = substitute(acc.indices[d], map);
          auto r = infer_region(idx, is_fixed);
          if (r && region[d]) r = union_region(*region[d], *r);
          if (!r) full[d] = true;
          else region[d] = r;
        }
      }
    }
    if (!any) throw LoomError(st.name() + " is computed at " + s_.stages()[st.attach_stage].name() +
                              " but nothing there reads it");
    for (size_t d = 0; d < region.size(); ++d) {
      if (full[d] || !region[d] || region[d]->extent >= st.op->shape[d]) {
        inf.base[d] = int_imm(0);
        inf.shape[d] = st.op->shape[d];
      } else {
        inf.base[d] = region[d]->base;
        inf.shape[d] = region[d]->extent;
      }
    }
  }

  // Flat index into a stage's (or input's) buffer for absolute indices.
  Expr buffer_index(const std::string& tensor, const std::vector<Expr>& indices) {
    int p = s_.stage_index(tensor);
    if (p < 0) throw LoomError("unknown tensor " + tensor);
    const StageInfo& inf = info_[p];
    const std::vector<int64_t>& shape = inf.lowered ? inf.shape : s_.stages()[p].op->shape;
    const Stage& st = s_.stages()[p];
    Expr flat = int_imm(0);
    for (size_t k = 0; k < indices.size(); ++k) {
      // Row-major over the dimensions in storage order (SL steps).
      const size_t d = st.storage_order.empty() ? k : static_cast<size_t>(st.storage_order[k]);
      Expr idx = indices[d];
      if (inf.lowered && inf.local) idx = idx - inf.base[d];
      flat = flat * int_imm(shape[d]) + idx;
    }
    return simplify(flat);
  }

  // Rewrites multi-dimensional loads into flat buffer loads.
  // Loads of a pre-transformed copy stay multi-dimensional until its
  // layout is known (run()).
  Expr flatten_loads(const Expr& e) {
    return mutate(e, [&](const Expr& x) -> Expr {
      if (x->kind != ExprKind::kLoad) return Expr();
      std::vector<Expr> idx;
      for (const auto& a : x->args) idx.push_back(flatten_loads(a));
      const int p = s_.stage_index(x->name);
      if (p >= 0 && s_.stages()[p].pretransformed) {
        for (auto& v : idx) v = simplify(v);
        return load(x->name, idx);
      }
      return load(x->name, {buffer_index(x->name, idx)});
    });
  }

  struct Guard {
    Expr cond;
    int level;  // leaf position of the innermost loop it depends on
  };

  int level_of(const Expr& e, const StageInfo& inf) {
    int level = -1;
    visit(e, [&](const Expr& x) {
      if (x->kind != ExprKind::kVar) return;
      for (size_t k = 0; k < inf.leaf_vars.size(); ++k)
        if (inf.leaf_vars[k]->var_id == x->var_id) level = std::max(level, static_cast<int>(k));
    });
    return level;
  }

  Stmt build_stage(int i) {
    const Stage& st = s_.stages()[i];
    StageInfo& inf = info_[i];
    size_t n_axes = st.op->axes.size();
    std::vector<Expr> axes = absolute_axes(i);

    // Guards: relative root values inside the (re-inferred) root extents, and
    // absolute spatial values inside the tensor.
    std::vector<Guard> guards;
    std::vector<bool> guard_is_spatial;
    for (size_t r = 0; r < inf.rel_axis.size(); ++r) {
      Expr c = simplify(inf.rel_axis[r] < int_imm(inf.root_extents[r]));
      if (r < n_axes && inf.local)
        c = simplify(c && (axes[r] >= int_imm(0)) && (axes[r] < int_imm(st.op->shape[r])));
      if (is_const_int(c) && c->int_value) continue;
      guards.push_back({c, level_of(c, inf)});
      guard_is_spatial.push_back(r < n_axes);
    }

    std::vector<std::pair<Var, Expr>> axis_map;
    for (size_t d = 0; d < n_axes; ++d) axis_map.emplace_back(st.op->axes[d], axes[d]);
    for (size_t r = 0; r < st.op->reduce_axes.size(); ++r)
      axis_map.emplace_back(st.op->reduce_axes[r], axes[n_axes + r]);
    std::vector<Expr> out_idx(axes.begin(), axes.begin() + n_axes);
    Expr store_index = buffer_index(st.name(), out_idx);

    Stmt innermost;
    Stmt init_body;
    int first_reduce = -1;
    bool is_reduce = inf.body->kind == ExprKind::kReduce;
    if (is_reduce) {
      ReduceKind rk = inf.body->reduce_kind;
      Expr src = flatten_loads(simplify(substitute(inf.body->args[0], axis_map)));
      innermost = make_store(st.name(), store_index, combine(rk, load(st.name(), {store_index}), src));
      init_body = make_store(st.name(), store_index, reduce_init(rk));
      for (size_t k = 0; k < st.leaves.size(); ++k)
        if (st.iters[st.leaves[k]].kind == IterKind::kReduce) {
          first_reduce = static_cast<int>(k);
          break;
        }
    } else {
      Expr v = flatten_loads(simplify(substitute(inf.body, axis_map)));
      innermost = make_store(st.name(), store_index, v);
    }

    // A reduction into a local tile buffer computes the whole tile where no
    // access can leave its buffer: the positions past the tensor's edge
    // hold values no consumer reads, and the loops need no guard for them.
    Expr tile_nonempty = bool_imm(true);
    if (is_reduce && inf.local && full_tiles_)
      tile_nonempty = drop_guards_inside_the_tile(i, simplify(substitute(inf.body->args[0], axis_map)), out_idx,
                                                  guards, guard_is_spatial);

    // Init nest: spatial loops at or after the first reduce loop, fresh vars.
    Stmt init_nest;
    if (is_reduce) {
      int from = first_reduce < 0 ? static_cast<int>(st.leaves.size()) : first_reduce;
      std::vector<std::pair<Var, Expr>> fresh;
      std::vector<int> loops;
      for (size_t k = from; k < st.leaves.size(); ++k)
        if (st.iters[st.leaves[k]].kind == IterKind::kSpatial) {
          loops.push_back(static_cast<int>(k));
          fresh.emplace_back(inf.leaf_vars[k], make_var(inf.leaf_vars[k]->name, inf.leaf_vars[k]->extent));
        }
      Stmt body = make_store(st.name(), simplify(substitute(init_body->index, fresh)), init_body->value);
      // Guards depending on init loops wrap the store; others are already
      // enforced by the enclosing loops' guards (placed by level below).
      Expr c = bool_imm(true);
      for (size_t gi = 0; gi < guards.size(); ++gi)
        if (guard_is_spatial[gi] && guards[gi].level >= from) c = c && substitute(guards[gi].cond, fresh);
      c = simplify(c);
      if (!(is_const_int(c) && c->int_value)) body = make_if(c, body);
      for (size_t k = loops.size(); k-- > 0;) {
        int pos = loops[k];
        const Iterator& it = st.iters[st.leaves[pos]];
        ForKind fk = for_kind_of(it.annotation);
        if (fk == ForKind::kParallel) fk = ForKind::kSerial;  // nested inside the reduction's loops
        if (inf.extents[st.leaves[pos]] == 1) continue;
        body = make_for(fresh[k].second, inf.extents[st.leaves[pos]], fk, body);
      }
      init_nest = body;
      if (first_reduce < 0) {  // no reduce loop: init right before the update
        innermost = make_seq({init_nest, innermost});
        init_nest = nullptr;
      }
    }

    // The loops from leaf position k inward, under the guard conditions `cs`
    // (per guard; whole tiles drop some). A pragma on a loop of extent 1 (not
    // emitted) moves to the next enclosing loop: `pending_unroll`.
    std::vector<Expr> conds;
    for (const auto& g : guards) conds.push_back(g.cond);
    struct Nest {
      Stmt stmt;
      int64_t pending_unroll = 0;
    };
    std::function<Nest(int, const std::vector<Expr>&, bool, int)> build_from =
        [&](int k, const std::vector<Expr>& cs, bool versioned, int partitions_left) -> Nest {
      if (k == static_cast<int>(st.leaves.size())) return {innermost, 0};
      if (k == first_reduce && !versioned && full_tiles_) {
        int64_t pending = 0;
        Stmt nest = build_full_tile_versions(i, first_reduce, guards, cs, [&](const std::vector<Expr>& vcs) {
          Nest n = build_from(k, vcs, true, partitions_left);
          pending = n.pending_unroll;
          return n.stmt;
        });
        return {nest, pending};
      }
      const int id = st.leaves[k];
      const int64_t extent = inf.extents[id];
      const int64_t unroll = st.pragma_iter == id ? st.auto_unroll_max_step : 0;
      const ForKind kind = for_kind_of(st.iters[id].annotation);
      auto body_of = [&](const std::vector<Expr>& bcs, int parts) -> Nest {
        Nest in = build_from(k + 1, bcs, versioned, parts);
        Stmt body = in.stmt;
        if (init_nest && k + 1 == first_reduce) body = make_seq({init_nest, body});
        // Guards whose innermost variable is this loop (they cover the init
        // nest too when it sits inside this loop).
        Expr c = bool_imm(true);
        for (size_t gi = 0; gi < guards.size(); ++gi)
          if (guards[gi].level == k) c = c && bcs[gi];
        c = simplify(c);
        if (!(is_const_int(c) && c->int_value)) body = make_if(c, body);
        return {wrap_attached(i, id, body), in.pending_unroll};
      };
      if (extent == 1) {
        Nest n = body_of(cs, partitions_left);
        return {n.stmt, std::max(n.pending_unroll, unroll)};
      }
      const Var& v = inf.leaf_vars[k];
      std::vector<Expr> whole_cs = cs;
      const int64_t whole = full_tiles_ && partitions_left > 0 && kind != ForKind::kVectorized
                                ? whole_prefix(i, k, guards, cs, whole_cs)
                                : 0;
      if (whole == 0) {
        Nest n = body_of(cs, partitions_left);
        return {make_for(v, extent, kind, n.stmt, std::max(unroll, n.pending_unroll)), 0};
      }
      // Index-set splitting: the first `whole` iterations without the guards
      // they satisfy, then the rest (usually one partial tile) with them.
      Nest head = body_of(whole_cs, partitions_left - 1), rest = body_of(cs, partitions_left - 1);
      Stmt tail;
      if (extent - whole == 1) {
        tail = substitute(rest.stmt, {{v, int_imm(whole)}});
      } else {
        Var t = make_var(v->name, extent - whole);
        tail = make_for(t, extent - whole, kind == ForKind::kParallel ? ForKind::kSerial : kind,
                        substitute(rest.stmt, {{v, t + int_imm(whole)}}), std::max(unroll, rest.pending_unroll));
      }
      return {make_seq({make_for(v, whole, kind, head.stmt, std::max(unroll, head.pending_unroll)), tail}), 0};
    };
    Nest nest = build_from(0, conds, false, kMaxPartitionsPerPath);
    Stmt body = nest.stmt;
    if (init_nest && first_reduce == 0) body = make_seq({init_nest, body});
    // Guards with no loop variable (constant after simplification) were
    // dropped above when true; a false one means an empty region.
    for (const auto& g : guards)
      if (g.level < 0) body = make_if(g.cond, body);
    if (!(is_const_int(tile_nonempty) && tile_nonempty->int_value)) body = make_if(tile_nonempty, body);
    return body;
  }

  // Drops the spatial guards of local stage i whose own loop variables only
  // index dimensions that stay inside their buffers over the loops' whole
  // ranges (the tile's own dimensions; loaded tensors' or tiles'). Any other
  // dimension has, within a tile, the value it has where the guard holds, so
  // it stays in range as long as the tile is not empty: the returned test
  // (on the enclosing loops' variables) says so, true when it always is.
  // `source` is the reduction's operand with multi-dimensional loads.
  Expr drop_guards_inside_the_tile(int i, const Expr& source, const std::vector<Expr>& out_idx,
                                   std::vector<Guard>& guards, std::vector<bool>& spatial) {
    const StageInfo& inf = info_[i];
    std::set<int64_t> own;
    for (const Var& v : inf.leaf_vars) own.insert(v->var_id);
    Expr nonempty = bool_imm(true);
    struct Dim {
      Expr index;    // relative to the buffer's region
      int64_t size;  // 0: unknown, never provably inside
    };
    std::vector<Dim> dims;
    for (size_t d = 0; d < out_idx.size(); ++d) dims.push_back({simplify(out_idx[d] - inf.base[d]), inf.shape[d]});
    visit(source, [&](const Expr& x) {
      if (x->kind != ExprKind::kLoad) return;
      const int p = s_.stage_index(x->name);
      for (size_t d = 0; d < x->args.size(); ++d) {
        if (p < 0) {
          dims.push_back({x->args[d], 0});
          continue;
        }
        const StageInfo& pi = info_[p];
        const bool local = pi.lowered && pi.local;
        const int64_t size = pi.lowered ? pi.shape[d] : s_.stages()[p].op->shape[d];
        dims.push_back({local ? simplify(x->args[d] - pi.base[d]) : x->args[d], size});
      }
    });
    auto inside = [](const Dim& a) {
      const IntBound b = const_int_bound(a.index);
      return a.size > 0 && b.min >= 0 && b.max < a.size;
    };
    for (size_t gi = guards.size(); gi-- > 0;) {
      if (!spatial[gi]) continue;  // a reduction guard keeps garbage out of valid outputs
      bool safe = true;
      for (const Dim& a : dims) {
        bool shares = false;
        visit(guards[gi].cond, [&](const Expr& x) {
          shares |= x->kind == ExprKind::kVar && own.count(x->var_id) && uses_var(a.index, x);
        });
        if (shares && !inside(a)) safe = false;
      }
      // Its own variables in another guard (a fused loop of two axes):
      // moving them into range could move the other guard's out.
      for (size_t gj = 0; gj < guards.size(); ++gj)
        if (gj != gi)
          visit(guards[gi].cond, [&](const Expr& x) {
            if (x->kind == ExprKind::kVar && own.count(x->var_id) && uses_var(guards[gj].cond, x)) safe = false;
          });
      Expr some = bool_imm(true);
      for (const Expr& c : conjuncts(guards[gi].cond)) {
        Expr t = holds_for_some(c, own);
        if (!t.defined()) safe = false;
        else some = some && t;
      }
      if (!safe) continue;
      nonempty = nonempty && some;
      guards.erase(guards.begin() + static_cast<std::ptrdiff_t>(gi));
      spatial.erase(spatial.begin() + static_cast<std::ptrdiff_t>(gi));
    }
    return simplify(nonempty);
  }

  // The leaf variables of stage i from position k inward, and which guards
  // sit inside loop k.
  std::set<int64_t> vars_from(int i, int k) const {
    std::set<int64_t> out;
    for (size_t kk = k; kk < info_[i].leaf_vars.size(); ++kk) out.insert(info_[i].leaf_vars[kk]->var_id);
    return out;
  }
  static std::vector<bool> inside_loop(const std::vector<Guard>& guards, int k) {
    std::vector<bool> out;
    for (const auto& g : guards) out.push_back(g.level >= k);
    return out;
  }

  // Index-set splitting of loop k of stage i (ir/full_tile.h).
  static constexpr int kMaxPartitionsPerPath = 2;
  int64_t whole_prefix(int i, int k, const std::vector<Guard>& guards, const std::vector<Expr>& cs,
                       std::vector<Expr>& whole_cs) {
    const int64_t extent = info_[i].extents[s_.stages()[i].leaves[k]];
    return whole_iterations(info_[i].leaf_vars[k], extent, vars_from(i, k + 1), cs, inside_loop(guards, k), whole_cs);
  }

  // The reduction nest of stage i (its loops from the outermost reduce loop
  // inward) in versions, tested once per tile (ir/full_tile.h).
  Stmt build_full_tile_versions(int i, int first_reduce, const std::vector<Guard>& guards,
                                const std::vector<Expr>& conds,
                                const std::function<Stmt(const std::vector<Expr>&)>& build_nest) {
    return full_tile_versions(vars_from(i, first_reduce), conds, inside_loop(guards, first_reduce), build_nest);
  }

  // Stages computed at loop `iter_id` of stage i go first in its body, each
  // inside the allocation of its buffer.
  Stmt wrap_attached(int i, int iter_id, Stmt body) {
    auto it = attached_.find({i, iter_id});
    if (it == attached_.end()) return body;
    std::vector<Stmt> seq;
    for (int p : it->second) seq.push_back(build_stage(p));
    seq.push_back(body);
    Stmt out = make_seq(seq);
    for (auto p = it->second.rbegin(); p != it->second.rend(); ++p)
      out = make_allocate(s_.stages()[*p].name(), out);
    return out;
  }

  const State& s_;
  std::vector<StageInfo> info_;
  std::map<std::pair<int, int>, std::vector<int>> attached_;
  std::vector<Buffer> temps_;
  std::set<std::string> used_names_;
  std::set<int64_t> relaxed_for_shared_;  // vars of loops bound to threadIdx.* or vthread
  bool full_tiles_ = true;
};

}  // namespace

LoweredFunc lower(const State& state, const LowerOptions& options) {
  Lowerer l(state);
  return l.run(options);
}

std::string loop_nest_key(const State& state) {
  try {
    LowerOptions options;
    options.full_tiles = false;
    char digest[17];
    std::snprintf(digest, sizeof digest, "%016llx",
                  static_cast<unsigned long long>(std::hash<std::string>{}(to_string(lower(state, options)))));
    return digest;
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace loom
