#include "codegen/passes/transpose_nest.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "codegen/passes/lane_analysis.h"

namespace loom {

namespace {

bool serial_like(const StmtNode& s) {
  return s.kind == StmtKind::kFor && s.for_kind != ForKind::kParallel && s.body.size() == 1 && s.body[0];
}

// The classic x86 network, whose every shuffle is one instruction: unpack
// floats, then pairs of floats, within 128-bit blocks; then, per further
// row bit, the even then the odd 128-bit blocks of both rows. It leaves
// column j in some row other than j (kept in `column_row`).
std::vector<TransposeStage> unpack_network(int w) {
  std::vector<TransposeStage> stages;
  for (int elem : {1, 2}) {
    TransposeStage st{elem, {}, {}};
    for (int blk = 0; blk < w / 4; ++blk)
      for (bool hi : {false, true}) {
        std::vector<int>& m = hi ? st.high : st.low;
        const int s = 4 * blk + (hi ? 2 : 0);
        if (elem == 1) {
          m.insert(m.end(), {s, w + s, s + 1, w + s + 1});
        } else {
          m.insert(m.end(), {s, s + 1, w + s, w + s + 1});
        }
      }
    stages.push_back(st);
  }
  for (int d = 4; d < w; d *= 2) {
    TransposeStage st{d, {}, {}};
    for (int src : {0, w})
      for (int blk = 0; blk < w / 4; ++blk)
        for (int i = 0; i < 4; ++i) (blk % 2 == 0 ? st.low : st.high).push_back(src + 4 * blk + i);
    stages.push_back(st);
  }
  return stages;
}

// Exchanges bit d of the row and the column index per stage: a transpose
// for every power-of-two width, in two-input shuffles that x86 may need two
// instructions for.
std::vector<TransposeStage> bit_swap_network(int w) {
  std::vector<TransposeStage> stages;
  for (int d = 1; d < w; d *= 2) {
    TransposeStage st{d, std::vector<int>(w), std::vector<int>(w)};
    for (int c = 0; c < w; ++c) {
      const bool set = (c & d) != 0;
      st.low[c] = set ? w + (c ^ d) : c;
      st.high[c] = set ? w + c : (c ^ d);
    }
    stages.push_back(st);
  }
  return stages;
}

// Runs the network on (row, column) labels: the row that holds each column,
// rows in order; empty when the network does not transpose a w x w tile.
std::vector<int> column_rows(const std::vector<TransposeStage>& net, int w) {
  std::vector<std::vector<std::pair<int, int>>> rows(w);
  for (int r = 0; r < w; ++r)
    for (int c = 0; c < w; ++c) rows[r].push_back({r, c});
  auto shuffle = [&](const auto& a, const auto& b, const std::vector<int>& m) {
    std::vector<std::pair<int, int>> out;
    for (int i : m) out.push_back(i < w ? a[i] : b[i - w]);
    return out;
  };
  for (const TransposeStage& st : net)
    for (int r = 0; r < w; ++r) {
      if (r & st.d) continue;
      auto lo = shuffle(rows[r], rows[r | st.d], st.low), hi = shuffle(rows[r], rows[r | st.d], st.high);
      rows[r] = lo;
      rows[r | st.d] = hi;
    }
  std::vector<int> where(w, -1);
  for (int r = 0; r < w; ++r) {
    if (static_cast<int>(rows[r].size()) != w) return {};
    const int col = rows[r][0].second;
    for (int i = 0; i < w; ++i)
      if (rows[r][i] != std::make_pair(i, col)) return {};
    if (where[col] >= 0) return {};
    where[col] = r;
  }
  return where;
}

}  // namespace

TransposeNetwork transpose_network(int w) {
  TransposeNetwork net;
  if (w >= 4) {  // whole 128-bit blocks
    net.stages = unpack_network(w);
    net.column_row = column_rows(net.stages, w);
  }
  if (net.column_row.empty()) {
    net.stages = bit_swap_network(w);
    net.column_row = column_rows(net.stages, w);
  }
  return net;
}

const StmtNode* TransposeNest::outer() const {
  for (const StmtNode* l : loops)
    if (l == store_axis || l == load_axis) return l;
  return nullptr;
}

std::optional<TransposeNest> match_transpose_nest(const Stmt& loop, int vector_width, bool elementwise) {
  if (vector_width < 2 || (vector_width & (vector_width - 1)) != 0 || !loop || !serial_like(*loop))
    return std::nullopt;
  TransposeNest t;
  const Stmt* node = &loop;
  while (serial_like(**node)) {
    t.loops.push_back(node->get());
    node = &(*node)->body[0];
  }
  if (t.loops.size() < 2 || (*node)->kind != StmtKind::kStore) return std::nullopt;
  t.store = *node;
  const Expr& value = t.store->value;
  if (value->dtype != DType::kFloat || contains_load(t.store->index)) return std::nullopt;
  std::vector<const ExprNode*> loads;
  visit(value, [&](const Expr& x) {
    if (x->kind == ExprKind::kLoad) loads.push_back(x.get());
  });
  for (const ExprNode* l : loads)
    if (l->name == t.store->buffer || l->args.size() != 1 || contains_load(l->args[0])) return std::nullopt;
  if (value->kind != ExprKind::kLoad && !elementwise) return std::nullopt;
  // Strides of the store along every loop; the store's axis (stride 1).
  const size_t n = t.loops.size();
  std::vector<int64_t> st(n);
  size_t store_axis = n;
  for (size_t i = 0; i < n; ++i) {
    if (!linear_stride(t.store->index, t.loops[i]->loop_var->var_id, &st[i])) return std::nullopt;
    if (st[i] == 1 && store_axis == n) store_axis = i;
  }
  if (store_axis == n) return std::nullopt;
  // The transposed load: the one that moves along the store's axis (the
  // others are uniform across a tile's columns).
  std::vector<int64_t> ld(n);
  for (const ExprNode* l : loads) {
    std::vector<int64_t> s(n);
    for (size_t i = 0; i < n; ++i)
      if (!linear_stride(l->args[0], t.loops[i]->loop_var->var_id, &s[i])) return std::nullopt;
    if (s[store_axis] == 0) continue;
    if (t.transposed || l->dtype != DType::kFloat) return std::nullopt;
    t.transposed = l;
    ld = s;
  }
  if (!t.transposed) return std::nullopt;
  size_t load_axis = n;
  for (size_t i = 0; i < n && load_axis == n; ++i)
    if (ld[i] == 1) load_axis = i;
  if (load_axis == n || load_axis == store_axis) return std::nullopt;
  t.store_axis = t.loops[store_axis];
  t.load_axis = t.loops[load_axis];
  // The widest tile both axes hold. Along the store's axis the load steps
  // over whole rows of the tile: a transpose. A smaller step is a plain or
  // strided copy, which vector loops already do in whole vectors (a stride
  // of 2-4: a wide load and a shuffle).
  const int min_width = std::min(vector_width, 8);
  t.width = vector_width;
  while (t.width > min_width && (t.store_axis->extent < t.width || t.load_axis->extent < t.width)) t.width /= 2;
  if (t.store_axis->extent < t.width || t.load_axis->extent < t.width) return std::nullopt;
  if (std::llabs(ld[store_axis]) < t.width) return std::nullopt;
  // Distinct iterations store to distinct elements (each loop's stride
  // exceeds the span of the loops with smaller strides), so the loops may
  // run in any order: the tiles take the two axes innermost.
  std::vector<std::pair<int64_t, int64_t>> by_stride;  // (|stride|, extent)
  for (size_t i = 0; i < n; ++i)
    if (t.loops[i]->extent > 1) by_stride.push_back({std::llabs(st[i]), t.loops[i]->extent});
  std::sort(by_stride.begin(), by_stride.end());
  int64_t span = 0;
  for (const auto& [stride, extent] : by_stride) {
    if (stride <= span) return std::nullopt;
    span += stride * (extent - 1);
  }
  return t;
}

}  // namespace loom
