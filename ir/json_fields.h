// Strict reading of JSON settings objects: every error is one line naming
// the field's JSON path (configs, the measure options).
#pragma once

#include <initializer_list>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/error.h"

namespace loom::json_fields {

// Throws "PATH.KEY: unknown key" for a key not in `keys`.
inline void check_keys(const nlohmann::json& j, const std::string& path, std::initializer_list<const char*> keys) {
  if (!j.is_object()) throw LoomError(path + ": expected an object");
  for (const auto& [k, v] : j.items()) {
    bool known = false;
    for (const char* key : keys) known |= k == key;
    if (!known) throw LoomError((path.empty() ? "" : path + ".") + k + ": unknown key");
  }
}

inline double number(const nlohmann::json& j, const std::string& path, double lo, double hi) {
  if (!j.is_number()) throw LoomError(path + ": expected a number, got " + j.dump());
  double v = j.get<double>();
  if (v < lo || v > hi) throw LoomError(path + ": expected a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

inline int integer(const nlohmann::json& j, const std::string& path, int lo, int hi) {
  if (!j.is_number_integer()) throw LoomError(path + ": expected an integer, got " + j.dump());
  int64_t v = j.get<int64_t>();
  if (v < lo || v > hi) throw LoomError(path + ": expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return static_cast<int>(v);
}

}  // namespace loom::json_fields
