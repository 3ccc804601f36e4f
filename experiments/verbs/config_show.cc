// loom config show CONFIG.json: every effective setting of an experiment
// config, defaults filled in — what `loom tune` would run.
#include <cstdio>

#include "experiments/config.h"
#include "experiments/verbs.h"
#include "ir/error.h"

namespace loom::cli {

int config_verb(const Args& args) {
  if (args.size() != 2 || args[0] != "show") throw LoomError("usage: loom config show CONFIG.json");
  ExperimentConfig cfg = ExperimentConfig::load(args[1]);
  std::printf("%s\n", cfg.to_json().dump(2).c_str());
  return kExitOk;
}

}  // namespace loom::cli
