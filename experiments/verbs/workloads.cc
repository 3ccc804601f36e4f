// loom workloads: the workload registry, with parameters and defaults.
#include <cstdio>

#include "experiments/verbs.h"
#include "ir/workload_registry.h"

namespace loom::cli {

int workloads_verb(const Args& args) {
  if (!args.empty()) throw LoomError("workloads takes no arguments");
  for (const auto& w : workload_registry()) {
    std::printf("%s — %s\n", w.name.c_str(), w.description.c_str());
    for (const auto& p : w.params)
      std::printf("    %-10s %-8lld %s\n", p.name.c_str(), static_cast<long long>(p.default_value),
                  p.doc.c_str());
    ComputeDAG dag = make_workload(w.name, nlohmann::json::object());
    std::printf("    (defaults: %.3g GFLOP)\n", dag.flop_count() / 1e9);
  }
  return kExitOk;
}

}  // namespace loom::cli
