// ONNX ops that only make or pass on values: Constant and ConstantOfShape
// (known values), Cast (folded on known values; on data between float and
// bool, booleans being float ones and zeros),
// Identity and Dropout (aliases).
#include "graph/onnx/importer.h"
#include "ir/error.h"

namespace loom::graph::onnx_detail {

void Importer::identity() {
  allow_attrs({});
  require_inputs(1, 1);
  alias(node_->output(0), in(0));
}

void Importer::dropout() {
  allow_attrs({"ratio", "seed", "is_test"});
  require_inputs(1, 3);

  // Training mode drops nothing at ratio 0 (torchvision's Swin calls
  // dropout so in eval mode too).
  const double ratio = has_in(1) ? const_scalar(1, "the ratio") : attr_float("ratio", 0.5f);
  if (has_in(2) && const_scalar(2, "training_mode") != 0 && ratio != 0)
    throw LoomError("training_mode=1 is not supported (inference only)");
  alias(node_->output(0), in(0));
  // In inference the mask keeps every element.
  if (output_used(1)) {
    const Shape shape = shape_of(in(0));
    set_known(node_->output(1), known_ints(shape, std::vector<int64_t>(num_elements(shape), 1)));
  }
}

void Importer::constant() {
  allow_attrs({"value", "value_float", "value_floats", "value_int", "value_ints"});
  require_inputs(0, 0);
  const auto* a = node_->attribute_size() == 1 ? &node_->attribute(0) : nullptr;
  if (!a) throw LoomError("expected exactly one value attribute");
  Known k;
  if (a->name() == "value") {
    expect_type(*a, onnx::AttributeProto::TENSOR, "a tensor");
    k = known_from_proto(a->t());
  } else if (a->name() == "value_float") {
    k.f = {attr_float("value_float", 0)};
  } else if (a->name() == "value_floats") {
    expect_type(*a, onnx::AttributeProto::FLOATS, "a list of floats");
    k.f.assign(a->floats().begin(), a->floats().end());
    k.shape = {static_cast<int64_t>(k.f.size())};
  } else if (a->name() == "value_int") {
    k = known_ints({}, {attr_int("value_int", 0)});
  } else {
    const auto v = attr_ints("value_ints", {});
    k = known_ints({static_cast<int64_t>(v.size())}, v);
  }
  set_known(node_->output(0), std::move(k));
}

// Constants convert between float and integers; on data only float → float
// (a no-op) is accepted.
void Importer::cast() {
  allow_attrs({"to", "saturate"});
  require_inputs(1, 1);
  const int64_t to = attr_int("to", onnx::TensorProto::UNDEFINED);
  const bool to_float = to == onnx::TensorProto::FLOAT;
  const bool to_bool = to == onnx::TensorProto::BOOL;
  const bool to_int = to == onnx::TensorProto::INT64 || to == onnx::TensorProto::INT32 || to_bool;
  if (const Known* k = known(in(0)); k && (to_float || to_int)) {
    Known out;
    out.shape = k->shape;
    out.is_float = to_float;
    for (int64_t j = 0; j < k->size(); ++j) {
      if (to_float) out.f.push_back(static_cast<float>(k->at(j)));
      else if (to_bool) out.i.push_back(k->at(j) != 0);
      else out.i.push_back(k->is_float ? static_cast<int64_t>(k->f[j]) : k->i[j]);
    }
    set_known(node_->output(0), std::move(out));
    return;
  }
  // Booleans on data are float ones and zeros: to float they stay as they
  // are, and float data becomes one or zero.
  const int32_t from = elem_type(in(0));
  const bool from_int = from == onnx::TensorProto::INT64 || from == onnx::TensorProto::INT32;
  const bool float_like = from == onnx::TensorProto::FLOAT || from == onnx::TensorProto::UNDEFINED ||
                          from == onnx::TensorProto::BOOL || from_int;
  // Integer data (an integer input) is already carried as floats.
  if (from_int && to_int && !to_bool && !known(in(0))) {
    alias(float_carried_output(), in(0));
    return;
  }
  if (float_like && to_float && !known(in(0))) {
    alias(main_output(), in(0));
    return;
  }
  if (float_like && to_bool && !known(in(0))) {
    if (from == onnx::TensorProto::BOOL) alias(float_carried_output(), in(0));
    else emit("to_bool", {data(in(0))}, json::object(), float_carried_output());
    return;
  }
  throw LoomError("Cast to " + type_name(static_cast<int32_t>(to)) + " is not supported (only float32 data)");
}

void Importer::constant_of_shape() {
  allow_attrs({"value"});
  require_inputs(1, 1);
  const std::vector<int64_t> dims = const_ints(0, "the shape");
  checked_elements(dims, "the shape");
  Known fill;
  fill.f = {0.0f};
  if (const auto* a = attr("value")) {
    expect_type(*a, onnx::AttributeProto::TENSOR, "a tensor");
    fill = known_from_proto(a->t());
    if (fill.size() != 1) throw LoomError("attribute value must have one element");
  }
  Known out;
  out.is_float = fill.is_float;
  out.shape = dims;
  const int64_t n = checked_elements(out.shape, "the shape");
  if (fill.is_float) out.f.assign(n, fill.f[0]);
  else out.i.assign(n, fill.i[0]);
  set_known(node_->output(0), std::move(out));
}

}  // namespace loom::graph::onnx_detail
