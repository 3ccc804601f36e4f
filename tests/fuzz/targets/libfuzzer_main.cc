// libFuzzer's entry (build with -DLOOM_FUZZ=ON): one executable for every
// target, chosen by the environment (scripts/fuzz.sh sets it):
//   LOOM_FUZZ_TARGET=steps build-sanitize/tests/loom_fuzz CORPUS_DIR...
#include <cstdio>
#include <cstdlib>

#include "tests/fuzz/targets/fuzz_targets.h"

namespace {
const loom::fuzz::FuzzTarget* target = nullptr;
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* name = std::getenv("LOOM_FUZZ_TARGET");
  target = name ? loom::fuzz::find_fuzz_target(name) : nullptr;
  if (!target) {
    std::fprintf(stderr, "loom_fuzz: set LOOM_FUZZ_TARGET to one of:");
    for (const auto& t : loom::fuzz::fuzz_targets()) std::fprintf(stderr, " %s", t.name);
    std::fprintf(stderr, "\n");
    std::exit(2);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  target->run(data, size);
  return 0;
}
