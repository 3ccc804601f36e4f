#include "measure/measurer.h"

#include "ir/error.h"
#include "ir/json_fields.h"

namespace loom {

namespace {

using json_fields::check_keys;
using json_fields::integer;
using json_fields::number;

}  // namespace

MeasureOptions measure_options_from_json(const nlohmann::json& j, const std::string& path, MeasureOptions defaults) {
  MeasureOptions m = defaults;
  if (j.is_null()) return m;
  check_keys(j, path, {"repeat", "min_repeat_ms", "flush_cache", "build_timeout_s", "run_timeout_s",
                       "n_parallel_builds", "max_memory_mb", "rtol", "atol", "slow_cutoff", "node_timeout_s",
                       "quiet_wait_ms"});
  if (j.contains("repeat")) m.repeat = integer(j["repeat"], path + ".repeat", 1, 1000);
  if (j.contains("min_repeat_ms")) m.min_repeat_ms = number(j["min_repeat_ms"], path + ".min_repeat_ms", 0, 1e6);
  if (j.contains("flush_cache")) {
    if (!j["flush_cache"].is_boolean()) throw LoomError(path + ".flush_cache: expected true or false");
    m.flush_cache = j["flush_cache"].get<bool>();
  }
  if (j.contains("build_timeout_s")) m.build_timeout_s = number(j["build_timeout_s"], path + ".build_timeout_s", 0.1, 1e5);
  if (j.contains("run_timeout_s")) m.run_timeout_s = number(j["run_timeout_s"], path + ".run_timeout_s", 0.01, 1e5);
  if (j.contains("n_parallel_builds")) m.n_parallel_builds = integer(j["n_parallel_builds"], path + ".n_parallel_builds", 1, 256);
  if (j.contains("max_memory_mb")) m.max_memory_mb = integer(j["max_memory_mb"], path + ".max_memory_mb", 0, 1 << 24);
  if (j.contains("rtol")) m.rtol = number(j["rtol"], path + ".rtol", 0, 1);
  if (j.contains("atol")) m.atol = number(j["atol"], path + ".atol", 0, 1e3);
  if (j.contains("slow_cutoff")) m.slow_cutoff = number(j["slow_cutoff"], path + ".slow_cutoff", 0, 1e9);
  if (j.contains("quiet_wait_ms")) m.quiet_wait_ms = number(j["quiet_wait_ms"], path + ".quiet_wait_ms", 0, 1e6);
  if (j.contains("node_timeout_s")) m.node_timeout_s = number(j["node_timeout_s"], path + ".node_timeout_s", 0.5, 1e5);
  return m;
}

nlohmann::json measure_options_to_json(const MeasureOptions& m) {
  return {{"repeat", m.repeat}, {"min_repeat_ms", m.min_repeat_ms}, {"flush_cache", m.flush_cache},
          {"build_timeout_s", m.build_timeout_s}, {"run_timeout_s", m.run_timeout_s},
          {"n_parallel_builds", m.n_parallel_builds}, {"max_memory_mb", m.max_memory_mb},
          {"rtol", m.rtol}, {"atol", m.atol}, {"slow_cutoff", m.slow_cutoff},
          {"node_timeout_s", m.node_timeout_s}, {"quiet_wait_ms", m.quiet_wait_ms}};
}

}  // namespace loom
