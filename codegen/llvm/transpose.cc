// Transposing copies (codegen/passes/transpose_nest.h): the nest's other loops
// around square tiles over its two axes, each tile `width` row loads
// contiguous along the load's axis, a transpose in registers (log2(width)
// stages of `width` two-input shuffles: 64 for 16 x 16), an element-wise
// epilogue on the columns where there is one, `width` row stores
// contiguous along the store's axis. The extents' remainders go in tiles
// half as wide, down to 4 x 4, and the rest element by element.
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
  const Stmt& store = t.store;
  const ExprNode& load = *t.transposed;
  const bool copy = store->value.get() == t.transposed;
  const StmtNode& outer_loop = *t.outer();
  const StmtNode& inner_loop = *t.inner();
  const Var& outer = outer_loop.loop_var;
  const Var& inner = inner_loop.loop_var;
  const bool outer_is_store_axis = &outer_loop == t.store_axis;

  // Binds the two loops at (store axis = u, load axis = v), outer first
  // (the order index_ptr's address chains follow).
  auto bind_at = [&](llvm::Value* u, llvm::Value* v) {
    bind_var(outer, outer_is_store_axis ? u : v);
    bind_var(inner, outer_is_store_axis ? v : u);
  };
  auto offset = [&](llvm::Value* x, int i) { return i == 0 ? x : b_.CreateAdd(x, b_.getInt64(i), "", true, true); };

  // One w x w tile at (u0, v0): row i holds src(u0 + i, v0 .. v0 + w - 1);
  // after the transpose, column j holds src(u0 .. u0 + w - 1, v0 + j), the
  // stored value's operand where the store is contiguous.
  auto tile = [&](llvm::Value* u0, llvm::Value* v0, int w) {
    auto* vty = llvm::FixedVectorType::get(b_.getFloatTy(), w);
    std::vector<llvm::Value*> rows(w);
    llvm::Value* src = buffer_ptr(load.name);
    for (int i = 0; i < w; ++i) {
      bind_at(offset(u0, i), v0);
      llvm::Value* ptr = b_.CreateBitCast(index_ptr(src, load.args[0]), vty->getPointerTo());
      auto* ld = b_.CreateAlignedLoad(vty, ptr, llvm::Align(4));
      annotate(ld, load.name);
      rows[i] = ld;
    }
    rows = transpose_rows(b_, transpose_network(w), rows);
    llvm::Value* dst = buffer_ptr(store->buffer);
    for (int j = 0; j < w; ++j) {
      bind_at(u0, offset(v0, j));
      llvm::Value* column = rows[j];
      if (!copy) {
        // The epilogue over the column: a vector chunk along the store's
        // axis whose transposed load is the column, the other loads uniform.
        VecCtx ctx;
        ctx.var = t.store_axis->loop_var;
        ctx.width = w;
        ctx.extent = t.store_axis->extent;
        ctx.vector_width = w;
        ctx.base = u0;
        vec_ = &ctx;
        transposed_load_ = &load;
        transposed_column_ = column;
        column = widen(emit(store->value));
        transposed_load_ = nullptr;
        vec_ = nullptr;
      }
      llvm::Value* ptr = b_.CreateBitCast(index_ptr(dst, store->index), vty->getPointerTo());
      auto* st = b_.CreateAlignedStore(column, ptr, llvm::Align(4));
      annotate(st, store->buffer);
    }
  };

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
  // The two axes over [o_begin, o_end) x [i_begin, i_end): whole w x w
  // tiles, then the remainders (the last rows, then the last columns of the
  // tiled rows) in tiles half as wide, down to 4 x 4; what is left element
  // by element.
  std::function<void(int64_t, int64_t, int64_t, int64_t, int)> region = [&](int64_t o_begin, int64_t o_end,
                                                                            int64_t i_begin, int64_t i_end, int w) {
    if (o_begin >= o_end || i_begin >= i_end) return;
    if (w < 4) {
      scalar(o_begin, o_end, i_begin, i_end);
      return;
    }
    const int64_t outer_tiles = (o_end - o_begin) / w, inner_tiles = (i_end - i_begin) / w;
    if (outer_tiles > 0 && inner_tiles > 0) {
      // The first element of tile number `iv` of a range starting at `begin`.
      auto corner = [&](llvm::Value* iv, int64_t begin) {
        return b_.CreateAdd(b_.CreateMul(iv, b_.getInt64(w), "", true, true), b_.getInt64(begin), "", true, true);
      };
      emit_loop(b_.getInt64(0), b_.getInt64(outer_tiles), true, outer->name + ".tile", [&](llvm::Value* ot) {
        llvm::Value* o0 = corner(ot, o_begin);
        emit_loop(b_.getInt64(0), b_.getInt64(inner_tiles), true, inner->name + ".tile", [&](llvm::Value* it) {
          llvm::Value* i0 = corner(it, i_begin);
          if (outer_is_store_axis) {
            tile(o0, i0, w);
          } else {
            tile(i0, o0, w);
          }
        });
      });
    }
    region(o_begin + outer_tiles * w, o_end, i_begin, i_end, w / 2);
    region(o_begin, o_begin + outer_tiles * w, i_begin + inner_tiles * w, i_end, w / 2);
  };
  // The other loops of the nest, in their order, around the two axes.
  std::function<void(size_t)> around = [&](size_t i) {
    while (i < t.loops.size() && (t.loops[i] == &outer_loop || t.loops[i] == &inner_loop)) ++i;
    if (i == t.loops.size()) {
      region(0, outer_loop.extent, 0, inner_loop.extent, t.width);
      unbind_var(inner);
      unbind_var(outer);
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
