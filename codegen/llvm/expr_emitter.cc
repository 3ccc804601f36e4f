// Expressions: arithmetic (scalar or lane-wise), floor div/mod, select,
// casts, math calls, scalar loads.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "ir/simplify.h"
#include "codegen/llvm/emitter.h"
#include "codegen/llvm/vector_math.h"
#include "ir/error.h"

namespace loom {
namespace llvm_backend {

llvm::Type* IREmitter::type_of(DType t) {
  switch (t) {
    case DType::kInt: return b_.getInt64Ty();
    case DType::kFloat: return b_.getFloatTy();
    case DType::kBool: return b_.getInt1Ty();
  }
  return b_.getInt64Ty();
}

llvm::Value* IREmitter::widen(Val v) {
  if (v.vec) return v.v;
  return b_.CreateVectorSplat(vec_->width, v.v);
}

llvm::Value* IREmitter::emit_scalar(const Expr& e) {
  Val v = emit(e);
  if (v.vec) throw LoomError("LLVM backend: internal error: varying value where a scalar is needed: " +
                             to_string(e));
  return v.v;
}

Val IREmitter::convert(Val v, DType from, DType to) {
  if (from == to) return v;
  llvm::Type* t = type_of(to);
  if (v.vec) t = llvm::FixedVectorType::get(t, vec_->width);
  llvm::Value* r = nullptr;
  llvm::Value* zero = nullptr;
  switch (to) {
    case DType::kFloat:
      r = from == DType::kBool ? b_.CreateUIToFP(v.v, t) : b_.CreateSIToFP(v.v, t);
      break;
    case DType::kInt:
      r = from == DType::kBool ? b_.CreateZExt(v.v, t) : b_.CreateFPToSI(v.v, t);
      break;
    case DType::kBool:
      zero = llvm::Constant::getNullValue(v.v->getType());
      r = from == DType::kFloat ? b_.CreateFCmpUNE(v.v, zero) : b_.CreateICmpNE(v.v, zero);
      break;
  }
  return {r, v.vec};
}

Val IREmitter::emit(const Expr& e) {
  if (!e.defined()) throw LoomError("LLVM backend: undefined expression");
  const ExprNode& n = *e;
  switch (n.kind) {
    case ExprKind::kIntImm:
      if (n.dtype == DType::kBool) return {b_.getInt1(n.int_value != 0), false};
      if (n.dtype == DType::kFloat) return {llvm::ConstantFP::get(b_.getFloatTy(), n.int_value), false};
      return {b_.getInt64(n.int_value), false};
    case ExprKind::kFloatImm:
      if (n.dtype == DType::kInt) return {b_.getInt64(static_cast<int64_t>(n.float_value)), false};
      return {llvm::ConstantFP::get(b_.getFloatTy(), static_cast<float>(n.float_value)), false};
    case ExprKind::kVar: {
      if (vec_ && n.var_id == vec_->var->var_id) {
        if (vec_->var_as_base) return {vec_->base, false};
        auto* vty = llvm::FixedVectorType::get(b_.getInt64Ty(), vec_->width);
        llvm::Value* lanes = b_.CreateStepVector(vty);
        return {b_.CreateAdd(b_.CreateVectorSplat(vec_->width, vec_->base), lanes, "", true, true),
                true};
      }
      auto it = vars_.find(n.var_id);
      if (it == vars_.end())
        throw LoomError("LLVM backend: variable " + n.name + " is used outside its loop");
      return {it->second, false};
    }
    case ExprKind::kNot: {
      Val a = convert(emit(n.args[0]), n.args[0]->dtype, DType::kBool);
      return {b_.CreateNot(a.v), a.vec};
    }
    case ExprKind::kSelect: return emit_select(n);
    case ExprKind::kCast: return emit_cast(n);
    case ExprKind::kCall: return emit_call(n);
    case ExprKind::kLoad: return emit_load(n);
    case ExprKind::kReduce:
      throw LoomError("LLVM backend: reduction left in a lowered expression: " + to_string(e));
    default: break;
  }
  if (is_binary(n.kind) && n.args.size() == 2) return emit_binary(n);
  throw LoomError("LLVM backend: unsupported expression " + to_string(e));
}

namespace {
bool is_float_mul(const Expr& e) {
  return e->kind == ExprKind::kMul && e->dtype == DType::kFloat && e->args[0]->dtype == DType::kFloat &&
         e->args[1]->dtype == DType::kFloat;
}
}  // namespace

Val IREmitter::emit_binary(const ExprNode& n) {
  DType da = n.args[0]->dtype, db = n.args[1]->dtype;
  // Operand type: float if either is float, else int if either is int, else bool.
  DType dt = (da == DType::kFloat || db == DType::kFloat) ? DType::kFloat
             : (da == DType::kInt || db == DType::kInt)   ? DType::kInt
                                                          : DType::kBool;
  bool logic = n.kind == ExprKind::kAnd || n.kind == ExprKind::kOr;
  if (logic) dt = DType::kBool;
  else if (dt == DType::kBool) dt = DType::kInt;
  if (n.dtype == DType::kFloat && !is_comparison(n.kind)) dt = DType::kFloat;

  // a*b + c and a*b - c as fused multiply-adds.
  if (dt == DType::kFloat && (n.kind == ExprKind::kAdd || n.kind == ExprKind::kSub)) {
    int mul_side = is_float_mul(n.args[0]) ? 0 : (is_float_mul(n.args[1]) ? 1 : -1);
    if (mul_side >= 0) {
      const Expr& m = n.args[mul_side];
      Val x = emit(m->args[0]), y = emit(m->args[1]), c = emit(n.args[1 - mul_side]);
      c = convert(c, n.args[1 - mul_side]->dtype, DType::kFloat);
      bool vec = x.vec || y.vec || c.vec;
      llvm::Value *xv = x.v, *yv = y.v, *cv = c.v;
      if (vec) xv = widen(x), yv = widen(y), cv = widen(c);
      if (n.kind == ExprKind::kSub) {
        if (mul_side == 0) cv = b_.CreateFNeg(cv);  // a*b - c
        else xv = b_.CreateFNeg(xv);                // c - a*b
      }
      return {b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {xv->getType()}, {xv, yv, cv}), vec};
    }
  }

  Val a = convert(emit(n.args[0]), da, dt);
  Val b = convert(emit(n.args[1]), db, dt);
  if (n.kind == ExprKind::kDiv || n.kind == ExprKind::kMod) {
    if (dt == DType::kInt) return emit_div_mod(n, a, b);
  }
  bool vec = a.vec || b.vec;
  llvm::Value *x = a.v, *y = b.v;
  if (vec) x = widen(a), y = widen(b);
  bool f = dt == DType::kFloat;
  switch (n.kind) {
    case ExprKind::kAdd: return {f ? b_.CreateFAdd(x, y) : b_.CreateAdd(x, y), vec};
    case ExprKind::kSub: return {f ? b_.CreateFSub(x, y) : b_.CreateSub(x, y), vec};
    case ExprKind::kMul: return {f ? b_.CreateFMul(x, y) : b_.CreateMul(x, y), vec};
    case ExprKind::kDiv: return {b_.CreateFDiv(x, y), vec};
    case ExprKind::kMod: {  // float floor-mod: a - floor(a / b) * b
      llvm::Value* q = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, b_.CreateFDiv(x, y));
      return {b_.CreateFSub(x, b_.CreateFMul(q, y)), vec};
    }
    case ExprKind::kMin:  // b < a ? b : a
      return {b_.CreateSelect(f ? b_.CreateFCmpOLT(y, x) : b_.CreateICmpSLT(y, x), y, x), vec};
    case ExprKind::kMax:  // a < b ? b : a
      return {b_.CreateSelect(f ? b_.CreateFCmpOLT(x, y) : b_.CreateICmpSLT(x, y), y, x), vec};
    case ExprKind::kEQ: return {f ? b_.CreateFCmpOEQ(x, y) : b_.CreateICmpEQ(x, y), vec};
    case ExprKind::kNE: return {f ? b_.CreateFCmpUNE(x, y) : b_.CreateICmpNE(x, y), vec};
    case ExprKind::kLT: return {f ? b_.CreateFCmpOLT(x, y) : b_.CreateICmpSLT(x, y), vec};
    case ExprKind::kLE: return {f ? b_.CreateFCmpOLE(x, y) : b_.CreateICmpSLE(x, y), vec};
    case ExprKind::kGT: return {f ? b_.CreateFCmpOGT(x, y) : b_.CreateICmpSGT(x, y), vec};
    case ExprKind::kGE: return {f ? b_.CreateFCmpOGE(x, y) : b_.CreateICmpSGE(x, y), vec};
    case ExprKind::kAnd: return {b_.CreateAnd(x, y), vec};
    case ExprKind::kOr: return {b_.CreateOr(x, y), vec};
    default: break;
  }
  throw LoomError("LLVM backend: unsupported binary operator (kind " +
                  std::to_string(static_cast<int>(n.kind)) + ")");
}

// Floor division / modulo of i64 values (scalar or lane-wise).
Val IREmitter::emit_div_mod(const ExprNode& n, Val a, Val b) {
  bool is_div = n.kind == ExprKind::kDiv;
  bool vec = a.vec || b.vec;
  llvm::Value *x = a.v, *y = b.v;
  if (vec) x = widen(a), y = widen(b);
  int64_t c = 0;
  bool const_divisor = is_const_int(n.args[1], &c);
  if (const_divisor && c == 0) throw LoomError("LLVM backend: integer division by zero");
  IntBound bx = const_int_bound(n.args[0]);
  IntBound by = const_int_bound(n.args[1]);
  if (bx.min >= 0 && by.min > 0) {
    // Both non-negative: truncating = floor; powers of two become shifts/masks.
    if (const_divisor && (c & (c - 1)) == 0) {
      int shift = 0;
      while ((int64_t{1} << shift) < c) ++shift;
      llvm::Value* k = llvm::ConstantInt::get(x->getType(), is_div ? shift : c - 1);
      return {is_div ? b_.CreateLShr(x, k) : b_.CreateAnd(x, k), vec};
    }
    return {is_div ? b_.CreateUDiv(x, y) : b_.CreateURem(x, y), vec};
  }
  if (const_divisor && c > 0 && (c & (c - 1)) == 0) {
    // Arithmetic shift is floor division by a power of two for any sign.
    int shift = 0;
    while ((int64_t{1} << shift) < c) ++shift;
    if (is_div) return {b_.CreateAShr(x, llvm::ConstantInt::get(x->getType(), shift)), vec};
    return {b_.CreateAnd(x, llvm::ConstantInt::get(x->getType(), c - 1)), vec};
  }
  if (!const_divisor && by.min <= 0 && by.max >= 0) {
    // A divisor that may be zero: lanes (or an eagerly evaluated select arm)
    // that divide by zero must not trap; divide by 1 there instead.
    llvm::Value* zero = llvm::Constant::getNullValue(y->getType());
    y = b_.CreateSelect(b_.CreateICmpEQ(y, zero), llvm::ConstantInt::get(y->getType(), 1), y);
  }
  llvm::Value* q = b_.CreateSDiv(x, y);
  llvm::Value* r = b_.CreateSRem(x, y);
  llvm::Value* zero = llvm::Constant::getNullValue(x->getType());
  // Adjust when the remainder is non-zero and its sign differs from the divisor's.
  llvm::Value* adjust =
      b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, y), zero));
  if (is_div) return {b_.CreateSub(q, b_.CreateZExt(adjust, x->getType())), vec};
  return {b_.CreateSelect(adjust, b_.CreateAdd(r, y), r), vec};
}

Val IREmitter::emit_select(const ExprNode& n) {
  Val c = convert(emit(n.args[0]), n.args[0]->dtype, DType::kBool);
  DType dt = n.dtype;
  bool lazy = contains_load(n.args[1]) || contains_load(n.args[2]);
  if (c.vec) {
    // Varying condition: evaluate each side under its mask (loads are masked).
    llvm::Value* outer = vec_->mask;
    llvm::Value* not_c = b_.CreateNot(c.v);
    vec_->mask = outer ? b_.CreateAnd(outer, c.v) : c.v;
    Val t = convert(emit(n.args[1]), n.args[1]->dtype, dt);
    vec_->mask = outer ? b_.CreateAnd(outer, not_c) : not_c;
    Val f = convert(emit(n.args[2]), n.args[2]->dtype, dt);
    vec_->mask = outer;
    return {b_.CreateSelect(c.v, widen(t), widen(f)), true};
  }
  if (!lazy) {
    Val t = convert(emit(n.args[1]), n.args[1]->dtype, dt);
    Val f = convert(emit(n.args[2]), n.args[2]->dtype, dt);
    bool vec = t.vec || f.vec;
    if (vec) return {b_.CreateSelect(c.v, widen(t), widen(f)), true};
    return {b_.CreateSelect(c.v, t.v, f.v), false};
  }
  // Uniform condition guarding loads: branch so the untaken load never runs.
  auto* then_bb = llvm::BasicBlock::Create(ctx_, "sel.t", fn_);
  auto* else_bb = llvm::BasicBlock::Create(ctx_, "sel.f", fn_);
  auto* merge = llvm::BasicBlock::Create(ctx_, "sel.end", fn_);
  b_.CreateCondBr(c.v, then_bb, else_bb);
  b_.SetInsertPoint(then_bb);
  Val t = convert(emit(n.args[1]), n.args[1]->dtype, dt);
  llvm::BasicBlock* t_end = b_.GetInsertBlock();
  b_.SetInsertPoint(else_bb);
  Val f = convert(emit(n.args[2]), n.args[2]->dtype, dt);
  llvm::BasicBlock* f_end = b_.GetInsertBlock();
  bool vec = t.vec || f.vec;
  b_.SetInsertPoint(t_end);
  llvm::Value* tv = vec ? widen(t) : t.v;
  b_.CreateBr(merge);
  b_.SetInsertPoint(f_end);
  llvm::Value* fv = vec ? widen(f) : f.v;
  b_.CreateBr(merge);
  b_.SetInsertPoint(merge);
  auto* phi = b_.CreatePHI(tv->getType(), 2);
  phi->addIncoming(tv, t_end);
  phi->addIncoming(fv, f_end);
  return {phi, vec};
}

Val IREmitter::emit_cast(const ExprNode& n) {
  return convert(emit(n.args[0]), n.args[0]->dtype, n.dtype);
}

llvm::Value* IREmitter::pow_call(const std::vector<llvm::Value*>& xs, bool vec) {
  if (vec) {
    const int w = vec_->width;
    const char* isa = w == 16 ? "e" : w == 8 ? "d" : w == 4 ? "b" : nullptr;
    const std::string sym = isa ? std::string("_ZGV") + isa + "N" + std::to_string(w) + "vv_powf" : "";
    if (isa && opts_.vector_math.count(sym)) {
      auto* fty = llvm::FunctionType::get(xs[0]->getType(), {xs[0]->getType(), xs[1]->getType()}, false);
      llvm::FunctionCallee fn = m_.getOrInsertFunction(sym, fty);
      if (auto* f = llvm::dyn_cast<llvm::Function>(fn.getCallee())) {
        f->setDoesNotThrow();
        f->setDoesNotAccessMemory();  // errno is ignored
        f->setWillReturn();
      }
      return b_.CreateCall(fn, xs);
    }
  }
  // llvm.pow: a powf call per lane (LLVM scalarizes a vector one).
  return b_.CreateIntrinsic(llvm::Intrinsic::pow, {xs[0]->getType()}, xs);
}

Val IREmitter::emit_call(const ExprNode& n) {
  std::vector<Val> args;
  bool vec = false;
  for (const auto& a : n.args) {
    args.push_back(convert(emit(a), a->dtype, DType::kFloat));
    vec = vec || args.back().vec;
  }
  std::vector<llvm::Value*> xs;
  for (auto& a : args) xs.push_back(vec ? widen(a) : a.v);
  const std::string& name = n.name;
  size_t want = name == "pow" ? 2 : 1;
  if (xs.size() != want)
    throw LoomError("LLVM backend: " + name + " expects " + std::to_string(want) + " argument(s)");
  auto intrinsic = [&](llvm::Intrinsic::ID id) -> Val {
    return {b_.CreateUnaryIntrinsic(id, xs[0]), vec};
  };
  if (name == "sqrt") return intrinsic(llvm::Intrinsic::sqrt);
  if (name == "fabs") return intrinsic(llvm::Intrinsic::fabs);
  if (name == "floor") return intrinsic(llvm::Intrinsic::floor);
  if (name == "ceil") return intrinsic(llvm::Intrinsic::ceil);
  // Inline range reduction + polynomial (vector_math.h), the same code for
  // scalars and vectors.
  if (name == "exp") return {emit_exp(b_, xs[0]), vec};
  if (name == "log") return {emit_log(b_, xs[0]), vec};
  if (name == "tanh") return {emit_tanh(b_, xs[0]), vec};
  if (name == "erf") return {emit_erf(b_, xs[0]), vec};
  if (name == "sigmoid") return {emit_sigmoid(b_, xs[0]), vec};
  if (name == "pow") {
    const Expr& y = n.args[1];
    llvm::Value* out = nullptr;
    if (y->kind == ExprKind::kFloatImm && emit_pow_constant(b_, xs[0], y->float_value, &out)) return {out, vec};
    if (y->kind == ExprKind::kIntImm && emit_pow_constant(b_, xs[0], static_cast<double>(y->int_value), &out))
      return {out, vec};
    return {pow_call(xs, vec), vec};
  }
  throw LoomError("LLVM backend: unknown math function " + name);
}

Val IREmitter::emit_load(const ExprNode& n) {
  if (n.args.size() != 1)
    throw LoomError("LLVM backend: load of " + n.name + " must have one flat index, has " +
                    std::to_string(n.args.size()));
  if (&n == transposed_load_) return {transposed_column_, true};
  llvm::Value* base = buffer_ptr(n.name);
  if (vec_) return emit_vector_load(n, base);
  auto* ld = b_.CreateAlignedLoad(b_.getFloatTy(), index_ptr(base, n.args[0]), llvm::Align(4));
  annotate(ld, n.name);
  return {ld, false};
}

}  // namespace llvm_backend
}  // namespace loom
