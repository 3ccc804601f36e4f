#include "graph/passes/fuse_ops.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "ir/error.h"

namespace loom::graph {

namespace {

class Fuser {
 public:
  explicit Fuser(const Graph& g) : g_(g), n_(static_cast<int>(g.nodes.size())) {
    std::map<std::string, int> node_of;
    for (int i = 0; i < n_; ++i) node_of[g.nodes[i].output] = i;
    consumers_.resize(n_);
    for (int i = 0; i < n_; ++i)
      for (const auto& v : g.nodes[i].inputs) {
        auto it = node_of.find(v);
        if (it != node_of.end() && std::find(consumers_[it->second].begin(), consumers_[it->second].end(), i) ==
                                       consumers_[it->second].end())
          consumers_[it->second].push_back(i);
      }
    for (const auto& o : g.outputs) {
      auto it = node_of.find(o);
      if (it != node_of.end()) consumers_[it->second].push_back(kSink);
    }
    post_dominators();
    parent_.resize(n_);
    std::iota(parent_.begin(), parent_.end(), 0);
    for (int i = 0; i < n_; ++i) pattern_.push_back(find_op(g.nodes[i].op)->pattern);
  }

  std::vector<FusedGroup> run() {
    for (int phase = 0; phase < 2; ++phase)
      for (int i = 0; i < n_; ++i) try_fuse(i, phase);
    std::map<int, FusedGroup> by_root;
    for (int i = 0; i < n_; ++i) {
      FusedGroup& grp = by_root[find(i)];
      grp.nodes.push_back(i);
      grp.pattern = pattern_[find(i)];
    }
    std::vector<FusedGroup> groups;
    for (auto& [root, grp] : by_root) groups.push_back(std::move(grp));
    // A group's inputs are earlier groups' outputs: order by last node.
    std::sort(groups.begin(), groups.end(),
              [](const FusedGroup& a, const FusedGroup& b) { return a.nodes.back() < b.nodes.back(); });
    return groups;
  }

 private:
  static constexpr int kSink = -1;

  // Immediate post-dominators, from the last node back: the least common
  // ancestor of the node's consumers in the post-dominator tree (the sink
  // when a consumer is a graph output).
  void post_dominators() {
    ipdom_.assign(n_, kSink);
    depth_.assign(n_, 0);
    for (int i = n_ - 1; i >= 0; --i) {
      int d = -2;  // none yet
      for (int c : consumers_[i]) d = d == -2 ? c : lca(d, c);
      ipdom_[i] = d == -2 ? kSink : d;  // an unused node post-dominated by the sink
      depth_[i] = ipdom_[i] == kSink ? 1 : depth_[ipdom_[i]] + 1;
    }
  }
  int lca(int a, int b) const {
    auto depth = [&](int x) { return x == kSink ? 0 : depth_[x]; };
    while (a != b) {
      if (a == kSink || b == kSink) return kSink;
      if (depth(a) >= depth(b)) a = ipdom_[a];
      else b = ipdom_[b];
    }
    return a;
  }

  int find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }

  // Nodes on the paths from `from` (excluded) to `to` (included).
  std::vector<int> path_nodes(int from, int to) const {
    std::vector<int> out, stack = {from};
    std::vector<bool> seen(n_, false);
    while (!stack.empty()) {
      int u = stack.back();
      stack.pop_back();
      for (int c : consumers_[u]) {
        if (c == kSink || seen[c]) continue;
        seen[c] = true;
        out.push_back(c);
        if (c != to) stack.push_back(c);
      }
    }
    return out;
  }

  void try_fuse(int i, int phase) {
    const int d = ipdom_[i];
    if (d == kSink || find(d) == find(i)) return;
    const OpPattern gp = pattern_[find(i)];
    OpPattern path_limit;
    if (phase == 0 && gp == OpPattern::kOutEWiseFusable) {
      path_limit = OpPattern::kBroadcast;
      if (pattern_[find(d)] > OpPattern::kBroadcast) return;
    } else if (phase == 0 && gp <= OpPattern::kBroadcast) {
      path_limit = OpPattern::kInjective;
      const OpPattern dp = pattern_[find(d)];
      if (dp > OpPattern::kInjective && dp != OpPattern::kCommReduce) return;
    } else if (phase == 1 && gp == OpPattern::kInjective) {
      path_limit = OpPattern::kInjective;
      if (pattern_[find(d)] > OpPattern::kInjective) return;
    } else {
      return;
    }
    std::vector<int> path = path_nodes(i, d);
    for (int v : path)
      if (v != d && find(v) != find(i) && pattern_[find(v)] > path_limit) return;
    OpPattern merged = gp;
    for (int v : path) merged = std::max(merged, pattern_[find(v)]);
    const int root = find(i);
    for (int v : path) parent_[find(v)] = root;
    pattern_[root] = merged;
  }

  const Graph& g_;
  const int n_;
  std::vector<std::vector<int>> consumers_;
  std::vector<int> ipdom_, depth_, parent_;
  std::vector<OpPattern> pattern_;  // per node; meaningful at group roots
};

}  // namespace

std::vector<FusedGroup> fuse_ops(const Graph& g) {
  std::vector<FusedGroup> groups = Fuser(g).run();
  // Each group's values other than its last node's are read only inside it.
  std::vector<int> group_of(g.nodes.size());
  for (size_t k = 0; k < groups.size(); ++k)
    for (int i : groups[k].nodes) group_of[i] = static_cast<int>(k);
  for (size_t k = 0; k < groups.size(); ++k)
    for (size_t j = 0; j + 1 < groups[k].nodes.size(); ++j) {
      const Node& n = g.nodes[groups[k].nodes[j]];
      bool escapes = std::count(g.outputs.begin(), g.outputs.end(), n.output) > 0;
      for (const Node* c : g.consumers(n.output)) escapes = escapes || group_of[c - g.nodes.data()] != static_cast<int>(k);
      if (escapes) throw LoomError("fusion: node '" + n.name + "' is read outside its group (internal error)");
    }
  return groups;
}

}  // namespace loom::graph
