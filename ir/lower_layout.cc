// Deriving a pre-transformed copy's blocked layout from the loops that read
// it, and flattening its loads (see ir/layout.h).
#include <algorithm>
#include <functional>
#include <map>
#include <optional>

#include "ir/layout.h"
#include "ir/simplify.h"
#include "ir/stmt.h"

namespace loom {

namespace {

struct Loop {
  int64_t var_id;
  int depth;
};

// e = constant + sum of coeff * atom; atoms are variables or other
// non-linear terms (div/mod of a fused loop's variable).
struct LinearTerms {
  int64_t constant = 0;
  std::vector<std::pair<Expr, int64_t>> terms;
  bool ok = true;
};

void add_linear(const Expr& e, int64_t scale, LinearTerms& out) {
  switch (e->kind) {
    case ExprKind::kIntImm: out.constant += scale * e->int_value; return;
    case ExprKind::kAdd: add_linear(e->args[0], scale, out); add_linear(e->args[1], scale, out); return;
    case ExprKind::kSub: add_linear(e->args[0], scale, out); add_linear(e->args[1], -scale, out); return;
    case ExprKind::kMul: {
      int64_t c;
      if (is_const_int(e->args[1], &c)) return add_linear(e->args[0], scale * c, out);
      if (is_const_int(e->args[0], &c)) return add_linear(e->args[1], scale * c, out);
      break;
    }
    default: break;
  }
  for (auto& [atom, coeff] : out.terms)
    if (structural_equal(atom, e)) { coeff += scale; return; }
  out.terms.push_back({e, scale});
}

struct Piece {
  LayoutPiece piece;
  int depth;  // of the loop that walks it (-1: none)
};

// The pieces of one dimension from its index, or nullopt when its terms do
// not form a mixed radix.
std::optional<std::vector<Piece>> pieces_of(int dim, const Expr& index, int64_t extent,
                                             const std::map<int64_t, int>& depth_of) {
  LinearTerms lin;
  add_linear(simplify(index), 1, lin);
  if (lin.constant != 0) return std::nullopt;
  std::vector<Piece> out;
  for (const auto& [atom, coeff] : lin.terms) {
    if (coeff == 0) continue;
    if (coeff < 0) return std::nullopt;
    IntBound b = const_int_bound(atom);
    if (!b.bounded() || b.min != 0) return std::nullopt;
    int depth = -1;
    bool has_var = false;
    visit(atom, [&](const Expr& x) {
      if (x->kind != ExprKind::kVar) return;
      has_var = true;
      auto it = depth_of.find(x->var_id);
      if (it != depth_of.end()) depth = std::max(depth, it->second);
    });
    if (!has_var || depth < 0) return std::nullopt;
    out.push_back({{dim, coeff, b.max + 1}, depth});
  }
  std::sort(out.begin(), out.end(), [](const Piece& a, const Piece& b) { return a.piece.stride < b.piece.stride; });
  int64_t expect = 1;
  for (const auto& p : out) {
    if (p.piece.stride != expect) return std::nullopt;
    expect *= p.piece.extent;
  }
  if (out.empty() || expect < extent) return std::nullopt;
  // Pieces past the extent (a tile larger than the dimension) take one
  // value; the outermost piece left covers exactly the rest.
  while (out.size() > 1 && out.back().piece.stride >= extent) out.pop_back();
  Piece& top = out.back();
  top.piece.extent = (extent + top.piece.stride - 1) / top.piece.stride;
  return out;
}

// Finds the first load of `tensor` and the loops around it.
bool find_first_load(const Stmt& s, const std::string& tensor, std::vector<Loop>& loops, Expr* found) {
  if (!s) return false;
  auto in_expr = [&](const Expr& e) {
    if (!e.defined()) return false;
    bool hit = false;
    visit(e, [&](const Expr& x) {
      if (!hit && x->kind == ExprKind::kLoad && x->name == tensor) {
        *found = x;
        hit = true;
      }
    });
    return hit;
  };
  switch (s->kind) {
    case StmtKind::kFor: {
      loops.push_back({s->loop_var->var_id, static_cast<int>(loops.size())});
      if (find_first_load(s->body[0], tensor, loops, found)) return true;
      loops.pop_back();
      return false;
    }
    case StmtKind::kStore: return in_expr(s->index) || in_expr(s->value);
    case StmtKind::kIf:
      if (in_expr(s->cond)) return true;
      for (const auto& b : s->body)
        if (find_first_load(b, tensor, loops, found)) return true;
      return false;
    default:
      for (const auto& b : s->body)
        if (find_first_load(b, tensor, loops, found)) return true;
      return false;
  }
}

}  // namespace

BlockedLayout derive_blocked_layout(const Stmt& body, const std::string& tensor, const std::string& source,
                                    const std::vector<int64_t>& shape) {
  BlockedLayout layout;
  layout.source = source;
  layout.source_shape = shape;
  std::vector<Loop> loops;
  Expr load_expr;
  std::vector<Piece> pieces;
  if (find_first_load(body, tensor, loops, &load_expr)) {
    std::map<int64_t, int> depth_of;
    for (const auto& l : loops) depth_of[l.var_id] = l.depth;
    for (size_t d = 0; d < shape.size(); ++d) {
      const int dim = static_cast<int>(d);
      auto ps = pieces_of(dim, load_expr->args[d], shape[d], depth_of);
      if (ps) {
        pieces.insert(pieces.end(), ps->begin(), ps->end());
        continue;
      }
      // Whole, at the outermost loop it depends on (before everything when
      // it depends on none: a dimension of extent 1 or a constant index).
      int depth = static_cast<int>(loops.size());
      visit(load_expr->args[d], [&](const Expr& x) {
        if (x->kind == ExprKind::kVar && depth_of.count(x->var_id)) depth = std::min(depth, depth_of[x->var_id]);
      });
      if (depth == static_cast<int>(loops.size())) depth = -1;
      pieces.push_back({{dim, 1, shape[d]}, depth});
    }
  } else {
    for (size_t d = 0; d < shape.size(); ++d) pieces.push_back({{static_cast<int>(d), 1, shape[d]}, -1});
  }
  // Loop order; within one loop (a fused one), by dimension, larger strides first.
  std::stable_sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) {
    if (a.depth != b.depth) return a.depth < b.depth;
    if (a.piece.dim != b.piece.dim) return a.piece.dim < b.piece.dim;
    return a.piece.stride > b.piece.stride;
  });
  for (const auto& p : pieces) layout.pieces.push_back(p.piece);
  if (!is_valid_layout(layout)) {  // cannot happen by construction; stay correct regardless
    layout.pieces.clear();
    for (size_t d = 0; d < shape.size(); ++d) layout.pieces.push_back({static_cast<int>(d), 1, shape[d]});
  }
  return layout;
}

Stmt flatten_blocked_loads(const Stmt& s, const std::string& tensor, const BlockedLayout& layout) {
  return map_exprs(s, [&](const Expr& e) {
    return mutate(e, [&](const Expr& x) -> Expr {
      if (x->kind != ExprKind::kLoad || x->name != tensor) return Expr();
      return load(tensor, {layout.index(x->args)});
    });
  });
}

}  // namespace loom
