#include "ir/workload_registry.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <set>

namespace loom {

namespace {

std::vector<WorkloadInfo> build_registry() {
  std::vector<WorkloadInfo> all;
  workload_detail::register_matmul_workloads(all);
  workload_detail::register_conv_workloads(all);
  workload_detail::register_norm_workloads(all);
  workload_detail::register_softmax_workloads(all);
  workload_detail::register_subgraph_workloads(all);
  std::sort(all.begin(), all.end(),
            [](const WorkloadInfo& a, const WorkloadInfo& b) { return a.name < b.name; });
  for (size_t i = 1; i < all.size(); ++i) {
    if (all[i].name == all[i - 1].name) {
      throw LoomError("workload registry: duplicate workload '" + all[i].name + "'");
    }
  }
  return all;
}

std::string param_names(const WorkloadInfo& info) {
  std::string s;
  for (const auto& p : info.params) s += (s.empty() ? "" : ", ") + p.name;
  return s;
}

}  // namespace

const std::vector<WorkloadInfo>& workload_registry() {
  static const std::vector<WorkloadInfo> registry = build_registry();
  return registry;
}

const WorkloadInfo* find_workload(const std::string& name) {
  for (const auto& w : workload_registry()) {
    if (w.name == name) return &w;
  }
  return nullptr;
}

std::string workload_names() {
  std::string s;
  for (const auto& w : workload_registry()) s += (s.empty() ? "" : ", ") + w.name;
  return s;
}

WorkloadParams resolve_params(const WorkloadInfo& info, const nlohmann::json& params) {
  if (!params.is_null() && !params.is_object()) {
    throw LoomError("params: expected an object of integer parameters for workload '" +
                    info.name + "'");
  }
  WorkloadParams out;
  for (const auto& p : info.params) out[p.name] = p.default_value;
  if (params.is_null()) return out;
  for (auto it = params.begin(); it != params.end(); ++it) {
    const std::string& key = it.key();
    auto spec = std::find_if(info.params.begin(), info.params.end(),
                             [&](const WorkloadParam& p) { return p.name == key; });
    if (spec == info.params.end()) {
      throw LoomError("params." + key + ": unknown parameter of workload '" + info.name +
                      "' (known: " + param_names(info) + ")");
    }
    const nlohmann::json& v = it.value();
    const char* expected = spec->min_value >= 1 ? "a positive integer" : "a non-negative integer";
    bool ok = v.is_number_integer();
    int64_t value = 0;
    if (ok) {
      if (v.is_number_unsigned()) {
        uint64_t u = v.get<uint64_t>();
        ok = u <= static_cast<uint64_t>(INT64_MAX);
        value = static_cast<int64_t>(u);
      } else {
        value = v.get<int64_t>();
      }
    }
    if (!ok || value < spec->min_value) {
      throw LoomError("params." + key + ": expected " + expected + " (got " + v.dump() + ")");
    }
    out[key] = value;
  }
  return out;
}

namespace {

// A registry family as a kind: integer params with defaults.
WorkloadKind family_kind(const WorkloadInfo& info) {
  WorkloadKind k;
  k.name = info.name;
  k.build = [&info](const nlohmann::json& params, nlohmann::json& resolved) {
    WorkloadParams p = resolve_params(info, params);
    resolved = nlohmann::json::object();
    for (const auto& [key, v] : p) resolved[key] = v;
    return info.build(p);
  };
  k.describe = [name = info.name](const nlohmann::json& resolved) {
    std::string s = name;
    for (const auto& [key, v] : resolved.items()) s += " " + key + "=" + v.dump();
    return s;
  };
  k.similarity_key = [name = info.name](const nlohmann::json&) { return name; };
  k.equivalent_workload = [name = info.name](const nlohmann::json& resolved) {
    return std::optional<EquivalentWorkload>(EquivalentWorkload{name, resolved, ""});
  };
  return k;
}

struct KindTable {
  std::mutex mu;
  std::vector<std::unique_ptr<WorkloadKind>> kinds;  // families first, then registered kinds
  KindTable() {
    for (const auto& info : workload_registry()) kinds.push_back(std::make_unique<WorkloadKind>(family_kind(info)));
  }
};

KindTable& kind_table() {
  static KindTable table;
  return table;
}

}  // namespace

void register_workload_kind(WorkloadKind kind) {
  KindTable& t = kind_table();
  std::lock_guard<std::mutex> lock(t.mu);
  for (const auto& k : t.kinds)
    if (k->name == kind.name) throw LoomError("workload registry: duplicate workload '" + kind.name + "'");
  t.kinds.push_back(std::make_unique<WorkloadKind>(std::move(kind)));
}

const WorkloadKind* find_workload_kind(const std::string& name) {
  KindTable& t = kind_table();
  std::lock_guard<std::mutex> lock(t.mu);
  for (const auto& k : t.kinds)
    if (k->name == name) return k.get();
  return nullptr;
}

std::string workload_kind_names() {
  KindTable& t = kind_table();
  std::lock_guard<std::mutex> lock(t.mu);
  std::string s;
  for (const auto& k : t.kinds) s += (s.empty() ? "" : ", ") + k->name;
  return s;
}

ComputeDAG make_workload(const std::string& name, const nlohmann::json& params) {
  const WorkloadInfo* info = find_workload(name);
  if (!info) {
    throw LoomError("unknown workload '" + name + "' (known: " + workload_names() + ")");
  }
  return info->build(resolve_params(*info, params));
}

namespace workload_detail {

int64_t get(const WorkloadParams& p, const std::string& key) {
  auto it = p.find(key);
  if (it == p.end()) throw LoomError("params." + key + ": missing");
  return it->second;
}

int64_t conv_out_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad,
                      int64_t dilation, const std::string& what) {
  int64_t span = dilation * (kernel - 1) + 1;
  int64_t padded = in + 2 * pad;
  if (padded < span || stride < 1) {
    throw LoomError("params: " + what + " window (" + std::to_string(span) +
                    ") larger than the padded input (" + std::to_string(padded) + ")");
  }
  return (padded - span) / stride + 1;
}

Tensor pad_tensor(const Tensor& X, const std::vector<int64_t>& before,
                  const std::vector<int64_t>& after, const std::string& name, float value) {
  const auto& shape = X.shape();
  bool any = false;
  std::vector<int64_t> out_shape(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    out_shape[d] = shape[d] + before[d] + after[d];
    any = any || before[d] != 0 || after[d] != 0;
  }
  if (!any) return X;
  return compute_with_axes(
      out_shape,
      [&](const std::vector<Var>& v) -> Expr {
        Expr cond;
        std::vector<Expr> idx;
        for (size_t d = 0; d < shape.size(); ++d) {
          if (before[d] == 0 && after[d] == 0) {
            idx.push_back(v[d]);
            continue;
          }
          Expr c = v[d] >= Expr(before[d]) && v[d] < Expr(before[d] + shape[d]);
          cond = cond.defined() ? (cond && c) : c;
          idx.push_back(v[d] - Expr(before[d]));
        }
        return select(cond, X(idx), Expr(value));
      },
      name);
}

void require_divisible(const WorkloadParams& p, const std::string& a, const std::string& b) {
  if (get(p, a) % get(p, b) != 0) {
    throw LoomError("params." + a + ": must be divisible by params." + b + " (" +
                    std::to_string(get(p, a)) + " % " + std::to_string(get(p, b)) + " != 0)");
  }
}

}  // namespace workload_detail
}  // namespace loom
