// Transposing copies of the C backend (codegen/transpose_nest.h), as the
// LLVM backend emits them (codegen/llvm/transpose.cc): the nest's other
// loops around tiles of the vector width read as rows, transposed by __builtin_shufflevector in the same
// network, written as rows; the remainders element by element. A compiler
// without __builtin_shufflevector copies each tile element by element.
#include <string>
#include <vector>

#include "codegen/c_emitter.h"
#include "ir/simplify.h"
#include "codegen/transpose_nest.h"

namespace loom {
namespace c_backend {

bool CEmitter::transposing_copy(const Stmt& s) {
  const int w = opts_.vector_width;
  if (w < 2 || (w & (w - 1)) != 0 || chunk_ || rec_ || !slots_.empty()) return false;
  auto t = match_transpose_nest(s, w);
  if (!t) return false;
  const Stmt& store = t->loops.back()->body[0];
  const ExprNode& load = *store->value;
  const Var& outer = t->outer->loop_var;
  const Var& inner = t->inner->loop_var;
  const bool outer_is_store_axis = t->outer == t->store_axis;
  const std::string vty = c_vector_type(DType::kFloat, w);
  vector_widths_.insert(w);
  const std::string src = names_.buffer(load.name), dst = names_.buffer(store->buffer);
  const std::string o_tile = fresh("tile"), i_tile = fresh("tile");
  const std::string on = var_name(outer), in = var_name(inner);
  const std::string ws = std::to_string(w);

  // Declares the loop variables at (store axis = u0 + du, load axis = v0 + dv).
  auto bind_at = [&](int du, int dv) {
    const std::string u = (outer_is_store_axis ? o_tile : i_tile) + " * " + ws + " + " + std::to_string(du);
    const std::string v = (outer_is_store_axis ? i_tile : o_tile) + " * " + ws + " + " + std::to_string(dv);
    line("const int64_t " + on + " = " + (outer_is_store_axis ? u : v) + ";");
    line("const int64_t " + in + " = " + (outer_is_store_axis ? v : u) + ";");
  };
  for (const StmtNode* l : t->loops) {
    var_name(l->loop_var);  // names every loop variable before the indices are printed
    bound_.insert(l->loop_var->var_id);
  }
  auto index_text = [&](const Expr& index) {
    return printer(names_).print(consts_.empty() ? index : simplify(bound(index)));
  };
  const std::string load_index = index_text(load.args[0]), store_index = index_text(store->index);

  line("/* transposing copy in " + ws + " x " + ws + " tiles */");
  // The nest's other loops, in their order, around the two axes.
  int around = 0;
  for (const StmtNode* l : t->loops) {
    if (l == t->outer || l == t->inner) continue;
    const std::string name = var_name(l->loop_var);
    line("for (int64_t " + name + " = 0; " + name + " < " + int_literal(l->extent) + "; ++" + name + ") {");
    ++indent_;
    ++around;
  }
  line("for (int64_t " + o_tile + " = 0; " + o_tile + " < " + int_literal(t->outer->extent / w) + "; ++" + o_tile + ") {");
  ++indent_;
  line("for (int64_t " + i_tile + " = 0; " + i_tile + " < " + int_literal(t->inner->extent / w) + "; ++" + i_tile + ") {");
  ++indent_;
  line("#if defined(LOOM_HAS_SHUFFLEVECTOR)");
  const TransposeNetwork net = transpose_network(w);
  std::vector<std::string> rows(w);
  for (int i = 0; i < w; ++i) {
    rows[i] = fresh("row");
    line(vty + " " + rows[i] + ";");
    line("{");
    ++indent_;
    bind_at(i, 0);
    line("__builtin_memcpy(&" + rows[i] + ", &" + src + "[" + load_index + "], sizeof(" + vty + "));");
    --indent_;
    line("}");
  }
  auto mask_text = [](const std::vector<int>& m) {
    std::string s;
    for (int x : m) s += ", " + std::to_string(x);
    return s;
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
    line("{");
    ++indent_;
    bind_at(0, j);
    line("__builtin_memcpy(&" + dst + "[" + store_index + "], &" + rows[net.column_row[j]] + ", sizeof(" + vty + "));");
    --indent_;
    line("}");
  }
  line("#else");
  const std::string du = fresh("du"), dv = fresh("dv");
  line("for (int64_t " + du + " = 0; " + du + " < " + ws + "; ++" + du + ")");
  line("  for (int64_t " + dv + " = 0; " + dv + " < " + ws + "; ++" + dv + ") {");
  ++indent_;
  {
    const std::string u = (outer_is_store_axis ? o_tile : i_tile) + " * " + ws + " + " + du;
    const std::string v = (outer_is_store_axis ? i_tile : o_tile) + " * " + ws + " + " + dv;
    line("const int64_t " + on + " = " + (outer_is_store_axis ? u : v) + ";");
    line("const int64_t " + in + " = " + (outer_is_store_axis ? v : u) + ";");
  }
  line(dst + "[" + store_index + "] = " + src + "[" + load_index + "];");
  --indent_;
  line("  }");
  line("#endif");
  --indent_;
  line("}");
  --indent_;
  line("}");
  // The remainders: the last rows of the outer loop, then the last columns
  // of the tiled rows.
  auto scalar = [&](int64_t o_begin, int64_t o_end, int64_t i_begin, int64_t i_end) {
    if (o_begin >= o_end || i_begin >= i_end) return;
    line("for (int64_t " + on + " = " + int_literal(o_begin) + "; " + on + " < " + int_literal(o_end) + "; ++" + on + ")");
    line("  for (int64_t " + in + " = " + int_literal(i_begin) + "; " + in + " < " + int_literal(i_end) + "; ++" + in + ")");
    line("    " + dst + "[" + store_index + "] = " + src + "[" + load_index + "];");
  };
  const int64_t outer_full = t->outer->extent / w * w, inner_full = t->inner->extent / w * w;
  scalar(outer_full, t->outer->extent, 0, t->inner->extent);
  scalar(0, outer_full, inner_full, t->inner->extent);
  for (; around > 0; --around) {
    --indent_;
    line("}");
  }
  for (const StmtNode* l : t->loops) bound_.erase(l->loop_var->var_id);
  return true;
}

}  // namespace c_backend
}  // namespace loom
