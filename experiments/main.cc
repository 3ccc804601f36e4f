// loom: the command-line front end. `loom help` lists the verbs.
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>

#include "experiments/verbs.h"
#include "ir/error.h"

namespace loom::cli {
namespace {

// Every verb, in the order `loom help` shows them.
const Verb kVerbs[] = {
    {"workloads", "loom workloads", "list the registered workloads and their parameters", workloads_verb},
    {"run", "loom run FILE.json [--print-ir] [--print-asm] [--repeat N] [--min-repeat-ms MS] [--quiet-wait-ms MS] [--threads N] [--compare-onednn [--rounds N]]",
     "lower, compile (LLVM), check and time one schedule", run_verb},
    {"measure", "loom measure FILE.json [--log PATH] [--repeat N] [--min-repeat-ms MS] [--threads N] [--flush]",
     "measure several schedules of a task in worker processes (the tuner's path)", measure_verb},
    {"tune", "loom tune CONFIG.json [--trials N] [--time-budget DURATION] [--distributed]",
     "tune every task of an experiment config (log written as it goes; Ctrl-C stops cleanly); "
     "--distributed under mpirun: rank 0 tunes, the other ranks measure; --trials 0: write each task's "
     "schedule chosen with nothing timed to the log",
     tune_verb},
    {"report", "loom report CONFIG.json [--rounds N] [--min-repeat-ms MS] [--quiet-wait-ms MS] [--no-remeasure]",
     "best Loom schedule vs the baselines per task, re-measured interleaved; CSV, Markdown, tuning-curve PNG",
     report_verb},
    {"export", "loom export CONFIG.json... [--check [--cc COMPILER]... [--rounds N]]",
     "write the best schedule of each task as record, header, object file, static library, C source and loop nest; --check builds, checks and times them",
     export_verb},
    {"config", "loom config show CONFIG.json | loom config doc [config|measure|search|cost_model.options]",
     "print every effective setting of a config (defaults filled in); the docs tables of every setting",
     config_verb},
    {"baseline", "loom baseline FILE.json [--threads N]",
     "time the vendor libraries (oneDNN) on the task, checked against the reference", baseline_verb},
    {"costmodel",
     "loom costmodel train LOG... --model mlp|xgb|random --out FILE [--settings JSON|@FILE] [--split task|record|none]\n"
     "             [--test-fraction F] [--seed N] [--threads N] [--k K] [--cost min|median] [--json]\n"
     "             [--predictions CSV] [--train-only LOG...]\n"
     "             loom costmodel eval FILE LOG... [--split task|record|none] [--test-fraction F] [--seed N] [--k K]\n"
     "             [--cost min|median] [--json] [--predictions CSV]\n"
     "             loom costmodel transfer LOG...|NETWORK_CONFIG... [--model mlp|xgb|random] [--settings JSON|@FILE] [--by task|machine|network]\n"
     "             [--folds K] [--seed N] [--threads N] [--k K] [--cost min|median] [--json] [--table FILE]\n"
     "             [--train-only LOG...]\n"
     "             loom costmodel collect WORKLOAD [--params JSON] [--constants NAME,...] [--target STR] --n N --log FILE\n"
     "             [--seed S] [--batch B]",
     "train a cost model on record logs; rank held-out records with a saved model; rank unseen tasks or machines\n"
     "             (grouped cross-validation); measure random schedules",
     costmodel_verb},
    {"sketches", "loom sketches FILE.json [--threads N]",
     "print the sketches of a task (derivation rules, before random annotation) as loop nests", sketches_verb},
    {"sample", "loom sample FILE.json -n N [--seed S] [--threads N] [--task I] [--no-ir] [--quiet] [--time]",
     "print N random programs of a task (or of a config's I-th task), check each (LLVM) against the reference "
     "(--quiet: print only the failing ones), optionally time them", sample_verb},
    {"records", "loom records best LOG... --per-task N --out FILE",
     "keep the best N programs of every task in records logs (what the schedule database holds)", records_verb},
    {"network",
     "loom network import MODEL.onnx OUT.json\n"
     "             loom network tasks MODEL [--json] [--config OUT.json [--threads N] [--trials N]]\n"
     "             loom network run MODEL [--log LOG] [--threads N] [--rounds N] [--runs N] [--check] [--baselines torch,ort|none] [--torch FILE.pt] [--profile] [--database LOG|none]... [--cost-model FILE] [--default-schedules]\n"
     "             (each: --shape NAME=DIMxDIM... pins an input's dynamic dimensions)",
     "a whole model (ONNX or graph JSON): convert it, list its fused tasks with weights, run it end to end "
     "(against PyTorch)",
     network_verb},
};

int help() {
  std::printf("loom: an Ansor-style auto-scheduler for tensor programs\n\nverbs:\n");
  for (const Verb& v : kVerbs) std::printf("  %-10s %s\n             %s\n", v.name, v.summary, v.usage);
  return kExitOk;
}

}  // namespace
}  // namespace loom::cli

int main(int argc, char** argv) {
  using namespace loom::cli;
  if (argc < 2 || !std::strcmp(argv[1], "help") || !std::strcmp(argv[1], "--help") ||
      !std::strcmp(argv[1], "-h"))
    return help();
  Args args(argv + 2, argv + argc);
  for (const Verb& v : kVerbs) {
    if (std::strcmp(argv[1], v.name) != 0) continue;
    try {
      return v.run(args);
    } catch (const loom::LoomError& e) {
      std::fprintf(stderr, "loom %s: error: %s\n", v.name, e.what());
      return kExitUsage;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "loom %s: internal error: %s\n", v.name, e.what());
      return kExitFailure;
    }
  }
  std::fprintf(stderr, "loom: unknown verb '%s' (try 'loom help')\n", argv[1]);
  return kExitUsage;
}
