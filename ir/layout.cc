#include "ir/layout.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "ir/simplify.h"

namespace loom {

int64_t BlockedLayout::size() const {
  int64_t n = 1;
  for (const auto& p : pieces) n *= p.extent;
  return n;
}

std::vector<int64_t> BlockedLayout::shape() const {
  std::vector<int64_t> s;
  for (const auto& p : pieces) s.push_back(p.extent);
  return s;
}

Expr BlockedLayout::index(const std::vector<Expr>& indices) const {
  Expr flat = int_imm(0);
  for (const auto& p : pieces) {
    Expr v = indices[p.dim];
    if (p.stride > 1) v = v / int_imm(p.stride);
    // The outermost piece of a dimension needs no modulo: the index is
    // below the dimension's extent.
    if (p.stride * p.extent < source_shape[p.dim]) v = v % int_imm(p.extent);
    flat = flat * int_imm(p.extent) + v;
  }
  return simplify(flat);
}

void BlockedLayout::apply(const float* src, float* dst) const {
  std::fill(dst, dst + size(), 0.0f);
  const size_t ndim = source_shape.size();
  int64_t total = 1;
  for (int64_t d : source_shape) total *= d;
  std::vector<int64_t> idx(ndim, 0);
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t off = 0;
    for (const auto& p : pieces) off = off * p.extent + (idx[p.dim] / p.stride) % p.extent;
    dst[off] = src[flat];
    for (size_t d = ndim; d-- > 0;) {
      if (++idx[d] < source_shape[d]) break;
      idx[d] = 0;
    }
  }
}

std::vector<float> BlockedLayout::apply(const float* src) const {
  std::vector<float> out(static_cast<size_t>(size()));
  apply(src, out.data());
  return out;
}

namespace {
std::string dim_letter(int d) { return "d" + std::to_string(d); }
}  // namespace

std::string BlockedLayout::to_string() const {
  std::ostringstream os;
  os << "[" << source << ": ";
  for (size_t k = 0; k < pieces.size(); ++k) {
    const auto& p = pieces[k];
    os << (k ? ", " : "") << dim_letter(p.dim);
    if (p.stride > 1) os << "/" << p.stride;
    if (p.stride * p.extent < source_shape[p.dim]) os << "%" << p.extent;
  }
  os << "]";
  return os.str();
}

std::string BlockedLayout::c_function(const std::string& name) const {
  // Loops over the source in its own order; each element goes to its
  // blocked offset. Pads are zeroed first.
  std::ostringstream c;
  c << "static inline void " << name << "(const float* src, float* dst) {\n";
  c << "  for (long i = 0; i < " << size() << "L; ++i) dst[i] = 0.0f;\n";
  c << "  long flat = 0;\n";
  std::string indent = "  ";
  for (size_t d = 0; d < source_shape.size(); ++d) {
    c << indent << "for (long " << dim_letter(static_cast<int>(d)) << " = 0; " << dim_letter(static_cast<int>(d))
      << " < " << source_shape[d] << "L; ++" << dim_letter(static_cast<int>(d)) << ")\n";
    indent += "  ";
  }
  c << indent << "{\n" << indent << "  long off = 0;\n";
  for (const auto& p : pieces)
    c << indent << "  off = off * " << p.extent << "L + (" << dim_letter(p.dim) << " / " << p.stride << "L) % "
      << p.extent << "L;\n";
  c << indent << "  dst[off] = src[flat++];\n" << indent << "}\n}\n";
  return c.str();
}

bool is_valid_layout(const BlockedLayout& l) {
  std::map<int, std::vector<LayoutPiece>> by_dim;
  for (const auto& p : l.pieces) {
    if (p.dim < 0 || p.dim >= static_cast<int>(l.source_shape.size()) || p.stride < 1 || p.extent < 1) return false;
    by_dim[p.dim].push_back(p);
  }
  for (size_t d = 0; d < l.source_shape.size(); ++d) {
    auto it = by_dim.find(static_cast<int>(d));
    if (it == by_dim.end()) {
      if (l.source_shape[d] != 1) return false;
      continue;
    }
    auto ps = it->second;
    std::sort(ps.begin(), ps.end(), [](const LayoutPiece& a, const LayoutPiece& b) { return a.stride < b.stride; });
    int64_t expect = 1;
    for (const auto& p : ps) {
      if (p.stride != expect) return false;
      expect *= p.extent;
    }
    // Covers the dimension, and the top piece is not larger than needed.
    const auto& top = ps.back();
    if (expect < l.source_shape[d] || (top.extent - 1) * top.stride >= l.source_shape[d]) return false;
  }
  return true;
}

}  // namespace loom
