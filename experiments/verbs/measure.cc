// loom measure FILE.json: measure several schedules of one task through the
// measurement path the tuner uses (worker processes, LLVM build, check
// against the reference, serial timing) and print one line per candidate.
//
// FILE.json: {"workload": "matmul", "params": {"M": 512, ...}, "target": "cpu -threads=1",
//             "candidates": [[["SP", 2, 0, 512, [8, 4, 16], 1], ...], [...], ...]}
// ("task": {...} may replace workload/params/target; a single "steps": [...]
// counts as one candidate when "candidates" is absent.)
//
// Options: --log PATH (append the records), --repeat N, --min-repeat-ms MS,
// --threads N (override the target's), --builds N (workers), --flush (flush
// the cache between runs), --run-timeout S, --build-timeout S.
// Exit status 1 when any candidate computed a wrong result (a Loom bug).
#include <cstdio>
#include <string>

#include "experiments/task_file.h"
#include "experiments/verbs.h"
#include "ir/error.h"
#include "measure/measurer.h"
#include "measure/records.h"

namespace loom::cli {

namespace {

double parse_number(const Args& a, size_t& i, double min_value) {
  if (i + 1 >= a.size()) throw LoomError(a[i] + " needs a value");
  const std::string& flag = a[i];
  try {
    size_t used = 0;
    double v = std::stod(a[++i], &used);
    if (used != a[i].size() || v < min_value) throw std::invalid_argument("x");
    return v;
  } catch (const std::exception&) {
    throw LoomError(flag + ": expected a number >= " + std::to_string(min_value) + ", got '" + a[i] + "'");
  }
}

}  // namespace

int measure_verb(const Args& args) {
  std::string file, log_path;
  MeasureOptions opts;
  int threads_override = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& f = args[i];
    if (f == "--log") {
      if (i + 1 >= args.size()) throw LoomError("--log needs a path");
      log_path = args[++i];
    } else if (f == "--repeat") opts.repeat = static_cast<int>(parse_number(args, i, 1));
    else if (f == "--min-repeat-ms") opts.min_repeat_ms = parse_number(args, i, 0);
    else if (f == "--threads") threads_override = static_cast<int>(parse_number(args, i, 1));
    else if (f == "--builds") opts.n_parallel_builds = static_cast<int>(parse_number(args, i, 1));
    else if (f == "--run-timeout") opts.run_timeout_s = parse_number(args, i, 0.001);
    else if (f == "--build-timeout") opts.build_timeout_s = parse_number(args, i, 0.001);
    else if (f == "--flush") opts.flush_cache = true;
    else if (!f.empty() && f[0] == '-') throw LoomError("unknown option " + f);
    else if (file.empty()) file = f;
    else throw LoomError("measure takes one FILE.json");
  }
  if (file.empty()) throw LoomError("usage: loom measure FILE.json [--log PATH]");

  TaskFile tf = read_task_file(file, {"candidates"});
  Task task = tf.task;
  if (threads_override) task.target.threads = threads_override;
  std::vector<nlohmann::json> candidates;
  if (tf.extra.contains("candidates")) {
    const auto& c = tf.extra["candidates"];
    if (!c.is_array()) throw LoomError(file + ": candidates: expected an array of step lists");
    for (const auto& s : c) candidates.push_back(s);
  } else {
    candidates.push_back(tf.steps);
  }
  if (candidates.empty()) throw LoomError(file + ": candidates: empty");

  const double flop = task.dag->flop_count();
  std::printf("task: %s  target: %s  (%.3f GFLOP)  %zu candidates  repeat=%d min_repeat_ms=%g\n",
              task.description().c_str(), task.target.to_string().c_str(), flop / 1e9, candidates.size(),
              opts.repeat, opts.min_repeat_ms);
  Measurer m(opts);
  std::vector<MeasureResult> rs = m.measure_steps(task, candidates);
  const MeasureBatchStats& st = m.last_stats();
  int errors = 0, wrong = 0, best = -1;
  for (size_t i = 0; i < rs.size(); ++i) {
    const MeasureResult& r = rs[i];
    if (r.ok()) {
      double med = r.median_s();
      std::printf("  #%-3zu %10.4f ms  %8.2f GFLOP/s   (build %.0f ms, check %.0f ms, timing %.0f ms)\n", i,
                  med * 1e3, flop / med / 1e9, r.build_s * 1e3, r.check_s * 1e3, r.run_s * 1e3);
      if (best < 0 || med < rs[best].median_s()) best = static_cast<int>(i);
    } else {
      ++errors;
      if (r.error == ErrorKind::kWrongResult) ++wrong;
      std::printf("  #%-3zu %s: %s\n", i, error_kind_name(r.error), r.error_msg.c_str());
    }
  }
  std::printf("measured %zu candidates in %.2f s (reference %.2f s): %zu ok, %d errors", rs.size(), st.wall_s,
              st.reference_s, rs.size() - errors, errors);
  if (best >= 0) std::printf("; best #%d %.2f GFLOP/s", best, flop / rs[best].median_s() / 1e9);
  std::printf("\n");
  if (!log_path.empty()) {
    RecordLog log(log_path);
    log.append(task, candidates, rs);
    std::printf("appended %zu records to %s\n", rs.size(), log_path.c_str());
  }
  return wrong ? kExitFailure : kExitOk;
}

}  // namespace loom::cli
