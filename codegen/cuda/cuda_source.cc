#include "codegen/cuda/cuda_source.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "codegen/c/source.h"
#include "codegen/cuda/cross_thread_reduction.h"
#include "ir/virtual_threads.h"
#include "ir/error.h"
#include "ir/simplify.h"

namespace loom {

namespace {

// NVRTC has no standard headers: the types and constants the expression
// printer (to_c_expr) relies on are defined here, before the helpers of
// c_helper_functions. Index arithmetic is 32-bit.
const char* kPrelude = R"CU(typedef int loom_idx;
typedef loom_idx int64_t;
#define INT64_C(x) ((loom_idx)(x##LL))
#define INT64_MIN ((loom_idx)(-2147483647 - 1))
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fffffff)
#define LOOM_HELPER static __device__ __forceinline__
)CU";

const char* kDimName[3] = {"x", "y", "z"};

bool is_block(ForKind k) { return k == ForKind::kBlockX || k == ForKind::kBlockY || k == ForKind::kBlockZ; }
bool is_thread(ForKind k) {
  return k == ForKind::kThreadX || k == ForKind::kThreadY || k == ForKind::kThreadZ;
}
int dim_of(ForKind k) {
  switch (k) {
    case ForKind::kBlockY: case ForKind::kThreadY: return 1;
    case ForKind::kBlockZ: case ForKind::kThreadZ: return 2;
    default: return 0;
  }
}

int64_t nest_steps(const Stmt& s) {
  if (!s) return 0;
  if (s->kind == StmtKind::kStore) return 1;
  if (s->kind == StmtKind::kFor) {
    int64_t b = nest_steps(s->body[0]);
    return (b > 0 && s->extent > INT64_MAX / b) ? INT64_MAX : s->extent * b;
  }
  int64_t total = 0;
  for (const auto& c : s->body) total = std::min<int64_t>(INT64_MAX / 2, total + nest_steps(c));
  return total;
}

bool expr_uses_any(const Expr& e, const std::set<int64_t>& vars) {
  bool found = false;
  visit(e, [&](const Expr& x) { found |= x->kind == ExprKind::kVar && vars.count(x->var_id) > 0; });
  return found;
}

bool loads_buffer(const Expr& e, const std::string& buf) {
  bool found = false;
  visit(e, [&](const Expr& x) { found |= x->kind == ExprKind::kLoad && x->name == buf; });
  return found;
}

class KernelEmitter {
 public:
  KernelEmitter(const std::map<std::string, Buffer>& buffers, const CudaSourceOptions& opts)
      : buffers_(buffers), opts_(opts) {
    names_.var = [this](const Expr& v) {
      auto it = var_names_.find(v->var_id);
      if (it == var_names_.end() || !bound_.count(v->var_id))
        throw LoomError("CUDA backend: variable " + v->name + " is not bound by an enclosing loop");
      return it->second;
    };
    names_.buffer = [this](const std::string& b) {
      if (!buffers_.count(b)) throw LoomError("CUDA backend: unknown buffer " + b);
      return buffer_name(b);
    };
  }

  // Emits kernel `name` for statement `s` (params: `params`).
  std::string run(const std::string& name, const Stmt& s, const std::vector<std::string>& params,
                  CudaKernelInfo* info) {
    info->name = name;
    analyze(s, info);
    std::ostringstream head;
    head << "extern \"C\" __global__ void __launch_bounds__(" << info->threads() << ") " << name << "(";
    for (size_t i = 0; i < params.size(); ++i)
      head << (i ? ", " : "") << "float* __restrict__ " << buffer_name(params[i]);
    head << ") {\n";
    indent_ = 1;
    stmt(s);
    for (const auto& [buf, n] : shared_)
      head << "  __shared__ __align__(16) float " << buffer_name(buf) << "[" << n << "];\n";
    if (uses_allreduce_) {
      head << "  __shared__ float " << kCudaAllreduceBuffer << "[" << kCudaAllreduceBufferFloats << "];\n";
      info->shared_bytes += 4 * kCudaAllreduceBufferFloats;
      check_shared_limit(*info);
    }
    head << out_.str() << "}\n";
    return head.str();
  }

 private:
  // Grid and block dimensions, shared allocations, and the binding checks
  // that need the whole kernel.
  void analyze(const Stmt& s, CudaKernelInfo* info) {
    visit_stmt(s, [&](const Stmt& x) {
      if (x->kind == StmtKind::kFor && (is_block(x->for_kind) || is_thread(x->for_kind))) {
        auto& dims = is_block(x->for_kind) ? info->grid : info->block;
        auto& used = is_block(x->for_kind) ? block_used_ : thread_used_;
        int d = dim_of(x->for_kind);
        dims[d] = std::max(dims[d], x->extent);
        used[d] = true;
      }
      if (x->kind == StmtKind::kAllocate) {
        const Buffer& b = buffers_.at(x->buffer);
        if (b.scope == BufferScope::kShared) {
          if (shared_.count(b.name)) throw LoomError("CUDA backend: shared buffer " + b.name + " allocated twice");
          shared_[b.name] = std::max<int64_t>(b.size(), 1);
          info->shared_bytes += 4 * std::max<int64_t>(b.size(), 1);
        } else if (b.size() > opts_.max_local_floats) {
          throw LoomError("CUDA backend: local buffer " + b.name + " has " + std::to_string(b.size()) +
                          " floats per thread (limit " + std::to_string(opts_.max_local_floats) + ")");
        }
      }
    });
    for (int d = 0; d < 3; ++d) {
      if (info->grid[d] > opts_.max_grid[d])
        throw LoomError("CUDA backend: grid dimension " + std::string(kDimName[d]) + " = " +
                        std::to_string(info->grid[d]) + " exceeds the limit");
      if (info->block[d] > opts_.max_block[d])
        throw LoomError("CUDA backend: block dimension " + std::string(kDimName[d]) + " = " +
                        std::to_string(info->block[d]) + " exceeds the limit");
    }
    if (info->threads() > opts_.max_threads_per_block)
      throw LoomError("CUDA backend: " + std::to_string(info->threads()) + " threads per block (limit " +
                      std::to_string(opts_.max_threads_per_block) + ")");
    check_shared_limit(*info);
  }

  void check_shared_limit(const CudaKernelInfo& info) const {
    if (info.shared_bytes > opts_.max_shared_bytes_per_block)
      throw LoomError("CUDA backend: " + std::to_string(info.shared_bytes) +
                      " bytes of shared memory per block (limit " +
                      std::to_string(opts_.max_shared_bytes_per_block) + ")");
  }

  std::string buffer_name(const std::string& b) {
    auto it = buf_names_.find(b);
    if (it != buf_names_.end()) return it->second;
    return buf_names_[b] = unique(sanitize_c_identifier(b));
  }
  std::string unique(const std::string& base) {
    std::string s = base;
    for (int k = 1; used_names_.count(s); ++k) s = base + "_" + std::to_string(k);
    used_names_.insert(s);
    return s;
  }
  const std::string& var_name(const Var& v) {
    auto it = var_names_.find(v->var_id);
    if (it != var_names_.end()) return it->second;
    return var_names_[v->var_id] = unique(sanitize_c_identifier(v->name));
  }

  std::string expr(const Expr& e) { return to_c_expr(e, names_); }
  std::string pad() const { return std::string(2 * indent_, ' '); }
  void line(const std::string& s) { out_ << pad() << s << "\n"; }
  void block(const Stmt& s) {
    ++indent_;
    stmt(s);
    --indent_;
  }

  bool writes_shared(const Stmt& s) {
    bool w = false;
    visit_stmt(s, [&](const Stmt& x) {
      w |= x->kind == StmtKind::kStore && buffers_.at(x->buffer).scope == BufferScope::kShared;
    });
    return w;
  }
  bool stores_only_shared(const Stmt& s) {
    bool ok = true;
    visit_stmt(s, [&](const Stmt& x) {
      if (x->kind == StmtKind::kStore && buffers_.at(x->buffer).scope != BufferScope::kShared) ok = false;
    });
    return ok;
  }

  void sync() {
    if (divergent_ > 0)
      throw LoomError("CUDA backend: __syncthreads() needed inside a thread-dependent branch");
    line("__syncthreads();");
  }

  void stmt(const Stmt& s) {
    if (!s) return;
    switch (s->kind) {
      case StmtKind::kSeq: seq(s); return;
      case StmtKind::kStore: store(s); return;
      case StmtKind::kIf: {
        bool div = expr_uses_any(s->cond, thread_vars_);
        divergent_ += div;
        line("if (" + expr(s->cond) + ") {");
        block(s->body.empty() ? nullptr : s->body[0]);
        if (s->body.size() > 1 && s->body[1]) {
          line("} else {");
          block(s->body[1]);
        }
        line("}");
        divergent_ -= div;
        return;
      }
      case StmtKind::kAllocate: {
        const Buffer& b = buffers_.at(s->buffer);
        if (b.scope == BufferScope::kShared) {  // declared at the kernel top
          stmt(s->body.empty() ? nullptr : s->body[0]);
          return;
        }
        line("{");
        ++indent_;
        local_alloc_depth_[b.name] = bound_parallel_vars_.size();
        line("float " + buffer_name(b.name) + "[" + std::to_string(std::max<int64_t>(b.size(), 1)) +
             "] __attribute__((aligned(16)));");
        stmt(s->body.empty() ? nullptr : s->body[0]);
        --indent_;
        line("}");
        return;
      }
      case StmtKind::kFor: loop(s); return;
    }
    throw LoomError("CUDA backend: unknown statement kind");
  }

  // Barriers around each run of children that write shared memory.
  void seq(const Stmt& s) {
    const auto& c = s->body;
    size_t k = 0;
    while (k < c.size()) {
      if (k + 1 < c.size()) {
        if (auto r = match_cross_thread_reduction(c[k], c[k + 1])) {
          cross_thread_reduction(*r, c[k + 1]);
          k += 2;
          continue;
        }
      }
      if (!writes_shared(c[k])) {
        stmt(c[k++]);
        continue;
      }
      sync();
      while (k < c.size() && writes_shared(c[k])) stmt(c[k++]);
      sync();
    }
  }

  void store(const Stmt& s) {
    const Buffer& b = buffers_.at(s->buffer);
    if (red_) {  // inside a cross-thread reduction's loop: the thread's register
      if (s->buffer != red_->r.buffer) throw LoomError("CUDA backend: unexpected store in a cross-thread reduction");
      line(red_->name + " = " + expr(accumulate_into(red_->r, s->value, red_->acc)) + ";");
      return;
    }
    const bool in_threads = thread_bound_[0] || thread_bound_[1] || thread_bound_[2];
    bool thread0 = false;
    if (b.scope == BufferScope::kGlobal) {
      // Every block must own its global stores; so must every thread,
      // except that a store outside all thread loops of a value every
      // thread holds (a cross-thread reduction's result, a fused consumer
      // of it) is done once, by thread 0.
      for (int d = 0; d < 3; ++d) {
        const bool thread_missing = thread_used_[d] && !thread_bound_[d];
        if ((block_used_[d] && !block_bound_[d]) || (thread_missing && (in_threads || !uniform(s->value))))
          throw LoomError("CUDA backend: store to " + b.name +
                          " outside a loop bound to a block/thread index of its kernel");
        thread0 |= thread_missing;
      }
    }
    if (loads_buffer(s->value, s->buffer)) {
      // An accumulation into memory other threads see (for a local buffer:
      // allocated outside a thread loop, so shared by its iterations in the
      // serial nest): every such enclosing bound loop must select a
      // different element. Cross-thread reductions are matched in seq().
      auto depth = local_alloc_depth_.find(b.name);
      const size_t from = b.scope == BufferScope::kLocal && depth != local_alloc_depth_.end() ? depth->second : 0;
      for (size_t k = from; k < bound_parallel_vars_.size(); ++k) {
        const auto& [id, name] = bound_parallel_vars_[k];
        std::set<int64_t> one = {id};
        if (!expr_uses_any(s->index, one))
          throw LoomError("CUDA backend: accumulation into " + b.name + " races across " + name +
                          " (not a cross-thread reduction this backend recognises)");
      }
    }
    if (b.scope == BufferScope::kLocal && in_threads) per_thread_locals_.insert(b.name);
    line(std::string(thread0 ? "if (" + thread_zero() + ") " : "") + buffer_name(s->buffer) + "[" +
         expr(s->index) + "] = " + expr(s->value) + ";");
  }

  // A value outside every thread loop is the same in all threads unless it
  // reads a local buffer some thread loop wrote (per-thread data).
  bool uniform(const Expr& e) const {
    bool ok = true;
    visit(e, [&](const Expr& x) { ok &= !(x->kind == ExprKind::kLoad && per_thread_locals_.count(x->name)); });
    return ok;
  }

  std::string thread_zero() const {
    std::string c;
    for (int d = 0; d < 3; ++d)
      if (thread_used_[d]) c += std::string(c.empty() ? "" : " && ") + "threadIdx." + kDimName[d] + " == 0";
    return c;
  }

  // See cross_thread_reduction.h: a register per thread, the loop's stores
  // redirected to it, a block allreduce, the result stored as B[I].
  void cross_thread_reduction(const CrossThreadReduction& r, const Stmt& loop_stmt) {
    const Buffer& b = buffers_.at(r.buffer);
    if (b.scope == BufferScope::kShared)
      throw LoomError("CUDA backend: cross-thread reduction into shared buffer " + b.name);
    if (cur_->block[1] != 1 || cur_->block[2] != 1)
      throw LoomError("CUDA backend: cross-thread reduction in a kernel with a 2-D or 3-D block");
    if (thread_bound_[0] || thread_bound_[1] || thread_bound_[2])
      throw LoomError("CUDA backend: cross-thread reduction inside a thread loop");
    line("{");
    ++indent_;
    const std::string name = unique("red_" + sanitize_c_identifier(r.buffer));
    Var acc = make_var(name);
    var_names_[acc->var_id] = name;
    bound_.insert(acc->var_id);
    line("float " + name + " = " + expr(r.identity) + ";");
    red_ = ActiveReduction{r, acc, name};
    loop(loop_stmt);
    red_.reset();
    if (divergent_ > 0)  // the allreduce has barriers: every thread must reach it
      throw LoomError("CUDA backend: cross-thread reduction inside a thread-dependent branch");
    line(name + " = " + cuda_allreduce_function(r.kind) + "(" + name + ", " + kCudaAllreduceBuffer + ");");
    uses_allreduce_ = true;
    store(make_store(r.buffer, r.index, acc));
    bound_.erase(acc->var_id);
    --indent_;
    line("}");
  }

  void loop(const Stmt& s) {
    const Var& v = s->loop_var;
    const std::string& name = var_name(v);
    int64_t saved_unroll = unroll_budget_;
    if (s->auto_unroll_max_step > 0) unroll_budget_ = s->auto_unroll_max_step;
    const ForKind k = s->for_kind;
    if (is_block(k) || is_thread(k)) {
      bound_loop(s, name);
    } else if (k == ForKind::kVectorized && vector_copy(s)) {
      // emitted as one vector load/store
    } else {
      if (k == ForKind::kUnrolled || k == ForKind::kVectorized ||
          (unroll_budget_ > 0 && s->extent > 1 && nest_steps(s) <= unroll_budget_))
        line("#pragma unroll");
      line("for (loom_idx " + name + " = 0; " + name + " < " + std::to_string(s->extent) + "; ++" + name + ") {");
      bound_.insert(v->var_id);
      block(s->body.empty() ? nullptr : s->body[0]);
      bound_.erase(v->var_id);
      line("}");
    }
    unroll_budget_ = saved_unroll;
  }

  void bound_loop(const Stmt& s, const std::string& name) {
    const ForKind k = s->for_kind;
    const int d = dim_of(k);
    const bool thread = is_thread(k);
    bool& now = thread ? thread_bound_[d] : block_bound_[d];
    const std::string hw = std::string(thread ? "threadIdx." : "blockIdx.") + kDimName[d];
    if (now) {
      // Cooperative fetch of a shared stage inside the threads' loops.
      if (!thread || !stores_only_shared(s->body[0]))
        throw LoomError("CUDA backend: nested loops bound to " + hw);
    }
    const int64_t dim_extent = thread ? thread_dim_(d) : block_dim_(d);
    bool guarded = s->extent < dim_extent;
    if (guarded) {
      line("if (" + hw + " < " + std::to_string(s->extent) + ") {");
      divergent_ += thread;
      ++indent_;
    } else {
      line("{");
      ++indent_;
    }
    line("const loom_idx " + name + " = (loom_idx)" + hw + ";");
    bool was = now;
    now = true;
    bound_.insert(s->loop_var->var_id);
    if (thread) thread_vars_.insert(s->loop_var->var_id);
    bound_parallel_vars_.emplace_back(s->loop_var->var_id, hw);
    stmt(s->body.empty() ? nullptr : s->body[0]);
    bound_parallel_vars_.pop_back();
    thread_vars_.erase(s->loop_var->var_id);
    bound_.erase(s->loop_var->var_id);
    now = was;
    if (guarded) divergent_ -= thread;
    --indent_;
    line("}");
  }

  // float4/float2 copy: body is `dst[X + v] = src[Y + v]` with X, Y provably
  // multiples of the width and the buffers aligned to 16 bytes.
  bool vector_copy(const Stmt& s) {
    const int64_t w = s->extent;
    if (w != 2 && w != 4) return false;
    const Stmt& b = s->body.empty() ? nullptr : s->body[0];
    if (!b || b->kind != StmtKind::kStore || b->value->kind != ExprKind::kLoad) return false;
    const Var& v = s->loop_var;
    auto split = [&](const Expr& idx, Expr* base) {
      Expr x = simplify(substitute(idx, {{v, int_imm(0)}}));
      Expr diff = simplify(idx - x);
      if (!(diff->kind == ExprKind::kVar && diff->var_id == v->var_id)) return false;
      if (uses_var(x, v)) return false;
      int64_t kd = known_divisor(x);
      int64_t c;
      if (is_const_int(x, &c)) return c % w == 0 && ((*base = x), true);
      if (kd == 0 || kd % w != 0) return false;
      *base = x;
      return true;
    };
    Expr dst, src;
    if (!split(b->index, &dst) || !split(b->value->args[0], &src)) return false;
    const std::string ty = w == 4 ? "float4" : "float2";
    line("*(" + ty + "*)(" + buffer_name(b->buffer) + " + " + expr(dst) + ") = *(const " + ty + "*)(" +
         buffer_name(b->value->name) + " + " + expr(src) + ");");
    return true;
  }

  int64_t thread_dim_(int d) const { return cur_->block[d]; }
  int64_t block_dim_(int d) const { return cur_->grid[d]; }

 public:
  const CudaKernelInfo* cur_ = nullptr;

 private:
  const std::map<std::string, Buffer>& buffers_;
  const CudaSourceOptions& opts_;
  CNames names_;
  std::unordered_map<int64_t, std::string> var_names_;
  std::map<std::string, std::string> buf_names_;
  std::set<std::string> used_names_ = {"loom_idx", "int64_t", "threadIdx", "blockIdx", "blockDim",
                                       "gridDim", "float4", "float2", kCudaAllreduceBuffer, "expf", "logf", "sqrtf",
                                       "tanhf", "erff", "fabsf", "powf", "floorf"};
  std::set<int64_t> bound_;
  std::set<int64_t> thread_vars_;
  std::vector<std::pair<int64_t, std::string>> bound_parallel_vars_;
  std::map<std::string, int64_t> shared_;
  bool block_used_[3] = {false, false, false}, thread_used_[3] = {false, false, false};
  bool block_bound_[3] = {false, false, false}, thread_bound_[3] = {false, false, false};
  int divergent_ = 0;
  int64_t unroll_budget_ = 0;
  struct ActiveReduction {
    CrossThreadReduction r;
    Var acc;
    std::string name;
  };
  std::optional<ActiveReduction> red_;
  bool uses_allreduce_ = false;
  std::map<std::string, size_t> local_alloc_depth_;  // bound loops around a local allocation
  std::set<std::string> per_thread_locals_;          // local buffers written inside thread loops
  std::ostringstream out_;
  int indent_ = 0;
};

}  // namespace

const char* cuda_prelude() {
  static const std::string prelude = std::string(kPrelude) + c_helper_functions() + cuda_allreduce_helpers();
  return prelude.c_str();
}

std::vector<std::string> CudaModuleSource::param_names() const {
  std::vector<std::string> out;
  for (const auto& b : args) out.push_back(b.name);
  for (const auto& b : temps) out.push_back(b.name);
  return out;
}

CudaModuleSource emit_cuda_source(const LoweredFunc& lowered, const CudaSourceOptions& opts) {
  const LoweredFunc f = inject_virtual_threads(lowered);
  CudaModuleSource m;
  m.args = f.args;
  std::map<std::string, Buffer> buffers;
  for (const auto& b : f.args) buffers[b.name] = b;
  for (const auto& b : f.temps) buffers[b.name] = b;
  for (const auto& [name, b] : buffers)
    if (b.size() >= (int64_t{1} << 31))
      throw LoomError("CUDA backend: buffer " + name + " has 2^31 elements or more (32-bit indices)");
  // Root temps: the global allocations wrapping the body (a local one there
  // belongs to a stage attached at a root loop of extent 1, which lowering
  // drops: it stays a per-thread array inside the kernel).
  Stmt body = f.body;
  while (body && body->kind == StmtKind::kAllocate && buffers.at(body->buffer).scope == BufferScope::kGlobal) {
    Buffer b = buffers.at(body->buffer);
    b.scope = BufferScope::kGlobal;
    buffers[b.name] = b;
    m.temps.push_back(b);
    body = body->body.empty() ? nullptr : body->body[0];
  }
  std::vector<Stmt> parts;
  if (body && body->kind == StmtKind::kSeq) {
    // A root reduction with no loop left above its reduce loops (scalar
    // output) has its init at the top level: a cross-thread one keeps it
    // in the loop's kernel.
    const auto& c = body->body;
    for (size_t k = 0; k < c.size(); ++k) {
      if (k + 1 < c.size() && match_cross_thread_reduction(c[k], c[k + 1])) {
        parts.push_back(make_seq({c[k], c[k + 1]}));
        ++k;
      } else {
        parts.push_back(c[k]);
      }
    }
  } else if (body) {
    parts.push_back(body);
  }
  const std::vector<std::string> params = m.param_names();
  std::ostringstream src;
  src << "// Generated by Loom (CUDA backend): " << f.name << "\n";
  const std::string base = sanitize_c_identifier(f.name.empty() ? "loom_kernel" : f.name);
  for (size_t i = 0; i < parts.size(); ++i) {
    CudaKernelInfo info;
    KernelEmitter e(buffers, opts);
    e.cur_ = &info;
    src << e.run(base + "_k" + std::to_string(i), parts[i], params, &info) << "\n";
    m.kernels.push_back(info);
  }
  m.code = src.str();
  m.source = std::string(cuda_prelude()) + "\n" + m.code;
  return m;
}

}  // namespace loom
