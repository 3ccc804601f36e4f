#include "ir/iter_graph.h"

#include <algorithm>

#include "ir/error.h"
#include "ir/simplify.h"

namespace loom {

std::vector<int64_t> split_extents(int64_t extent, const std::vector<int64_t>& lengths,
                                   bool inner_to_outer) {
  if (inner_to_outer) {
    // As successive splits by a factor, inner to outer. A factor larger than
    // what is left of the extent shrinks to it: a compute_at stage whose
    // region is smaller than its tiles (a cache-write stage at its consumer's
    // tile) would otherwise run loops whose extra iterations are all guarded
    // out. With the nominal extent (product of lengths <= extent) no factor
    // shrinks and the outer extent is ceil(extent / product).
    std::vector<int64_t> out(lengths.size() + 1);
    int64_t left = extent;
    for (size_t k = lengths.size(); k-- > 0;) {
      out[k + 1] = std::min(lengths[k], left);
      left = (left + lengths[k] - 1) / lengths[k];
    }
    out[0] = left;
    return out;
  }
  int64_t prod = 1;
  for (int64_t l : lengths) prod *= l;
  std::vector<int64_t> out(lengths.begin(), lengths.end());
  out.push_back((extent + prod - 1) / prod);
  return out;
}

std::vector<int64_t> infer_iter_extents(const Stage& s, const std::vector<int64_t>& root_extents) {
  std::vector<int64_t> ext(s.iters.size(), 0);
  for (size_t i = 0; i < root_extents.size(); ++i) ext[i] = root_extents[i];
  for (const auto& r : s.relations) {
    if (r.kind == IterRelation::kSplit) {
      auto c = split_extents(ext[r.parents[0]], r.lengths, r.inner_to_outer);
      for (size_t i = 0; i < c.size(); ++i) ext[r.children[i]] = c[i];
    } else {
      int64_t p = 1;
      for (int id : r.parents) p *= ext[id];
      ext[r.children[0]] = p;
    }
  }
  return ext;
}

std::vector<Expr> derive_iter_values(const Stage& s, const std::vector<Expr>& leaf_values,
                                     const std::vector<int64_t>& extents) {
  std::vector<Expr> val = leaf_values;
  val.resize(s.iters.size());
  for (auto it = s.relations.rbegin(); it != s.relations.rend(); ++it) {
    const IterRelation& r = *it;
    if (r.kind == IterRelation::kSplit) {
      Expr v = int_imm(0);
      for (int c : r.children) {
        if (!val[c].defined()) throw LoomError("iterator " + s.iters[c].name + " has no value");
        v = v * int_imm(extents[c]) + val[c];
      }
      val[r.parents[0]] = simplify(v);
    } else {
      const Expr& f = val[r.children[0]];
      if (!f.defined()) throw LoomError("iterator " + s.iters[r.children[0]].name + " has no value");
      int64_t inner = 1;
      for (size_t k = r.parents.size(); k-- > 0;) {
        int id = r.parents[k];
        Expr v = f / int_imm(inner);
        if (k > 0) v = v % int_imm(extents[id]);
        val[id] = simplify(v);
        inner *= extents[id];
      }
    }
  }
  return val;
}

}  // namespace loom
