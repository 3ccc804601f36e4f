// Injective data movement: reshape, flatten, transpose, concat.
#include <numeric>

#include "graph/ops.h"
#include "ir/error.h"

namespace loom::graph::op_detail {

namespace {

Shape reshape_target(const Shape& in, const nlohmann::json& spec) {
  Shape out;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i].get<int64_t>();
    if (d == 0) {
      if (i >= in.size()) throw LoomError("attribute 'shape': 0 at dim " + std::to_string(i) + " has no input dim to copy");
      d = in[i];
    }
    if (d == -1) {
      if (infer >= 0) throw LoomError("attribute 'shape': more than one -1");
      infer = static_cast<int>(i);
    } else if (d < 1 || d > kMaxElements) {
      throw LoomError("attribute 'shape': bad dimension " + std::to_string(d));
    } else if (known > kMaxElements / d) {  // checked before multiplying: no overflow
      throw LoomError("attribute 'shape': " + spec.dump() + " has more than 2^40 elements");
    } else {
      known *= d;
    }
    out.push_back(d);
  }
  const int64_t total = num_elements(in);
  if (infer >= 0) {
    if (total % known != 0) throw LoomError("cannot reshape " + shape_string(in) + " to " + spec.dump());
    out[infer] = total / known;
  }
  if (num_elements(out) != total)
    throw LoomError("cannot reshape " + shape_string(in) + " (" + std::to_string(total) + " elements) to " +
                    shape_string(out));
  return out;
}

// The input element read by a row-major reshape to `out_shape` (ir shapes).
Tensor lower_reshape(const Tensor& x, const std::vector<int64_t>& out_shape, const std::string& name) {
  return compute_with_axes(
      out_shape,
      [&](const std::vector<Var>& v) {
        Expr linear = int_imm(0);
        for (size_t i = 0; i < v.size(); ++i) linear = linear * Expr(out_shape[i]) + v[i];
        std::vector<Expr> idx(x.ndim());
        int64_t stride = 1;
        for (size_t j = x.ndim(); j-- > 0;) {
          idx[j] = (linear / Expr(stride)) % Expr(x.shape()[j]);
          stride *= x.shape()[j];
        }
        return x(idx);
      },
      name);
}

Shape flatten_shape(const Shape& in, int64_t axis_attr) {
  // ONNX Flatten: axis in [-rank, rank].
  const int64_t r = static_cast<int64_t>(in.size());
  const int64_t axis = axis_attr < 0 ? axis_attr + r : axis_attr;
  if (axis < 0 || axis > r) throw LoomError("axis " + std::to_string(axis_attr) + " is out of range");
  int64_t a = 1, b = 1;
  for (int64_t d = 0; d < r; ++d) (d < axis ? a : b) *= in[d];
  return {a, b};
}

std::vector<int64_t> perm_of(const nlohmann::json& attr, size_t ndim) {
  std::vector<int64_t> perm;
  for (const auto& p : attr) perm.push_back(normalize_axis(p.get<int64_t>(), ndim));
  if (perm.empty()) {
    perm.resize(ndim);
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted.size() != ndim || sorted[i] != static_cast<int64_t>(i))
      throw LoomError("attribute 'perm' " + attr.dump() + " is not a permutation of " + std::to_string(ndim) + " dims");
  return perm;
}

}  // namespace

void register_shape_ops(std::vector<OpDef>& out) {
  out.push_back(injective(
      "reshape", "row-major reshape; in `shape`, 0 copies the input dim and one -1 is inferred",
      {{"shape", nlohmann::json(), "the target shape", {1}}},
      [](const std::vector<Shape>& in, const nlohmann::json& a) { return reshape_target(in[0], a["shape"]); },
      [](const std::vector<Tensor>& in, const nlohmann::json& a, const std::string& name) {
        // The graph validated the target against the graph shape; an ir
        // scalar is [1], which reshapes the same.
        Shape target = reshape_target(in[0].shape(), a["shape"]);
        return lower_reshape(in[0], ir_shape(target), name);
      }));
  out.push_back(injective(
      "flatten", "to 2-D: dims before `axis` and from `axis` on", {{"axis", 1, "first dim of the second part"}},
      [](const std::vector<Shape>& in, const nlohmann::json& a) { return flatten_shape(in[0], a["axis"].get<int64_t>()); },
      [](const std::vector<Tensor>& in, const nlohmann::json& a, const std::string& name) {
        return lower_reshape(in[0], flatten_shape(in[0].shape(), a["axis"].get<int64_t>()), name);
      }));
  out.push_back(injective(
      "transpose", "out dim i is input dim perm[i] (empty perm: reversed)",
      {{"perm", nlohmann::json::array(), "the permutation", {0}}},
      [](const std::vector<Shape>& in, const nlohmann::json& a) {
        auto perm = perm_of(a["perm"], in[0].size());
        Shape s;
        for (int64_t p : perm) s.push_back(in[0][p]);
        return s;
      },
      [](const std::vector<Tensor>& in, const nlohmann::json& a, const std::string& name) {
        const Tensor& x = in[0];
        auto perm = perm_of(a["perm"], x.ndim());
        std::vector<int64_t> shape;
        for (int64_t p : perm) shape.push_back(x.shape()[p]);
        return compute_with_axes(
            shape,
            [&](const std::vector<Var>& v) {
              std::vector<Expr> idx(x.ndim());
              for (size_t i = 0; i < perm.size(); ++i) idx[perm[i]] = v[i];
              return x(idx);
            },
            name);
      }));
  OpDef concat = injective(
      "concat", "inputs joined along `axis`", {{"axis", nlohmann::json(), "the joined axis", 0}},
      [](const std::vector<Shape>& in, const nlohmann::json& a) {
        const int64_t axis = normalize_axis(a["axis"].get<int64_t>(), in[0].size());
        Shape s = in[0];
        for (size_t i = 1; i < in.size(); ++i) {
          if (in[i].size() != s.size()) throw LoomError("input " + std::to_string(i) + " has another rank");
          for (size_t d = 0; d < s.size(); ++d)
            if (static_cast<int64_t>(d) != axis && in[i][d] != s[d])
              throw LoomError("input " + std::to_string(i) + " has shape " + shape_string(in[i]) + ", input 0 " +
                              shape_string(in[0]) + " (only dim " + std::to_string(axis) + " may differ)");
          s[axis] += in[i][axis];
        }
        return s;
      },
      [](const std::vector<Tensor>& in, const nlohmann::json& a, const std::string& name) {
        const int64_t axis = normalize_axis(a["axis"].get<int64_t>(), in[0].ndim());
        std::vector<int64_t> shape = in[0].shape();
        for (size_t i = 1; i < in.size(); ++i) shape[axis] += in[i].shape()[axis];
        return compute_with_axes(
            shape,
            [&](const std::vector<Var>& v) {
              // Nested selects from the last input inwards; each load's index
              // is shifted into its input's range (lazy selects never read
              // out of range).
              std::vector<int64_t> starts;
              int64_t start = 0;
              for (const auto& t : in) {
                starts.push_back(start);
                start += t.shape()[axis];
              }
              auto load_part = [&](size_t i) {
                std::vector<Expr> idx(v.begin(), v.end());
                idx[axis] = v[axis] - Expr(starts[i]);
                return in[i](idx);
              };
              Expr e = load_part(in.size() - 1);
              for (size_t i = in.size() - 1; i-- > 0;) e = select(v[axis] < Expr(starts[i + 1]), load_part(i), e);
              return e;
            },
            name);
      });
  concat.max_inputs = -1;
  out.push_back(std::move(concat));
}

}  // namespace loom::graph::op_detail
