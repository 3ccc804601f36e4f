// Internal to the LLVM backend: Stmt/Expr -> LLVM IR.
//
// One emitter handles scalar and vector code: while the body of a
// vectorized loop is emitted, `vec_` describes the chunk (loop variable,
// width, first lane's value, active-lane mask) and every expression comes back
// as a Val that is either uniform (a scalar, same for all lanes) or varying
// (a <width x T> vector). ir_emitter.cc holds statements, loops, parallel
// outlining and allocation; expr_emitter.cc expressions; vectorize.cc the
// vector-loop driver and vector memory accesses; transpose.cc transposing
// copies.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/passes/lane_analysis.h"  // classify_index, can_vectorize, ... (namespace loom)
#include "codegen/passes/transpose_nest.h"
#include "ir/expr.h"
#include "ir/stmt.h"

namespace loom {
namespace llvm_backend {

struct EmitOptions {
  int num_threads = 1;
  int vector_width = 16;  // floats per vector chunk
  std::string cpu;        // "target-cpu" function attribute
  std::string features;   // "target-features" function attribute
  // Vector math functions the JIT can resolve (glibc libmvec names such as
  // "_ZGVeN16vv_powf"); vector calls without one are scalarized.
  std::set<std::string> vector_math;
};

// A value of the current emission context: a scalar (uniform across the
// lanes of the current vector chunk) or a vector (varying).
struct Val {
  llvm::Value* v = nullptr;
  bool vec = false;
};

// State of the vectorized loop being emitted.
struct VecCtx {
  Var var;                      // the vectorized loop variable
  int width = 1;                // lanes of this chunk
  int64_t extent = 1;           // extent of the vectorized loop
  int vector_width = 1;         // chunk stride (all chunks start at multiples)
  llvm::Value* base = nullptr;  // i64 value of var in lane 0
  llvm::Value* mask = nullptr;  // <width x i1> active lanes, null = all
  bool var_as_base = false;     // emit `var` as the scalar `base` (linear bases)
};

class IREmitter {
 public:
  IREmitter(const LoweredFunc& f, llvm::Module& m, const EmitOptions& opts);
  // Emits `void name(float** args)` computing f.
  llvm::Function* emit_entry(const std::string& name);

 private:
  // ---- functions
  llvm::Function* new_function(const std::string& name, llvm::FunctionType* ty, bool internal);
  llvm::AllocaInst* entry_alloca(llvm::Type* ty, uint64_t align, const std::string& name);

  // ---- statements (ir_emitter.cc)
  void emit_stmt(const Stmt& s);
  void emit_for(const Stmt& s);
  void emit_serial(const Stmt& s);
  void emit_unrolled(const Stmt& s);
  void emit_parallel(const Stmt& s);
  void emit_if(const Stmt& s);
  void emit_allocate(const Stmt& s);
  void emit_store(const Stmt& s);
  // Emits `for (iv = begin; iv < end; ++iv) body(iv)`; `nonempty` skips the
  // entry test.
  void emit_loop(llvm::Value* begin, llvm::Value* end, bool nonempty, const std::string& name,
                 const std::function<void(llvm::Value*)>& body);
  void bind_var(const Var& v, llvm::Value* value) {
    vars_[v->var_id] = value;
    var_order_[v->var_id] = ++bindings_;
  }
  void unbind_var(const Var& v) {
    vars_.erase(v->var_id);
    var_order_.erase(v->var_id);
  }

  // ---- vector loops (vectorize.cc)
  void emit_vectorized(const Stmt& s);
  void emit_vector_chunk(const Stmt& s, llvm::Value* base, int width);
  Val emit_vector_load(const ExprNode& n, llvm::Value* ptr);
  void emit_vector_store(const Stmt& s, llvm::Value* ptr, Val value);
  void emit_vector_if(const Stmt& s, llvm::Value* cond_vec);
  llvm::Value* guarded_uniform(const std::function<llvm::Value*()>& load);

  // ---- transposing copies in register tiles (transpose.cc)
  void emit_transpose_nest(const TransposeNest& t);

  // ---- expressions (expr_emitter.cc)
  Val emit(const Expr& e);
  llvm::Value* emit_scalar(const Expr& e);  // must be uniform
  Val emit_binary(const ExprNode& n);
  Val emit_div_mod(const ExprNode& n, Val a, Val b);
  Val emit_select(const ExprNode& n);
  Val emit_cast(const ExprNode& n);
  Val emit_call(const ExprNode& n);
  Val emit_load(const ExprNode& n);
  Val convert(Val v, DType from, DType to);
  llvm::Value* widen(Val v);
  // pow(x, y) of an exponent vector_math.h has no inline form for: glibc's
  // vector powf (libmvec) in a vector loop when the JIT has it, else
  // llvm.pow (powf per lane).
  llvm::Value* pow_call(const std::vector<llvm::Value*>& xs, bool vec);
  llvm::Type* type_of(DType t);

  // ---- buffers
  llvm::Value* buffer_ptr(const std::string& name);
  // float* + index: one GEP, or a chain of GEPs from the outermost loop's
  // terms of the index to the innermost's and the constant (ir_emitter.cc).
  llvm::Value* index_ptr(llvm::Value* base, const Expr& index);
  void annotate(llvm::Instruction* inst, const std::string& buffer);

  const LoweredFunc& f_;
  llvm::Module& m_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  EmitOptions opts_;
  std::string entry_name_;

  // current function
  llvm::Function* fn_ = nullptr;
  llvm::BasicBlock* entry_bb_ = nullptr;
  bool in_parallel_ = false;
  int num_outlined_ = 0;

  std::unordered_map<int64_t, llvm::Value*> vars_;          // var_id -> i64
  // var_id -> when it was bound: an enclosing loop's variable was bound
  // before an inner loop's, so this orders the variables in scope by depth.
  std::unordered_map<int64_t, int64_t> var_order_;
  int64_t bindings_ = 0;
  std::unordered_map<std::string, llvm::Value*> buffers_;   // name -> float*
  VecCtx* vec_ = nullptr;
  // While a transposing copy's epilogue is emitted: its transposed load and
  // the tile column that stands for it (transpose.cc).
  const ExprNode* transposed_load_ = nullptr;
  llvm::Value* transposed_column_ = nullptr;
  int64_t unroll_limit_ = 0;  // active auto_unroll_max_step (0 = none)

  // alias scopes: one per buffer name
  llvm::MDNode* alias_domain_ = nullptr;
  std::unordered_map<std::string, llvm::MDNode*> scopes_;
  std::unordered_map<std::string, std::pair<llvm::MDNode*, llvm::MDNode*>> scope_lists_;
};

}  // namespace llvm_backend
}  // namespace loom
