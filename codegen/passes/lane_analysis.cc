#include "codegen/passes/lane_analysis.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace loom {

bool uses_var_id(const Expr& e, int64_t var_id) {
  bool found = false;
  visit(e, [&](const Expr& x) {
    if (x->kind == ExprKind::kVar && x->var_id == var_id) found = true;
  });
  return found;
}

bool contains_load(const Expr& e) {
  bool found = false;
  visit(e, [&](const Expr& x) {
    if (x->kind == ExprKind::kLoad) found = true;
  });
  return found;
}

bool linear_stride(const Expr& e, int64_t var_id, int64_t* stride) {
  if (e->dtype != DType::kInt && e->dtype != DType::kBool) return false;
  if (!uses_var_id(e, var_id)) {
    *stride = 0;
    return true;
  }
  int64_t a = 0, b = 0, c = 0;
  switch (e->kind) {
    case ExprKind::kVar: *stride = 1; return true;
    case ExprKind::kAdd:
    case ExprKind::kSub:
      if (!linear_stride(e->args[0], var_id, &a) || !linear_stride(e->args[1], var_id, &b))
        return false;
      *stride = e->kind == ExprKind::kAdd ? a + b : a - b;
      return true;
    case ExprKind::kMul:
      if (is_const_int(e->args[0], &c) && linear_stride(e->args[1], var_id, &b)) {
        *stride = c * b;
        return true;
      }
      if (is_const_int(e->args[1], &c) && linear_stride(e->args[0], var_id, &a)) {
        *stride = c * a;
        return true;
      }
      return false;
    default: return false;
  }
}

namespace {

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// Value of an integer expression whose only variable is `var_id` (= v).
bool eval_at(const Expr& e, int64_t var_id, int64_t v, int64_t* out) {
  int64_t a = 0, b = 0;
  switch (e->kind) {
    case ExprKind::kIntImm: *out = e->int_value; return true;
    case ExprKind::kVar:
      if (e->var_id != var_id) return false;
      *out = v;
      return true;
    case ExprKind::kAdd: case ExprKind::kSub: case ExprKind::kMul: case ExprKind::kDiv:
    case ExprKind::kMod: case ExprKind::kMin: case ExprKind::kMax:
      if (e->dtype != DType::kInt || !eval_at(e->args[0], var_id, v, &a) ||
          !eval_at(e->args[1], var_id, v, &b))
        return false;
      break;
    default: return false;
  }
  switch (e->kind) {
    case ExprKind::kAdd: *out = a + b; return true;
    case ExprKind::kSub: *out = a - b; return true;
    case ExprKind::kMul: *out = a * b; return true;
    case ExprKind::kDiv: if (b == 0) return false; *out = floor_div(a, b); return true;
    case ExprKind::kMod: if (b == 0) return false; *out = a - floor_div(a, b) * b; return true;
    case ExprKind::kMin: *out = std::min(a, b); return true;
    case ExprKind::kMax: *out = std::max(a, b); return true;
    default: return false;
  }
}

// Splits e into +/- terms; collects those that use the variable.
bool var_terms(const Expr& e, int64_t var_id, int sign, std::vector<std::pair<int, Expr>>* out) {
  if (!uses_var_id(e, var_id)) return true;
  if (e->kind == ExprKind::kAdd || e->kind == ExprKind::kSub) {
    return var_terms(e->args[0], var_id, sign, out) &&
           var_terms(e->args[1], var_id, e->kind == ExprKind::kSub ? -sign : sign, out);
  }
  out->push_back({sign, e});
  return true;
}

}  // namespace

IndexPattern classify_index(const Expr& idx, int64_t var_id, int64_t extent, int width) {
  IndexPattern p;
  if (!uses_var_id(idx, var_id)) return p;  // kUniform
  int64_t stride = 0;
  if (linear_stride(idx, var_id, &stride)) {
    p.kind = stride == 0 ? IndexPattern::kUniform
             : stride == 1 ? IndexPattern::kContiguous
                           : IndexPattern::kGeneral;
    p.injective = stride != 0;
    return p;
  }
  p.kind = IndexPattern::kGeneral;
  // index = g(other vars) + h(var) with h a function of the variable alone:
  // tabulate h over the loop to find contiguous or chunk-constant lanes.
  std::vector<std::pair<int, Expr>> terms;
  if (!var_terms(idx, var_id, 1, &terms) || extent > (1 << 16)) return p;
  std::vector<int64_t> h(extent, 0);
  for (int64_t v = 0; v < extent; ++v) {
    for (const auto& [sign, t] : terms) {
      int64_t x = 0;
      if (!eval_at(t, var_id, v, &x)) return p;
      h[v] += sign * x;
    }
  }
  p.separable = true;
  bool contiguous = true, constant = true;
  for (int64_t v = 1; v < extent; ++v) {
    if (v % width == 0) continue;  // a new chunk starts here
    int64_t d = h[v] - h[v - 1];
    contiguous = contiguous && d == 1;
    constant = constant && d == 0;
  }
  std::vector<int64_t> sorted = h;
  std::sort(sorted.begin(), sorted.end());
  p.injective = std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
  if (contiguous) p.kind = IndexPattern::kContiguous;
  else if (constant) p.kind = IndexPattern::kChunkUniform;
  return p;
}

bool can_vectorize(const Stmt& loop, int width) {
  if (loop->body.empty() || !loop->body[0]) return false;
  int64_t id = loop->loop_var->var_id;
  bool ok = true;
  visit_stmt(loop->body[0], [&](const Stmt& s) {
    if (!s || !ok) return;
    if (s->kind == StmtKind::kAllocate) ok = false;
    // An inner vectorized loop is the better one to vectorize.
    if (s->kind == StmtKind::kFor && s->for_kind == ForKind::kVectorized) ok = false;
    if (s->kind == StmtKind::kStore) {
      // A store that several lanes would make to the same element (e.g. a
      // reduction into one value) must run lane by lane.
      IndexPattern p = classify_index(s->index, id, loop->extent, width);
      if (p.kind == IndexPattern::kUniform || p.kind == IndexPattern::kChunkUniform) ok = false;
      if (p.separable && !p.injective) ok = false;
    }
  });
  return ok;
}

bool iterations_independent(const Stmt& loop) {
  if (loop->body.empty() || !loop->body[0] || loop->extent < 2) return false;
  const int64_t id = loop->loop_var->var_id;
  std::map<std::string, Expr> stored;  // buffer -> the index every store uses
  bool ok = true;
  visit_stmt(loop->body[0], [&](const Stmt& s) {
    if (!s || !ok) return;
    if (s->kind == StmtKind::kFor || s->kind == StmtKind::kAllocate) ok = false;
    if (s->kind != StmtKind::kStore) return;
    int64_t stride = 0;
    if (!linear_stride(s->index, id, &stride) || stride != 1) ok = false;
    auto [it, fresh] = stored.emplace(s->buffer, s->index);
    if (!fresh && !structural_equal(it->second, s->index)) ok = false;
  });
  if (!ok) return false;
  auto loads_ok = [&](const Expr& e) {
    if (!e.defined()) return;
    visit(e, [&](const Expr& x) {
      if (x->kind != ExprKind::kLoad) return;
      auto it = stored.find(x->name);
      if (it != stored.end() && (x->args.size() != 1 || !structural_equal(x->args[0], it->second))) ok = false;
    });
  };
  visit_stmt(loop->body[0], [&](const Stmt& s) {
    if (!s) return;
    loads_ok(s->index);
    loads_ok(s->value);
    loads_ok(s->cond);
  });
  return ok;
}

void collect_uses(const Stmt& s, std::set<int64_t>* vars, std::set<std::string>* buffers) {
  auto on_expr = [&](const Expr& e) {
    if (!e.defined()) return;
    visit(e, [&](const Expr& x) {
      if (x->kind == ExprKind::kVar) vars->insert(x->var_id);
      if (x->kind == ExprKind::kLoad) buffers->insert(x->name);
    });
  };
  visit_stmt(s, [&](const Stmt& x) {
    if (!x) return;
    on_expr(x->index);
    on_expr(x->value);
    on_expr(x->cond);
    if (x->kind == StmtKind::kStore || x->kind == StmtKind::kAllocate) buffers->insert(x->buffer);
  });
}

}  // namespace loom
