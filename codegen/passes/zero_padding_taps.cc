#include "codegen/passes/zero_padding_taps.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "codegen/passes/unrolling.h"
#include "ir/simplify.h"

namespace loom {

namespace {

// e = constant + sum of coefficient * variable.
struct Affine {
  std::map<int64_t, std::pair<Var, int64_t>> terms;  // var id -> (var, coefficient)
  int64_t constant = 0;
};

bool add_affine(const Expr& e, int64_t scale, Affine& out);

// e as an affine form without zero coefficients, or false.
bool to_affine(const Expr& e, Affine& out, int64_t scale = 1) {
  if (!add_affine(e, scale, out)) return false;
  for (auto it = out.terms.begin(); it != out.terms.end();)
    it = it->second.second == 0 ? out.terms.erase(it) : std::next(it);
  return true;
}

bool add_affine(const Expr& e, int64_t scale, Affine& out) {
  int64_t c = 0;
  switch (e->kind) {
    case ExprKind::kIntImm:
      out.constant += scale * e->int_value;
      return true;
    case ExprKind::kVar: {
      auto& t = out.terms[e->var_id];
      t.first = e;
      t.second += scale;
      return true;
    }
    case ExprKind::kAdd:
      return add_affine(e->args[0], scale, out) && add_affine(e->args[1], scale, out);
    case ExprKind::kSub:
      return add_affine(e->args[0], scale, out) && add_affine(e->args[1], -scale, out);
    case ExprKind::kMul:
      if (is_const_int(e->args[1], &c)) return add_affine(e->args[0], scale * c, out);
      if (is_const_int(e->args[0], &c)) return add_affine(e->args[1], scale * c, out);
      return false;
    default:
      return false;
  }
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * shape[d + 1];
  return s;
}

// A buffer written once as select(cond, x, 0), every dimension's index one
// loop variable of the store.
struct PaddedBuffer {
  std::vector<int64_t> shape;
  std::vector<Var> dim_vars;  // undefined for a dimension of extent 1 without one
  Expr cond;
};

struct Loop {
  Stmt stmt;
  Var var;
  int64_t extent;
  ForKind kind;
  int64_t unroll_limit;  // the auto_unroll_max_step in force (codegen/passes/unrolling.h)
};

int stores_in(const Stmt& s) {
  int n = 0;
  visit_stmt(s, [&](const Stmt& x) { n += x->kind == StmtKind::kStore; });
  return n;
}

class PaddingTaps {
 public:
  explicit PaddingTaps(const LoweredFunc& f) : f_(f) {}

  LoweredFunc run() {
    std::map<std::string, int> stores;
    visit_stmt(f_.body, [&](const Stmt& x) {
      if (x->kind == StmtKind::kStore) ++stores[x->buffer];
    });
    for (const auto& t : f_.temps)
      if (stores[t.name] == 1) temps_[t.name] = &t;
    std::vector<Loop> stack;
    walk_stores(f_.body, stack, [&](const StmtNode& st, const std::vector<Loop>& loops) { find_padded(st, loops); });
    if (padded_.empty()) return f_;
    walk_stores(f_.body, stack, [&](const StmtNode& st, const std::vector<Loop>& loops) {
      auto a = alloc_depth_.find(st.buffer);
      if (const ExprNode* load = padded_factor(st))
        plan_tap_versions(*load, st.index, a == alloc_depth_.end() ? 0 : a->second, loops);
    });
    if (versioned_.empty()) return f_;
    LoweredFunc out = f_;
    out.body = rebuild(f_.body, {});
    return out;
  }

 private:
  // Calls on_store(store, the loops around it) for every store in program
  // order; notes how many loops are around each allocation.
  template <typename F>
  void walk_stores(const Stmt& s, std::vector<Loop>& stack, F&& on_store) {
    if (!s) return;
    if (s->kind == StmtKind::kFor) {
      const int64_t limit = s->auto_unroll_max_step > 0 ? s->auto_unroll_max_step
                            : stack.empty()              ? 0
                                                         : stack.back().unroll_limit;
      stack.push_back({s, s->loop_var, s->extent, s->for_kind, limit});
      walk_stores(s->body[0], stack, on_store);
      stack.pop_back();
      return;
    }
    if (s->kind == StmtKind::kStore) {
      on_store(*s, stack);
      return;
    }
    if (s->kind == StmtKind::kAllocate) alloc_depth_[s->buffer] = stack.size();
    for (const auto& b : s->body) walk_stores(b, stack, on_store);
  }

  // A store select(cond, x, 0) into a temp stored nowhere else, each
  // dimension's index one loop variable: a padded buffer.
  void find_padded(const StmtNode& s, const std::vector<Loop>& stack) {
    auto t = temps_.find(s.buffer);
    const Expr& v = s.value;
    if (t == temps_.end() || v->kind != ExprKind::kSelect || v->args[2]->kind != ExprKind::kFloatImm ||
        v->args[2]->float_value != 0.0)
      return;
    const std::vector<int64_t>& shape = t->second->shape;
    Affine a;
    if (!to_affine(s.index, a) || a.constant != 0) return;
    std::map<int64_t, int64_t> extent_of;
    for (const auto& l : stack) extent_of[l.var->var_id] = l.extent;
    const auto strides = row_major_strides(shape);
    PaddedBuffer p{shape, std::vector<Var>(shape.size()), v->args[0]};
    for (const auto& [id, term] : a.terms) {
      int d = 0;
      while (d < static_cast<int>(shape.size()) && strides[d] != term.second) ++d;
      if (d == static_cast<int>(shape.size()) || p.dim_vars[d].defined() || !extent_of.count(id) ||
          extent_of[id] != shape[d])
        return;
      p.dim_vars[d] = term.first;
    }
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] > 1 && !p.dim_vars[d].defined()) return;
    padded_[s.buffer] = std::move(p);
  }

  // The load of a padded buffer that is a factor of `acc + factor * factor`.
  const ExprNode* padded_factor(const StmtNode& s) const {
    const Expr& v = s.value;
    if (v->kind != ExprKind::kAdd) return nullptr;
    for (int side = 0; side < 2; ++side) {
      const Expr& acc = v->args[side];
      const Expr& term = v->args[1 - side];
      if (acc->kind != ExprKind::kLoad || acc->name != s.buffer || acc->args.size() != 1 ||
          !structural_equal(acc->args[0], s.index) || term->kind != ExprKind::kMul)
        continue;
      for (const auto& f : term->args)
        if (f->kind == ExprKind::kLoad && padded_.count(f->name) && f->args.size() == 1) return f.get();
    }
    return nullptr;
  }

  // One bound of a tap loop: position * scale + tap * coefficient + constant >= 0,
  // where position is an affine form in loops around the tap loop.
  struct Bound {
    int64_t scale, coefficient, constant;
  };

  // alloc_depth: the loops around the accumulator's allocation (0 for an
  // argument).
  void plan_tap_versions(const ExprNode& load, const Expr& store_index, size_t alloc_depth,
                   const std::vector<Loop>& stack) {
    const PaddedBuffer& p = padded_.at(load.name);
    // The loops the accumulator's index depends on: a tap loop is none of
    // them (a reduction loop); the copied loop is one of them or encloses the
    // accumulator's allocation, so that no copy lands inside the loops over
    // which a register tile accumulates.
    std::set<int64_t> spatial;
    visit(store_index, [&](const Expr& e) {
      if (e->kind == ExprKind::kVar) spatial.insert(e->var_id);
    });
    std::map<int64_t, size_t> depth_of;
    for (size_t i = 0; i < stack.size(); ++i) depth_of[stack[i].var->var_id] = i;
    // The read's index, dimension by dimension (each term to the outermost
    // dimension whose stride divides its coefficient), each within bounds.
    Affine a;
    if (!to_affine(load.args[0], a) || a.constant < 0) return;
    const auto strides = row_major_strides(p.shape);
    const size_t nd = p.shape.size();
    std::vector<Expr> dim_index(nd);
    std::vector<int64_t> lo(nd, 0), hi(nd, 0);
    for (size_t d = 0; d < nd; ++d) {
      const int64_t q = a.constant / strides[d];
      a.constant -= q * strides[d];
      dim_index[d] = Expr(q);
      lo[d] = hi[d] = q;
    }
    for (const auto& [id, term] : a.terms) {
      const int64_t c = term.second;
      if (!depth_of.count(id)) return;
      size_t d = 0;
      while (c % strides[d] != 0) ++d;
      const int64_t k = c / strides[d], span = k * (stack[depth_of[id]].extent - 1);
      dim_index[d] = dim_index[d] + term.first * Expr(k);
      lo[d] += std::min<int64_t>(0, span);
      hi[d] += std::max<int64_t>(0, span);
    }
    std::vector<std::pair<Var, Expr>> subst;
    for (size_t d = 0; d < nd; ++d) {
      if (lo[d] < 0 || hi[d] >= p.shape[d]) return;
      if (p.dim_vars[d].defined()) subst.emplace_back(p.dim_vars[d], dim_index[d]);
    }
    std::vector<Expr> conjuncts;
    split_and(substitute(p.cond, subst), conjuncts);
    // Each conjunct as an affine bound on its innermost loop (the tap), the
    // rest of it (the position) over loops outside the tap loop.
    std::map<size_t, std::vector<std::pair<Affine, int64_t>>> by_tap;  // tap depth -> (position, coefficient)
    for (const Expr& c : conjuncts) {
      // l >= r: l - r >= 0; l > r: l - r - 1 >= 0; l <= r, l < r likewise r - l.
      if (c->kind != ExprKind::kGE && c->kind != ExprKind::kGT && c->kind != ExprKind::kLE &&
          c->kind != ExprKind::kLT)
        continue;
      const bool flip = c->kind == ExprKind::kLE || c->kind == ExprKind::kLT;
      const bool strict = c->kind == ExprKind::kGT || c->kind == ExprKind::kLT;
      Affine f;
      if (!to_affine(c->args[flip ? 1 : 0] - c->args[flip ? 0 : 1], f)) continue;
      if (strict) f.constant -= 1;
      int inner = -1;
      bool bound = true;
      for (const auto& [id, term] : f.terms) {
        auto it = depth_of.find(id);
        if (it == depth_of.end()) bound = false;
        else inner = std::max(inner, static_cast<int>(it->second));
      }
      if (!bound || inner < 0 || spatial.count(stack[inner].var->var_id)) continue;
      const int64_t coefficient = f.terms[stack[inner].var->var_id].second;
      f.terms.erase(stack[inner].var->var_id);
      by_tap[inner].emplace_back(std::move(f), coefficient);
    }
    for (auto& [tap_depth, bounds] : by_tap) add_versions(tap_depth, bounds, stack, depth_of, spatial, alloc_depth);
  }

  // The tap loop at `tap_depth` gets, for each range of positions where a
  // bound cuts it short, a copy of the loop nest around it (from the
  // innermost loop the positions depend on) whose tap loop runs over the
  // valid taps only.
  void add_versions(size_t tap_depth, const std::vector<std::pair<Affine, int64_t>>& bounds,
                    const std::vector<Loop>& stack, const std::map<int64_t, size_t>& depth_of,
                    const std::set<int64_t>& spatial, size_t alloc_depth) {
    const Loop& tap = stack[tap_depth];
    if (tap.kind == ForKind::kVectorized || stores_in(tap.stmt.get()->body[0]) != 1 || versioned_.count(tap.stmt.get()) ||
        tap_loops_.count(tap.stmt.get()))
      return;
    for (size_t i = 0; i < tap_depth; ++i)
      if (stack[i].kind == ForKind::kVectorized) return;
    // A common position: every bound's affine part a multiple of the first.
    const Affine& first = bounds[0].first;
    if (first.terms.empty()) return;
    std::vector<Bound> bs;
    for (const auto& [f, coefficient] : bounds) {
      if (f.terms.size() != first.terms.size()) return;
      const auto& [id0, t0] = *first.terms.begin();
      if (!f.terms.count(id0)) return;
      const int64_t num = f.terms.at(id0).second, den = t0.second;
      if (num % den != 0) return;
      const int64_t scale = num / den;
      for (const auto& [id, t] : first.terms)
        if (!f.terms.count(id) || f.terms.at(id).second != scale * t.second) return;
      bs.push_back({scale, coefficient, f.constant});
    }
    // The position's range and the innermost loop it depends on.
    int64_t pmin = 0, pmax = 0;
    size_t outer = 0;
    for (const auto& [id, t] : first.terms) {
      const size_t d = depth_of.at(id);
      outer = std::max(outer, d);
      const int64_t span = t.second * (stack[d].extent - 1);
      pmin += std::min<int64_t>(0, span);
      pmax += std::max<int64_t>(0, span);
    }
    // A loop emitted unrolled is left alone: its copies would multiply the
    // code, and its steps would no longer fit the unrolling limit.
    if (outer >= tap_depth || !(spatial.count(stack[outer].var->var_id) || outer < alloc_depth) ||
        unrolled_at_emission(stack[outer].stmt, stack[outer].unroll_limit) ||
        pmax - pmin > 1 << 16 || versioned_.count(stack[outer].stmt.get()) ||
        tap_loops_.count(stack[outer].stmt.get()))
      return;
    // Valid taps [lo, hi] per position; runs of positions with the same range.
    std::vector<Version> versions;
    for (int64_t pos = pmin; pos <= pmax; ++pos) {
      int64_t lo = 0, hi = tap.extent - 1;
      for (const Bound& b : bs) {
        const int64_t rest = b.scale * pos + b.constant;  // rest + coefficient * tap >= 0
        if (b.coefficient > 0) lo = std::max(lo, ceil_div(-rest, b.coefficient));
        else hi = std::min(hi, floor_div(rest, -b.coefficient));
      }
      if (hi < lo) lo = 0, hi = -1;
      if (!versions.empty() && versions.back().lo == lo && versions.back().hi == hi) versions.back().pos_hi = pos;
      else versions.push_back({pos, pos, lo, hi});
    }
    if (versions.size() < 2 || versions.size() > kMaxVersions) return;
    Expr position = Expr(int64_t{0});
    for (const auto& [id, t] : first.terms) position = position + t.first * Expr(t.second);
    versioned_[stack[outer].stmt.get()] = {tap.stmt.get(), simplify(position), std::move(versions)};
    tap_loops_.insert(tap.stmt.get());
  }

  static int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
  static int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

  static void split_and(const Expr& e, std::vector<Expr>& out) {
    if (e->kind == ExprKind::kAnd) {
      split_and(e->args[0], out);
      split_and(e->args[1], out);
    } else {
      out.push_back(e);
    }
  }

  Stmt rebuild(const Stmt& s, const std::map<const StmtNode*, std::pair<int64_t, int64_t>>& ranges) const {
    if (!s) return s;
    if (s->kind == StmtKind::kFor) {
      auto r = ranges.find(s.get());
      if (r != ranges.end()) {  // a tap loop cut to [lo, hi]
        const auto [lo, hi] = r->second;
        if (hi < lo) return make_seq({});
        Var t = make_var(s->loop_var->name, hi - lo + 1);
        Stmt body = substitute(rebuild(s->body[0], ranges), {{s->loop_var, Expr(t) + Expr(lo)}});
        return make_for(t, hi - lo + 1, s->for_kind, body, s->auto_unroll_max_step);
      }
      auto v = versioned_.find(s.get());
      if (v != versioned_.end()) {
        const Versioned& ver = v->second;
        // From the last range back: if (position <= pos_hi) {...} else ...
        Stmt chain;
        for (size_t i = ver.versions.size(); i-- > 0;) {
          const Version& x = ver.versions[i];
          auto inner = ranges;
          if (x.lo != 0 || x.hi != ver.tap->extent - 1) inner[ver.tap] = {x.lo, x.hi};
          Stmt body = rebuild(s->body[0], inner);
          chain = chain ? make_if(ver.position <= Expr(x.pos_hi), body, chain) : body;
        }
        auto n = std::make_shared<StmtNode>(*s);
        n->body = {chain};
        return n;
      }
    }
    bool changed = false;
    std::vector<Stmt> body;
    for (const auto& b : s->body) {
      body.push_back(rebuild(b, ranges));
      changed |= body.back() != b;
    }
    if (!changed) return s;
    auto n = std::make_shared<StmtNode>(*s);
    n->body = std::move(body);
    return n;
  }

  struct Version {
    int64_t pos_lo, pos_hi;  // positions
    int64_t lo, hi;          // valid taps
  };
  struct Versioned {
    const StmtNode* tap;
    Expr position;
    std::vector<Version> versions;
  };
  static constexpr size_t kMaxVersions = 8;

  const LoweredFunc& f_;
  std::map<std::string, const Buffer*> temps_;
  std::map<std::string, PaddedBuffer> padded_;
  std::map<const StmtNode*, Versioned> versioned_;  // the loop whose body is copied
  std::set<const StmtNode*> tap_loops_;
  std::map<std::string, size_t> alloc_depth_;
};

}  // namespace

LoweredFunc skip_zero_padding_taps(const LoweredFunc& f) { return PaddingTaps(f).run(); }

}  // namespace loom
