#include "codegen/passes/vector_reductions.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "codegen/passes/lane_analysis.h"
#include "ir/simplify.h"

namespace loom {

namespace {

// Loads strided by more than this along the loop stay scalar (gathers).
constexpr int64_t kMaxTermStride = 4;
// Independent accumulators: native vectors of partial results.
constexpr int64_t kMaxAccumulatorVectors = 4;

// The parts of `acc[i] = acc[i] op term(k)` (either operand order).
struct ReductionUpdate {
  ExprKind op = ExprKind::kAdd;
  Expr term;
};

bool match_update(const Stmt& loop, ReductionUpdate* out) {
  const Stmt& st = loop->body[0];
  if (!st || st->kind != StmtKind::kStore) return false;
  const Expr& v = st->value;
  if (v->dtype != DType::kFloat) return false;
  if (v->kind != ExprKind::kAdd && v->kind != ExprKind::kMul && v->kind != ExprKind::kMax &&
      v->kind != ExprKind::kMin)
    return false;
  const int64_t k = loop->loop_var->var_id;
  if (uses_var_id(st->index, k)) return false;
  auto is_acc = [&](const Expr& e) {
    return e->kind == ExprKind::kLoad && e->name == st->buffer && e->args.size() == 1 &&
           structural_equal(e->args[0], st->index);
  };
  Expr term;
  if (is_acc(v->args[0])) term = v->args[1];
  else if (is_acc(v->args[1])) term = v->args[0];
  else return false;
  if (!uses_var_id(term, k)) return false;
  bool ok = true;
  visit(term, [&](const Expr& e) {
    if (e->kind != ExprKind::kLoad) return;
    if (e->name == st->buffer) ok = false;  // the accumulator's buffer, elsewhere
    int64_t stride = 0;
    for (const auto& idx : e->args)
      if (!linear_stride(idx, k, &stride) || stride < 0 || stride > kMaxTermStride) ok = false;
  });
  if (!ok) return false;
  out->op = v->kind;
  out->term = term;
  return true;
}

class Rewriter {
 public:
  Rewriter(LoweredFunc& f, int width) : f_(f), width_(width) {
    for (const auto& b : f.args) names_.insert(b.name);
    for (const auto& b : f.temps) names_.insert(b.name);
  }

  Stmt rewrite(const Stmt& s, bool in_vector) {
    if (!s) return s;
    if (s->kind == StmtKind::kFor && !in_vector && s->for_kind == ForKind::kSerial &&
        s->extent >= kMinVectorReductionExtent) {
      ReductionUpdate u;
      if (match_update(s, &u)) return lanes_then_tree(s, u);
    }
    const bool inner_vector = in_vector || (s->kind == StmtKind::kFor && s->for_kind == ForKind::kVectorized);
    return map_children(s, [&](const Stmt& c) { return rewrite(c, inner_vector); });
  }

 private:
  std::string fresh_name(const std::string& base) {
    std::string name = base + ".lanes";
    for (int i = 1; names_.count(name); ++i) name = base + ".lanes" + std::to_string(i);
    names_.insert(name);
    return name;
  }

  Stmt lanes_then_tree(const Stmt& loop, const ReductionUpdate& u) {
    const Stmt& st = loop->body[0];
    const int64_t extent = loop->extent;
    const Var& k = loop->loop_var;
    const int64_t lanes = extent >= width_ ? width_ * std::min(kMaxAccumulatorVectors, extent / width_) : extent;
    const std::string buf = fresh_name(st->buffer);
    f_.temps.push_back(Buffer{buf, {lanes}, BufferScope::kLocal, nullptr});
    auto lane_load = [&](const Expr& idx) { return load(buf, {idx}); };
    auto term_at = [&](const Expr& at) { return simplify(substitute(u.term, {{k, at}})); };
    const std::string vname = k->name + ".lane";

    std::vector<Stmt> seq;
    {  // The first `lanes` terms initialize the partial results.
      Var l = make_var(vname, lanes);
      seq.push_back(make_for(l, lanes, ForKind::kVectorized, make_store(buf, l, term_at(l))));
    }
    const int64_t steps = extent / lanes, tail = extent % lanes;
    if (steps > 1) {
      Var c = make_var(k->name + ".step", steps - 1);
      Var l = make_var(vname, lanes);
      Expr at = (c + int_imm(1)) * int_imm(lanes) + l;
      Stmt fold = make_store(buf, l, make_binary(u.op, lane_load(l), term_at(at)));
      seq.push_back(make_for(c, steps - 1, ForKind::kSerial, make_for(l, lanes, ForKind::kVectorized, fold)));
    }
    if (tail > 0) {
      Var l = make_var(vname, tail);
      Expr at = int_imm(steps * lanes) + l;
      Stmt fold = make_store(buf, l, make_binary(u.op, lane_load(l), term_at(at)));
      seq.push_back(make_for(l, tail, ForKind::kVectorized, fold));
    }
    // Halving tree: lanes [n - h, n) fold into [0, h).
    for (int64_t n = lanes; n > 1;) {
      const int64_t h = n / 2;
      Var l = make_var(vname, h);
      Stmt fold = make_store(buf, l, make_binary(u.op, lane_load(l), lane_load(l + int_imm(n - h))));
      seq.push_back(h > 1 ? make_for(l, h, ForKind::kVectorized, fold)
                          : make_store(buf, int_imm(0), make_binary(u.op, lane_load(int_imm(0)),
                                                                    lane_load(int_imm(n - h)))));
      n -= h;
    }
    Expr acc = load(st->buffer, {st->index});
    seq.push_back(make_store(st->buffer, st->index, make_binary(u.op, acc, lane_load(int_imm(0)))));
    return make_allocate(buf, make_seq(seq));
  }

  LoweredFunc& f_;
  int64_t width_;
  std::set<std::string> names_;
};

}  // namespace

LoweredFunc vectorize_reduction_loops(const LoweredFunc& f, int vector_width) {
  if (vector_width < 2 || !f.body) return f;
  LoweredFunc out = f;
  Rewriter r(out, vector_width);
  out.body = r.rewrite(f.body, false);
  return out;
}

}  // namespace loom
