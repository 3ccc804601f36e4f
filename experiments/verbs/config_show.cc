// loom config show CONFIG.json: every effective setting of an experiment
// config, defaults filled in — what `loom tune` would run.
// loom config doc [TABLE]: the Markdown tables of every setting (config,
// measure, search, cost_model.options), generated from the tables that parse
// them (experiments/README.md holds them verbatim; a test compares).
#include <cstdio>

#include "experiments/config.h"
#include "experiments/verbs.h"
#include "ir/error.h"

namespace loom::cli {

int config_verb(const Args& args) {
  if (!args.empty() && args[0] == "doc" && args.size() <= 2) {
    if (args.size() == 2) {
      std::printf("%s", ExperimentConfig::doc_table(args[1]).c_str());
      return kExitOk;
    }
    for (const auto& name : ExperimentConfig::doc_names())
      std::printf("%s\n", ExperimentConfig::doc_table(name).c_str());
    return kExitOk;
  }
  if (args.size() != 2 || args[0] != "show")
    throw LoomError("usage: loom config show CONFIG.json | loom config doc [config|measure|search|cost_model.options]");
  ExperimentConfig cfg = ExperimentConfig::load(args[1]);
  std::printf("%s\n", cfg.to_json().dump(2).c_str());
  return kExitOk;
}

}  // namespace loom::cli
