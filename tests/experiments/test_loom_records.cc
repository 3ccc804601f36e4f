// `loom records best`: the best programs of every task of some logs, as a
// records log (what the schedule database holds).
#include <gtest/gtest.h>

#include <filesystem>

#include "measure/records.h"
#include "measure/task.h"
#include "tests/experiments/loom_cli.h"
#include "tests/support/scratch_dir.h"

namespace loom {
namespace {

using testing::run_loom;

MeasureRecord timed(const Task& task, int program, double seconds) {
  MeasureRecord r{task, nlohmann::json::array({nlohmann::json::array({"CI", program})}), {}};
  r.result.costs_s = {seconds};
  return r;
}

TEST(LoomRecords, BestKeepsTheFastestProgramsOfEveryTask) {
  const std::string a = testing::scratch_path("records_a.jsonl"), b = testing::scratch_path("records_b.jsonl");
  const std::string out = testing::scratch_path("records_best.jsonl");
  for (const auto& p : {a, b, out}) std::filesystem::remove(p);
  Task m = Task::make("matmul", {{"M", 8}, {"N", 8}, {"K", 8}}, Target{});
  Task s = Task::make("softmax", {{"M", 4}, {"N", 8}}, Target{});
  RecordLog(a).append({timed(m, 1, 3e-3), timed(m, 2, 1e-3), timed(s, 1, 5e-3)});
  MeasureRecord failed = timed(m, 4, 0);
  failed.result.costs_s.clear();
  failed.result.error = ErrorKind::kRunError;
  RecordLog(b).append({timed(m, 3, 2e-3), failed});
  auto r = run_loom("records best " + a + " " + b + " --per-task 2 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("3 records, the best 2 programs of each of 2 tasks in 5 records"), std::string::npos)
      << r.output;
  std::vector<MeasureRecord> kept = load_records(out);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[0].steps[0][1], 2);  // matmul: 1 ms, then 2 ms
  EXPECT_EQ(kept[1].steps[0][1], 3);
  EXPECT_EQ(kept[2].task.workload, "softmax");
}

TEST(LoomRecords, BestNamesAMissingLog) {
  auto r = run_loom("records best /no/such.jsonl --out " + testing::scratch_path("records_none.jsonl"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("/no/such.jsonl: no such records log"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace loom
