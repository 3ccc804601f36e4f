#include "ir/virtual_threads.h"

#include <functional>
#include <map>
#include <set>
#include <string>

namespace loom {

namespace {

bool reads_any(const Expr& e, const std::set<std::string>& buffers) {
  if (!e.defined() || buffers.empty()) return false;
  bool found = false;
  visit(e, [&](const Expr& x) {
    if (x->kind == ExprKind::kLoad && buffers.count(x->name)) found = true;
  });
  return found;
}

bool reads(const Expr& e, const std::string& buffer) { return reads_any(e, {buffer}); }

// B[I] = identity followed by a threadIdx.x loop accumulating into B[I]:
// the pattern the CUDA backend turns into a block allreduce, which needs
// every thread of the block (it must not be replicated or reordered).
bool has_cross_thread_reduction(const Stmt& body) {
  bool found = false;
  visit_stmt(body, [&](const Stmt& s) {
    if (s->kind != StmtKind::kSeq) return;
    for (size_t k = 0; k + 1 < s->body.size(); ++k) {
      const Stmt& init = s->body[k];
      const Stmt& loop = s->body[k + 1];
      if (!init || !loop || init->kind != StmtKind::kStore || loop->kind != StmtKind::kFor ||
          loop->for_kind != ForKind::kThreadX)
        continue;
      visit_stmt(loop, [&](const Stmt& x) {
        if (x->kind == StmtKind::kStore && x->buffer == init->buffer && structural_equal(x->index, init->index))
          found = true;
      });
    }
  });
  return found;
}

class VThreadInjector {
 public:
  VThreadInjector(const Var& v, int64_t n, std::map<std::string, Buffer>& temps) : v_(v), n_(n), temps_(temps) {}

  // The body with the virtual threads interleaved, or nullptr when it must
  // stay a serial loop.
  Stmt run(const Stmt& body) {
    if (has_cross_thread_reduction(body)) return nullptr;
    visit_stmt(body, [&](const Stmt& s) {
      if (s->kind == StmtKind::kAllocate) inside_.insert(s->buffer);
    });
    // A buffer is touched when a statement that depends on the virtual
    // thread writes it; a statement depends on it when it uses the loop
    // variable or a touched buffer, or sits under a condition that does.
    for (bool changed = true; changed;) {
      changed = false;
      mark(body, false, changed);
    }
    bool safe = true;
    visit_stmt(body, [&](const Stmt& s) {
      if (s->kind == StmtKind::kStore && !inside_.count(s->buffer) && !store_touched(s) &&
          (reads(s->value, s->buffer) || reads(s->index, s->buffer)))
        safe = false;  // would run once instead of n times
    });
    if (!safe) return nullptr;
    for (const auto& name : touched_)
      if (inside_.count(name)) expanded_[name] = temps_.at(name).size();
    for (const auto& [name, size] : expanded_) {
      Buffer& b = temps_.at(name);
      b.shape.insert(b.shape.begin(), n_);
    }
    return rewrite(body);
  }

 private:
  bool cond_touched(const Expr& c) const { return uses_var(c, v_) || reads_any(c, touched_); }

  bool store_touched(const Stmt& s) const {
    return touched_.count(s->buffer) || uses_var(s->index, v_) || uses_var(s->value, v_) ||
           reads_any(s->index, touched_) || reads_any(s->value, touched_);
  }

  void mark(const Stmt& s, bool under, bool& changed) {
    if (!s) return;
    if (s->kind == StmtKind::kStore) {
      if ((under || store_touched(s)) && touched_.insert(s->buffer).second) changed = true;
      return;
    }
    if (s->kind == StmtKind::kIf) under = under || cond_touched(s->cond);
    for (const Stmt& b : s->body) mark(b, under, changed);
  }

  bool touches(const Stmt& s) const {
    bool found = false;
    visit_stmt(s, [&](const Stmt& x) {
      if ((x->kind == StmtKind::kStore && store_touched(x)) || (x->kind == StmtKind::kIf && cond_touched(x->cond)))
        found = true;
    });
    return found;
  }

  Stmt rewrite(const Stmt& s) {
    if (!s || !touches(s)) return s;  // shared by every virtual thread: runs once
    switch (s->kind) {
      case StmtKind::kStore:
        return replicate(s);
      case StmtKind::kIf:
        if (cond_touched(s->cond)) return replicate(s);
        break;
      case StmtKind::kFor:
        // A vector loop stays whole (one vector access per virtual thread).
        if (s->for_kind == ForKind::kVectorized) return replicate(s);
        break;
      default:
        break;
    }
    return map_children(s, [&](const Stmt& c) { return rewrite(c); });
  }

  // One copy of s per virtual thread, in an unrolled loop of its own.
  Stmt replicate(const Stmt& s) {
    Var r = make_var(v_->name, n_);
    const Expr vt = v_;
    std::function<Expr(const Expr&)> expand_loads = [&](const Expr& e) {
      return mutate(e, [&](const Expr& x) -> Expr {
        if (x->kind != ExprKind::kLoad) return Expr();
        auto it = expanded_.find(x->name);
        if (it == expanded_.end() || x->args.size() != 1) return Expr();
        return with_args(x, {vt * int_imm(it->second) + expand_loads(x->args[0])});
      });
    };
    std::function<Stmt(const Stmt&)> expand = [&](const Stmt& x) -> Stmt {
      if (!x) return x;
      Stmt y = map_exprs(x, expand_loads);
      if (y->kind == StmtKind::kStore) {
        auto it = expanded_.find(y->buffer);
        if (it != expanded_.end()) y = make_store(y->buffer, vt * int_imm(it->second) + y->index, y->value);
      }
      return map_children(y, expand);
    };
    return make_for(r, n_, ForKind::kUnrolled, substitute(expand(s), {{v_, r}}));
  }

  Var v_;
  int64_t n_;
  std::map<std::string, Buffer>& temps_;
  std::set<std::string> inside_, touched_;
  std::map<std::string, int64_t> expanded_;  // buffer -> its size per virtual thread
};

Stmt inject(const Stmt& s, std::map<std::string, Buffer>& temps) {
  if (!s) return s;
  Stmt t = map_children(s, [&](const Stmt& c) { return inject(c, temps); });
  if (t->kind != StmtKind::kFor || t->for_kind != ForKind::kVThread) return t;
  Stmt body = t->body.empty() ? nullptr : t->body[0];
  std::map<std::string, Buffer> trial = temps;
  Stmt out = VThreadInjector(t->loop_var, t->extent, trial).run(body);
  if (!out) return t;
  temps = std::move(trial);
  return out;
}

}  // namespace

LoweredFunc inject_virtual_threads(const LoweredFunc& f) {
  bool any = false;
  visit_stmt(f.body, [&](const Stmt& s) {
    if (s->kind == StmtKind::kFor && s->for_kind == ForKind::kVThread) any = true;
  });
  if (!any) return f;
  std::map<std::string, Buffer> temps;
  for (const auto& b : f.temps) temps[b.name] = b;
  LoweredFunc out = f;
  out.body = inject(f.body, temps);
  for (auto& b : out.temps) b = temps.at(b.name);
  return out;
}

}  // namespace loom
