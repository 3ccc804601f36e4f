#include "ir/reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <unordered_map>

namespace loom {

int64_t shape_size(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

namespace {

enum class Math : uint8_t { kExp, kLog, kSqrt, kTanh, kErf, kSigmoid, kFabs, kPow };

Math math_id(const std::string& name, const std::string& op) {
  static const std::pair<const char*, Math> table[] = {
      {"exp", Math::kExp},   {"log", Math::kLog},         {"sqrt", Math::kSqrt},
      {"tanh", Math::kTanh}, {"erf", Math::kErf},         {"sigmoid", Math::kSigmoid},
      {"fabs", Math::kFabs}, {"pow", Math::kPow}};
  for (const auto& [n, m] : table) {
    if (name == n) return m;
  }
  throw LoomError("reference: op '" + op + "' calls unknown function '" + name + "'");
}

// One compiled expression node; children are indices into Program::nodes_.
struct Node {
  ExprKind kind = ExprKind::kIntImm;
  DType dtype = DType::kInt;
  bool float_operands = false;  // comparisons: compare as floats
  int64_t ival = 0;
  double fval = 0.0;
  int a = -1, b = -1, c = -1;
  int slot = -1;  // kVar
  Math math = Math::kExp;
  ReduceKind reduce_kind = ReduceKind::kSum;
  const Expr* expr = nullptr;  // for error messages
  // kLoad: per dimension, an affine form c + sum coef * env[slot] when the
  // index is affine in the bound variables (terms in affine_terms[begin,end)),
  // else a compiled index node (fallback >= 0).
  const float* data = nullptr;
  std::vector<int64_t> shape, strides;
  struct Dim { int fallback = -1; int64_t c = 0; int begin = 0, end = 0; };
  std::vector<Dim> dims;
  std::vector<std::pair<int, int64_t>> affine_terms;
  std::vector<int64_t> inner_coef;  // batched loads: per dim, coefficient of the lane axis
  // kReduce: `batched` when the source can be evaluated a block of lanes of
  // the innermost reduce axis at a time (see Program::lanes()).
  bool batched = false;
  std::vector<double> lanes;  // scratch for batched evaluation
  // kReduce
  std::vector<int> reduce_slots;
  std::vector<int64_t> reduce_extents;
};

int64_t floordiv(int64_t x, int64_t y) {
  int64_t q = x / y;
  return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
}

class Program {
 public:
  Program(const OpNode& op, const std::map<std::string, TensorData>& buffers,
          const std::map<std::string, std::vector<int64_t>>& shapes)
      : op_(op), buffers_(buffers), shapes_(shapes) {
    for (size_t d = 0; d < op.axes.size(); ++d) bind(op.axes[d]);
    root_ = compile(op.body);
    env_.assign(static_cast<size_t>(num_slots_), 0);
  }

  void run(float* out) {
    const size_t nd = op_.shape.size();
    const int64_t total = shape_size(op_.shape);
    for (size_t d = 0; d < nd; ++d) env_[d] = 0;
    for (int64_t flat = 0; flat < total; ++flat) {
      out[flat] = static_cast<float>(evf(root_));
      for (size_t d = nd; d-- > 0;) {  // odometer over the output axes
        if (++env_[d] < op_.shape[d]) break;
        env_[d] = 0;
      }
    }
  }

 private:
  int bind(const Var& v) {
    if (!slots_.emplace(v->var_id, num_slots_).second) {
      throw LoomError("reference: op '" + op_.name + "' binds variable '" + v->name + "' twice");
    }
    return num_slots_++;
  }

  int compile(const Expr& e) {
    Node n;
    n.kind = e->kind;
    n.dtype = e->dtype;
    n.expr = &e;
    const auto& args = e->args;
    switch (e->kind) {
      case ExprKind::kIntImm: n.ival = e->int_value; break;
      case ExprKind::kFloatImm: n.fval = e->float_value; break;
      case ExprKind::kVar: {
        auto it = slots_.find(e->var_id);
        if (it == slots_.end()) {
          throw LoomError("reference: op '" + op_.name + "' uses unbound variable '" + e->name + "'");
        }
        n.slot = it->second;
        break;
      }
      case ExprKind::kCall:
        n.math = math_id(e->name, op_.name);
        if (args.size() != (n.math == Math::kPow ? 2u : 1u)) {
          throw LoomError("reference: op '" + op_.name + "': wrong argument count for " + e->name);
        }
        n.a = compile(args[0]);
        if (args.size() > 1) n.b = compile(args[1]);
        break;
      case ExprKind::kLoad: {
        auto buf = buffers_.find(e->name);
        auto shp = shapes_.find(e->name);
        if (buf == buffers_.end() || shp == shapes_.end()) {
          throw LoomError("reference: op '" + op_.name + "' reads unknown tensor '" + e->name + "'");
        }
        n.data = buf->second.data();
        n.shape = shp->second;
        if (args.size() != n.shape.size()) {
          throw LoomError("reference: op '" + op_.name + "' indexes " + e->name + " with " +
                          std::to_string(args.size()) + " indices");
        }
        n.strides.assign(n.shape.size(), 1);
        for (size_t d = n.shape.size(); d-- > 1;) n.strides[d - 1] = n.strides[d] * n.shape[d];
        for (const auto& i : args) {
          Node::Dim dim;
          std::vector<std::pair<int, int64_t>> terms;
          if (affine(i, 1, dim.c, terms)) {
            dim.begin = static_cast<int>(n.affine_terms.size());
            n.affine_terms.insert(n.affine_terms.end(), terms.begin(), terms.end());
            dim.end = static_cast<int>(n.affine_terms.size());
          } else {
            dim.fallback = compile(i);
          }
          n.dims.push_back(dim);
        }
        break;
      }
      case ExprKind::kReduce:
        n.reduce_kind = e->reduce_kind;
        for (const auto& ax : e->reduce_axes) {
          n.reduce_slots.push_back(bind(ax));
          n.reduce_extents.push_back(ax->extent);
        }
        n.a = compile(args.at(0));
        {
          // Batch the longest reduce axis that allows it (moved last: the
          // odometer in reduce() walks the others). Summation order changes,
          // which accumulation in double makes immaterial.
          std::vector<size_t> order(e->reduce_axes.size());
          for (size_t r = 0; r < order.size(); ++r) order[r] = r;
          std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
            return n.reduce_extents[x] > n.reduce_extents[y];
          });
          for (size_t r : order) {
            if (!can_batch(n.a, *e->reduce_axes[r])) continue;
            n.batched = true;
            std::swap(n.reduce_slots[r], n.reduce_slots.back());
            std::swap(n.reduce_extents[r], n.reduce_extents.back());
            break;
          }
        }
        break;
      default:
        if (args.size() > 0) n.a = compile(args[0]);
        if (args.size() > 1) n.b = compile(args[1]);
        if (args.size() > 2) n.c = compile(args[2]);
        if (is_comparison(e->kind)) {
          n.float_operands = args[0]->dtype == DType::kFloat || args[1]->dtype == DType::kFloat;
        }
        break;
    }
    nodes_.push_back(std::move(n));
    return static_cast<int>(nodes_.size()) - 1;
  }

  // Adds scale * e to c + terms if e is affine in bound variables.
  bool affine(const Expr& e, int64_t scale, int64_t& c, std::vector<std::pair<int, int64_t>>& terms) {
    if (e->dtype != DType::kInt) return false;
    int64_t k = 0;
    switch (e->kind) {
      case ExprKind::kIntImm: c += scale * e->int_value; return true;
      case ExprKind::kVar: {
        auto it = slots_.find(e->var_id);
        if (it == slots_.end()) return false;  // compile() reports it
        terms.emplace_back(it->second, scale);
        return true;
      }
      case ExprKind::kAdd:
        return affine(e->args[0], scale, c, terms) && affine(e->args[1], scale, c, terms);
      case ExprKind::kSub:
        return affine(e->args[0], scale, c, terms) && affine(e->args[1], -scale, c, terms);
      case ExprKind::kMul:
        if (is_const_int(e->args[1], &k)) return affine(e->args[0], scale * k, c, terms);
        if (is_const_int(e->args[0], &k)) return affine(e->args[1], scale * k, c, terms);
        return false;
      default: return false;
    }
  }

  [[noreturn]] void unsupported(const Node& n, const char* as) const {
    throw LoomError("reference: op '" + op_.name + "': cannot evaluate " + to_string(*n.expr) +
                    " as " + as);
  }

  [[noreturn]] __attribute__((noinline, cold)) void out_of_bounds(const Node& n, size_t d,
                                                                  int64_t i) const {
    throw LoomError("reference: op '" + op_.name + "' loads " + n.expr->get()->name +
                    " out of bounds: index " + std::to_string(i) + " of dimension " +
                    std::to_string(d) + " (extent " + std::to_string(n.shape[d]) + ")");
  }

  int64_t dim_index(const Node& n, size_t d) {
    const Node::Dim& dim = n.dims[d];
    if (dim.fallback >= 0) return evi(dim.fallback);
    int64_t i = dim.c;
    for (int t = dim.begin; t < dim.end; ++t) {
      i += n.affine_terms[t].second * env_[n.affine_terms[t].first];
    }
    return i;
  }

  double load(const Node& n) {
    int64_t flat = 0;
    for (size_t d = 0; d < n.dims.size(); ++d) {
      int64_t i = dim_index(n, d);
      if (i < 0 || i >= n.shape[d]) out_of_bounds(n, d, i);
      flat += i * n.strides[d];
    }
    return n.data[flat];
  }

  // ---- batched evaluation over the innermost reduce axis ----------------
  // A reduce source made of float arithmetic, math calls and loads whose
  // indices are affine in the innermost reduce variable `v` is evaluated
  // kLanes values of `v` at a time: each load becomes a strided gather whose
  // first and last index are bounds-checked (affine => all between are too).
  static constexpr int64_t kLanes = 256;

  bool can_batch(int i, const ExprNode& v) {
    Node& n = nodes_[i];
    if (n.dtype != DType::kFloat) return false;
    bool ok = false;
    switch (n.kind) {
      case ExprKind::kFloatImm: ok = true; break;
      case ExprKind::kAdd: case ExprKind::kSub: case ExprKind::kMul: case ExprKind::kDiv:
      case ExprKind::kMin: case ExprKind::kMax:
        ok = can_batch(n.a, v) && can_batch(n.b, v);
        break;
      case ExprKind::kCall: ok = can_batch(n.a, v) && (n.b < 0 || can_batch(n.b, v)); break;
      case ExprKind::kLoad: {
        const int slot = slots_.at(v.var_id);
        const auto& idx = n.expr->get()->args;
        ok = true;
        n.inner_coef.assign(n.dims.size(), 0);
        for (size_t d = 0; d < n.dims.size() && ok; ++d) {
          bool uses = false;
          visit(idx[d], [&](const Expr& x) {
            uses |= x->kind == ExprKind::kVar && x->var_id == v.var_id;
          });
          if (!uses) continue;
          if (n.dims[d].fallback >= 0) ok = false;
          for (int t = n.dims[d].begin; t < n.dims[d].end; ++t) {
            if (n.affine_terms[t].first == slot) n.inner_coef[d] += n.affine_terms[t].second;
          }
        }
        break;
      }
      default: break;
    }
    if (ok) n.lanes.assign(kLanes, 0.0);
    return ok;
  }

  // Values of node i for lanes [env[v], env[v] + len) of the batched axis v.
  const double* lanes(int i, int64_t len) {
    Node& n = nodes_[i];
    double* out = n.lanes.data();
    switch (n.kind) {
      case ExprKind::kFloatImm:
        for (int64_t r = 0; r < len; ++r) out[r] = n.fval;
        break;
      case ExprKind::kLoad: {
        int64_t base = 0, step = 0;
        for (size_t d = 0; d < n.dims.size(); ++d) {
          const int64_t i0 = dim_index(n, d), c = n.inner_coef[d], i1 = i0 + c * (len - 1);
          if (i0 < 0 || i0 >= n.shape[d]) out_of_bounds(n, d, i0);
          if (i1 < 0 || i1 >= n.shape[d]) out_of_bounds(n, d, i1);
          base += i0 * n.strides[d];
          step += c * n.strides[d];
        }
        const float* src = n.data + base;
        for (int64_t r = 0; r < len; ++r) out[r] = src[r * step];
        break;
      }
      case ExprKind::kCall: {
        const double* x = lanes(n.a, len);
        const double* y = n.b >= 0 ? lanes(n.b, len) : nullptr;
        for (int64_t r = 0; r < len; ++r) out[r] = apply_math(n.math, x[r], y ? y[r] : 0.0);
        break;
      }
      default: {
        const double* x = lanes(n.a, len);
        const double* y = lanes(n.b, len);
        switch (n.kind) {
          case ExprKind::kAdd: for (int64_t r = 0; r < len; ++r) out[r] = x[r] + y[r]; break;
          case ExprKind::kSub: for (int64_t r = 0; r < len; ++r) out[r] = x[r] - y[r]; break;
          case ExprKind::kMul: for (int64_t r = 0; r < len; ++r) out[r] = x[r] * y[r]; break;
          case ExprKind::kDiv: for (int64_t r = 0; r < len; ++r) out[r] = x[r] / y[r]; break;
          case ExprKind::kMin:
            for (int64_t r = 0; r < len; ++r) out[r] = y[r] < x[r] ? y[r] : x[r];
            break;
          default:
            for (int64_t r = 0; r < len; ++r) out[r] = y[r] > x[r] ? y[r] : x[r];
            break;
        }
      }
    }
    return out;
  }

  static double apply_math(Math m, double x, double y) {
    switch (m) {
      case Math::kExp: return std::exp(x);
      case Math::kLog: return std::log(x);
      case Math::kSqrt: return std::sqrt(x);
      case Math::kTanh: return std::tanh(x);
      case Math::kErf: return std::erf(x);
      case Math::kSigmoid: return 1.0 / (1.0 + std::exp(-x));
      case Math::kFabs: return std::fabs(x);
      case Math::kPow: return std::pow(x, y);
    }
    return 0.0;
  }

  double reduce(const Node& n) {
    double acc = n.reduce_kind == ReduceKind::kSum   ? 0.0
                 : n.reduce_kind == ReduceKind::kMax ? -std::numeric_limits<double>::infinity()
                                                     : std::numeric_limits<double>::infinity();
    // Batched: the innermost axis is walked by lanes(); the odometer below
    // then runs over the outer axes only.
    const size_t nr = n.reduce_slots.size() - (n.batched ? 1 : 0);
    for (int slot : n.reduce_slots) env_[slot] = 0;
    for (;;) {
      if (n.batched) {
        const int inner = n.reduce_slots.back();
        const int64_t extent = n.reduce_extents.back();
        for (int64_t r0 = 0; r0 < extent; r0 += kLanes) {
          const int64_t len = std::min(kLanes, extent - r0);
          env_[inner] = r0;
          const double* v = lanes(n.a, len);
          switch (n.reduce_kind) {
            case ReduceKind::kSum: for (int64_t r = 0; r < len; ++r) acc += v[r]; break;
            case ReduceKind::kMax: for (int64_t r = 0; r < len; ++r) acc = v[r] > acc ? v[r] : acc; break;
            case ReduceKind::kMin: for (int64_t r = 0; r < len; ++r) acc = v[r] < acc ? v[r] : acc; break;
          }
        }
      } else {
        double v = evf(n.a);
        switch (n.reduce_kind) {
          case ReduceKind::kSum: acc += v; break;
          case ReduceKind::kMax: acc = v > acc ? v : acc; break;
          case ReduceKind::kMin: acc = v < acc ? v : acc; break;
        }
      }
      size_t r = nr;
      while (r-- > 0) {
        if (++env_[n.reduce_slots[r]] < n.reduce_extents[r]) break;
        env_[n.reduce_slots[r]] = 0;
      }
      if (r == static_cast<size_t>(-1)) break;
    }
    return acc;
  }

  double evf(int i) {
    const Node& n = nodes_[i];
    if (n.dtype == DType::kInt) return static_cast<double>(evi(i));
    if (n.dtype == DType::kBool) return evb(i) ? 1.0 : 0.0;
    switch (n.kind) {
      case ExprKind::kFloatImm: return n.fval;
      case ExprKind::kIntImm: return static_cast<double>(n.ival);
      case ExprKind::kAdd: return evf(n.a) + evf(n.b);
      case ExprKind::kSub: return evf(n.a) - evf(n.b);
      case ExprKind::kMul: return evf(n.a) * evf(n.b);
      case ExprKind::kDiv: return evf(n.a) / evf(n.b);
      case ExprKind::kMod: { double x = evf(n.a), y = evf(n.b); return x - std::floor(x / y) * y; }
      case ExprKind::kMin: { double x = evf(n.a), y = evf(n.b); return y < x ? y : x; }
      case ExprKind::kMax: { double x = evf(n.a), y = evf(n.b); return y > x ? y : x; }
      case ExprKind::kSelect: return evb(n.a) ? evf(n.b) : evf(n.c);
      case ExprKind::kCast: return evf(n.a);
      case ExprKind::kLoad: return load(n);
      case ExprKind::kReduce: return reduce(n);
      case ExprKind::kCall: {
        double x = evf(n.a);
        return apply_math(n.math, x, n.b >= 0 ? evf(n.b) : 0.0);
      }
      default: break;
    }
    unsupported(n, "float");
  }

  int64_t evi(int i) {
    const Node& n = nodes_[i];
    if (n.dtype == DType::kFloat) return static_cast<int64_t>(evf(i));
    if (n.dtype == DType::kBool) return evb(i) ? 1 : 0;
    switch (n.kind) {
      case ExprKind::kIntImm: return n.ival;
      case ExprKind::kVar: return env_[n.slot];
      case ExprKind::kAdd: return evi(n.a) + evi(n.b);
      case ExprKind::kSub: return evi(n.a) - evi(n.b);
      case ExprKind::kMul: return evi(n.a) * evi(n.b);
      case ExprKind::kDiv:
      case ExprKind::kMod: {
        int64_t x = evi(n.a), y = evi(n.b);
        if (y == 0) {
          throw LoomError("reference: op '" + op_.name + "': integer division by zero in " +
                          to_string(*n.expr));
        }
        int64_t q = floordiv(x, y);
        return n.kind == ExprKind::kDiv ? q : x - q * y;
      }
      case ExprKind::kMin: { int64_t x = evi(n.a), y = evi(n.b); return y < x ? y : x; }
      case ExprKind::kMax: { int64_t x = evi(n.a), y = evi(n.b); return y > x ? y : x; }
      case ExprKind::kSelect: return evb(n.a) ? evi(n.b) : evi(n.c);
      case ExprKind::kCast: return evi(n.a);
      default: break;
    }
    unsupported(n, "integer");
  }

  bool evb(int i) {
    const Node& n = nodes_[i];
    if (n.dtype == DType::kInt) return evi(i) != 0;
    if (n.dtype == DType::kFloat) return evf(i) != 0.0;
    switch (n.kind) {
      case ExprKind::kIntImm: return n.ival != 0;
      case ExprKind::kAnd: return evb(n.a) && evb(n.b);
      case ExprKind::kOr: return evb(n.a) || evb(n.b);
      case ExprKind::kNot: return !evb(n.a);
      case ExprKind::kSelect: return evb(n.a) ? evb(n.b) : evb(n.c);
      case ExprKind::kCast: return evb(n.a);
      case ExprKind::kEQ: case ExprKind::kNE: case ExprKind::kLT:
      case ExprKind::kLE: case ExprKind::kGT: case ExprKind::kGE: {
        int cmp;
        if (n.float_operands) {
          double x = evf(n.a), y = evf(n.b);
          if (std::isnan(x) || std::isnan(y)) return n.kind == ExprKind::kNE;
          cmp = x < y ? -1 : (x > y ? 1 : 0);
        } else {
          int64_t x = evi(n.a), y = evi(n.b);
          cmp = x < y ? -1 : (x > y ? 1 : 0);
        }
        switch (n.kind) {
          case ExprKind::kEQ: return cmp == 0;
          case ExprKind::kNE: return cmp != 0;
          case ExprKind::kLT: return cmp < 0;
          case ExprKind::kLE: return cmp <= 0;
          case ExprKind::kGT: return cmp > 0;
          default: return cmp >= 0;
        }
      }
      default: break;
    }
    unsupported(n, "boolean");
  }

  const OpNode& op_;
  const std::map<std::string, TensorData>& buffers_;
  const std::map<std::string, std::vector<int64_t>>& shapes_;
  std::vector<Node> nodes_;
  std::unordered_map<int64_t, int> slots_;
  int num_slots_ = 0;
  std::vector<int64_t> env_;
  int root_ = -1;
};

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

std::map<std::string, TensorData> evaluate_reference(const ComputeDAG& dag,
                                                     const std::map<std::string, TensorData>& inputs) {
  std::map<std::string, TensorData> buffers;
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& op : dag.ops()) {
    shapes[op->name] = op->shape;
    const size_t size = static_cast<size_t>(shape_size(op->shape));
    if (op->is_placeholder) {
      auto it = inputs.find(op->name);
      if (it == inputs.end()) throw LoomError("reference: missing input '" + op->name + "'");
      if (it->second.size() != size) {
        throw LoomError("reference: input '" + op->name + "' has " +
                        std::to_string(it->second.size()) + " elements, expected " +
                        std::to_string(size));
      }
      buffers[op->name] = it->second;
    } else {
      buffers[op->name].assign(size, 0.0f);
    }
  }
  for (const auto& op : dag.ops()) {
    if (op->is_placeholder) continue;
    Program prog(*op, buffers, shapes);
    prog.run(buffers[op->name].data());
  }
  return buffers;
}

std::map<std::string, TensorData> random_inputs(const ComputeDAG& dag, uint64_t seed) {
  std::map<std::string, TensorData> out;
  for (const auto& name : dag.input_names()) {
    uint64_t state = seed * 0x2545F4914F6CDD1Dull + 0x9E3779B97F4A7C15ull;
    for (unsigned char ch : name) state = (state ^ ch) * 0x100000001B3ull;  // FNV-style mix
    TensorData& data = out[name];
    data.resize(static_cast<size_t>(shape_size(dag.op(name)->shape)));
    for (float& v : data) {
      // 24 random bits -> exactly representable values in [-1, 1).
      v = static_cast<float>(static_cast<double>(splitmix64(state) >> 40) / 8388608.0 - 1.0);
    }
  }
  return out;
}

std::string compare_outputs(const TensorData& got, const TensorData& expected, double rtol,
                            double atol) {
  if (got.size() != expected.size()) {
    return "size mismatch: got " + std::to_string(got.size()) + " elements, expected " +
           std::to_string(expected.size());
  }
  size_t bad = 0, first = 0, worst = 0;
  double worst_ratio = -1;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], e = expected[i];
    double ratio;
    if (std::isnan(e) || std::isnan(g)) {
      ratio = (std::isnan(e) && std::isnan(g)) ? 0.0 : std::numeric_limits<double>::infinity();
    } else if (std::isinf(e) || std::isinf(g)) {
      ratio = g == e ? 0.0 : std::numeric_limits<double>::infinity();
    } else {
      ratio = std::fabs(g - e) / (atol + rtol * std::fabs(e));
    }
    if (ratio > 1.0) {
      if (bad++ == 0) first = i;
      if (ratio > worst_ratio) {
        worst_ratio = ratio;
        worst = i;
      }
    }
  }
  if (bad == 0) return "";
  std::ostringstream os;
  os.precision(7);
  os << bad << " of " << got.size() << " elements differ (rtol " << rtol << ", atol " << atol
     << "); worst at [" << worst << "]: got " << got[worst] << ", expected " << expected[worst]
     << "; first at [" << first << "]: got " << got[first] << ", expected " << expected[first];
  return os.str();
}

}  // namespace loom
