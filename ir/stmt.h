// Loop-nest statements: what lowering produces and every backend consumes.
//
// Loops always start at 0. Buffers are flat: a Load/Store carries one index
// into a row-major buffer whose shape is recorded in the LoweredFunc.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/layout.h"

namespace loom {

enum class StmtKind : uint8_t { kFor, kStore, kIf, kSeq, kAllocate };

enum class ForKind : uint8_t {
  kSerial, kParallel, kVectorized, kUnrolled, kVThread,
  kBlockX, kBlockY, kBlockZ, kThreadX, kThreadY, kThreadZ,
};
const char* for_kind_name(ForKind k);

struct StmtNode;
using Stmt = std::shared_ptr<const StmtNode>;

struct StmtNode {
  StmtKind kind = StmtKind::kSeq;
  // kFor
  Var loop_var;
  int64_t extent = 0;
  ForKind for_kind = ForKind::kSerial;
  int64_t auto_unroll_max_step = 0;  // pragma: unroll inner nests up to this many steps
  // kStore / kAllocate
  std::string buffer;
  Expr index;
  Expr value;
  // kIf
  Expr cond;
  // kFor: body[0]; kIf: body[0] then, body[1] else (optional);
  // kSeq: children; kAllocate: body[0] (scope of the allocation)
  std::vector<Stmt> body;
};

Stmt make_for(Var v, int64_t extent, ForKind kind, Stmt body, int64_t auto_unroll = 0);
Stmt make_store(const std::string& buffer, Expr index, Expr value);
Stmt make_if(Expr cond, Stmt then_case, Stmt else_case = nullptr);
Stmt make_seq(std::vector<Stmt> stmts);  // flattens nested seqs, drops nulls
Stmt make_allocate(const std::string& buffer, Stmt body);

enum class BufferScope : uint8_t { kGlobal, kLocal, kShared };
const char* buffer_scope_name(BufferScope s);

struct Buffer {
  std::string name;
  std::vector<int64_t> shape;
  BufferScope scope = BufferScope::kGlobal;
  // Set for an argument that holds a constant input pre-transformed into a
  // blocked layout (the layout rewrite): the caller passes
  // layout->apply(the source input's data) in this argument's place.
  std::shared_ptr<const BlockedLayout> layout;
  int64_t size() const;
};

// A lowered program: arguments are the DAG's inputs then its outputs (in DAG
// order); `temps` are intermediate buffers, allocated by kAllocate statements
// (global temps at the top, compute_at/cache stages at their attach point).
struct LoweredFunc {
  std::string name;
  std::vector<Buffer> args;
  std::vector<Buffer> temps;
  Stmt body;
  const Buffer* find_buffer(const std::string& name) const;
};

// For each argument of `f` that holds a pre-transformed constant, adds its
// blocked copy, made from tensors[its source], to `tensors` under the
// argument's name (so that arguments bind by name).
void add_pretransformed_arguments(const LoweredFunc& f, std::map<std::string, std::vector<float>>& tensors);

std::string to_string(const Stmt& s, int indent = 0);
std::string to_string(const LoweredFunc& f);

void visit_stmt(const Stmt& s, const std::function<void(const Stmt&)>& fn);  // pre-order
// A copy of s with every expression (index, value, condition) mapped by fn.
Stmt map_exprs(const Stmt& s, const std::function<Expr(const Expr&)>& fn);
// A copy of s with each child statement replaced by fn(child); s itself
// when fn returns every child unchanged (the rewrite passes' recursion).
Stmt map_children(const Stmt& s, const std::function<Stmt(const Stmt&)>& fn);
// Replaces variables by id in every expression of s (simplified); an If
// whose condition becomes constant is replaced by the branch taken.
Stmt substitute(const Stmt& s, const std::vector<std::pair<Var, Expr>>& map);

}  // namespace loom
