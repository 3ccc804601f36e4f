#include "codegen/transpose_nest.h"

#include <cstdlib>
#include <utility>

#include "codegen/lane_analysis.h"

namespace loom {

namespace {

bool serial_like(const StmtNode& s) {
  return s.kind == StmtKind::kFor && s.for_kind != ForKind::kParallel && s.body.size() == 1 && s.body[0];
}

// Strides of an index along the two loops; false unless affine in both and
// free of loads.
bool strides(const Expr& index, const StmtNode& a, const StmtNode& b, int64_t* sa, int64_t* sb) {
  return !contains_load(index) && linear_stride(index, a.loop_var->var_id, sa) &&
         linear_stride(index, b.loop_var->var_id, sb);
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

std::optional<TransposeNest> match_transpose_nest(const Stmt& loop, int width) {
  if (width < 2 || !loop || !serial_like(*loop)) return std::nullopt;
  const StmtNode& outer = *loop;
  const StmtNode& inner = *outer.body[0];
  if (!serial_like(inner) || inner.body[0]->kind != StmtKind::kStore) return std::nullopt;
  if (outer.extent < width || inner.extent < width) return std::nullopt;
  const StmtNode& store = *inner.body[0];
  const Expr& value = store.value;
  if (value->kind != ExprKind::kLoad || value->dtype != DType::kFloat || value->name == store.buffer)
    return std::nullopt;
  int64_t st_outer = 0, st_inner = 0, ld_outer = 0, ld_inner = 0;
  if (!strides(store.index, outer, inner, &st_outer, &st_inner) ||
      !strides(value->args[0], outer, inner, &ld_outer, &ld_inner))
    return std::nullopt;
  TransposeNest t{&outer, &inner, &store, nullptr, nullptr};
  int64_t store_across = 0, load_across = 0;  // strides along the other loop
  if (st_inner == 1 && ld_outer == 1) {
    t.store_axis = &inner;
    t.load_axis = &outer;
    store_across = st_outer;
    load_across = ld_inner;
  } else if (st_outer == 1 && ld_inner == 1) {
    t.store_axis = &outer;
    t.load_axis = &inner;
    store_across = st_inner;
    load_across = ld_outer;
  } else {
    return std::nullopt;
  }
  // Distinct iterations store to distinct elements (rows of the store axis
  // do not overlap), and the load does stride across rows: a load
  // contiguous along both loops is a plain copy, vectorized as it is.
  if (std::llabs(store_across) < t.store_axis->extent || std::llabs(load_across) < 2) return std::nullopt;
  return t;
}

}  // namespace loom
