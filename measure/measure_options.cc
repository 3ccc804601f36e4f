#include "measure/measurer.h"

#include "ir/settings_table.h"

namespace loom {

namespace {

// Every key of the config's "measure" object, in the docs' order.
const SettingsTable<MeasureOptions>& table() {
  using M = MeasureOptions;
  static const SettingsTable<M> t({
      integer_setting("repeat", &M::repeat, 1, 1000, "timing protocol: `repeat` groups, one mean each"),
      number_setting("min_repeat_ms", &M::min_repeat_ms, 0, 1e6, "each group runs at least this long"),
      bool_setting("flush_cache", &M::flush_cache,
                   "evict the caches before every timed run (the baselines of `loom report` too). In a network "
                   "config the default is true where the network's weights exceed half of this machine's last-level "
                   "cache (every inference then reads them from memory), false where they fit"),
      number_setting("build_timeout_s", &M::build_timeout_s, 0.1, 1e5,
                     "per-candidate limit of replay, lowering and compilation (the worker is killed and replaced)"),
      number_setting("run_timeout_s", &M::run_timeout_s, 0.01, 1e5, "per-candidate limit of the checking run"),
      integer_setting("n_parallel_builds", &M::n_parallel_builds, 1, 256, "worker processes (builds in flight)"),
      integer_setting("max_memory_mb", &M::max_memory_mb, 0, 1 << 24,
                      "address-space limit per worker (0 = none: the machine's memory is then the limit). A task "
                      "whose inputs and outputs, twice each in a worker, exceed it fails at start-up with one line "
                      "naming the largest tensor"),
      number_setting("rtol", &M::rtol, 0, 1, "correctness tolerance against the reference, relative"),
      number_setting("atol", &M::atol, 0, 1e3,
                     "correctness tolerance against the reference, absolute (scaled by the reference's magnitude)"),
      number_setting("slow_cutoff", &M::slow_cutoff, 0, 1e9,
                     "a candidate whose checking run is slower than this many times the task's best so far is not "
                     "timed further (its cost is that run; 0 = always time)"),
      number_setting("node_timeout_s", &M::node_timeout_s, 0.5, 1e5,
                     "`loom tune --distributed`: a measurement node silent this long is lost and its candidates go "
                     "to the other nodes"),
      number_setting("quiet_wait_ms", &M::quiet_wait_ms, 0, 1e6,
                     "time one measurement may spend waiting for a quiet load probe (`measure/timing.h`) and timing "
                     "again a disturbed group; 0 = no probe. `loom report` and `loom run` use 2000 "
                     "(`--quiet-wait-ms`)"),
  });
  return t;
}

}  // namespace

MeasureOptions measure_options_from_json(const nlohmann::json& j, const std::string& path, MeasureOptions defaults,
                                         std::set<std::string>* given) {
  return table().parse(j, path, defaults, given);
}

nlohmann::json measure_options_to_json(const MeasureOptions& m) { return table().to_json(m); }

std::string measure_options_doc(const std::string& prefix) { return table().doc_rows(prefix); }

}  // namespace loom
