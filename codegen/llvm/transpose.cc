// Transposing copies (codegen/transpose_nest.h): the nest's other loops
// around square tiles of the vector width over its two axes, each tile
// `width` row loads contiguous along the load's axis, a transpose in
// registers (log2(width) stages of `width` two-input shuffles: 64 for
// 16 x 16), `width` row stores contiguous along the store's axis. The
// extents' remainders are copied element by element.
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>

#include <functional>

#include "codegen/llvm/emitter.h"

namespace loom {
namespace llvm_backend {

namespace {

// Rows in, columns out: element i of result j is element j of row i.
std::vector<llvm::Value*> transpose_rows(llvm::IRBuilder<>& b, const TransposeNetwork& net,
                                         std::vector<llvm::Value*> rows) {
  const int w = static_cast<int>(rows.size());
  for (const TransposeStage& st : net.stages)
    for (int r = 0; r < w; ++r) {
      if (r & st.d) continue;
      llvm::Value* lo = b.CreateShuffleVector(rows[r], rows[r | st.d], st.low);
      llvm::Value* hi = b.CreateShuffleVector(rows[r], rows[r | st.d], st.high);
      rows[r] = lo;
      rows[r | st.d] = hi;
    }
  std::vector<llvm::Value*> columns(w);
  for (int j = 0; j < w; ++j) columns[j] = rows[net.column_row[j]];
  return columns;
}

}  // namespace

void IREmitter::emit_transpose_nest(const TransposeNest& t) {
  const int w = opts_.vector_width;
  const TransposeNetwork net = transpose_network(w);
  const Stmt& store = t.store;
  const ExprNode& load = *store->value;
  const StmtNode& outer_loop = *t.outer();
  const StmtNode& inner_loop = *t.inner();
  const Var& outer = outer_loop.loop_var;
  const Var& inner = inner_loop.loop_var;
  const bool outer_is_store_axis = &outer_loop == t.store_axis;
  auto* vty = llvm::FixedVectorType::get(b_.getFloatTy(), w);

  // Binds the two loops at (store axis = u, load axis = v), outer first
  // (the order index_ptr's address chains follow).
  auto bind_at = [&](llvm::Value* u, llvm::Value* v) {
    bind_var(outer, outer_is_store_axis ? u : v);
    bind_var(inner, outer_is_store_axis ? v : u);
  };
  auto offset = [&](llvm::Value* x, int i) { return i == 0 ? x : b_.CreateAdd(x, b_.getInt64(i), "", true, true); };

  // One tile at (u0, v0): row i holds src(u0 + i, v0 .. v0 + w - 1).
  auto tile = [&](llvm::Value* u0, llvm::Value* v0) {
    std::vector<llvm::Value*> rows(w);
    llvm::Value* src = buffer_ptr(load.name);
    for (int i = 0; i < w; ++i) {
      bind_at(offset(u0, i), v0);
      llvm::Value* ptr = b_.CreateBitCast(index_ptr(src, load.args[0]), vty->getPointerTo());
      auto* ld = b_.CreateAlignedLoad(vty, ptr, llvm::Align(4));
      annotate(ld, load.name);
      rows[i] = ld;
    }
    rows = transpose_rows(b_, net, rows);
    llvm::Value* dst = buffer_ptr(store->buffer);
    for (int j = 0; j < w; ++j) {
      bind_at(u0, offset(v0, j));
      llvm::Value* ptr = b_.CreateBitCast(index_ptr(dst, store->index), vty->getPointerTo());
      auto* st = b_.CreateAlignedStore(rows[j], ptr, llvm::Align(4));
      annotate(st, store->buffer);
    }
  };

  // The two axes: whole tiles, then the remainders element by element (the
  // last rows of the outer axis, then the last columns of the tiled rows).
  auto two_axes = [&]() {
    const int64_t outer_tiles = outer_loop.extent / w, inner_tiles = inner_loop.extent / w;
    emit_loop(b_.getInt64(0), b_.getInt64(outer_tiles), true, outer->name + ".tile", [&](llvm::Value* ot) {
      llvm::Value* o0 = b_.CreateMul(ot, b_.getInt64(w), "", true, true);
      emit_loop(b_.getInt64(0), b_.getInt64(inner_tiles), true, inner->name + ".tile", [&](llvm::Value* it) {
        llvm::Value* i0 = b_.CreateMul(it, b_.getInt64(w), "", true, true);
        if (outer_is_store_axis) {
          tile(o0, i0);
        } else {
          tile(i0, o0);
        }
      });
    });
    auto scalar = [&](int64_t o_begin, int64_t o_end, int64_t i_begin, int64_t i_end) {
      if (o_begin >= o_end || i_begin >= i_end) return;
      emit_loop(b_.getInt64(o_begin), b_.getInt64(o_end), true, outer->name, [&](llvm::Value* o) {
        bind_var(outer, o);
        emit_loop(b_.getInt64(i_begin), b_.getInt64(i_end), true, inner->name, [&](llvm::Value* i) {
          bind_var(inner, i);
          emit_store(store);
        });
      });
    };
    scalar(outer_tiles * w, outer_loop.extent, 0, inner_loop.extent);
    scalar(0, outer_tiles * w, inner_tiles * w, inner_loop.extent);
    unbind_var(inner);
    unbind_var(outer);
  };
  // The other loops of the nest, in their order, around the two axes.
  std::function<void(size_t)> around = [&](size_t i) {
    while (i < t.loops.size() && (t.loops[i] == &outer_loop || t.loops[i] == &inner_loop)) ++i;
    if (i == t.loops.size()) {
      two_axes();
      return;
    }
    const StmtNode& l = *t.loops[i];
    emit_loop(b_.getInt64(0), b_.getInt64(l.extent), true, l.loop_var->name, [&](llvm::Value* iv) {
      bind_var(l.loop_var, iv);
      around(i + 1);
    });
    unbind_var(l.loop_var);
  };
  around(0);
}

}  // namespace llvm_backend
}  // namespace loom
