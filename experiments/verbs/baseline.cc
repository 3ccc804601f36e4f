// loom baseline FILE.json: the vendor libraries on the task of a task file,
// with the timing protocol and correctness check Loom's candidates get.
#include <cstdio>

#include "experiments/baselines/baseline.h"
#include "experiments/task_file.h"
#include "experiments/verbs.h"
#include "ir/reference.h"

namespace loom::cli {

int baseline_verb(const Args& args) {
  std::string file;
  TimingOptions timing;
  timing.repeat = 5;
  timing.min_repeat_ms = 100;
  int threads = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--threads") threads = int_flag(args, i, "--threads");
    else if (!args[i].empty() && args[i][0] == '-') throw LoomError("unknown option " + args[i]);
    else if (file.empty()) file = args[i];
    else throw LoomError("baseline takes one task file");
  }
  if (file.empty()) throw LoomError("usage: loom baseline FILE.json [--threads N]");
  TaskFile tf = read_task_file(file);
  if (threads > 0) tf.task.target.threads = threads;
  const ComputeDAG& dag = *tf.task.dag;
  auto inputs = random_inputs(dag, 1);
  auto ref = evaluate_reference(dag, inputs);
  std::printf("task: %s  target: %s  (%.3f GFLOP)\n", tf.task.description().c_str(),
              tf.task.target.to_string().c_str(), dag.flop_count() / 1e9);
  int rc = kExitOk;
  std::vector<BaselineResult> results;
  for (const OperatorBaseline& b : operator_baselines()) {  // the libraries of the task's target kind
    if (b.gpu != tf.task.target.is_gpu()) continue;
    for (auto& r : b.run(tf.task, timing, inputs, ref)) results.push_back(std::move(r));
  }
  for (const auto& r : results) {
    if (!r.supported) {
      std::printf("%-8s %sunsupported: %s\n", r.library.c_str(),
                  r.variant.empty() ? "" : (r.variant + ": ").c_str(), r.reason.c_str());
      continue;
    }
    std::printf("%-8s %-44s median %.4f ms  %.2f GFLOP/s  %s  [%s]\n", r.library.c_str(), r.variant.c_str(),
                r.median_s * 1e3, r.gflops(dag.flop_count()),
                r.check.empty() ? "correct" : ("WRONG: " + r.check).c_str(), r.impl.c_str());
    if (!r.check.empty()) rc = kExitFailure;
  }
  return rc;
}

}  // namespace loom::cli
