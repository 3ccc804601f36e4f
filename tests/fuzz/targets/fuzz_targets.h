// Every parser of outside input as a fuzz target: a function taking any
// bytes. A target may only return (the input was read) or throw LoomError
// (a one-line error naming what is wrong); any other exception, a crash, a
// hang, a leak or undefined behaviour is a bug in Loom. The libFuzzer
// executables (build with -DLOOM_FUZZ=ON, scripts/fuzz.sh) and the
// regression test over tests/fuzz/corpus/<name>/ (every build) call them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace loom::fuzz {

struct FuzzTarget {
  const char* name;   // also its corpus folder and LOOM_FUZZ_TARGET's value
  const char* input;  // what the bytes are
  void (*run)(const uint8_t* data, size_t size);
};

// Every target; adding one is adding a row (fuzz_targets.cc).
const std::vector<FuzzTarget>& fuzz_targets();
const FuzzTarget* find_fuzz_target(const std::string& name);  // nullptr if unknown

}  // namespace loom::fuzz
