// Command-line flag values shared by the verbs: a bad value is a LoomError
// naming the flag (exit code 2), never an uncaught std::stoi exception.
#include <stdexcept>

#include "experiments/verbs.h"
#include "ir/error.h"

namespace loom::cli {

int int_flag(const Args& a, size_t& i, const char* name, int min_value) {
  if (i + 1 >= a.size()) throw LoomError(std::string(name) + " needs a value");
  const std::string& v = a[++i];
  try {
    size_t used = 0;
    int x = std::stoi(v, &used);
    if (used != v.size() || x < min_value) throw std::invalid_argument("range");
    return x;
  } catch (const std::exception&) {
    throw LoomError(std::string(name) + ": expected an integer >= " + std::to_string(min_value) +
                    ", got '" + v + "'");
  }
}

double duration_flag(const Args& a, size_t& i, const char* name) {
  if (i + 1 >= a.size()) throw LoomError(std::string(name) + " needs a duration");
  const std::string& v = a[++i];
  try {
    size_t used = 0;
    const double x = std::stod(v, &used);
    const std::string unit = v.substr(used);
    const double scale = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : -1;
    if (scale < 0 || !(x > 0) || x * scale > 1e8) throw std::invalid_argument("unit");
    return x * scale;
  } catch (const std::exception&) {
    throw LoomError(std::string(name) + ": expected a positive duration such as 90s, 5m or 1.5h, got '" + v + "'");
  }
}

}  // namespace loom::cli
