// Statements: loops (serial, unrolled, parallel), guards, allocation, stores.
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>

#include <algorithm>
#include <climits>
#include <map>
#include <set>

#include "codegen/llvm/emitter.h"
#include "codegen/passes/temp_buffers.h"
#include "codegen/passes/unrolling.h"
#include "ir/error.h"

namespace loom {
namespace llvm_backend {

IREmitter::IREmitter(const LoweredFunc& f, llvm::Module& m, const EmitOptions& opts)
    : f_(f), m_(m), ctx_(m.getContext()), b_(m.getContext()), opts_(opts) {
  llvm::FastMathFlags fmf;
  fmf.setAllowContract(true);
  b_.setFastMathFlags(fmf);
  llvm::MDBuilder mdb(ctx_);
  alias_domain_ = mdb.createAnonymousAliasScopeDomain("loom");
  auto add_scope = [&](const std::string& name) {
    if (!scopes_.count(name)) scopes_[name] = mdb.createAnonymousAliasScope(alias_domain_, name);
  };
  for (const auto& b : f.args) add_scope(b.name);
  for (const auto& b : f.temps) add_scope(b.name);
}

llvm::Function* IREmitter::new_function(const std::string& name, llvm::FunctionType* ty,
                                        bool internal) {
  auto* fn = llvm::Function::Create(
      ty, internal ? llvm::GlobalValue::InternalLinkage : llvm::GlobalValue::ExternalLinkage, name,
      &m_);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  if (!opts_.cpu.empty()) fn->addFnAttr("target-cpu", opts_.cpu);
  if (!opts_.features.empty()) fn->addFnAttr("target-features", opts_.features);
  std::string bits = std::to_string(opts_.vector_width * 32);
  fn->addFnAttr("prefer-vector-width", bits);
  fn->addFnAttr("min-legal-vector-width", bits);
  return fn;
}

llvm::AllocaInst* IREmitter::entry_alloca(llvm::Type* ty, uint64_t align, const std::string& name) {
  llvm::IRBuilder<> eb(entry_bb_, entry_bb_->getFirstInsertionPt());
  auto* a = eb.CreateAlloca(ty, nullptr, name);
  a->setAlignment(llvm::Align(align));
  return a;
}

llvm::Function* IREmitter::emit_entry(const std::string& name) {
  entry_name_ = name;
  auto* fptr = llvm::Type::getFloatPtrTy(ctx_);
  auto* fty = llvm::FunctionType::get(b_.getVoidTy(), {fptr->getPointerTo()}, false);
  fn_ = new_function(name, fty, false);
  fn_->addParamAttr(0, llvm::Attribute::NoAlias);
  fn_->addParamAttr(0, llvm::Attribute::NoCapture);
  fn_->addParamAttr(0, llvm::Attribute::ReadOnly);
  entry_bb_ = llvm::BasicBlock::Create(ctx_, "entry", fn_);
  b_.SetInsertPoint(entry_bb_);
  llvm::Value* args = fn_->getArg(0);
  for (size_t i = 0; i < f_.args.size(); ++i) {
    llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(fptr, args, i);
    auto* p = b_.CreateAlignedLoad(fptr, slot, llvm::Align(8), f_.args[i].name);
    buffers_[f_.args[i].name] = p;
  }
  if (f_.body) emit_stmt(f_.body);
  b_.CreateRetVoid();
  return fn_;
}

// ---------------------------------------------------------------- statements

void IREmitter::emit_stmt(const Stmt& s) {
  if (!s) return;
  switch (s->kind) {
    case StmtKind::kSeq:
      for (const auto& c : s->body) emit_stmt(c);
      return;
    case StmtKind::kFor: emit_for(s); return;
    case StmtKind::kStore: emit_store(s); return;
    case StmtKind::kIf: emit_if(s); return;
    case StmtKind::kAllocate: emit_allocate(s); return;
  }
  throw LoomError("LLVM backend: unknown statement kind");
}

void IREmitter::emit_loop(llvm::Value* begin, llvm::Value* end, bool nonempty,
                          const std::string& name,
                          const std::function<void(llvm::Value*)>& body) {
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(ctx_, name + ".loop", fn_);
  auto* exit = llvm::BasicBlock::Create(ctx_, name + ".exit", fn_);
  if (nonempty) {
    b_.CreateBr(header);
  } else {
    b_.CreateCondBr(b_.CreateICmpSLT(begin, end), header, exit);
  }
  b_.SetInsertPoint(header);
  auto* iv = b_.CreatePHI(b_.getInt64Ty(), 2, name);
  iv->addIncoming(begin, pre);
  body(iv);
  llvm::Value* next = b_.CreateAdd(iv, b_.getInt64(1), name + ".next", true, true);
  iv->addIncoming(next, b_.GetInsertBlock());
  b_.CreateCondBr(b_.CreateICmpSLT(next, end), header, exit);
  b_.SetInsertPoint(exit);
}

void IREmitter::emit_for(const Stmt& s) {
  if (s->extent <= 0) return;
  if (!s->body.empty() && s->body[0] == nullptr) return;
  if (!vec_) {
    if (auto t = match_transpose_nest(s, opts_.vector_width, /*elementwise=*/true)) {
      emit_transpose_nest(*t);
      return;
    }
  }
  int64_t saved_limit = unroll_limit_;
  if (s->auto_unroll_max_step > 0) unroll_limit_ = s->auto_unroll_max_step;
  switch (s->for_kind) {
    case ForKind::kUnrolled:
      if (unrolled_at_emission(s, unroll_limit_)) {
        emit_unrolled(s);
      } else {
        emit_serial(s);
      }
      break;
    case ForKind::kVectorized:
      if (vec_) {
        emit_serial(s);  // nested in a vector chunk: a uniform loop
      } else {
        emit_vectorized(s);
      }
      break;
    case ForKind::kParallel:
      if (vec_ || in_parallel_ || opts_.num_threads <= 1) {
        emit_serial(s);
      } else {
        emit_parallel(s);
      }
      break;
    default:
      if (unrolled_at_emission(s, unroll_limit_)) {
        emit_unrolled(s);
      } else {
        emit_serial(s);
      }
  }
  unroll_limit_ = saved_limit;
}

void IREmitter::emit_serial(const Stmt& s) {
  if (s->extent == 1) {
    bind_var(s->loop_var, b_.getInt64(0));
    emit_stmt(s->body[0]);
    unbind_var(s->loop_var);
    return;
  }
  emit_loop(b_.getInt64(0), b_.getInt64(s->extent), true, s->loop_var->name, [&](llvm::Value* iv) {
    bind_var(s->loop_var, iv);
    emit_stmt(s->body[0]);
  });
  unbind_var(s->loop_var);
}

void IREmitter::emit_unrolled(const Stmt& s) {
  for (int64_t i = 0; i < s->extent; ++i) {
    bind_var(s->loop_var, b_.getInt64(i));
    emit_stmt(s->body[0]);
  }
  unbind_var(s->loop_var);
}

// Outlines the loop body into `void body(i64 begin, i64 end, i8* closure)`
// and calls loom_parallel_for(extent, body, closure, num_threads).
void IREmitter::emit_parallel(const Stmt& s) {
  std::set<int64_t> used_vars;
  std::set<std::string> used_buffers;
  collect_uses(s->body[0], &used_vars, &used_buffers);
  std::vector<std::pair<int64_t, llvm::Value*>> cap_vars;
  std::vector<std::pair<std::string, llvm::Value*>> cap_bufs;
  for (int64_t id : used_vars) {
    auto it = vars_.find(id);
    if (it != vars_.end()) cap_vars.push_back(*it);
  }
  for (const auto& name : used_buffers) {
    auto it = buffers_.find(name);
    if (it != buffers_.end()) cap_bufs.push_back(*it);
  }
  auto* fptr = llvm::Type::getFloatPtrTy(ctx_);
  std::vector<llvm::Type*> fields;
  for (size_t i = 0; i < cap_bufs.size(); ++i) fields.push_back(fptr);
  for (size_t i = 0; i < cap_vars.size(); ++i) fields.push_back(b_.getInt64Ty());
  if (fields.empty()) fields.push_back(b_.getInt64Ty());  // keep the struct non-empty
  auto* cty = llvm::StructType::get(ctx_, fields);

  // The outlined body.
  auto* i8p = b_.getInt8PtrTy();
  auto* body_ty =
      llvm::FunctionType::get(b_.getVoidTy(), {b_.getInt64Ty(), b_.getInt64Ty(), i8p}, false);
  std::string body_name = entry_name_ + ".par" + std::to_string(num_outlined_++);
  llvm::Function* body_fn = new_function(body_name, body_ty, true);
  body_fn->addParamAttr(2, llvm::Attribute::NoAlias);
  body_fn->addParamAttr(2, llvm::Attribute::NoCapture);
  body_fn->addParamAttr(2, llvm::Attribute::ReadOnly);

  // Fill the closure in the caller.
  llvm::AllocaInst* closure = entry_alloca(cty, 8, "closure");
  unsigned field = 0;
  for (auto& [name, v] : cap_bufs) b_.CreateStore(v, b_.CreateStructGEP(cty, closure, field++));
  for (auto& [id, v] : cap_vars) b_.CreateStore(v, b_.CreateStructGEP(cty, closure, field++));

  // Emit the body function with its own state.
  auto saved_ip = b_.saveIP();
  llvm::Function* saved_fn = fn_;
  llvm::BasicBlock* saved_entry = entry_bb_;
  auto saved_vars = vars_;
  auto saved_bufs = buffers_;
  fn_ = body_fn;
  in_parallel_ = true;
  entry_bb_ = llvm::BasicBlock::Create(ctx_, "entry", fn_);
  b_.SetInsertPoint(entry_bb_);
  llvm::Value* cl = b_.CreateBitCast(fn_->getArg(2), cty->getPointerTo());
  field = 0;
  vars_.clear();
  buffers_.clear();
  for (auto& [name, v] : cap_bufs) {
    buffers_[name] = b_.CreateLoad(fptr, b_.CreateStructGEP(cty, cl, field++), name);
  }
  for (auto& [id, v] : cap_vars) {
    vars_[id] = b_.CreateLoad(b_.getInt64Ty(), b_.CreateStructGEP(cty, cl, field++));
  }
  emit_loop(fn_->getArg(0), fn_->getArg(1), false, s->loop_var->name, [&](llvm::Value* iv) {
    bind_var(s->loop_var, iv);
    emit_stmt(s->body[0]);
  });
  b_.CreateRetVoid();
  fn_ = saved_fn;
  entry_bb_ = saved_entry;
  in_parallel_ = false;
  vars_ = std::move(saved_vars);
  buffers_ = std::move(saved_bufs);
  b_.restoreIP(saved_ip);

  // Call the runtime.
  auto* rt_ty = llvm::FunctionType::get(
      b_.getVoidTy(), {b_.getInt64Ty(), body_fn->getType(), i8p, b_.getInt32Ty()}, false);
  llvm::FunctionCallee rt = m_.getOrInsertFunction("loom_parallel_for", rt_ty);
  b_.CreateCall(rt, {b_.getInt64(s->extent), body_fn, b_.CreateBitCast(closure, i8p),
                     b_.getInt32(opts_.num_threads)});
}

void IREmitter::emit_if(const Stmt& s) {
  Val c = convert(emit(s->cond), s->cond->dtype, DType::kBool);
  if (c.vec) {
    emit_vector_if(s, c.v);
    return;
  }
  llvm::Value* cond = c.v;
  bool has_else = s->body.size() > 1 && s->body[1];
  auto* then_bb = llvm::BasicBlock::Create(ctx_, "then", fn_);
  auto* else_bb = has_else ? llvm::BasicBlock::Create(ctx_, "else", fn_) : nullptr;
  auto* merge = llvm::BasicBlock::Create(ctx_, "endif", fn_);
  b_.CreateCondBr(cond, then_bb, has_else ? else_bb : merge);
  b_.SetInsertPoint(then_bb);
  emit_stmt(s->body[0]);
  b_.CreateBr(merge);
  if (has_else) {
    b_.SetInsertPoint(else_bb);
    emit_stmt(s->body[1]);
    b_.CreateBr(merge);
  }
  b_.SetInsertPoint(merge);
}

void IREmitter::emit_allocate(const Stmt& s) {
  const Buffer* buf = nullptr;
  for (const auto& t : f_.temps)
    if (t.name == s->buffer) buf = &t;
  if (!buf) buf = f_.find_buffer(s->buffer);
  if (!buf) throw LoomError("LLVM backend: allocation of unknown buffer " + s->buffer);
  int64_t elems = std::max<int64_t>(buf->size(), 1);
  int64_t bytes = elems * 4;
  auto* fptr = llvm::Type::getFloatPtrTy(ctx_);
  auto saved = buffers_.find(s->buffer) != buffers_.end()
                   ? buffers_[s->buffer]
                   : nullptr;
  if (bytes <= kMaxStackTempBytes) {
    auto* arr = llvm::ArrayType::get(b_.getFloatTy(), elems);
    llvm::AllocaInst* a = entry_alloca(arr, 64, s->buffer);
    buffers_[s->buffer] = b_.CreateBitCast(a, fptr, s->buffer);
    emit_stmt(s->body.empty() ? nullptr : s->body[0]);
  } else {
    int64_t rounded = (bytes + 63) / 64 * 64;
    auto* alloc_ty =
        llvm::FunctionType::get(b_.getInt8PtrTy(), {b_.getInt64Ty(), b_.getInt64Ty()}, false);
    llvm::FunctionCallee alloc = m_.getOrInsertFunction("aligned_alloc", alloc_ty);
    if (auto* fn = llvm::dyn_cast<llvm::Function>(alloc.getCallee()))
      fn->addRetAttr(llvm::Attribute::NoAlias);
    auto* free_ty = llvm::FunctionType::get(b_.getVoidTy(), {b_.getInt8PtrTy()}, false);
    llvm::FunctionCallee free_fn = m_.getOrInsertFunction("free", free_ty);
    llvm::Value* raw = b_.CreateCall(alloc, {b_.getInt64(64), b_.getInt64(rounded)});
    buffers_[s->buffer] = b_.CreateBitCast(raw, fptr, s->buffer);
    emit_stmt(s->body.empty() ? nullptr : s->body[0]);
    b_.CreateCall(free_fn, {raw});
  }
  if (saved) {
    buffers_[s->buffer] = saved;
  } else {
    buffers_.erase(s->buffer);
  }
}

void IREmitter::emit_store(const Stmt& s) {
  llvm::Value* base = buffer_ptr(s->buffer);
  Val value = convert(emit(s->value), s->value->dtype, DType::kFloat);
  if (vec_ && (value.vec || uses_var_id(s->index, vec_->var->var_id) || vec_->mask)) {
    emit_vector_store(s, base, value);
    return;
  }
  auto* st = b_.CreateAlignedStore(value.v, index_ptr(base, s->index), llvm::Align(4));
  annotate(st, s->buffer);
}

// ---------------------------------------------------------------- buffers

llvm::Value* IREmitter::buffer_ptr(const std::string& name) {
  auto it = buffers_.find(name);
  if (it == buffers_.end())
    throw LoomError("LLVM backend: buffer " + name + " is not an argument or allocated here");
  return it->second;
}

namespace {

void additive_terms(const Expr& e, std::vector<Expr>* terms) {
  if (e->kind == ExprKind::kAdd && e->dtype == DType::kInt) {
    additive_terms(e->args[0], terms);
    additive_terms(e->args[1], terms);
  } else {
    terms->push_back(e);
  }
}

}  // namespace

llvm::Value* IREmitter::index_ptr(llvm::Value* base, const Expr& index) {
  // Why a chain: as one index, the accesses of an unrolled register tile
  // (unrolled here or later by LLVM) each compute their own address. LLVM
  // rewrites `x + constant` with disjoint bits into `x | constant`, which
  // its x86 address matching (LLVM 14) does not fold below the element
  // scaling, and a sum of all loops' terms is recomputed in the innermost
  // loop. As GEPs from the outermost loop's terms inwards, each partial
  // pointer is loop-invariant where its terms are (LICM hoists it), and the
  // constant and unrolled terms end in the displacement of the access.
  std::vector<Expr> terms;
  additive_terms(index, &terms);
  // Depth of a term = the binding order of its innermost variable; the
  // vectorized loop's variable is the innermost of all; constants last.
  constexpr int64_t kVectorLane = INT64_MAX - 1, kConstant = INT64_MAX;
  std::map<int64_t, Expr> by_depth;
  for (const Expr& t : terms) {
    int64_t depth = -1;
    visit(t, [&](const Expr& x) {
      if (x->kind != ExprKind::kVar) return;
      int64_t d = 0;
      if (vec_ && x->var_id == vec_->var->var_id) {
        d = kVectorLane;
      } else {
        auto it = var_order_.find(x->var_id);
        d = it == var_order_.end() ? 0 : it->second;
      }
      depth = std::max(depth, d);
    });
    if (depth < 0) depth = kConstant;
    if (t->kind == ExprKind::kLoad) depth = kVectorLane;  // data-dependent: innermost
    auto [it, fresh] = by_depth.emplace(depth, t);
    if (!fresh) it->second = make_binary(ExprKind::kAdd, it->second, t);
  }
  if (by_depth.size() <= 1) return b_.CreateInBoundsGEP(b_.getFloatTy(), base, emit_scalar(index));
  // Not inbounds: a partial pointer may lie outside the buffer (e.g. before
  // it, for a padded convolution whose constant term is negative).
  llvm::Value* ptr = base;
  for (const auto& [depth, sum] : by_depth) ptr = b_.CreateGEP(b_.getFloatTy(), ptr, emit_scalar(sum));
  return ptr;
}

void IREmitter::annotate(llvm::Instruction* inst, const std::string& buffer) {
  auto it = scope_lists_.find(buffer);
  if (it == scope_lists_.end()) {
    llvm::MDBuilder mdb(ctx_);
    if (!scopes_.count(buffer)) scopes_[buffer] = mdb.createAnonymousAliasScope(alias_domain_, buffer);
    std::vector<llvm::Metadata*> others;
    for (const auto& [name, scope] : scopes_)
      if (name != buffer) others.push_back(scope);
    auto* own = llvm::MDNode::get(ctx_, {scopes_[buffer]});
    auto* rest = llvm::MDNode::get(ctx_, others);
    it = scope_lists_.emplace(buffer, std::make_pair(own, rest)).first;
  }
  inst->setMetadata(llvm::LLVMContext::MD_alias_scope, it->second.first);
  inst->setMetadata(llvm::LLVMContext::MD_noalias, it->second.second);
}

}  // namespace llvm_backend
}  // namespace loom
