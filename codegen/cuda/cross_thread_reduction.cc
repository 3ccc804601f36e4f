#include "codegen/cuda/cross_thread_reduction.h"

#include <cmath>

namespace loom {

namespace {

bool is_load_of(const Expr& e, const CrossThreadReduction& r) {
  return e->kind == ExprKind::kLoad && e->name == r.buffer && e->args.size() == 1 &&
         structural_equal(e->args[0], r.index);
}

bool loads_buffer(const Expr& e, const std::string& buffer) {
  bool found = false;
  visit(e, [&](const Expr& x) { found |= x->kind == ExprKind::kLoad && x->name == buffer; });
  return found;
}

// `value` is combine(B[I], src) (either operand order) with src free of B:
// the combiner's kind, else nullopt.
std::optional<ReduceKind> combiner(const Expr& value, const CrossThreadReduction& r) {
  ReduceKind k;
  switch (value->kind) {
    case ExprKind::kAdd: k = ReduceKind::kSum; break;
    case ExprKind::kMax: k = ReduceKind::kMax; break;
    case ExprKind::kMin: k = ReduceKind::kMin; break;
    default: return std::nullopt;
  }
  if (value->dtype != DType::kFloat) return std::nullopt;
  const int self = is_load_of(value->args[0], r) ? 0 : is_load_of(value->args[1], r) ? 1 : -1;
  if (self < 0 || loads_buffer(value->args[1 - self], r.buffer)) return std::nullopt;
  return k;
}

bool is_identity(const Expr& e, ReduceKind k) {
  if (e->kind != ExprKind::kFloatImm) return false;
  const double v = e->float_value;
  switch (k) {
    case ReduceKind::kSum: return v == 0.0;
    case ReduceKind::kMax: return std::isinf(v) && v < 0;
    case ReduceKind::kMin: return std::isinf(v) && v > 0;
  }
  return false;
}

// Warp shuffles first (a partial last warp shuffles under its own mask and
// only combines values from lanes that exist), then warp 0 combines the
// warps' values from shared memory. Barriers: after the warps' values are
// written, after the result is written, and after it is read (the scratch
// is reused by the next allreduce of the kernel).
const char* kHelpers = R"CU(struct loom_op_sum {
  static __device__ __forceinline__ float identity() { return 0.0f; }
  static __device__ __forceinline__ float f(float a, float b) { return a + b; }
};
struct loom_op_max {
  static __device__ __forceinline__ float identity() { return -INFINITY; }
  static __device__ __forceinline__ float f(float a, float b) { return loom_maxf(a, b); }
};
struct loom_op_min {
  static __device__ __forceinline__ float identity() { return INFINITY; }
  static __device__ __forceinline__ float f(float a, float b) { return loom_minf(a, b); }
};
template <class Op>
LOOM_HELPER float loom_block_allreduce(float v, float* buf) {
  const unsigned n = blockDim.x, lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const unsigned left = n - (warp << 5);
  const unsigned width = left < 32u ? left : 32u;
  const unsigned mask = width == 32u ? 0xffffffffu : ((1u << width) - 1u);
  for (unsigned off = 16u; off > 0u; off >>= 1) {
    const float o = __shfl_down_sync(mask, v, off);
    if (lane + off < width) v = Op::f(v, o);
  }
  if (n > 32u) {
    if (lane == 0u) buf[warp] = v;
    __syncthreads();
    if (warp == 0u) {
      const unsigned warps = (n + 31u) >> 5;
      float w = lane < warps ? buf[lane] : Op::identity();
      for (unsigned off = 16u; off > 0u; off >>= 1) w = Op::f(w, __shfl_down_sync(0xffffffffu, w, off));
      if (lane == 0u) buf[0] = w;
    }
  } else if (lane == 0u) {
    buf[0] = v;
  }
  __syncthreads();
  const float result = buf[0];
  __syncthreads();
  return result;
}
LOOM_HELPER float loom_block_allreduce_sum(float v, float* buf) { return loom_block_allreduce<loom_op_sum>(v, buf); }
LOOM_HELPER float loom_block_allreduce_max(float v, float* buf) { return loom_block_allreduce<loom_op_max>(v, buf); }
LOOM_HELPER float loom_block_allreduce_min(float v, float* buf) { return loom_block_allreduce<loom_op_min>(v, buf); }
)CU";

}  // namespace

std::optional<CrossThreadReduction> match_cross_thread_reduction(const Stmt& init, const Stmt& loop) {
  if (!init || !loop || init->kind != StmtKind::kStore || loop->kind != StmtKind::kFor ||
      loop->for_kind != ForKind::kThreadX)
    return std::nullopt;
  CrossThreadReduction r{init->buffer, init->index, init->value, ReduceKind::kSum};
  if (uses_var(r.index, loop->loop_var)) return std::nullopt;
  bool ok = true;
  std::optional<ReduceKind> kind;
  visit_stmt(loop, [&](const Stmt& s) {
    if (s->kind == StmtKind::kAllocate) ok = false;
    if (s->kind != StmtKind::kStore) return;
    std::optional<ReduceKind> k;
    if (s->buffer == r.buffer && structural_equal(s->index, r.index)) k = combiner(s->value, r);
    if (!k || (kind && *kind != *k)) ok = false;
    else kind = k;
  });
  if (!ok || !kind || !is_identity(r.identity, *kind)) return std::nullopt;
  r.kind = *kind;
  return r;
}

Expr accumulate_into(const CrossThreadReduction& r, const Expr& value, const Expr& acc) {
  return mutate(value, [&](const Expr& x) -> Expr { return is_load_of(x, r) ? acc : Expr(); });
}

const char* cuda_allreduce_helpers() { return kHelpers; }

const char* cuda_allreduce_function(ReduceKind k) {
  switch (k) {
    case ReduceKind::kSum: return "loom_block_allreduce_sum";
    case ReduceKind::kMax: return "loom_block_allreduce_max";
    case ReduceKind::kMin: return "loom_block_allreduce_min";
  }
  return "loom_block_allreduce_sum";
}

}  // namespace loom
