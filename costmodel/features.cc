// Feature extraction: walks a lowered loop nest keeping the stack of enclosing
// loops and guards, and writes one row per buffer-store statement.
//
// Row layout (offsets below; names from feature_names()):
//   [0, 16)    arithmetic op counts by kind, x trip count
//   [16, 49)   vectorize / unroll / parallel shape (11 each)
//   [49, 57)   GPU thread binding
//   [57, 147)  per-buffer access features, 5 buffers x 18 (features_buffer_access.cc)
//   [147, 157) arithmetic-intensity curve
//   [157, 161) allocation
//   [161, 166) outer loops, guards, init store
//   [166, 179) innermost loop, accumulator tile, cache traffic, unrolled body
#include "costmodel/features.h"

#include <algorithm>
#include <map>

#include "codegen/passes/unrolling.h"
#include "costmodel/parallel_for.h"
#include "ir/error.h"
#include "ir/lower.h"

namespace loom {

using namespace feature_detail;

namespace {

constexpr int kArith = 0, kVec = 16, kUnroll = 27, kParallel = 38, kGpu = 49, kBuf = 57,
              kCurve = 147, kAlloc = 157, kOuter = 161, kInner = 166;
static_assert(kInner + 13 == kNumFeatures, "feature layout and kNumFeatures disagree");
static_assert(kBuf + kMaxFeatureBuffers * kFeaturesPerBuffer == kCurve, "buffer block size");
constexpr int kCurvePoints = 10;
// Cache sizes for the traffic estimates (bytes): a typical x86 core's L1d
// and L2. Only orders of magnitude matter to the models.
constexpr double kL1Bytes = 32.0 * 1024, kL2Bytes = 512.0 * 1024;

// Arithmetic op kinds (offsets within [0, 16)).
enum Op : int {
  kFloatMad, kFloatAddSub, kFloatMul, kFloatDivMod, kFloatCmp, kFloatMath, kFloatOther,
  kIntMad, kIntAddSub, kIntMul, kIntDivMod, kIntCmp, kIntMath, kIntOther, kBoolOp, kSelectOp,
};

// Annotation position (one-hot, 8): where the innermost-to-outermost
// annotated loops sit among the statement's loops, and whether their
// variable indexes the stored buffer (spatial) or not (reduce-like).
enum Pos : int {
  kPosNone, kPosInnerSpatial, kPosMiddleSpatial, kPosOuterSpatial,
  kPosInnerReduce, kPosMiddleReduce, kPosOuterReduce, kPosMixed,
};

bool is_float(const Expr& e) { return e->dtype == DType::kFloat; }

// Counts ops of one evaluation of `e` into c[16].
void count_ops(const Expr& e, double* c) {
  const ExprNode& n = *e;
  bool fl = is_float(e);
  switch (n.kind) {
    case ExprKind::kIntImm: case ExprKind::kFloatImm: case ExprKind::kVar: return;
    case ExprKind::kAdd: case ExprKind::kSub: {
      // a*b + c counts once as a fused multiply-add.
      int mul = n.kind == ExprKind::kAdd ? (n.args[0]->kind == ExprKind::kMul   ? 0
                                            : n.args[1]->kind == ExprKind::kMul ? 1
                                                                                : -1)
                                         : -1;
      if (mul >= 0) {
        c[fl ? kFloatMad : kIntMad] += 1;
        for (const Expr& a : n.args[mul]->args) count_ops(a, c);
        count_ops(n.args[1 - mul], c);
        return;
      }
      c[fl ? kFloatAddSub : kIntAddSub] += 1;
      break;
    }
    case ExprKind::kMul: c[fl ? kFloatMul : kIntMul] += 1; break;
    case ExprKind::kDiv: case ExprKind::kMod: c[fl ? kFloatDivMod : kIntDivMod] += 1; break;
    case ExprKind::kMin: case ExprKind::kMax: c[fl ? kFloatCmp : kIntCmp] += 1; break;
    case ExprKind::kEQ: case ExprKind::kNE: case ExprKind::kLT: case ExprKind::kLE:
    case ExprKind::kGT: case ExprKind::kGE:
      c[is_float(n.args[0]) ? kFloatCmp : kIntCmp] += 1;
      break;
    case ExprKind::kAnd: case ExprKind::kOr: case ExprKind::kNot: c[kBoolOp] += 1; break;
    case ExprKind::kSelect: c[kSelectOp] += 1; break;
    case ExprKind::kCast: c[fl ? kFloatOther : kIntOther] += 1; break;
    case ExprKind::kCall:
      if (n.name == "fabs") c[fl ? kFloatOther : kIntOther] += 1;
      else c[fl ? kFloatMath : kIntMath] += 1;
      break;
    case ExprKind::kLoad: case ExprKind::kReduce: break;
  }
  for (const Expr& a : n.args) count_ops(a, c);
}

void collect_loads(const Expr& e, std::vector<const ExprNode*>& out) {
  if (e->kind == ExprKind::kLoad) out.push_back(e.get());
  for (const Expr& a : e->args) collect_loads(a, out);
}

class Extractor {
 public:
  explicit Extractor(const LoweredFunc& f) : f_(f) {}

  ProgramFeatures run() {
    out_.valid = true;
    if (f_.body) visit(f_.body);
    return std::move(out_);
  }

 private:
  void visit(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::kFor: {
        // The auto-unroll step of a loop holds for the loops inside it too.
        const int64_t saved_limit = unroll_limit_;
        if (s->auto_unroll_max_step > 0) unroll_limit_ = s->auto_unroll_max_step;
        LoopInfo info{s->loop_var->var_id, std::max<int64_t>(1, s->extent), s->for_kind, s->auto_unroll_max_step};
        // What the CPU emitter unrolls (codegen/passes/unrolling.h): only plain
        // and unroll-annotated loops.
        info.unrolled = (s->for_kind == ForKind::kSerial || s->for_kind == ForKind::kUnrolled) &&
                        unrolled_at_emission(s, unroll_limit_);
        loops_.push_back(info);
        visit(s->body[0]);
        loops_.pop_back();
        unroll_limit_ = saved_limit;
        break;
      }
      case StmtKind::kIf:
        conds_.push_back(s->cond);
        for (const Stmt& b : s->body)
          if (b) visit(b);
        conds_.pop_back();
        break;
      case StmtKind::kSeq:
        for (const Stmt& b : s->body)
          if (b) visit(b);
        break;
      case StmtKind::kAllocate:
        alloc_depth_[s->buffer] = loops_.size();
        if (!s->body.empty() && s->body[0]) visit(s->body[0]);
        break;
      case StmtKind::kStore:
        store(*s);
        break;
    }
  }

  int64_t buffer_elems(const std::string& name) const {
    const Buffer* b = f_.find_buffer(name);
    return b ? std::max<int64_t>(1, b->size()) : (int64_t{1} << 40);
  }

  void annotation_features(ForKind kind, const IndexForm& store_form, float* o) const {
    // num: annotated loops around the statement; prod: product of their
    // extents; len: extent of the innermost one; then the position one-hot.
    double num = 0, prod = 1, len = 0;
    int pos = -1;
    const size_t n = loops_.size();
    for (size_t d = 0; d < n; ++d) {
      if (loops_[d].kind != kind) continue;
      num += 1;
      prod *= static_cast<double>(loops_[d].extent);
      len = static_cast<double>(loops_[d].extent);
      bool spatial = store_form.used[d];
      int p = d + 1 == n ? 0 : d == 0 ? 2 : 1;  // inner / middle / outer
      int this_pos = spatial ? kPosInnerSpatial + p : kPosInnerReduce + p;
      pos = pos < 0 || pos == this_pos ? this_pos : kPosMixed;
    }
    o[0] = log_count(num);
    o[1] = log_count(num > 0 ? prod : 0);
    o[2] = log_count(len);
    for (int k = 0; k < 8; ++k) o[3 + k] = 0;
    o[3 + (pos < 0 ? kPosNone : pos)] = 1;
  }

  void store(const StmtNode& s) {
    const size_t n = loops_.size();
    out_.values.resize(out_.values.size() + kNumFeatures, 0.0f);
    float* row = out_.values.data() + static_cast<size_t>(out_.num_stmts) * kNumFeatures;
    ++out_.num_stmts;

    double trip = 1;
    for (const auto& l : loops_) trip *= static_cast<double>(l.extent);

    // [0, 16) Arithmetic: ops of one execution of the statement (stored value,
    // store and load indices, enclosing guard conditions) by kind, times the
    // trip count: float_mad (a*b+c), float_addsub, float_mul, float_divmod,
    // float_cmp (comparisons, min, max), float_math_func (exp, log, sqrt,
    // tanh, erf, sigmoid, pow), float_other_func (fabs, casts), the same
    // seven for integers, bool_op (and/or/not), select_op.
    double ops[16] = {0};
    count_ops(s.value, ops);
    count_ops(s.index, ops);
    for (const Expr& c : conds_) count_ops(c, ops);
    for (int k = 0; k < 16; ++k) row[kArith + k] = log_count(ops[k] * trip);

    // Buffer accesses: the store (write) and every load of the value. A load
    // of the stored buffer makes it read-write (an accumulating reduction).
    std::vector<BufferAccess> acc;
    auto entry = [&](const std::string& name) -> BufferAccess& {
      for (auto& a : acc)
        if (a.buffer == name) return a;
      acc.push_back({});
      acc.back().buffer = name;
      acc.back().buffer_elems = buffer_elems(name);
      return acc.back();
    };
    {
      BufferAccess& w = entry(s.buffer);
      w.write = true;
      w.count = 1;
      w.form = index_form(s.index, loops_);
    }
    std::vector<const ExprNode*> loads;
    collect_loads(s.value, loads);
    for (const ExprNode* l : loads) {
      BufferAccess& a = entry(l->name);
      if (a.count == 0 || (!a.read && !a.write)) a.form = index_form(l->args[0], loops_);
      a.read = true;
      a.count += 1;
    }
    const IndexForm& store_form = acc[0].form;

    // [16, 49) Annotations, 11 each for vectorized, unrolled, parallel loops:
    // {vec,unroll,parallel}_num, _prod, _len, _pos[8] (none, inner/middle/
    // outer spatial, inner/middle/outer reduce, mixed).
    annotation_features(ForKind::kVectorized, store_form, row + kVec);
    annotation_features(ForKind::kUnrolled, store_form, row + kUnroll);
    annotation_features(ForKind::kParallel, store_form, row + kParallel);

    // [49, 57) GPU: is_gpu, then the product of extents of enclosing loops
    // bound to blockIdx.x/y/z, threadIdx.x/y/z, vthread.
    {
      const ForKind kinds[7] = {ForKind::kBlockX, ForKind::kBlockY, ForKind::kBlockZ,
                                ForKind::kThreadX, ForKind::kThreadY, ForKind::kThreadZ,
                                ForKind::kVThread};
      bool gpu = false;
      for (int k = 0; k < 7; ++k) {
        double p = 1;
        bool any = false;
        for (const auto& l : loops_)
          if (l.kind == kinds[k]) p *= static_cast<double>(l.extent), any = true;
        row[kGpu + 1 + k] = log_count(any ? p : 0);
        gpu = gpu || any;
      }
      row[kGpu] = gpu;
    }

    // [57, 147) Per-buffer access features (see features_buffer_access.cc).
    std::vector<double> unique_by_level = buffer_access_features(acc, loops_, row + kBuf);

    // [147, 157) Arithmetic-intensity curve: for each loop level l (the
    // sub-nest of loops l..n-1), float ops executed in it / unique bytes it
    // touches; sampled at 10 evenly spaced points from the innermost body
    // (x = 0) to the whole nest (x = 1) by linear interpolation over levels.
    {
      double fops = 0;
      for (int k = kFloatMad; k <= kFloatOther; ++k) fops += ops[k] * (k == kFloatMad ? 2 : 1);
      std::vector<double> ai(n + 1);
      double inner = 1;
      for (size_t l = n + 1; l-- > 0;) {
        if (l < n) inner *= static_cast<double>(loops_[l].extent);
        ai[l] = fops * inner / std::max(1.0, unique_by_level[l]);
      }
      for (int i = 0; i < kCurvePoints; ++i) {
        double x = static_cast<double>(i) / (kCurvePoints - 1) * static_cast<double>(n);
        size_t lo = static_cast<size_t>(x);
        double t = x - static_cast<double>(lo);
        // x counts levels outward from the innermost (level n).
        double a = ai[n - lo], b = lo < n ? ai[n - lo - 1] : a;
        row[kCurve + i] = log_count(a + (b - a) * t);
      }
    }

    // [157, 161) Allocation of the stored buffer when it is a temporary:
    // alloc_size (bytes), alloc_prod (bytes allocated over the run = size x
    // executions of the allocation), alloc_outer_prod (executions of the
    // allocation: product of the loops around it), alloc_inner_prod
    // (statement executions per allocation).
    {
      auto it = alloc_depth_.find(s.buffer);
      const Buffer* b = f_.find_buffer(s.buffer);
      bool is_temp = false;
      for (const auto& t : f_.temps) is_temp = is_temp || t.name == s.buffer;
      if (it != alloc_depth_.end() && b && is_temp) {
        double outer = 1;
        for (size_t d = 0; d < it->second && d < n; ++d) outer *= static_cast<double>(loops_[d].extent);
        double size = static_cast<double>(b->size()) * 4.0;
        row[kAlloc + 0] = log_count(size);
        row[kAlloc + 1] = log_count(size * outer);
        row[kAlloc + 2] = log_count(outer);
        row[kAlloc + 3] = log_count(trip / outer);
      }
    }

    // [161, 166) Outer loops: outer_prod (trip count), num_loops,
    // auto_unroll_max_step (largest pragma around the statement), num_guards
    // (enclosing ifs, e.g. from splits that do not divide), is_init (the
    // stored value reads no buffer: a reduction's init or a fill).
    {
      int64_t unroll = 0;
      for (const auto& l : loops_) unroll = std::max(unroll, l.auto_unroll);
      row[kOuter + 0] = log_count(trip);
      row[kOuter + 1] = log_count(static_cast<double>(n));
      row[kOuter + 2] = log_count(static_cast<double>(unroll));
      row[kOuter + 3] = log_count(static_cast<double>(conds_.size()));
      row[kOuter + 4] = loads.empty();
    }

    // [166, 179) What the code generator and the caches make of the inner
    // loops. The per-buffer features above describe each buffer's innermost
    // *moving* loop; fast CPU kernels are decided by the innermost loop
    // itself (are its accesses contiguous vectors, broadcasts or gathers?),
    // by how many accumulators stay in registers across the reduction, and
    // by how much data each cache level must reload.
    {
      float* o = row + kInner;
      int inner = -1;  // innermost loop with extent > 1
      for (size_t d = n; d-- > 0;)
        if (loops_[d].extent > 1) {
          inner = static_cast<int>(d);
          break;
        }
      // inner_len: extent of that loop.
      o[0] = log_count(inner >= 0 ? static_cast<double>(loops_[inner].extent) : 0.0);
      int vec = -1;  // innermost vectorized loop
      for (size_t d = n; d-- > 0 && vec < 0;)
        if (loops_[d].kind == ForKind::kVectorized) vec = static_cast<int>(d);
      // vec_waste_8, vec_waste_16: share of the lanes of 8- and 16-wide
      // vectors left empty by the innermost vectorized loop's extent (the
      // remainder iterations).
      if (vec >= 0) {
        const double len = static_cast<double>(loops_[vec].extent);
        for (int k = 0; k < 2; ++k) {
          const double width = k == 0 ? 8.0 : 16.0, padded = std::ceil(len / width) * width;
          o[1 + k] = static_cast<float>((padded - len) / padded);
        }
      }
      // inner_broadcast, inner_contiguous, inner_strided: accesses per
      // execution whose index does not move along the innermost loop, moves
      // by one element, or moves by more (or non-linearly: a gather).
      double broadcast = 0, contiguous = 0, strided = 0;
      for (const BufferAccess& a : acc) {
        if (inner < 0 || !a.form.used[inner]) broadcast += a.count;
        else if (std::fabs(a.form.coef[inner]) == 1.0) contiguous += a.count;
        else strided += a.count;
      }
      o[3] = log_count(broadcast);
      o[4] = log_count(contiguous);
      o[5] = log_count(strided);
      // inner_store_invariant: the innermost loop does not move the store
      // (a reduction accumulates into one element: a dependence chain).
      o[6] = inner >= 0 && !store_form.used[inner];
      // acc_tile_inner, acc_tile_outer: for an accumulating store, the
      // elements of the stored buffer updated inside the innermost and inside
      // the outermost reduce-like loop (one the store index does not use) —
      // the accumulators live across that loop (registers when small).
      if (acc[0].read) {
        int red_outer = -1, red_inner = -1;
        for (size_t d = 0; d < n; ++d)
          if (loops_[d].extent > 1 && !store_form.used[d]) {
            if (red_outer < 0) red_outer = static_cast<int>(d);
            red_inner = static_cast<int>(d);
          }
        if (red_inner >= 0) {
          o[7] = log_count(access_footprint(acc[0], loops_, static_cast<size_t>(red_inner) + 1));
          o[8] = log_count(access_footprint(acc[0], loops_, static_cast<size_t>(red_outer) + 1));
        }
      }
      // traffic_l1, traffic_l2: bytes reloaded into a cache of that size.
      // Loop level l is the innermost whose sub-nest touches more than the
      // cache holds; each of its iterations (and of the loops outside it)
      // brings in the footprint of level l + 1, which fits. When the whole
      // nest fits, its footprint is loaded once.
      for (int k = 0; k < 2; ++k) {
        const double cache = k == 0 ? kL1Bytes : kL2Bytes;
        double traffic = unique_by_level[0];
        for (size_t l = n; l-- > 0;)
          if (unique_by_level[l] > cache) {
            double iters = 1;
            for (size_t d = 0; d <= l; ++d) iters *= static_cast<double>(loops_[d].extent);
            traffic = iters * unique_by_level[l + 1];
            break;
          }
        o[9 + k] = log_count(traffic);
      }
      // vec_effective: the innermost vectorized loop becomes vector code.
      // The emitter runs it lane by lane when the store does not move along
      // it (several lanes would update one element: a reduction).
      const bool vec_effective = vec >= 0 && loops_[vec].extent > 1 && store_form.used[vec];
      o[12] = vec_effective;
      // unrolled_body: copies of the statement in straight-line code — the
      // product of the enclosing loops the emitter unrolls, times the vector
      // chunks of an effective vectorized loop of at most 4 chunks of 16
      // (emitted one after the other). The register tile the compiler sees.
      double body = 1;
      for (const auto& l : loops_)
        if (l.unrolled) body *= static_cast<double>(l.extent);
      if (vec_effective && loops_[vec].extent <= 4 * 16) body *= std::ceil(loops_[vec].extent / 16.0);
      o[11] = log_count(body);

    }
  }

  const LoweredFunc& f_;
  ProgramFeatures out_;
  std::vector<LoopInfo> loops_;
  std::vector<Expr> conds_;
  std::map<std::string, size_t> alloc_depth_;
  int64_t unroll_limit_ = 0;  // auto-unroll step in effect
};

std::vector<std::string> make_names() {
  std::vector<std::string> v = {
      "float_mad", "float_addsub", "float_mul", "float_divmod", "float_cmp", "float_math_func",
      "float_other_func", "int_mad", "int_addsub", "int_mul", "int_divmod", "int_cmp",
      "int_math_func", "int_other_func", "bool_op", "select_op"};
  const char* pos[8] = {"none", "inner_spatial", "middle_spatial", "outer_spatial",
                        "inner_reduce", "middle_reduce", "outer_reduce", "mixed"};
  for (std::string a : {"vec", "unroll", "parallel"}) {
    v.push_back(a + "_num");
    v.push_back(a + "_prod");
    v.push_back(a + "_len");
    for (const char* p : pos) v.push_back(a + "_pos_" + p);
  }
  for (const char* g : {"is_gpu", "blockIdx_x_len", "blockIdx_y_len", "blockIdx_z_len",
                        "threadIdx_x_len", "threadIdx_y_len", "threadIdx_z_len", "vthread_len"})
    v.push_back(g);
  for (int b = 0; b < kMaxFeatureBuffers; ++b)
    for (const auto& n : buffer_feature_names()) v.push_back("B" + std::to_string(b) + "." + n);
  for (int i = 0; i < kCurvePoints; ++i) v.push_back("arith_intensity_" + std::to_string(i));
  for (const char* a : {"alloc_size", "alloc_prod", "alloc_outer_prod", "alloc_inner_prod"}) v.push_back(a);
  for (const char* a : {"outer_prod", "num_loops", "auto_unroll_max_step", "num_guards", "is_init"})
    v.push_back(a);
  for (const char* a : {"inner_len", "vec_waste_8", "vec_waste_16", "inner_broadcast", "inner_contiguous",
                        "inner_strided", "inner_store_invariant", "acc_tile_inner", "acc_tile_outer",
                        "traffic_l1", "traffic_l2", "unrolled_body", "vec_effective"})
    v.push_back(a);
  return v;
}

}  // namespace

const std::vector<std::string>& feature_names() {
  static const std::vector<std::string> names = [] {
    auto v = make_names();
    if (v.size() != static_cast<size_t>(kNumFeatures)) throw LoomError("feature name table size mismatch");
    return v;
  }();
  return names;
}

int feature_index(const std::string& name) {
  const auto& n = feature_names();
  auto it = std::find(n.begin(), n.end(), name);
  if (it == n.end()) throw LoomError("unknown feature '" + name + "'");
  return static_cast<int>(it - n.begin());
}

const std::vector<int>& feature_detail::task_relative_features() {
  static const std::vector<int> cols = [] {
    std::vector<int> c;
    for (int k = 0; k < 16; ++k) c.push_back(kArith + k);
    for (int b = 0; b < kMaxFeatureBuffers; ++b)
      for (const char* n : {"bytes", "unique_bytes", "lines", "unique_lines", "bytes_d_reuse_ct",
                            "unique_bytes_d_reuse_ct", "lines_d_reuse_ct", "unique_lines_d_reuse_ct"})
        c.push_back(feature_index("B" + std::to_string(b) + "." + n));
    for (const char* n : {"alloc_prod", "alloc_outer_prod", "outer_prod", "traffic_l1", "traffic_l2"})
      c.push_back(feature_index(n));
    return c;
  }();
  return cols;
}

ProgramFeatures extract_features(const LoweredFunc& f, double task_flops) {
  ProgramFeatures p = Extractor(f).run();
  if (task_flops <= 0) return p;
  const float shift = log_count(task_flops);
  for (int s = 0; s < p.num_stmts; ++s) {
    float* row = p.values.data() + static_cast<size_t>(s) * kNumFeatures;
    for (int c : task_relative_features())
      if (row[c] > 0) row[c] -= shift;
  }
  return p;
}

ProgramFeatures extract_features(const State& s) {
  if (!s.defined()) return ProgramFeatures{};
  try {
    // Guards in place: a program's features do not depend on how many
    // copies of its nests the whole tiles get.
    LowerOptions options;
    options.full_tiles = false;
    return extract_features(lower(s, options), s.dag().flop_count());
  } catch (const std::exception&) {  // an invalid schedule: no rows
    return ProgramFeatures{};
  }
}

std::vector<ProgramFeatures> extract_features(const std::vector<State>& states,
                                              const FeatureOptions& options) {
  std::vector<ProgramFeatures> out(states.size());
  parallel_for(states.size(), options.num_threads, [&](size_t i) { out[i] = extract_features(states[i]); });
  return out;
}

}  // namespace loom
