// loom sketches FILE.json [--threads N]: the sketches of a task — the loop
// structures that the derivation rules generate before random annotation
// fills in tile sizes and annotations (split lengths are all 1 here).
//
// FILE.json: a task file, {"workload": ..., "params": ..., "target": "cpu -threads=1"}.
#include <cstdio>

#include "experiments/task_file.h"
#include "experiments/verbs.h"
#include "ir/error.h"
#include "ir/lower.h"
#include "search/search_policy.h"
#include "sketch/sketch_policy.h"

namespace loom::cli {

int sketches_verb(const Args& args) {
  std::string file;
  int threads = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--threads") threads = int_flag(args, i, "--threads");
    else if (!args[i].empty() && args[i][0] == '-') throw LoomError("unknown option " + args[i]);
    else if (file.empty()) file = args[i];
    else throw LoomError("sketches takes one FILE.json");
  }
  if (file.empty()) throw LoomError("usage: loom sketches FILE.json [--threads N]");
  TaskFile tf = read_task_file(file);
  if (threads > 0) tf.task.target.threads = threads;
  SketchTask st = make_sketch_task(tf.task);
  std::vector<State> sketches = generate_sketches(st);
  std::printf("task: %s  target: %s  %zu sketches\n", tf.task.description().c_str(),
              tf.task.target.to_string().c_str(), sketches.size());
  for (size_t k = 0; k < sketches.size(); ++k) {
    std::printf("\n== sketch %zu: %s\n", k, sketches[k].steps_json().dump().c_str());
    LowerOptions opt;
    opt.func_name = "sketch" + std::to_string(k);
    std::printf("%s", to_string(lower(sketches[k], opt)).c_str());
  }
  return kExitOk;
}

}  // namespace loom::cli
