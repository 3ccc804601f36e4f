// loom config show CONFIG.json: every effective setting of an experiment
// config, defaults filled in — what `loom tune` would run.
// loom config doc: the Markdown table of the search settings, generated from
// the table that parses them (experiments/README.md holds it verbatim).
#include <cstdio>

#include "experiments/config.h"
#include "experiments/verbs.h"
#include "ir/error.h"

namespace loom::cli {

int config_verb(const Args& args) {
  if (args.size() == 1 && args[0] == "doc") {
    std::printf("| key | meaning | range | default |\n|---|---|---|---|\n%s", SearchSettings::doc_table().c_str());
    return kExitOk;
  }
  if (args.size() != 2 || args[0] != "show") throw LoomError("usage: loom config show CONFIG.json | loom config doc");
  ExperimentConfig cfg = ExperimentConfig::load(args[1]);
  std::printf("%s\n", cfg.to_json().dump(2).c_str());
  return kExitOk;
}

}  // namespace loom::cli
