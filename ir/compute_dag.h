// ComputeDAG: the operations of a computation in topological order, with
// producer/consumer maps, the index expressions of every tensor access, and
// the floating-point operation count.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace loom {

// One read of a producer tensor inside a consumer's body.
struct TensorAccess {
  std::string tensor;
  std::vector<Expr> indices;  // in terms of the consumer op's axes/reduce axes
};

class ComputeDAG {
 public:
  ComputeDAG() = default;
  // `outputs` are the tensors the program must produce; every placeholder
  // reached from them must be listed in `inputs` (checked).
  ComputeDAG(std::vector<Tensor> inputs, std::vector<Tensor> outputs);

  const std::vector<Op>& ops() const { return ops_; }  // topological order
  int op_index(const std::string& name) const;        // -1 if absent
  const Op& op(const std::string& name) const;
  const std::vector<std::string>& input_names() const { return inputs_; }
  const std::vector<std::string>& output_names() const { return outputs_; }
  bool is_output(const std::string& name) const;
  bool is_input(const std::string& name) const;
  // Constant inputs (a network's weights): their values are fixed before
  // the program runs, so a schedule may store them in a layout of its own
  // choosing, transformed once outside the timed region (a LR step).
  // Throws LoomError for a name that is not an input.
  void mark_constant(const std::string& input);
  bool is_constant(const std::string& name) const { return constants_.count(name) > 0; }
  const std::set<std::string>& constant_names() const { return constants_; }

  const std::vector<int>& producers(int op_index) const { return producers_[op_index]; }
  const std::vector<int>& consumers(int op_index) const { return consumers_[op_index]; }
  // All reads made by op `op_index` (duplicates kept, in body order).
  const std::vector<TensorAccess>& accesses(int op_index) const { return accesses_[op_index]; }

  // Floating-point operations: counted from the bodies, or the nominal count
  // of the computation the DAG stands for when it computes it a cheaper way
  // (a transposed conv without its zero taps), so that GFLOP/s compare with
  // the libraries' figures.
  double flop_count() const { return flops_; }
  void set_nominal_flop_count(double flops) { flops_ = flops; }
  std::string to_string() const;

 private:
  std::vector<Op> ops_;
  std::vector<std::string> inputs_, outputs_;
  std::map<std::string, int> index_;
  std::set<std::string> constants_;
  std::vector<std::vector<int>> producers_, consumers_;
  std::vector<std::vector<TensorAccess>> accesses_;
  double flops_ = 0;
};

// Reads of other tensors made by an expression, in visiting order.
std::vector<TensorAccess> collect_accesses(const Expr& body);
// Floating-point operations per evaluation of `op`'s body, times its domain.
double op_flop_count(const OpNode& op);

}  // namespace loom
