// Contractions: gemm (ONNX Gemm), matmul (numpy matmul) and einsum.
#include <cctype>
#include <map>
#include <sstream>

#include "graph/ops.h"
#include "ir/error.h"

namespace loom::graph::op_detail {

namespace {

// ---- gemm -------------------------------------------------------------------

struct GemmDims {
  int64_t M, N, K;
};

GemmDims gemm_dims(const Shape& a, const Shape& b, const nlohmann::json& attrs) {
  if (a.size() != 2 || b.size() != 2)
    throw LoomError("gemm takes 2-D operands, got " + shape_string(a) + " and " + shape_string(b));
  const bool ta = attrs["trans_a"].get<int>() != 0, tb = attrs["trans_b"].get<int>() != 0;
  GemmDims d{ta ? a[1] : a[0], tb ? b[0] : b[1], ta ? a[0] : a[1]};
  const int64_t kb = tb ? b[1] : b[0];
  if (kb != d.K)
    throw LoomError("the reduction extents differ: a gives " + std::to_string(d.K) + ", b " + std::to_string(kb));
  return d;
}

Shape gemm_shape(const std::vector<Shape>& in, const nlohmann::json& attrs) {
  GemmDims d = gemm_dims(in[0], in[1], attrs);
  Shape out = {d.M, d.N};
  if (in.size() == 3 && broadcast_shapes(in[2], out) != out)
    throw LoomError("c has shape " + shape_string(in[2]) + ", which does not broadcast to " + shape_string(out));
  return out;
}

Tensor gemm_lower(const std::vector<Tensor>& in, const nlohmann::json& attrs, const std::string& name) {
  const Tensor &A = in[0], &B = in[1];
  GemmDims d = gemm_dims(A.shape(), B.shape(), attrs);
  const bool ta = attrs["trans_a"].get<int>() != 0, tb = attrs["trans_b"].get<int>() != 0;
  const double alpha = attrs["alpha"].get<double>(), beta = attrs["beta"].get<double>();
  const bool epilogue = in.size() == 3 || alpha != 1.0;
  Var k = reduce_axis(d.K, name + "_k");
  Tensor mm = compute_with_axes(
      {d.M, d.N},
      [&](const std::vector<Var>& v) {
        Expr a = ta ? A(k, v[0]) : A(v[0], k);
        Expr b = tb ? B(v[1], k) : B(k, v[1]);
        return sum(a * b, {k});
      },
      epilogue ? name + "_mm" : name);
  if (!epilogue) return mm;
  return compute_with_axes(
      mm.shape(),
      [&](const std::vector<Var>& v) {
        Expr y = mm(v[0], v[1]);
        if (alpha != 1.0) y = y * float_imm(alpha);
        if (in.size() == 3) {
          Expr c = in[2](broadcast_indices(in[2], v));
          y = y + (beta == 1.0 ? c : c * float_imm(beta));
        }
        return y;
      },
      name);
}

// ---- matmul -----------------------------------------------------------------

// numpy matmul: 1-D operands get a unit dim (removed from the result), batch
// dims broadcast.
struct MatmulDims {
  Shape batch;  // broadcast batch dims
  int64_t M, N, K;
  bool a_vector, b_vector;
};

MatmulDims matmul_dims(const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) throw LoomError("matmul operands must have at least 1 dim");
  MatmulDims d;
  d.a_vector = a.size() == 1;
  d.b_vector = b.size() == 1;
  const Shape a2 = d.a_vector ? Shape{1, a[0]} : a;
  const Shape b2 = d.b_vector ? Shape{b[0], 1} : b;
  d.M = a2[a2.size() - 2];
  d.K = a2.back();
  d.N = b2.back();
  if (b2[b2.size() - 2] != d.K)
    throw LoomError("the reduction extents differ: " + shape_string(a) + " x " + shape_string(b));
  d.batch = broadcast_shapes(Shape(a2.begin(), a2.end() - 2), Shape(b2.begin(), b2.end() - 2));
  return d;
}

Shape matmul_out(const MatmulDims& d) {
  Shape out = d.batch;
  if (!d.a_vector) out.push_back(d.M);
  if (!d.b_vector) out.push_back(d.N);
  return out;
}

Tensor matmul_lower(const std::vector<Tensor>& in, const nlohmann::json&, const std::string& name) {
  const Tensor &A = in[0], &B = in[1];
  // ir/ shapes: a scalar never reaches here (matmul_dims refused it).
  MatmulDims d = matmul_dims(A.shape(), B.shape());
  Var k = reduce_axis(d.K, name + "_k");
  const size_t nb = d.batch.size();
  Shape out = matmul_out(d);
  return compute_with_axes(
      op_detail::ir_shape(out),
      [&](const std::vector<Var>& v) {
        std::vector<Var> batch(v.begin(), v.begin() + std::min(nb, v.size()));
        size_t pos = nb;
        Expr m = d.a_vector ? int_imm(0) : Expr(v[pos++]);
        Expr n = d.b_vector ? int_imm(0) : Expr(v[pos++]);
        auto operand = [&](const Tensor& t, bool vector, Expr row, Expr col, bool is_a) {
          if (vector) return is_a ? t(std::vector<Expr>{col}) : t(std::vector<Expr>{row});
          // Batch dims right-aligned against the broadcast batch.
          std::vector<Expr> idx;
          const size_t tb = t.ndim() - 2;
          for (size_t i = 0; i < tb; ++i)
            idx.push_back(t.shape()[i] == 1 ? int_imm(0) : Expr(batch[nb - tb + i]));
          idx.push_back(row);
          idx.push_back(col);
          return t(idx);
        };
        return sum(operand(A, d.a_vector, m, k, true) * operand(B, d.b_vector, k, n, false), {k});
      },
      name);
}

// ---- einsum -----------------------------------------------------------------

// An einsum equation parsed: each input's letters and the output's (the
// implicit form's output: the letters used once, sorted), with every
// letter's extent.
struct Einsum {
  std::vector<std::string> inputs;
  std::string output;
  std::map<char, int64_t> extent;
};

Einsum parse_einsum(const std::string& equation, const std::vector<Shape>& shapes) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  if (eq.find("...") != std::string::npos) throw LoomError("equation '" + equation + "': ellipsis is not supported");
  Einsum e;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::stringstream parts(lhs);
  for (std::string part; std::getline(parts, part, ',');) e.inputs.push_back(part);
  if (lhs.empty() || lhs.back() == ',') e.inputs.push_back("");
  if (e.inputs.size() != shapes.size())
    throw LoomError("equation '" + equation + "' names " + std::to_string(e.inputs.size()) + " operands, got " +
                    std::to_string(shapes.size()));
  std::map<char, int> uses;
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    const std::string& in = e.inputs[i];
    if (in.size() != shapes[i].size())
      throw LoomError("equation '" + equation + "': operand " + std::to_string(i) + " has " + std::to_string(shapes[i].size()) +
                      " dims, its subscripts " + std::to_string(in.size()));
    for (size_t d = 0; d < in.size(); ++d) {
      const char c = in[d];
      if (!std::isalpha(static_cast<unsigned char>(c))) throw LoomError("equation '" + equation + "': bad subscript '" + std::string(1, c) + "'");
      if (in.find(c) != d) throw LoomError("equation '" + equation + "': a repeated subscript in one operand (a diagonal) is not supported");
      auto [it, fresh] = e.extent.emplace(c, shapes[i][d]);
      if (!fresh && it->second != shapes[i][d])
        throw LoomError("equation '" + equation + "': subscript '" + std::string(1, c) + "' is " + std::to_string(it->second) +
                        " in one operand and " + std::to_string(shapes[i][d]) + " in another");
      ++uses[c];
    }
  }
  if (arrow != std::string::npos) {
    e.output = eq.substr(arrow + 2);
    for (size_t d = 0; d < e.output.size(); ++d)
      if (!e.extent.count(e.output[d]) || e.output.find(e.output[d]) != d)
        throw LoomError("equation '" + equation + "': output subscript '" + std::string(1, e.output[d]) +
                        "' is not an operand's, or repeats");
  } else {
    for (const auto& [c, n] : uses)
      if (n == 1) e.output += c;
  }
  return e;
}

Shape einsum_shape(const std::vector<Shape>& in, const nlohmann::json& a) {
  Einsum e = parse_einsum(a["equation"].get<std::string>(), in);
  Shape out;
  for (char c : e.output) out.push_back(e.extent.at(c));
  return out;
}

// out[output letters] = sum over the other letters of the operands' product.
Tensor einsum_lower(const std::vector<Tensor>& in, const nlohmann::json& a, const std::string& name) {
  std::vector<Shape> shapes;
  for (const auto& t : in) shapes.emplace_back(t.shape().begin(), t.shape().end());
  // ir tensors have at least one dim: an operand without subscripts (a
  // scalar) is [1], read at 0.
  const std::string eq = a["equation"].get<std::string>();
  std::stringstream parts(eq.substr(0, eq.find("->")));
  size_t i = 0;
  for (std::string part; std::getline(parts, part, ','); ++i)
    if (i < shapes.size() && part.find_first_not_of(' ') == std::string::npos) shapes[i] = {};
  Einsum e = parse_einsum(eq, shapes);
  std::vector<int64_t> out_shape;
  for (char c : e.output) out_shape.push_back(e.extent.at(c));
  const bool scalar = out_shape.empty();
  if (scalar) out_shape.push_back(1);
  std::map<char, Var> rvars;
  std::vector<Var> reduce;
  for (const auto& [c, n] : e.extent)
    if (e.output.find(c) == std::string::npos) {
      rvars.emplace(c, reduce_axis(n, name + "_" + std::string(1, c)));
      reduce.push_back(rvars.at(c));
    }
  return compute_with_axes(
      out_shape,
      [&](const std::vector<Var>& v) {
        std::map<char, Expr> at;
        for (size_t d = 0; d < e.output.size(); ++d) at[e.output[d]] = v[d];
        for (const auto& [c, r] : rvars) at[c] = r;
        Expr prod;
        for (size_t i = 0; i < in.size(); ++i) {
          std::vector<Expr> idx;
          for (char c : e.inputs[i]) idx.push_back(at.at(c));
          if (idx.empty()) idx.push_back(Expr(int64_t{0}));
          Expr load = in[i](idx);
          prod = prod.defined() ? prod * load : load;
        }
        return reduce.empty() ? prod : sum(prod, reduce);
      },
      name);
}

}  // namespace

void register_linalg_ops(std::vector<OpDef>& out) {
  out.push_back(make_op("gemm", "alpha * op(a) op(b) + beta * c (ONNX Gemm); op transposes with trans_a / trans_b", 2,
                        3, OpPattern::kOutEWiseFusable,
                        {{"alpha", 1.0, "scale of the product"},
                         {"beta", 1.0, "scale of c"},
                         {"trans_a", 0, "1: a is K x M"},
                         {"trans_b", 0, "1: b is N x K"}},
                        gemm_shape, gemm_lower));
  out.push_back(make_op(
      "matmul", "numpy matmul: batch dims broadcast, 1-D operands as a row / column", 2, 2,
      OpPattern::kOutEWiseFusable, {},
      [](const std::vector<Shape>& in, const nlohmann::json&) { return matmul_out(matmul_dims(in[0], in[1])); },
      matmul_lower));
  out.push_back(make_op("einsum",
                        "Einstein summation (ONNX Einsum, without ellipsis or diagonals): the output's subscripts "
                        "index it, the others are summed",
                        1, -1, OpPattern::kOutEWiseFusable, {{"equation", nlohmann::json(), "e.g. bhid,bhjd->bhij", ""}},
                        einsum_shape, einsum_lower));
}

}  // namespace loom::graph::op_detail
