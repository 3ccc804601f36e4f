// ONNX shape ops: Flatten, Reshape, Transpose, Concat, Unsqueeze and
// Squeeze onto Loom ops, or folded on known values; Shape folded (the shape
// computations exporters emit). Slicing, padding and gathering data:
// ops_indexing.cc.
#include <algorithm>
#include <climits>

#include "graph/onnx/importer.h"
#include "graph/ops.h"
#include "ir/error.h"

namespace loom::graph::onnx_detail {

// The tensor of shape `shape` whose element j is src's element index[j]: every
// data-movement fold (Gather, Slice, Concat, Transpose) is one of these.
Known take(const Known& src, Shape shape, const std::vector<int64_t>& index, double fill) {
  Known out;
  out.is_float = src.is_float;
  out.shape = std::move(shape);
  for (int64_t j : index) {
    if (src.is_float) out.f.push_back(j < 0 ? static_cast<float>(fill) : src.f[j]);
    else out.i.push_back(j < 0 ? static_cast<int64_t>(fill) : src.i[j]);
  }
  return out;
}

std::vector<int64_t> source_indices(const Shape& shape, const std::function<int64_t(const std::vector<int64_t>&)>& source) {
  std::vector<int64_t> index;
  for_each_index(shape, [&](const std::vector<int64_t>& idx) { index.push_back(source(idx)); });
  return index;
}

namespace {

// ONNX Reshape's target: 0 copies the input dim, one -1 is inferred.
Shape reshape_target(const Shape& in, const std::vector<int64_t>& spec) {
  Shape out;
  int64_t known = 1;
  int infer = -1;
  for (size_t d = 0; d < spec.size(); ++d) {
    int64_t v = spec[d];
    if (v == 0) {
      if (d >= in.size()) throw LoomError("shape " + ints_string(spec) + ": 0 at dim " + std::to_string(d) + " has no input dim");
      v = in[d];
    }
    if (v == -1) {
      if (infer >= 0) throw LoomError("shape " + ints_string(spec) + " has more than one -1");
      infer = static_cast<int>(d);
    } else if (v < 0) {
      throw LoomError("shape " + ints_string(spec) + " has a bad dimension");
    } else {
      known *= v;
    }
    out.push_back(v);
  }
  const int64_t total = num_elements(in);
  if (infer >= 0) {
    if (known == 0 || total % known != 0) throw LoomError("cannot reshape " + shape_string(in) + " to " + ints_string(spec));
    out[infer] = total / known;
  }
  if (num_elements(out) != total) throw LoomError("cannot reshape " + shape_string(in) + " to " + ints_string(spec));
  return out;
}

// Unsqueeze: the input shape with size-1 dims inserted at `axes` (of the output).
Shape unsqueezed(const Shape& in, const std::vector<int64_t>& axes) {
  const int64_t rank = static_cast<int64_t>(in.size() + axes.size());
  std::vector<bool> inserted(rank, false);
  for (int64_t a : axes) {
    const int64_t d = op_detail::normalize_axis(a, rank);
    if (inserted[d]) throw LoomError("axes " + ints_string(axes) + " repeat an axis");
    inserted[d] = true;
  }
  Shape out;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d) out.push_back(inserted[d] ? 1 : in[next++]);
  return out;
}

// Squeeze: `axes` removed (all size-1 dims when empty).
Shape squeezed(const Shape& in, const std::vector<int64_t>& axes) {
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> removed(rank, false);
  for (int64_t a : axes) {
    const int64_t d = op_detail::normalize_axis(a, rank);
    if (in[d] != 1) throw LoomError("axis " + std::to_string(a) + " has size " + std::to_string(in[d]) + ", not 1");
    removed[d] = true;
  }
  Shape out;
  for (int64_t d = 0; d < rank; ++d)
    if (!(axes.empty() ? in[d] == 1 : removed[d])) out.push_back(in[d]);
  return out;
}

}  // namespace

void Importer::flatten() {
  allow_attrs({"axis"});
  require_inputs(1, 1);
  const int64_t axis = attr_int("axis", 1);
  if (const Known* k = known(in(0))) {
    const int64_t rank = static_cast<int64_t>(k->shape.size());
    const int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a > rank) throw LoomError("attribute axis=" + std::to_string(axis) + " is out of range");
    Known out = *k;
    out.shape = {num_elements(Shape(k->shape.begin(), k->shape.begin() + a)),
                 num_elements(Shape(k->shape.begin() + a, k->shape.end()))};
    set_known(node_->output(0), std::move(out));
    return;
  }
  emit("flatten", {data(in(0))}, {{"axis", axis}}, main_output());
}

void Importer::reshape() {
  std::vector<int64_t> spec;
  if (opset_ < 5) {
    allow_attrs({"shape"});
    require_inputs(1, 1);
    spec = attr_ints("shape", {});
  } else {
    allow_attrs({"allowzero"});
    require_inputs(2, 2);
    spec = const_ints(1, "the shape");
    if (attr_int("allowzero", 0) != 0 && std::count(spec.begin(), spec.end(), 0))
      throw LoomError("attribute allowzero=1 with a 0 in the shape is not supported");
  }
  Shape sizes;
  for (int64_t v : spec) sizes.push_back(v < 0 ? 1 : v);
  checked_elements(sizes, "the shape " + ints_string(spec));
  reshape_to(reshape_target(shape_of(in(0)), spec));
}

// Folded when the input is known (a shape computation), else a reshape node.
void Importer::reshape_to(const Shape& shape) {
  if (const Known* k = known(in(0))) {
    Known out = *k;
    out.shape = shape;
    set_known(node_->output(0), std::move(out));
    return;
  }
  emit("reshape", {data(in(0))}, {{"shape", shape}}, main_output());
}

void Importer::transpose() {
  allow_attrs({"perm"});
  require_inputs(1, 1);
  const auto perm = attr_ints("perm", {});
  if (const Known* k = known(in(0))) {
    const size_t rank = k->shape.size();
    std::vector<int64_t> p = perm;
    if (p.empty())
      for (size_t d = rank; d-- > 0;) p.push_back(static_cast<int64_t>(d));
    std::vector<int64_t> sorted;
    for (int64_t d : p) sorted.push_back(op_detail::normalize_axis(d, rank));
    std::sort(sorted.begin(), sorted.end());
    for (size_t d = 0; d < sorted.size(); ++d)
      if (sorted.size() != rank || sorted[d] != static_cast<int64_t>(d))
        throw LoomError("attribute perm=" + ints_string(perm) + " is not a permutation of " + std::to_string(rank) + " dims");
    Shape shape;
    for (int64_t d : p) shape.push_back(k->shape[op_detail::normalize_axis(d, rank)]);
    const auto st = strides_of(k->shape);
    set_known(node_->output(0), take(*k, shape, source_indices(shape, [&](const std::vector<int64_t>& idx) {
                                  int64_t j = 0;
                                  for (size_t d = 0; d < rank; ++d) j += idx[d] * st[op_detail::normalize_axis(p[d], rank)];
                                  return j;
                                })));
    return;
  }
  emit("transpose", {data(in(0))}, {{"perm", perm}}, main_output());
}

void Importer::concat() {
  allow_attrs({"axis"});
  require_inputs(1, INT_MAX);
  if (!attr("axis")) throw LoomError("attribute axis is missing");
  const int64_t axis = attr_int("axis", 0);
  std::vector<const Known*> parts;
  bool all_known = true, any_int = false;
  for (int i = 0; i < num_inputs(); ++i) {
    const Known* k = known(in(i));
    parts.push_back(k);
    all_known = all_known && k;
    any_int = any_int || (k && !k->is_float);
  }
  if (!all_known || !any_int) {
    std::vector<std::string> inputs;
    for (int i = 0; i < num_inputs(); ++i) inputs.push_back(data(in(i)));
    emit("concat", inputs, {{"axis", axis}}, main_output());
    return;
  }
  // Shape data: the parts stacked into one tensor, then taken in output order.
  const int64_t rank = static_cast<int64_t>(parts[0]->shape.size());
  const int64_t a = op_detail::normalize_axis(axis, rank);
  Known all = known_ints({}, {});
  Shape shape = parts[0]->shape;
  shape[a] = 0;
  std::vector<int64_t> offsets;
  for (const Known* k : parts) {
    if (k->is_float) throw LoomError("mixes integer and float constants");
    if (static_cast<int64_t>(k->shape.size()) != rank) throw LoomError("inputs of different ranks");
    for (int64_t d = 0; d < rank; ++d)
      if (d != a && k->shape[d] != parts[0]->shape[d])
        throw LoomError("inputs of shapes " + shape_string(parts[0]->shape) + " and " + shape_string(k->shape) +
                        " differ outside the axis");
    offsets.push_back(static_cast<int64_t>(all.i.size()));
    all.i.insert(all.i.end(), k->i.begin(), k->i.end());
    shape[a] += k->shape[a];
  }
  const int64_t outer = num_elements(Shape(shape.begin(), shape.begin() + a));
  std::vector<int64_t> index;
  for (int64_t o = 0; o < outer; ++o)
    for (size_t p = 0; p < parts.size(); ++p) {
      const int64_t chunk = num_elements(Shape(parts[p]->shape.begin() + a, parts[p]->shape.end()));
      for (int64_t j = 0; j < chunk; ++j) index.push_back(offsets[p] + o * chunk + j);
    }
  set_known(node_->output(0), take(all, shape, index));
}

// Folded from the static shape.
void Importer::shape() {
  allow_attrs({"start", "end"});
  require_inputs(1, 1);
  const Shape s = shape_of(in(0));
  const int64_t rank = static_cast<int64_t>(s.size());
  auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp(attr_int("start", 0)), end = clamp(attr_int("end", rank));
  std::vector<int64_t> dims(s.begin() + start, s.begin() + std::max(start, end));
  set_known(node_->output(0), known_ints({static_cast<int64_t>(dims.size())}, dims));
}

std::vector<int64_t> Importer::squeeze_axes(bool required) {
  if (opset_ < 13) {
    allow_attrs({"axes"});
    require_inputs(1, 1);
    return attr_ints("axes", {});
  }
  allow_attrs({});
  require_inputs(required ? 2 : 1, 2);
  return has_in(1) ? const_ints(1, "the axes") : std::vector<int64_t>{};
}

void Importer::unsqueeze() { reshape_to(unsqueezed(shape_of(in(0)), squeeze_axes(true))); }

void Importer::squeeze() { reshape_to(squeezed(shape_of(in(0)), squeeze_axes(false))); }

}  // namespace loom::graph::onnx_detail
