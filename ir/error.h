// The one exception type Loom throws for user-facing errors (bad configs,
// bad parameters, invalid programs). Messages are one line and name the
// offending field, e.g. "params.K: expected a positive integer".
#pragma once

#include <stdexcept>

namespace loom {

struct LoomError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace loom
