// loom records best LOG... --per-task N --out FILE: the best N programs of
// every task in the logs (measure/records.h's ranking, the one `loom report`
// and `loom export` choose by), each as its latest valid record, written to
// FILE as a records log: what the schedule database holds
// (scripts/build_schedule_database.sh). Also where the shipped database
// lies, and the shipped cost model, for the verbs that use them.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include "experiments/config.h"
#include "experiments/verbs.h"
#include "ir/error.h"
#include "measure/records.h"

namespace loom::cli {

namespace {

int best_verb(const Args& a) {
  std::vector<std::string> logs;
  std::string out;
  int per_task = 3;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == "--per-task") {
      per_task = int_flag(a, i, "--per-task");
    } else if (a[i] == "--out") {
      if (i + 1 >= a.size()) throw LoomError("--out needs a file");
      out = a[++i];
    } else if (!a[i].empty() && a[i][0] == '-') {
      throw LoomError("unknown option " + a[i]);
    } else {
      logs.push_back(a[i]);
    }
  }
  if (logs.empty() || out.empty()) throw LoomError("usage: loom records best LOG... --per-task N --out FILE");
  std::vector<MeasureRecord> records;
  for (const auto& log : logs) {
    if (!std::filesystem::exists(log)) throw LoomError(log + ": no such records log");
    std::vector<MeasureRecord> more = load_records(log);
    records.insert(records.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  std::vector<MeasureRecord> kept;
  std::set<std::string> tasks;
  for (const auto& r : records) tasks.insert(r.task_key());
  for (const auto& best : best_records_per_task(records, per_task))
    for (const MeasureRecord* r : best) kept.push_back(*r);
  std::filesystem::remove(out);
  RecordLog(out).append(kept);
  std::printf("wrote %s: %zu records, the best %d programs of each of %zu tasks in %zu records\n", out.c_str(),
              kept.size(), per_task, tasks.size(), records.size());
  return kExitOk;
}

}  // namespace

std::vector<std::string> shipped_schedule_databases() {
  std::vector<std::string> out;
  const std::filesystem::path dir = std::filesystem::path(LOOM_SOURCE_DIR) / "experiments/schedules/database";
  if (!std::filesystem::is_directory(dir)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".jsonl") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string shipped_cost_model() { return std::string(LOOM_SOURCE_DIR) + "/experiments/models/suite_mlp.model"; }

std::string untimed_cost_model(const ExperimentConfig& cfg) {
  return cfg.pretrained_model.empty() ? shipped_cost_model() : cfg.pretrained_model;
}

std::vector<std::string> resolve_schedule_databases(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const std::string& n : names) {
    if (n != "shipped") {
      out.push_back(n);
      continue;
    }
    for (const std::string& f : shipped_schedule_databases()) out.push_back(f);
  }
  return out;
}

int records_verb(const Args& args) {
  if (args.empty() || args[0] != "best") throw LoomError("usage: loom records best LOG... --per-task N --out FILE");
  return best_verb(Args(args.begin() + 1, args.end()));
}

}  // namespace loom::cli
