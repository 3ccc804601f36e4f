// Injective ops that read each output element from one place of their
// input: slice, pad (constant, reflect, edge), dilate (zeros between
// elements, as a transposed convolution reads its input), expand, tile and
// take (a gather with constant indices). Their attributes are already resolved to
// one entry per input dim (the importer turns ONNX's optional axes and
// clamped bounds into that form), so shape rules stay one line.
#include <algorithm>

#include "graph/ops.h"
#include "ir/error.h"

namespace loom::graph::op_detail {

namespace {

std::vector<int64_t> ints(const nlohmann::json& a) { return a.get<std::vector<int64_t>>(); }

void expect_rank(const nlohmann::json& a, const char* name, size_t rank) {
  if (a.size() != rank)
    throw LoomError("attribute '" + std::string(name) + "' " + a.dump() + " has " + std::to_string(a.size()) +
                    " entries, the input " + std::to_string(rank) + " dims");
}

// ---- slice: out[o] = x[start + o * step] per dim ----

Shape slice_shape(const Shape& in, const nlohmann::json& a) {
  expect_rank(a["starts"], "starts", in.size());
  expect_rank(a["steps"], "steps", in.size());
  expect_rank(a["sizes"], "sizes", in.size());
  const auto starts = ints(a["starts"]), steps = ints(a["steps"]), sizes = ints(a["sizes"]);
  for (size_t d = 0; d < in.size(); ++d) {
    if (steps[d] == 0) throw LoomError("a step of 0 at dim " + std::to_string(d));
    if (sizes[d] < 1) throw LoomError("an empty slice at dim " + std::to_string(d));
    const int64_t last = starts[d] + (sizes[d] - 1) * steps[d];
    if (starts[d] < 0 || starts[d] >= in[d] || last < 0 || last >= in[d])
      throw LoomError("dim " + std::to_string(d) + ": start " + std::to_string(starts[d]) + ", step " +
                      std::to_string(steps[d]) + ", size " + std::to_string(sizes[d]) + " leave the input's " +
                      std::to_string(in[d]));
  }
  return sizes;
}

Tensor lower_slice(const Tensor& x, const nlohmann::json& a, const std::string& name) {
  const auto starts = ints(a["starts"]), steps = ints(a["steps"]);
  return compute_with_axes(
      ints(a["sizes"]),
      [&](const std::vector<Var>& v) {
        std::vector<Expr> idx;
        for (size_t d = 0; d < v.size(); ++d) idx.push_back(Expr(starts[d]) + v[d] * Expr(steps[d]));
        return x(idx);
      },
      name);
}

// ---- pad: pads [begin_0, ..., begin_n-1, end_0, ..., end_n-1], each >= 0 ----

Shape pad_shape(const Shape& in, const nlohmann::json& a) {
  const auto pads = ints(a["pads"]);
  if (pads.size() != 2 * in.size())
    throw LoomError("attribute 'pads' has " + std::to_string(pads.size()) + " entries, expected " +
                    std::to_string(2 * in.size()) + " (begin and end per dim)");
  const std::string mode = a["mode"].get<std::string>();
  Shape out = in;
  for (size_t d = 0; d < in.size(); ++d) {
    const int64_t b = pads[d], e = pads[d + in.size()];
    if (b < 0 || e < 0) throw LoomError("negative pads " + a["pads"].dump() + " (a crop is a slice)");
    if (mode == "reflect" && (b >= in[d] || e >= in[d]) && (b > 0 || e > 0))
      throw LoomError("reflect pads " + a["pads"].dump() + " reach past dim " + std::to_string(d) + " of size " +
                      std::to_string(in[d]));
    out[d] = in[d] + b + e;
  }
  return out;
}

Tensor lower_pad(const Tensor& x, const nlohmann::json& a, const std::string& name) {
  const auto pads = ints(a["pads"]);
  const std::string mode = a["mode"].get<std::string>();
  const size_t rank = x.ndim();
  std::vector<int64_t> shape = x.shape();
  for (size_t d = 0; d < rank; ++d) shape[d] += pads[d] + pads[d + rank];
  const double value = a["value"].get<double>();
  return compute_with_axes(
      shape,
      [&](const std::vector<Var>& v) {
        std::vector<Expr> idx;
        Expr inside = bool_imm(true);
        for (size_t d = 0; d < rank; ++d) {
          const int64_t n = x.shape()[d];
          Expr i = v[d] - Expr(pads[d]);
          if (pads[d] == 0 && pads[d + rank] == 0) {
            idx.push_back(i);
            continue;
          }
          if (mode == "reflect") {
            // (n-1) - |(n-1) - |i||: mirrors about 0 and n-1 (pads < n).
            Expr abs_i = max(i, -i);
            Expr m = Expr(n - 1) - abs_i;
            idx.push_back(Expr(n - 1) - max(m, -m));
          } else {
            // edge, and constant (whose loads outside are replaced by the value)
            idx.push_back(min(max(i, Expr(int64_t{0})), Expr(n - 1)));
            if (mode == "constant") inside = inside && i >= Expr(int64_t{0}) && i < Expr(n);
          }
        }
        Expr e = x(idx);
        return mode == "constant" ? select(inside, e, float_imm(value)) : e;
      },
      name);
}

// ---- dilate: stride-1 zeros between elements, then pads (negative: crop) ----

Shape dilate_shape(const Shape& in, const nlohmann::json& a) {
  expect_rank(a["strides"], "strides", in.size());
  const auto strides = ints(a["strides"]), pads = ints(a["pads"]);
  if (pads.size() != 2 * in.size())
    throw LoomError("attribute 'pads' has " + std::to_string(pads.size()) + " entries, expected " +
                    std::to_string(2 * in.size()));
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (strides[d] < 1) throw LoomError("attribute 'strides' " + a["strides"].dump() + " has a stride below 1");
    out.push_back((in[d] - 1) * strides[d] + 1 + pads[d] + pads[d + in.size()]);
    if (out.back() < 1) throw LoomError("dim " + std::to_string(d) + " is cropped away by pads " + a["pads"].dump());
  }
  return out;
}

Tensor lower_dilate(const Tensor& x, const nlohmann::json& a, const std::string& name) {
  const auto strides = ints(a["strides"]), pads = ints(a["pads"]);
  const size_t rank = x.ndim();
  std::vector<int64_t> shape;
  for (size_t d = 0; d < rank; ++d) shape.push_back((x.shape()[d] - 1) * strides[d] + 1 + pads[d] + pads[d + rank]);
  return compute_with_axes(
      shape,
      [&](const std::vector<Var>& v) {
        std::vector<Expr> idx;
        Expr inside = bool_imm(true);
        for (size_t d = 0; d < rank; ++d) {
          const int64_t n = x.shape()[d], s = strides[d];
          Expr i = v[d] - Expr(pads[d]);
          if (s == 1 && pads[d] == 0 && pads[d + rank] == 0) {
            idx.push_back(i);
            continue;
          }
          inside = inside && i >= Expr(int64_t{0}) && i <= Expr((n - 1) * s);
          if (s > 1) inside = inside && i % Expr(s) == Expr(int64_t{0});
          // Clamped, so that the load stays in range wherever the select
          // discards it.
          idx.push_back(min(max(i, Expr(int64_t{0})), Expr((n - 1) * s)) / Expr(s));
        }
        return select(inside, x(idx), float_imm(0.0));
      },
      name);
}

// ---- gather: rows of `table` picked by the integer values of `indices` ----

Shape gather_shape(const std::vector<Shape>& in, const nlohmann::json& a) {
  const Shape& t = in[0];
  if (in[1].empty()) throw LoomError("a scalar index is not supported (the indices need a dim)");
  const int64_t axis = normalize_axis(a["axis"].get<int64_t>(), t.size());
  Shape out(t.begin(), t.begin() + axis);
  out.insert(out.end(), in[1].begin(), in[1].end());
  out.insert(out.end(), t.begin() + axis + 1, t.end());
  return out;
}

Tensor lower_gather(const Tensor& table, const Tensor& indices, const nlohmann::json& a, const Shape& index_shape,
                    const std::string& name) {
  const int64_t axis = normalize_axis(a["axis"].get<int64_t>(), table.ndim());
  const int64_t n = table.shape()[axis];
  const size_t k = index_shape.size();
  std::vector<int64_t> shape(table.shape().begin(), table.shape().begin() + axis);
  shape.insert(shape.end(), index_shape.begin(), index_shape.end());
  shape.insert(shape.end(), table.shape().begin() + axis + 1, table.shape().end());
  return compute_with_axes(
      shape,
      [&](const std::vector<Var>& v) {
        std::vector<Expr> at;
        for (size_t j = 0; j < k; ++j) at.push_back(v[axis + j]);
        // Integers carried as floats; negative ones count from the end, and
        // the row is clamped into the table (ONNX leaves others undefined).
        Expr i = cast(DType::kInt, indices(at));
        i = select(i < Expr(int64_t{0}), i + Expr(n), i);
        std::vector<Expr> idx(v.begin(), v.begin() + axis);
        idx.push_back(min(max(i, Expr(int64_t{0})), Expr(n - 1)));
        for (size_t d = axis + k; d < v.size(); ++d) idx.push_back(v[d]);
        return table(idx);
      },
      name);
}

// ---- expand and tile ----

Shape expand_shape(const Shape& in, const nlohmann::json& a) { return broadcast_shapes(in, ints(a["shape"])); }

Shape tile_shape(const Shape& in, const nlohmann::json& a) {
  expect_rank(a["repeats"], "repeats", in.size());
  Shape out = in;
  const auto r = ints(a["repeats"]);
  for (size_t d = 0; d < in.size(); ++d) {
    if (r[d] < 1) throw LoomError("attribute 'repeats' " + a["repeats"].dump() + " has a count below 1");
    out[d] *= r[d];
  }
  return out;
}

// ---- take: out = x with dim `axis` replaced by the constant `indices` ----

Shape take_shape(const Shape& in, const nlohmann::json& a) {
  const int64_t axis = normalize_axis(a["axis"].get<int64_t>(), in.size());
  const auto indices = ints(a["indices"]);
  if (indices.empty()) throw LoomError("attribute 'indices' is empty");
  for (int64_t i : indices)
    if (i < 0 || i >= in[axis])
      throw LoomError("index " + std::to_string(i) + " is out of range for dim " + std::to_string(axis) + " of size " +
                      std::to_string(in[axis]));
  Shape out = in;
  out[axis] = static_cast<int64_t>(indices.size());
  return out;
}

Tensor lower_take(const Tensor& x, const nlohmann::json& a, const std::string& name) {
  const int64_t axis = normalize_axis(a["axis"].get<int64_t>(), x.ndim());
  const auto indices = ints(a["indices"]);
  std::vector<int64_t> shape = x.shape();
  shape[axis] = static_cast<int64_t>(indices.size());
  // An arithmetic progression is one affine index; other lists pick by a
  // chain of selects over the position (each branch's load in range).
  bool affine = true;
  for (size_t k = 2; k < indices.size(); ++k) affine = affine && indices[k] - indices[k - 1] == indices[1] - indices[0];
  return compute_with_axes(
      shape,
      [&](const std::vector<Var>& v) {
        auto load_at = [&](Expr i) {
          std::vector<Expr> idx(v.begin(), v.end());
          idx[axis] = i;
          return x(idx);
        };
        if (affine) {
          const int64_t step = indices.size() > 1 ? indices[1] - indices[0] : 0;
          return load_at(Expr(indices[0]) + v[axis] * Expr(step));
        }
        Expr e = load_at(Expr(indices.back()));
        for (size_t k = indices.size() - 1; k-- > 0;)
          e = select(v[axis] == Expr(static_cast<int64_t>(k)), load_at(Expr(indices[k])), e);
        return e;
      },
      name);
}

// The ops here take one input: their shape and lowering as functions of it.
OpDef one_input(const std::string& name, const std::string& doc, std::vector<OpAttr> attrs,
                Shape (*shape)(const Shape&, const nlohmann::json&),
                Tensor (*lower)(const Tensor&, const nlohmann::json&, const std::string&)) {
  return injective(
      name, doc, std::move(attrs),
      [shape](const std::vector<Shape>& in, const nlohmann::json& a) { return shape(in[0], a); },
      [lower](const std::vector<Tensor>& in, const nlohmann::json& a, const std::string& n) { return lower(in[0], a, n); });
}

}  // namespace

void register_indexing_ops(std::vector<OpDef>& out) {
  out.push_back(one_input(
      "slice", "out[o] = x[start + o * step] per dim",
      {{"starts", nlohmann::json(), "first index per dim", {0}},
       {"steps", nlohmann::json(), "step per dim (negative: backwards)", {0}},
       {"sizes", nlohmann::json(), "output size per dim", {0}}},
      slice_shape, lower_slice));
  out.push_back(one_input(
      "pad", "x surrounded by pads: the constant `value`, a mirror without the edge (reflect) or the edge repeated",
      {{"pads", nlohmann::json(), "[begin per dim..., end per dim...], each >= 0", {0}},
       {"mode", "constant", "constant, reflect or edge", nullptr, {"constant", "reflect", "edge"}},
       {"value", 0.0, "the constant"}},
      pad_shape, lower_pad));
  out.push_back(one_input(
      "dilate", "x with strides[d] - 1 zeros between elements along dim d, then pads (negative ones crop)",
      {{"strides", nlohmann::json(), "spacing per dim", {1}},
       {"pads", nlohmann::json(), "[begin per dim..., end per dim...]", {0}}},
      dilate_shape, lower_dilate));
  out.push_back(make_op(
      "gather", "table's dim `axis` indexed by the integer values of `indices` (an embedding lookup)", 2, 2,
      OpPattern::kInjective, {{"axis", 0, "the indexed dim of the table"}},
      [](const std::vector<Shape>& in, const nlohmann::json& a) { return gather_shape(in, a); },
      [](const std::vector<Tensor>& in, const nlohmann::json& a, const std::string& name) {
        return lower_gather(in[0], in[1], a, in[1].shape(), name);
      }));
  out.push_back(injective(
      "expand", "x broadcast to `shape` (numpy rules, both ways)", {{"shape", nlohmann::json(), "the shape", {1}}},
      [](const std::vector<Shape>& in, const nlohmann::json& a) { return expand_shape(in[0], a); },
      [](const std::vector<Tensor>& in, const nlohmann::json& a, const std::string& name) {
        const Tensor& x = in[0];
        return compute_with_axes(
            ir_shape(broadcast_shapes(x.shape(), ints(a["shape"]))),
            [&](const std::vector<Var>& v) { return x(broadcast_indices(x, v)); }, name);
      }));
  out.push_back(injective(
      "tile", "x repeated `repeats` times along each dim", {{"repeats", nlohmann::json(), "count per dim", {1}}},
      [](const std::vector<Shape>& in, const nlohmann::json& a) { return tile_shape(in[0], a); },
      [](const std::vector<Tensor>& in, const nlohmann::json& a, const std::string& name) {
        const Tensor& x = in[0];
        const auto r = ints(a["repeats"]);
        std::vector<int64_t> shape = x.shape();
        for (size_t d = 0; d < shape.size(); ++d) shape[d] *= r[d];
        return compute_with_axes(
            shape,
            [&](const std::vector<Var>& v) {
              std::vector<Expr> idx;
              for (size_t d = 0; d < v.size(); ++d)
                idx.push_back(r[d] == 1 ? Expr(v[d]) : v[d] % Expr(x.shape()[d]));
              return x(idx);
            },
            name);
      }));
  out.push_back(one_input(
      "take", "x's dim `axis` replaced by the entries `indices` of it (a gather with constant indices)",
      {{"axis", nlohmann::json(), "the gathered dim", 0}, {"indices", nlohmann::json(), "the indices (each in range)", {0}}},
      take_shape, lower_take));
}

}  // namespace loom::graph::op_detail
