// Reading ONNX's protobuf files and decoding TensorProtos into the values the
// importer knows at import time (graph/onnx/importer.h), with the index
// arithmetic the folds share.
#include <algorithm>
#include <cctype>
#include <climits>
#include <cstring>
#include <fstream>
#include <sstream>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "graph/onnx/importer.h"
#include "ir/error.h"

namespace loom::graph::onnx_detail {

namespace {

template <class T>
void copy_raw(const std::string& raw, int64_t n, std::vector<T>* out) {
  if (static_cast<int64_t>(raw.size()) != n * static_cast<int64_t>(sizeof(T)))
    throw LoomError("raw data has " + std::to_string(raw.size()) + " bytes, expected " +
                    std::to_string(n * sizeof(T)));
  out->resize(n);
  if (n) std::memcpy(out->data(), raw.data(), raw.size());  // ONNX raw data is little-endian, as the host
}

template <class Field, class T>
void copy_field(const Field& field, int64_t n, std::vector<T>* out) {
  if (static_cast<int64_t>(field.size()) != n)
    throw LoomError(std::to_string(field.size()) + " values, expected " + std::to_string(n));
  out->assign(field.begin(), field.end());
}

}  // namespace

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw LoomError(path + ": cannot open the file");
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw LoomError(path + ": cannot read the file");
  return s.str();
}

// Protobuf's default size limit is below the size of large models.
bool parse_message(const std::string& bytes, google::protobuf::MessageLite* msg) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) return false;
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream in(&raw);
  in.SetTotalBytesLimit(INT_MAX);
  return msg->ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
}

std::string type_name(int32_t elem_type) {
  std::string s = onnx::TensorProto_DataType_IsValid(elem_type)
                      ? onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem_type))
                      : "type " + std::to_string(elem_type);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string ints_string(const std::vector<int64_t>& v) { return json(v).dump(); }

Known known_ints(Shape shape, std::vector<int64_t> values) {
  Known k;
  k.is_float = false;
  k.shape = std::move(shape);
  k.i = std::move(values);
  return k;
}

Known known_from_proto(const onnx::TensorProto& t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL) throw LoomError("external tensor data is not supported");
  Known k;
  k.shape.assign(t.dims().begin(), t.dims().end());
  const int64_t n = checked_elements(k.shape, "tensor");
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      if (t.has_raw_data()) copy_raw(t.raw_data(), n, &k.f);
      else copy_field(t.float_data(), n, &k.f);
      break;
    case onnx::TensorProto::INT64:
      k.is_float = false;
      if (t.has_raw_data()) copy_raw(t.raw_data(), n, &k.i);
      else copy_field(t.int64_data(), n, &k.i);
      break;
    case onnx::TensorProto::INT32: {
      k.is_float = false;
      std::vector<int32_t> v;
      if (t.has_raw_data()) copy_raw(t.raw_data(), n, &v);
      else copy_field(t.int32_data(), n, &v);
      k.i.assign(v.begin(), v.end());
      break;
    }
    case onnx::TensorProto::BOOL:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::INT8: {
      // Masks and small integer constants: one byte per element, or the
      // int32_data field.
      k.is_float = false;
      if (t.has_raw_data()) {
        if (static_cast<int64_t>(t.raw_data().size()) != n) throw LoomError("raw data of the wrong size");
        for (char c : t.raw_data())
          k.i.push_back(t.data_type() == onnx::TensorProto::INT8 ? static_cast<int8_t>(c) : static_cast<uint8_t>(c));
      } else {
        std::vector<int32_t> v;
        copy_field(t.int32_data(), n, &v);
        k.i.assign(v.begin(), v.end());
      }
      break;
    }
    case onnx::TensorProto::DOUBLE: {
      std::vector<double> v;
      if (t.has_raw_data()) copy_raw(t.raw_data(), n, &v);
      else copy_field(t.double_data(), n, &v);
      k.f.assign(v.begin(), v.end());
      break;
    }
    default:
      throw LoomError("tensor of type " + type_name(t.data_type()) +
                      " (only float32/float64 data and int64/int32/int8/uint8/bool constants are supported)");
  }
  return k;
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

void for_each_index(const Shape& shape, const std::function<void(const std::vector<int64_t>&)>& fn) {
  if (num_elements(shape) == 0) return;
  std::vector<int64_t> idx(shape.size(), 0);
  while (true) {
    fn(idx);
    size_t d = shape.size();
    while (d > 0 && ++idx[d - 1] == shape[d - 1]) idx[--d] = 0;
    if (d == 0) return;
  }
}


}  // namespace loom::graph::onnx_detail
