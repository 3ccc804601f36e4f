// Vectorized loops: chunking, vector loads/stores, gathers/scatters, masks.
//
// A kVectorized loop of extent E is emitted as floor(E/W) chunks of W lanes
// (W = native width) and, for the remainder, one narrower chunk; each chunk
// emits the loop body once with the loop variable as the vector
// <base, base+1, ..., base+width-1>. Expressions that do not depend on the
// variable stay scalar and are broadcast where they meet vectors. Memory
// accesses are classified by classify_index (codegen/passes/lane_analysis.h):
// contiguous -> vector load/store at the lane-0 index, constant per chunk ->
// scalar load, a load with a constant stride of 2-4 -> one wide load and a
// shuffle, anything else -> gather/scatter. An active-lane mask (varying
// guards and select arms) makes every access masked.
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>

#include "codegen/llvm/emitter.h"
#include "ir/error.h"

namespace loom {
namespace llvm_backend {

namespace {
// Chunk loops with at most this many full chunks are unrolled at emission.
constexpr int64_t kMaxUnrolledChunks = 4;
// Loads with a larger constant stride stay gathers: the wide load would
// fetch more than this many elements per lane used.
constexpr int64_t kMaxShuffledStride = 4;
}  // namespace

void IREmitter::emit_vectorized(const Stmt& s) {
  int64_t extent = s->extent;
  int64_t w = std::max(opts_.vector_width, 1);
  if (extent == 1 || w == 1 || !can_vectorize(s, static_cast<int>(w))) {
    emit_serial(s);
    return;
  }
  if (extent <= w) {
    emit_vector_chunk(s, b_.getInt64(0), static_cast<int>(extent));
    return;
  }
  int64_t full = extent / w, tail = extent % w;
  if (full <= kMaxUnrolledChunks) {
    for (int64_t c = 0; c < full; ++c) emit_vector_chunk(s, b_.getInt64(c * w), static_cast<int>(w));
  } else {
    emit_loop(b_.getInt64(0), b_.getInt64(full), true, s->loop_var->name + ".chunk",
              [&](llvm::Value* iv) {
                llvm::Value* base = b_.CreateMul(iv, b_.getInt64(w), "", true, true);
                emit_vector_chunk(s, base, static_cast<int>(w));
              });
  }
  if (tail > 0) emit_vector_chunk(s, b_.getInt64(full * w), static_cast<int>(tail));
}

void IREmitter::emit_vector_chunk(const Stmt& s, llvm::Value* base, int width) {
  if (width == 1) {
    bind_var(s->loop_var, base);
    emit_stmt(s->body[0]);
    unbind_var(s->loop_var);
    return;
  }
  VecCtx ctx;
  ctx.var = s->loop_var;
  ctx.width = width;
  ctx.base = base;
  ctx.extent = s->extent;
  ctx.vector_width = std::max(opts_.vector_width, 1);
  VecCtx* saved = vec_;
  vec_ = &ctx;
  emit_stmt(s->body[0]);
  vec_ = saved;
}

// Runs `load` only when some lane is active; 0 otherwise.
llvm::Value* IREmitter::guarded_uniform(const std::function<llvm::Value*()>& load) {
  llvm::Value* any = b_.CreateOrReduce(vec_->mask);
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* ld_bb = llvm::BasicBlock::Create(ctx_, "uload", fn_);
  auto* merge = llvm::BasicBlock::Create(ctx_, "uload.end", fn_);
  b_.CreateCondBr(any, ld_bb, merge);
  b_.SetInsertPoint(ld_bb);
  llvm::Value* v = load();
  llvm::BasicBlock* ld_end = b_.GetInsertBlock();
  b_.CreateBr(merge);
  b_.SetInsertPoint(merge);
  auto* phi = b_.CreatePHI(v->getType(), 2);
  phi->addIncoming(v, ld_end);
  phi->addIncoming(llvm::Constant::getNullValue(v->getType()), pre);
  return phi;
}

Val IREmitter::emit_vector_load(const ExprNode& n, llvm::Value* base) {
  const Expr& idx = n.args[0];
  IndexPattern p = classify_index(idx, vec_->var->var_id, vec_->extent, vec_->vector_width);
  if (p.kind == IndexPattern::kUniform || p.kind == IndexPattern::kChunkUniform) {
    auto scalar_load = [&]() -> llvm::Value* {
      // Saved and restored: an index may itself load (a gather's row from
      // an index tensor), and that load must not end this one's base mode.
      const bool outer = vec_->var_as_base;
      vec_->var_as_base = true;
      llvm::Value* ptr = index_ptr(base, idx);
      vec_->var_as_base = outer;
      auto* ld = b_.CreateAlignedLoad(b_.getFloatTy(), ptr, llvm::Align(4));
      annotate(ld, n.name);
      return ld;
    };
    if (vec_->mask) return {guarded_uniform(scalar_load), false};
    return {scalar_load(), false};
  }
  auto* vty = llvm::FixedVectorType::get(b_.getFloatTy(), vec_->width);
  llvm::Value* zero = llvm::Constant::getNullValue(vty);
  if (p.kind == IndexPattern::kContiguous) {
    const bool outer = vec_->var_as_base;
    vec_->var_as_base = true;
    llvm::Value* ptr = b_.CreateBitCast(index_ptr(base, idx), vty->getPointerTo());
    vec_->var_as_base = outer;
    llvm::Instruction* ld = vec_->mask
                                ? b_.CreateMaskedLoad(vty, ptr, llvm::Align(4), vec_->mask, zero)
                                : static_cast<llvm::Instruction*>(
                                      b_.CreateAlignedLoad(vty, ptr, llvm::Align(4)));
    annotate(ld, n.name);
    return {ld, true};
  }
  // A small constant stride without a mask (a stride-2 conv's input
  // columns): one wide load of the lanes' span, then a shuffle that keeps
  // every stride-th element. The span's last stride-1 elements are masked
  // off, so nothing past the last lane's element is read.
  int64_t stride = 0;
  if (!vec_->mask && linear_stride(idx, vec_->var->var_id, &stride) && stride >= 2 && stride <= kMaxShuffledStride) {
    const int span = vec_->width * static_cast<int>(stride);
    auto* wide = llvm::FixedVectorType::get(b_.getFloatTy(), span);
    std::vector<llvm::Constant*> live;
    for (int i = 0; i < span; ++i) live.push_back(b_.getInt1(i <= (vec_->width - 1) * stride));
    const bool outer = vec_->var_as_base;
    vec_->var_as_base = true;
    llvm::Value* ptr = b_.CreateBitCast(index_ptr(base, idx), wide->getPointerTo());
    vec_->var_as_base = outer;
    auto* ld = b_.CreateMaskedLoad(wide, ptr, llvm::Align(4), llvm::ConstantVector::get(live),
                                   llvm::Constant::getNullValue(wide));
    annotate(ld, n.name);
    std::vector<int> lanes;
    for (int i = 0; i < vec_->width; ++i) lanes.push_back(i * static_cast<int>(stride));
    return {b_.CreateShuffleVector(ld, lanes), true};
  }
  // Any other varying index: gather.
  llvm::Value* iv = widen(emit(idx));
  llvm::Value* ptrs = b_.CreateInBoundsGEP(b_.getFloatTy(), base, iv);
  llvm::Value* mask = vec_->mask ? vec_->mask
                                 : llvm::Constant::getAllOnesValue(
                                       llvm::FixedVectorType::get(b_.getInt1Ty(), vec_->width));
  auto* g = b_.CreateMaskedGather(vty, ptrs, llvm::Align(4), mask, zero);
  annotate(g, n.name);
  return {g, true};
}

void IREmitter::emit_vector_store(const Stmt& s, llvm::Value* base, Val value) {
  const Expr& idx = s->index;
  IndexPattern p = classify_index(idx, vec_->var->var_id, vec_->extent, vec_->vector_width);
  if (p.kind == IndexPattern::kUniform || p.kind == IndexPattern::kChunkUniform)
    throw LoomError("LLVM backend: internal error: store to " + s->buffer +
                    " with an index that does not vary in a vectorized loop");
  llvm::Value* v = widen(value);
  if (p.kind == IndexPattern::kContiguous) {
    vec_->var_as_base = true;
    llvm::Value* ptr = b_.CreateBitCast(index_ptr(base, idx), v->getType()->getPointerTo());
    vec_->var_as_base = false;
    llvm::Instruction* st =
        vec_->mask ? static_cast<llvm::Instruction*>(
                         b_.CreateMaskedStore(v, ptr, llvm::Align(4), vec_->mask))
                   : b_.CreateAlignedStore(v, ptr, llvm::Align(4));
    annotate(st, s->buffer);
    return;
  }
  llvm::Value* iv = widen(emit(idx));
  llvm::Value* ptrs = b_.CreateInBoundsGEP(b_.getFloatTy(), base, iv);
  llvm::Value* mask = vec_->mask ? vec_->mask
                                 : llvm::Constant::getAllOnesValue(
                                       llvm::FixedVectorType::get(b_.getInt1Ty(), vec_->width));
  auto* sc = b_.CreateMaskedScatter(v, ptrs, llvm::Align(4), mask);
  annotate(sc, s->buffer);
}

// A guard whose condition varies across lanes: both branches run under masks,
// each skipped when no lane takes it.
void IREmitter::emit_vector_if(const Stmt& s, llvm::Value* cond) {
  llvm::Value* outer = vec_->mask;
  auto masked = [&](llvm::Value* m, const Stmt& body) {
    if (!body) return;
    vec_->mask = m;
    auto* run_bb = llvm::BasicBlock::Create(ctx_, "vif", fn_);
    auto* merge = llvm::BasicBlock::Create(ctx_, "vif.end", fn_);
    b_.CreateCondBr(b_.CreateOrReduce(m), run_bb, merge);
    b_.SetInsertPoint(run_bb);
    emit_stmt(body);
    b_.CreateBr(merge);
    b_.SetInsertPoint(merge);
  };
  llvm::Value* not_c = b_.CreateNot(cond);
  masked(outer ? b_.CreateAnd(outer, cond) : cond, s->body[0]);
  if (s->body.size() > 1 && s->body[1]) masked(outer ? b_.CreateAnd(outer, not_c) : not_c, s->body[1]);
  vec_->mask = outer;
}

}  // namespace llvm_backend
}  // namespace loom
