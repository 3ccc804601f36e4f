#include "measure/measure_result.h"

#include <limits>

#include "ir/error.h"
#include "measure/timing.h"

namespace loom {

namespace {
constexpr const char* kNames[] = {"none",    "invalid_schedule", "build_error", "run_error",
                                  "timeout", "wrong_result",     "not_measured"};
constexpr int kKinds = sizeof kNames / sizeof kNames[0];
}

const char* error_kind_name(ErrorKind k) { return kNames[static_cast<int>(k)]; }

ErrorKind parse_error_kind(const std::string& name) {
  std::string known;
  for (int i = 0; i < kKinds; ++i) {
    if (name == kNames[i]) return static_cast<ErrorKind>(i);
    known += (i ? ", " : "") + std::string(kNames[i]);
  }
  throw LoomError("unknown error kind '" + name + "' (expected " + known + ")");
}

double MeasureResult::median_s() const {
  if (!ok()) return std::numeric_limits<double>::infinity();
  return median(costs_s);
}

namespace {

double number(const nlohmann::json& j, const char* key, const std::string& path) {
  if (!j.contains(key)) return 0;
  if (!j[key].is_number()) throw LoomError(path + "." + key + ": expected a number");
  return j[key].get<double>();
}

}  // namespace

nlohmann::json result_to_json(const MeasureResult& r) {
  nlohmann::json res = {{"costs_s", r.costs_s},
                        {"error", error_kind_name(r.error)},
                        {"build_s", r.build_s},
                        {"timestamp", r.timestamp}};
  if (!r.error_msg.empty()) res["error_msg"] = r.error_msg;
  if (r.check_s > 0) res["check_s"] = r.check_s;
  if (r.run_s > 0) res["run_s"] = r.run_s;
  if (r.machine.known()) res["machine"] = r.machine.to_json();
  if (!r.node.empty()) res["node"] = r.node;
  return res;
}

MeasureResult result_from_json(const nlohmann::json& res, const std::string& path) {
  if (!res.is_object()) throw LoomError(path + ": expected an object");
  MeasureResult r;
  if (!res.contains("costs_s") || !res["costs_s"].is_array()) throw LoomError(path + ".costs_s: expected an array");
  for (const auto& c : res["costs_s"]) {
    if (!c.is_number() || c.get<double>() < 0) throw LoomError(path + ".costs_s: expected non-negative numbers");
    r.costs_s.push_back(c.get<double>());
  }
  if (!res.contains("error") || !res["error"].is_string()) throw LoomError(path + ".error: expected a string");
  r.error = parse_error_kind(res["error"].get<std::string>());
  if (res.contains("error_msg")) {
    if (!res["error_msg"].is_string()) throw LoomError(path + ".error_msg: expected a string");
    r.error_msg = res["error_msg"].get<std::string>();
  }
  r.build_s = number(res, "build_s", path);
  r.check_s = number(res, "check_s", path);
  r.run_s = number(res, "run_s", path);
  const double timestamp = number(res, "timestamp", path);
  if (!(timestamp >= 0 && timestamp < 9.2e18))  // converting one past int64 is undefined
    throw LoomError(path + ".timestamp: expected seconds since 1970");
  r.timestamp = static_cast<int64_t>(timestamp);
  if (res.contains("machine")) r.machine = MachineKind::from_json(res["machine"], path + ".machine");
  if (res.contains("node")) {
    if (!res["node"].is_string()) throw LoomError(path + ".node: expected a string");
    r.node = res["node"].get<std::string>();
  }
  return r;
}

}  // namespace loom
