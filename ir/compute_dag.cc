#include "ir/compute_dag.h"

#include <functional>
#include <set>
#include <sstream>

#include "ir/error.h"

namespace loom {

std::vector<TensorAccess> collect_accesses(const Expr& body) {
  std::vector<TensorAccess> out;
  visit(body, [&](const Expr& e) {
    if (e->kind == ExprKind::kLoad) out.push_back({e->name, e->args});
  });
  return out;
}

namespace {
// Floating-point operations in one evaluation of an expression.
double count_float_ops(const Expr& e) {
  double n = 0;
  visit(e, [&](const Expr& x) {
    if (x->dtype != DType::kFloat) return;
    switch (x->kind) {
      case ExprKind::kAdd: case ExprKind::kSub: case ExprKind::kMul: case ExprKind::kDiv:
      case ExprKind::kMin: case ExprKind::kMax: case ExprKind::kCall:
        n += 1;
        break;
      default: break;
    }
  });
  return n;
}
}  // namespace

double op_flop_count(const OpNode& op) {
  if (op.is_placeholder) return 0;
  double points = 1;
  for (int64_t d : op.shape) points *= static_cast<double>(d);
  if (op.body->kind == ExprKind::kReduce) {
    double red = 1;
    for (const auto& a : op.body->reduce_axes) red *= static_cast<double>(a->extent);
    return points * red * (count_float_ops(op.body->args[0]) + 1);  // +1: the combiner
  }
  return points * count_float_ops(op.body);
}

ComputeDAG::ComputeDAG(std::vector<Tensor> inputs, std::vector<Tensor> outputs) {
  if (outputs.empty()) throw LoomError("a compute DAG needs at least one output");
  std::map<std::string, Op> by_name;
  std::set<std::string> visiting, done;
  // Post-order DFS from the outputs gives a topological order; ties keep the
  // order in which a body reads its producers, so the result is deterministic.
  std::function<void(const Op&)> dfs = [&](const Op& op) {
    auto it = by_name.find(op->name);
    if (it != by_name.end() && it->second != op)
      throw LoomError("two different operations are named " + op->name);
    if (done.count(op->name)) return;
    by_name[op->name] = op;
    if (!visiting.insert(op->name).second) throw LoomError("cycle through " + op->name);
    if (!op->is_placeholder) {
      visit(op->body, [&](const Expr& e) {
        if (e->kind != ExprKind::kLoad) return;
        if (!e->producer) throw LoomError(op->name + " reads " + e->name + " without its producer");
        dfs(e->producer);
      });
    }
    visiting.erase(op->name);
    done.insert(op->name);
    index_[op->name] = static_cast<int>(ops_.size());
    ops_.push_back(op);
  };
  for (const auto& t : outputs) dfs(t.op());
  for (const auto& t : inputs) {
    if (!t.op()->is_placeholder) throw LoomError("input " + t.name() + " is not a placeholder");
    if (!index_.count(t.name())) throw LoomError("input " + t.name() + " is not used by the outputs");
    inputs_.push_back(t.name());
  }
  for (const auto& op : ops_)
    if (op->is_placeholder && !is_input(op->name))
      throw LoomError("placeholder " + op->name + " is not listed among the inputs");
  for (const auto& t : outputs) outputs_.push_back(t.name());

  size_t n = ops_.size();
  producers_.assign(n, {});
  consumers_.assign(n, {});
  accesses_.assign(n, {});
  for (size_t i = 0; i < n; ++i) {
    if (ops_[i]->is_placeholder) continue;
    accesses_[i] = collect_accesses(ops_[i]->body);
    std::set<int> seen;
    for (const auto& a : accesses_[i]) {
      int p = index_.at(a.tensor);
      if (seen.insert(p).second) {
        producers_[i].push_back(p);
        consumers_[p].push_back(static_cast<int>(i));
      }
    }
    flops_ += op_flop_count(*ops_[i]);
  }
}

int ComputeDAG::op_index(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

const Op& ComputeDAG::op(const std::string& name) const {
  int i = op_index(name);
  if (i < 0) throw LoomError("no operation named " + name);
  return ops_[i];
}

bool ComputeDAG::is_output(const std::string& name) const {
  for (const auto& o : outputs_) if (o == name) return true;
  return false;
}
bool ComputeDAG::is_input(const std::string& name) const {
  for (const auto& o : inputs_) if (o == name) return true;
  return false;
}

void ComputeDAG::mark_constant(const std::string& input) {
  if (!is_input(input)) throw LoomError("cannot mark " + input + " constant: it is not an input of the DAG");
  constants_.insert(input);
}

std::string ComputeDAG::to_string() const {
  std::ostringstream os;
  for (const auto& op : ops_) {
    os << op->name << "[";
    for (size_t d = 0; d < op->shape.size(); ++d) os << (d ? ", " : "") << op->shape[d];
    os << "]";
    if (op->is_placeholder) {
      os << (is_constant(op->name) ? " = constant placeholder\n" : " = placeholder\n");
      continue;
    }
    os << "(";
    for (size_t d = 0; d < op->axes.size(); ++d) os << (d ? ", " : "") << op->axes[d]->name;
    os << ") = " << loom::to_string(op->body) << "\n";
  }
  return os.str();
}

}  // namespace loom
