// Batch-norm folding: batch_norm(conv2d(x, W, b)) with constant W, b and
// batch-norm parameters, where nothing else reads the convolution, becomes
// one conv2d with per-output-channel scaled weights and a new bias:
//   s[k] = scale[k] / sqrt(var[k] + eps)
//   W'[k, ...] = W[k, ...] * s[k]
//   b'[k] = (b[k] - mean[k]) * s[k] + bias[k]
// Computed in double and rounded once.
#include <algorithm>
#include <cmath>

#include "graph/passes/pass.h"

namespace loom::graph {

namespace {

class FoldBatchNormPass : public GraphPass {
 public:
  std::string name() const override { return "fold_batch_norm"; }
  Graph run(const Graph& g) const override {
    Graph out = g;
    out.nodes.clear();
    std::vector<bool> folded_into(g.nodes.size(), false);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& bn = g.nodes[i];
      if (bn.op != "batch_norm") continue;
      const Node* conv = g.producer(bn.inputs[0]);
      if (!conv || conv->op != "conv2d" || g.consumers(conv->output).size() != 1) continue;
      bool constant = g.is_constant(conv->inputs[1]) && (conv->inputs.size() < 3 || g.is_constant(conv->inputs[2]));
      for (size_t k = 1; k < 5; ++k) constant = constant && g.is_constant(bn.inputs[k]);
      if (!constant || std::count(g.outputs.begin(), g.outputs.end(), conv->output)) continue;
      folded_into[conv - g.nodes.data()] = true;
      folded_into[i] = true;
    }
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      if (!folded_into[i]) {
        out.nodes.push_back(n);
        continue;
      }
      if (n.op == "conv2d") continue;  // emitted at its batch norm
      const Node& conv = *g.producer(n.inputs[0]);
      out.nodes.push_back(fold(g, conv, n, out));
    }
    out.validate();
    return out;
  }

 private:
  static Node fold(const Graph& g, const Node& conv, const Node& bn, Graph& out) {
    const Constant& W = g.constants.at(conv.inputs[1]);
    const auto& scale = g.constants.at(bn.inputs[1]).data;
    const auto& beta = g.constants.at(bn.inputs[2]).data;
    const auto& mean = g.constants.at(bn.inputs[3]).data;
    const auto& var = g.constants.at(bn.inputs[4]).data;
    const double eps = bn.attrs["epsilon"].get<double>();
    const int64_t K = W.shape[0], per_k = num_elements(W.shape) / K;
    Constant w2{W.shape, std::vector<float>(W.data.size())};
    Constant b2{{K}, std::vector<float>(K)};
    for (int64_t k = 0; k < K; ++k) {
      const double s = scale[k] / std::sqrt(static_cast<double>(var[k]) + eps);
      for (int64_t j = 0; j < per_k; ++j) w2.data[k * per_k + j] = static_cast<float>(W.data[k * per_k + j] * s);
      const double b = conv.inputs.size() == 3 ? g.constants.at(conv.inputs[2]).data[k] : 0.0;
      b2.data[k] = static_cast<float>((b - mean[k]) * s + beta[k]);
    }
    Node n = conv;
    n.output = bn.output;
    const std::string wname = new_constant_name(g, out, conv.name + "_weight_bn");
    out.constants[wname] = std::move(w2);
    const std::string bname = new_constant_name(g, out, conv.name + "_bias_bn");
    out.constants[bname] = std::move(b2);
    n.inputs = {conv.inputs[0], wname, bname};
    return n;
  }
};

}  // namespace

GraphPassPtr make_fold_batch_norm_pass() { return std::make_unique<FoldBatchNormPass>(); }

}  // namespace loom::graph
