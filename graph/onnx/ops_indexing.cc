// ONNX ops that select, repeat or pad data: Slice, Split, Gather (constant
// indices), Expand, Tile, Pad and Resize. On known values they fold (the
// shape computations exporters emit); on data they become Loom's slice,
// take, expand, tile, pad and resize, with every bound resolved here to one
// entry per dim, so the Loom op's attributes say exactly what it reads.
#include <algorithm>
#include <climits>
#include <cmath>

#include "graph/onnx/importer.h"
#include "graph/ops.h"
#include "ir/error.h"

namespace loom::graph::onnx_detail {

namespace {

// ONNX Slice's bounds on a dim of size `dim`, clamped as ONNX does: the
// first index and the count (0: empty).
std::pair<int64_t, int64_t> slice_bounds(int64_t dim, int64_t start, int64_t end, int64_t step) {
  int64_t s = start < 0 ? start + dim : start;
  int64_t e = end < 0 ? end + dim : end;
  if (step > 0) {
    s = std::clamp<int64_t>(s, 0, dim);
    e = std::clamp<int64_t>(e, 0, dim);
    return {s, std::max<int64_t>(0, (e - s + step - 1) / step)};
  }
  s = std::clamp<int64_t>(s, 0, dim - 1);
  e = std::clamp<int64_t>(e, -1, dim - 1);
  return {s, std::max<int64_t>(0, (s - e - step - 1) / -step)};
}

// A rational p / q near `x` (continued fractions, q <= 10000): the scale
// that produced an integer output size.
std::pair<int64_t, int64_t> fraction_of(double x) {
  int64_t p0 = 0, q0 = 1, p1 = 1, q1 = 0;
  double r = x;
  for (int k = 0; k < 32; ++k) {
    const double a = std::floor(r);
    const int64_t p2 = static_cast<int64_t>(a) * p1 + p0, q2 = static_cast<int64_t>(a) * q1 + q0;
    if (q2 > 10000) break;
    p0 = p1, q0 = q1, p1 = p2, q1 = q2;
    if (std::fabs(static_cast<double>(p1) / static_cast<double>(q1) - x) < 1e-9 * std::max(1.0, x)) break;
    if (r - a < 1e-12) break;
    r = 1.0 / (r - a);
  }
  return {p1, q1};
}

}  // namespace

// `value` sliced to first[d] + k * step[d], k < size[d]: folded when known,
// else a slice node.
void Importer::emit_slice(const std::string& value, const std::vector<int64_t>& first,
                          const std::vector<int64_t>& step, const Shape& size, const std::string& output,
                          const std::string& suffix) {
  if (const Known* k = known(value)) {
    const auto strides = strides_of(k->shape);
    set_known(output, take(*k, size, source_indices(size, [&](const std::vector<int64_t>& idx) {
                        int64_t j = 0;
                        for (size_t a = 0; a < size.size(); ++a) j += (first[a] + idx[a] * step[a]) * strides[a];
                        return j;
                      })));
    return;
  }
  if (num_elements(size) == 0) throw LoomError("an empty slice of data " + shape_string(size) + " is not supported");
  emit("slice", {data(value)}, {{"starts", first}, {"steps", step}, {"sizes", size}}, output, suffix);
}

void Importer::slice() {
  std::vector<int64_t> starts, ends, axes, steps;
  if (opset_ < 10) {
    allow_attrs({"starts", "ends", "axes"});
    require_inputs(1, 1);
    starts = attr_ints("starts", {});
    ends = attr_ints("ends", {});
    axes = attr_ints("axes", {});
  } else {
    allow_attrs({});
    require_inputs(3, 5);
    starts = const_ints(1, "the starts");
    ends = const_ints(2, "the ends");
    if (has_in(3)) axes = const_ints(3, "the axes");
    if (has_in(4)) steps = const_ints(4, "the steps");
  }
  const Shape shape = shape_of(in(0));
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    throw LoomError("starts, ends, axes and steps differ in length");
  std::vector<int64_t> first(rank, 0), step(rank, 1);
  Shape size = shape;
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t a = op_detail::normalize_axis(axes[k], rank);
    if (steps[k] == 0) throw LoomError("a step of 0");
    if (shape[a] == 0) continue;
    std::tie(first[a], size[a]) = slice_bounds(shape[a], starts[k], ends[k], steps[k]);
    step[a] = steps[k];
  }
  emit_slice(in(0), first, step, size, known(in(0)) ? node_->output(0) : main_output());
}

// One slice per output along `axis`: sizes from the split input (opset 13)
// or attribute, else equal parts (the last one smaller from opset 18).
void Importer::split() {
  std::vector<int64_t> parts;
  if (opset_ < 13) {
    allow_attrs({"axis", "split"});
    require_inputs(1, 1);
    parts = attr_ints("split", {});
  } else {
    allow_attrs({"axis", "num_outputs"});
    require_inputs(1, 2);
    if (has_in(1)) parts = const_ints(1, "the split sizes");
  }
  const Shape shape = shape_of(in(0));
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t axis = op_detail::normalize_axis(attr_int("axis", 0), rank);
  const int64_t n = node_->output_size();
  if (parts.empty()) {
    const int64_t count = attr_int("num_outputs", n);
    if (count != n) throw LoomError("num_outputs=" + std::to_string(count) + " but " + std::to_string(n) + " outputs");
    const int64_t each = (shape[axis] + n - 1) / n;
    for (int64_t k = 0; k < n; ++k) parts.push_back(std::min(each, shape[axis] - k * each));
    if (opset_ < 18 && shape[axis] % n != 0)
      throw LoomError("dim " + std::to_string(axis) + " of size " + std::to_string(shape[axis]) +
                      " does not split into " + std::to_string(n) + " equal parts");
  }
  if (static_cast<int64_t>(parts.size()) != n)
    throw LoomError(std::to_string(parts.size()) + " split sizes for " + std::to_string(n) + " outputs");
  int64_t total = 0;
  for (int64_t p : parts) {
    if (p < 0) throw LoomError("a negative split size");
    total += p;
  }
  if (total != shape[axis])
    throw LoomError("split sizes " + ints_string(parts) + " add up to " + std::to_string(total) + ", not dim " +
                    std::to_string(axis) + "'s " + std::to_string(shape[axis]));
  int64_t offset = 0;
  bool first_emitted = false;
  for (int64_t k = 0; k < n; ++k) {
    const std::string& out = node_->output(k);
    if (!out.empty() && (known(in(0)) || consumed_.count(out))) {
      std::vector<int64_t> first(rank, 0), step(rank, 1);
      Shape size = shape;
      first[axis] = offset;
      size[axis] = parts[k];
      if (!known(in(0))) check_float(out);
      emit_slice(in(0), first, step, size, out, first_emitted ? "part" + std::to_string(k) : "");
      first_emitted = first_emitted || !known(in(0));
    }
    offset += parts[k];
  }
}

// Gather with constant indices: folded on known data; on data a take node
// (and a reshape for scalar or multi-dim indices).
void Importer::gather() {
  allow_attrs({"axis"});
  require_inputs(2, 2);
  if (!constant_data(in(1))) {
    // Indices computed or given at run time (token ids): an embedding lookup.
    const Shape table = shape_of(in(0));
    const int64_t axis = op_detail::normalize_axis(attr_int("axis", 0), table.size());
    const std::string indices = data(in(1));
    if (auto it = integer_inputs_.find(indices); it != integer_inputs_.end())
      it->second = std::max(it->second, table[axis]);
    emit("gather", {data(in(0)), indices}, {{"axis", axis}}, main_output());
    return;
  }
  const std::vector<int64_t> indices = const_ints(1, "the indices");
  const Shape index_shape = constant_data(in(1))->shape;
  const Shape shape = shape_of(in(0));
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t axis = op_detail::normalize_axis(attr_int("axis", 0), rank);
  const int64_t n = shape[axis];
  std::vector<int64_t> resolved;
  for (int64_t v : indices) {
    const int64_t j = v < 0 ? v + n : v;
    if (j < 0 || j >= n) throw LoomError("index " + std::to_string(v) + " is out of range for size " + std::to_string(n));
    resolved.push_back(j);
  }
  Shape out_shape(shape.begin(), shape.begin() + axis);
  out_shape.insert(out_shape.end(), index_shape.begin(), index_shape.end());
  out_shape.insert(out_shape.end(), shape.begin() + axis + 1, shape.end());
  if (const Known* d = known(in(0))) {
    const int64_t outer = num_elements(Shape(shape.begin(), shape.begin() + axis));
    const int64_t inner = num_elements(Shape(shape.begin() + axis + 1, shape.end()));
    std::vector<int64_t> index;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j : resolved)
        for (int64_t i = 0; i < inner; ++i) index.push_back((o * n + j) * inner + i);
    set_known(node_->output(0), take(*d, out_shape, index));
    return;
  }
  if (resolved.empty()) throw LoomError("an empty gather of data is not supported");
  Shape taken = shape;
  taken[axis] = static_cast<int64_t>(resolved.size());
  const std::string output = main_output();
  if (taken == out_shape) {
    emit("take", {data(in(0))}, {{"axis", axis}, {"indices", resolved}}, output);
    return;
  }
  const std::string t = emit("take", {data(in(0))}, {{"axis", axis}, {"indices", resolved}}, "", "take");
  emit("reshape", {t}, {{"shape", out_shape}}, output);
}

void Importer::expand() {
  allow_attrs({});
  require_inputs(2, 2);
  const std::vector<int64_t> target = const_ints(1, "the shape");
  checked_elements(target, "the shape " + ints_string(target));
  const Shape shape = op_detail::broadcast_shapes(shape_of(in(0)), target);
  if (const Known* k = known(in(0))) {
    Known like = known_ints(shape, std::vector<int64_t>(num_elements(shape), 0));
    set_known(node_->output(0), fold_broadcast({k, &like}, k->is_float, [](const std::vector<long double>& v) { return v[0]; }));
    return;
  }
  if (shape == shape_of(in(0))) {
    alias(main_output(), in(0));
    return;
  }
  emit("expand", {data(in(0))}, {{"shape", shape}}, main_output());
}

void Importer::tile() {
  allow_attrs({});
  require_inputs(2, 2);
  const std::vector<int64_t> repeats = const_ints(1, "the repeats");
  const Shape shape = shape_of(in(0));
  if (repeats.size() != shape.size())
    throw LoomError("repeats " + ints_string(repeats) + " for " + std::to_string(shape.size()) + " dims");
  Shape out = shape;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (repeats[d] < 1) throw LoomError("repeats " + ints_string(repeats) + " has a count below 1");
    out[d] *= repeats[d];
  }
  checked_elements(out, "the tiled shape");
  if (const Known* k = known(in(0))) {
    const auto strides = strides_of(shape);
    set_known(node_->output(0), take(*k, out, source_indices(out, [&](const std::vector<int64_t>& idx) {
                                  int64_t j = 0;
                                  for (size_t d = 0; d < shape.size(); ++d) j += (idx[d] % shape[d]) * strides[d];
                                  return j;
                                })));
    return;
  }
  emit("tile", {data(in(0))}, {{"repeats", repeats}}, main_output());
}

// ScatterND on known values (the index arithmetic of shifted-window
// attention masks): folded; on data it is not a Loom op.
void Importer::scatter_nd() {
  allow_attrs({"reduction"});
  require_inputs(3, 3);
  const std::string reduction = attr_string("reduction", "none");
  const Known* d = known(in(0));
  const Known* u = known(in(2));
  if (!d || !u) throw LoomError("ScatterND of non-constant data is not supported (only constant data is folded)");
  const std::vector<int64_t> indices = const_ints(1, "the indices");
  const Shape index_shape = constant_data(in(1))->shape;
  if (index_shape.empty()) throw LoomError("the indices must have at least one dim");
  const int64_t depth = index_shape.back();
  const int64_t rank = static_cast<int64_t>(d->shape.size());
  if (depth < 1 || depth > rank) throw LoomError("index tuples of length " + std::to_string(depth) + " for rank " + std::to_string(rank));
  const auto strides = strides_of(d->shape);
  const int64_t slice = num_elements(Shape(d->shape.begin() + depth, d->shape.end()));
  const int64_t count = static_cast<int64_t>(indices.size()) / depth;
  if (u->size() != count * slice) throw LoomError("updates of " + std::to_string(u->size()) + " values, expected " +
                                                  std::to_string(count * slice));
  Known out = *d;
  if (!u->is_float && out.is_float) throw LoomError("integer updates into float data");
  for (int64_t k = 0; k < count; ++k) {
    int64_t base = 0;
    for (int64_t j = 0; j < depth; ++j) {
      int64_t v = indices[k * depth + j];
      if (v < 0) v += d->shape[j];
      if (v < 0 || v >= d->shape[j]) throw LoomError("index " + std::to_string(indices[k * depth + j]) + " is out of range");
      base += v * strides[j];
    }
    for (int64_t e = 0; e < slice; ++e) {
      const double upd = u->at(k * slice + e);
      const double cur = out.at(base + e);
      double v = upd;
      if (reduction == "add") v = cur + upd;
      else if (reduction == "mul") v = cur * upd;
      else if (reduction == "max") v = std::max(cur, upd);
      else if (reduction == "min") v = std::min(cur, upd);
      else if (reduction != "none") throw LoomError("attribute reduction=" + reduction + " is not supported");
      if (out.is_float) out.f[base + e] = static_cast<float>(v);
      else out.i[base + e] = static_cast<int64_t>(v);
    }
  }
  set_known(node_->output(0), std::move(out));
}

// Pad: zero pads are an alias; others a pad node (constant, reflect, edge).
void Importer::pad() {
  std::vector<int64_t> pads;
  std::string mode;
  double value = 0;
  const Shape shape = shape_of(in(0));
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (opset_ < 11) {
    allow_attrs({"mode", "pads", "value"});
    require_inputs(1, 1);
    pads = attr_ints("pads", {});
    value = attr_float("value", 0.0f);
  } else {
    allow_attrs({"mode"});
    require_inputs(1, 4);
    pads = const_ints(1, "the pads");
    if (has_in(2)) value = const_scalar(2, "the constant value");
    if (has_in(3)) {
      // The axes the pads apply to: spread onto every dim.
      const std::vector<int64_t> axes = const_ints(3, "the axes");
      if (pads.size() != 2 * axes.size()) throw LoomError("pads " + ints_string(pads) + " for " + ints_string(axes));
      std::vector<int64_t> full(2 * rank, 0);
      for (size_t k = 0; k < axes.size(); ++k) {
        const int64_t a = op_detail::normalize_axis(axes[k], rank);
        full[a] = pads[k];
        full[a + rank] = pads[k + axes.size()];
      }
      pads = full;
    }
  }
  mode = attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    throw LoomError("attribute mode=" + mode + " is not supported (constant, reflect, edge)");
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    throw LoomError("pads " + ints_string(pads) + " for " + std::to_string(rank) + " dims");
  if (std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; })) {
    alias(main_output(), in(0));
    return;
  }
  if (const Known* k = known(in(0))) {
    // Folded: each output element from its source index, or the constant.
    Shape out = shape;
    for (int64_t d = 0; d < rank; ++d) out[d] += pads[d] + pads[d + rank];
    checked_elements(out, "the padded shape");
    const auto strides = strides_of(shape);
    const std::vector<int64_t> index = source_indices(out, [&](const std::vector<int64_t>& idx) {
      int64_t j = 0;
      for (int64_t d = 0; d < rank; ++d) {
        int64_t i = idx[d] - pads[d];
        const int64_t n = shape[d];
        if (mode == "edge") i = std::clamp<int64_t>(i, 0, n - 1);
        if (mode == "reflect" && n > 1)
          while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
        if (i < 0 || i >= n) return int64_t{-1};  // the constant
        j += i * strides[d];
      }
      return j;
    });
    set_known(node_->output(0), take(*k, out, index, value));
    return;
  }
  // Negative pads crop: a slice first, then the non-negative pads.
  std::string source = data(in(0));
  if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; })) {
    std::vector<int64_t> first(rank, 0), step(rank, 1);
    Shape size = shape;
    for (int64_t d = 0; d < rank; ++d) {
      first[d] = std::max<int64_t>(0, -pads[d]);
      size[d] = shape[d] - first[d] - std::max<int64_t>(0, -pads[d + rank]);
      if (size[d] < 1) throw LoomError("pads " + ints_string(pads) + " crop dim " + std::to_string(d) + " away");
      pads[d] = std::max<int64_t>(0, pads[d]);
      pads[d + rank] = std::max<int64_t>(0, pads[d + rank]);
    }
    source = emit("slice", {source}, {{"starts", first}, {"steps", step}, {"sizes", size}}, "", "crop");
  }
  emit("pad", {source}, {{"pads", pads}, {"mode", mode}, {"value", value}}, main_output());
}

// Resize (opset 10 on: X, roi, scales, sizes; opset 10 itself: X, scales).
void Importer::resize() {
  allow_attrs({"mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside",
               "extrapolation_value", "antialias", "keep_aspect_ratio_policy", "axes"});
  require_inputs(1, 4);  // roi, scales and sizes may each be empty
  const std::string mode = attr_string("mode", "nearest");
  if (mode != "nearest" && mode != "linear") throw LoomError("attribute mode=" + mode + " is not supported (nearest, linear)");
  const std::string transform =
      opset_ < 11 ? "asymmetric" : attr_string("coordinate_transformation_mode", "half_pixel");
  if (transform == "tf_crop_and_resize") throw LoomError("coordinate_transformation_mode=tf_crop_and_resize is not supported");
  if (attr_int("exclude_outside", 0) != 0) throw LoomError("attribute exclude_outside=1 is not supported");
  if (attr_int("antialias", 0) != 0) throw LoomError("attribute antialias=1 is not supported");
  if (attr("axes")) throw LoomError("attribute axes is not supported");
  const std::string rounding = opset_ < 11 ? "round_prefer_floor" : attr_string("nearest_mode", "round_prefer_floor");
  const Shape shape = shape_of(in(0));
  const size_t rank = shape.size();
  std::vector<double> scales;
  Shape sizes;
  const int scales_input = opset_ < 11 ? 1 : 2;
  if (has_in(scales_input) && const_input(scales_input, "the scales").size() > 0) {
    const Known& k = const_input(scales_input, "the scales");
    for (int64_t j = 0; j < k.size(); ++j) scales.push_back(k.at(j));
  }
  if (opset_ >= 11 && has_in(3)) sizes = const_ints(3, "the sizes");
  if (scales.empty() == sizes.empty()) throw LoomError("exactly one of scales and sizes must be given");
  if (!scales.empty() && scales.size() != rank) throw LoomError("scales for " + std::to_string(scales.size()) + " dims");
  if (!sizes.empty() && sizes.size() != rank) throw LoomError("sizes for " + std::to_string(sizes.size()) + " dims");
  std::vector<int64_t> num(rank), den(rank);
  if (sizes.empty())
    for (size_t d = 0; d < rank; ++d) {
      if (!(scales[d] > 0)) throw LoomError("a scale of " + std::to_string(scales[d]));
      sizes.push_back(static_cast<int64_t>(std::floor(shape[d] * scales[d])));
      std::tie(num[d], den[d]) = fraction_of(scales[d]);
    }
  else
    for (size_t d = 0; d < rank; ++d) num[d] = sizes[d], den[d] = shape[d];
  checked_elements(sizes, "the resized shape");
  emit("resize", {data(in(0))},
       {{"sizes", sizes},
        {"scale_num", num},
        {"scale_den", den},
        {"mode", mode},
        {"coordinate_transformation_mode", transform},
        {"nearest_mode", rounding}},
       main_output());
}

}  // namespace loom::graph::onnx_detail
