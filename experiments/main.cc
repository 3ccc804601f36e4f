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
    {"run", "loom run FILE.json [--print-ir] [--repeat N] [--min-repeat-ms MS] [--threads N]",
     "lower, compile (LLVM), check and time one schedule", run_verb},
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
