// loom_replay_nests LOG...: every distinct record of the logs (task + steps),
// replayed on its task's DAG and lowered, printed as its loop nest. Two
// builds whose outputs differ lower the same schedules differently:
// scripts/replay_nests.sh compares a build's output with a committed one.
#include <cstdio>
#include <iostream>
#include <set>
#include <string>

#include "ir/error.h"
#include "ir/lower.h"
#include "ir/state.h"
#include "ir/stmt.h"
#include "measure/records.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: loom_replay_nests LOG...\n");
    return 2;
  }
  try {
    std::set<std::string> seen;
    for (int i = 1; i < argc; ++i) {
      for (const loom::MeasureRecord& r : loom::load_records(argv[i])) {
        const std::string key = loom::measure_key(r.task_key(), r.steps);
        if (!seen.insert(key).second) continue;
        loom::State state = loom::State::from_json(r.task.dag, r.steps);
        loom::LowerOptions lo;
        lo.func_name = "kernel";
        std::cout << "== " << key << "\n" << loom::to_string(loom::lower(state, lo)) << "\n";
      }
    }
  } catch (const loom::LoomError& e) {
    std::fprintf(stderr, "loom_replay_nests: %s\n", e.what());
    return 2;
  }
  return 0;
}
