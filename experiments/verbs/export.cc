// loom export CONFIG.json: the best schedule of every task, as a replayable
// record, standalone C source and loop-nest text, into the export folder.
#include <cstdio>

#include "experiments/config.h"
#include "experiments/export.h"
#include "experiments/verbs.h"
#include "ir/error.h"

namespace loom::cli {

int export_verb(const Args& args) {
  if (args.size() != 1) throw LoomError("usage: loom export CONFIG.json");
  ExperimentConfig cfg = ExperimentConfig::load(args[0]);
  auto records = load_records(cfg.log_path);
  std::vector<Task> tasks;
  for (const auto& t : cfg.tasks) tasks.push_back(t.task);
  auto files = export_best(tasks, records, cfg.export_dir);
  for (const auto& f : files)
    std::printf("%s\n    %s\n    %s\n    %s\n", f.task.c_str(), f.record_path.c_str(), f.c_path.c_str(),
                f.loop_nest_path.c_str());
  if (files.size() < tasks.size())
    std::printf("%zu task(s) have no valid record in %s\n", tasks.size() - files.size(), cfg.log_path.c_str());
  return kExitOk;
}

}  // namespace loom::cli
