// Transposing copies of the C backend (codegen/passes/transpose_nest.h), as the
// LLVM backend emits them (codegen/llvm/transpose.cc): the nest's other
// loops around square tiles read as rows, transposed by
// __builtin_shufflevector in the same network, written as rows; the
// remainders element by element (the LLVM backend takes them in narrower
// tiles) and copies only (no element-wise epilogue). A compiler without
// __builtin_shufflevector copies each tile element by element.
#include <string>
#include <vector>

#include "codegen/c/emitter.h"
#include "codegen/passes/transpose_nest.h"
#include "ir/simplify.h"

namespace loom {
namespace c_backend {

bool CEmitter::transposing_copy(const Stmt& s) {
  if (chunk_ || rec_ || !slots_.empty()) return false;
  auto t = match_transpose_nest(s, opts_.vector_width);
  if (!t) return false;
  const int w = t->width;
  const Stmt& store = t->store;
  const ExprNode& load = *t->transposed;
  const StmtNode& outer_loop = *t->outer();
  const StmtNode& inner_loop = *t->inner();
  const bool outer_is_store_axis = &outer_loop == t->store_axis;
  const std::string vty = c_vector_type(DType::kFloat, w);
  vector_widths_.insert(w);
  const std::string src = names_.buffer(load.name), dst = names_.buffer(store->buffer);
  const std::string o_tile = fresh("tile"), i_tile = fresh("tile");
  const std::string on = var_name(outer_loop.loop_var), in = var_name(inner_loop.loop_var);
  const std::string ws = std::to_string(w);
  for (const StmtNode* l : t->loops) {
    var_name(l->loop_var);  // names every loop variable before the indices are printed
    bound_.insert(l->loop_var->var_id);
  }
  auto index_text = [&](const Expr& index) {
    return printer(names_).print(consts_.empty() ? index : simplify(bound(index)));
  };
  const std::string load_index = index_text(load.args[0]), store_index = index_text(store->index);
  const std::string copy = dst + "[" + store_index + "] = " + src + "[" + load_index + "];";
  // Declares the two loops' variables at (store axis = u0 + du, load axis =
  // v0 + dv), u0 and v0 the tile's corner.
  auto bind_at = [&](const std::string& du, const std::string& dv) {
    const std::string u = (outer_is_store_axis ? o_tile : i_tile) + " * " + ws + " + " + du;
    const std::string v = (outer_is_store_axis ? i_tile : o_tile) + " * " + ws + " + " + dv;
    line("const int64_t " + on + " = " + (outer_is_store_axis ? u : v) + ";");
    line("const int64_t " + in + " = " + (outer_is_store_axis ? v : u) + ";");
  };
  auto open_block = [&](const std::string& head) {
    line(head + "{");
    ++indent_;
  };
  auto close_block = [&]() {
    --indent_;
    line("}");
  };

  line("/* transposing copy in " + ws + " x " + ws + " tiles */");
  // The nest's other loops, in their order, around the two axes.
  int around = 0;
  for (const StmtNode* l : t->loops) {
    if (l == &outer_loop || l == &inner_loop) continue;
    const std::string& name = var_name(l->loop_var);
    open_block("for (int64_t " + name + " = 0; " + name + " < " + int_literal(l->extent) + "; ++" + name + ") ");
    ++around;
  }
  open_block("for (int64_t " + o_tile + " = 0; " + o_tile + " < " + int_literal(outer_loop.extent / w) + "; ++" +
             o_tile + ") ");
  open_block("for (int64_t " + i_tile + " = 0; " + i_tile + " < " + int_literal(inner_loop.extent / w) + "; ++" +
             i_tile + ") ");
  line("#if defined(LOOM_HAS_SHUFFLEVECTOR)");
  const TransposeNetwork net = transpose_network(w);
  std::vector<std::string> rows(w);
  for (int i = 0; i < w; ++i) {
    rows[i] = fresh("row");
    line(vty + " " + rows[i] + ";");
    open_block("");
    bind_at(std::to_string(i), "0");
    line("__builtin_memcpy(&" + rows[i] + ", &" + src + "[" + load_index + "], sizeof(" + vty + "));");
    close_block();
  }
  auto mask_text = [](const std::vector<int>& m) {
    std::string text;
    for (int x : m) text += ", " + std::to_string(x);
    return text;
  };
  for (const TransposeStage& st : net.stages)
    for (int r = 0; r < w; ++r) {
      if (r & st.d) continue;
      const std::string lo = fresh("row"), hi = fresh("row");
      line("const " + vty + " " + lo + " = __builtin_shufflevector(" + rows[r] + ", " + rows[r | st.d] + mask_text(st.low) + ");");
      line("const " + vty + " " + hi + " = __builtin_shufflevector(" + rows[r] + ", " + rows[r | st.d] + mask_text(st.high) + ");");
      rows[r] = lo;
      rows[r | st.d] = hi;
    }
  for (int j = 0; j < w; ++j) {
    open_block("");
    bind_at("0", std::to_string(j));
    line("__builtin_memcpy(&" + dst + "[" + store_index + "], &" + rows[net.column_row[j]] + ", sizeof(" + vty + "));");
    close_block();
  }
  line("#else");
  const std::string du = fresh("du"), dv = fresh("dv");
  line("for (int64_t " + du + " = 0; " + du + " < " + ws + "; ++" + du + ")");
  open_block("  for (int64_t " + dv + " = 0; " + dv + " < " + ws + "; ++" + dv + ") ");
  bind_at(du, dv);
  line(copy);
  close_block();
  line("#endif");
  close_block();
  close_block();
  // The remainders: the last rows of the outer loop, then the last columns
  // of the tiled rows.
  auto scalar = [&](int64_t o_begin, int64_t o_end, int64_t i_begin, int64_t i_end) {
    if (o_begin >= o_end || i_begin >= i_end) return;
    line("for (int64_t " + on + " = " + int_literal(o_begin) + "; " + on + " < " + int_literal(o_end) + "; ++" + on + ")");
    line("  for (int64_t " + in + " = " + int_literal(i_begin) + "; " + in + " < " + int_literal(i_end) + "; ++" + in + ")");
    line("    " + copy);
  };
  const int64_t outer_full = outer_loop.extent / w * w, inner_full = inner_loop.extent / w * w;
  scalar(outer_full, outer_loop.extent, 0, inner_loop.extent);
  scalar(0, outer_full, inner_full, inner_loop.extent);
  for (; around > 0; --around) close_block();
  for (const StmtNode* l : t->loops) bound_.erase(l->loop_var->var_id);
  return true;
}

}  // namespace c_backend
}  // namespace loom
