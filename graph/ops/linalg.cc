// Contractions: gemm (ONNX Gemm) and matmul (numpy matmul).
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
}

}  // namespace loom::graph::op_detail
