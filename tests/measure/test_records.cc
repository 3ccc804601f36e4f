// The records log: round trip, best program, tolerance of
// malformed and truncated lines, and crash safety (kill -9 of a process
// appending to the log, and of a tuner in the middle of a batch).
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "ir/error.h"
#include "measure/measurer.h"
#include "measure/records.h"
#include "measure_test_util.h"
#include "tests/support/scratch_dir.h"

namespace loom {
namespace {

using namespace measure_test;

std::string temp_path(const std::string& name) {
  return (loom::testing::scratch_dir() / ("loom_records_" + std::to_string(::getpid()) + "_" + name)).string();
}

std::string read_all(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

MeasureRecord make_record(const Task& task, int variant, double cost, ErrorKind err = ErrorKind::kNone) {
  MeasureRecord r;
  r.task = task;
  r.steps = tiled(task, variant).steps_json();
  if (err == ErrorKind::kNone) r.result.costs_s = {cost, cost * 1.01, cost * 0.99};
  r.result.error = err;
  if (err != ErrorKind::kNone) r.result.error_msg = "boom";
  r.result.build_s = 0.01;
  r.result.run_s = 0.05;
  r.result.timestamp = 1795000000 + variant;
  return r;
}

TEST(Records, AProgramMeasuredAgainIsJudgedOnTheMedianOfItsMeasurements) {
  Task a = small_matmul(32);
  // Programs 1 and 2 were measured three times each (confirmed): program 1's
  // median (1.1 ms) beats program 2's (1.3 ms) although program 2 had the
  // luckiest single measurement (0.4 ms).
  std::vector<MeasureRecord> recs = {make_record(a, 1, 0.9e-3), make_record(a, 2, 0.4e-3),
                                     make_record(a, 1, 1.1e-3), make_record(a, 2, 1.3e-3),
                                     make_record(a, 1, 1.2e-3), make_record(a, 2, 1.4e-3)};
  auto ranked = ranked_programs(recs, a.key());
  ASSERT_EQ(ranked.size(), 2u);
  EXPECT_EQ(ranked[0].record, &recs[4]);  // program 1's latest record
  EXPECT_NEAR(ranked[0].cost_s, 1.1e-3, 1e-12);
  EXPECT_EQ(ranked[0].measurements, 3);
  EXPECT_EQ(ranked[1].record, &recs[5]);
  EXPECT_EQ(best_program(recs, a.key()).record, &recs[4]);
}

TEST(Records, ProgramsMeasuredAgainComeBeforeThoseMeasuredOnceUnlessTuningLaterBeatThem) {
  Task a = small_matmul(32);
  // Program 0 was confirmed (first measured 1.0 ms, median 1.5 ms under load);
  // program 1, measured once at 1.2 ms in tuning, lost to program 0 there
  // and is not compared with re-measurements from another moment.
  std::vector<MeasureRecord> recs = {make_record(a, 0, 1.0e-3), make_record(a, 1, 1.2e-3),
                                     make_record(a, 0, 1.5e-3), make_record(a, 0, 1.6e-3)};
  auto ranked = ranked_programs(recs, a.key());
  ASSERT_EQ(ranked.size(), 2u);
  EXPECT_EQ(ranked[0].record, &recs[3]);
  EXPECT_NEAR(ranked[0].cost_s, 1.5e-3, 1e-12);
  EXPECT_EQ(ranked[1].record, &recs[1]);
  // Program 2, measured once later at 0.8 ms, beats program 0's first
  // measurement: tuning found something faster after the confirmation.
  recs.push_back(make_record(a, 2, 0.8e-3));
  ranked = ranked_programs(recs, a.key());
  ASSERT_EQ(ranked.size(), 3u);
  EXPECT_EQ(ranked[0].record, &recs[4]);
  EXPECT_EQ(ranked[1].record, &recs[3]);
  EXPECT_EQ(ranked[2].record, &recs[1]);
}

TEST(Records, AProgramWithAWrongResultIsNeverBestEvenWhenOtherRecordsOfItAreValid) {
  Task a = small_matmul(32);
  std::vector<MeasureRecord> recs = {make_record(a, 0, 1.0e-3), make_record(a, 0, 0, ErrorKind::kWrongResult),
                                     make_record(a, 1, 3.0e-3)};
  auto ranked = ranked_programs(recs, a.key());
  ASSERT_EQ(ranked.size(), 1u);
  EXPECT_EQ(ranked[0].record, &recs[2]);
}

// An untimed record (a schedule chosen with nothing timed) round-trips,
// is never a program's cost, and is the task's latest untimed choice.
TEST(Records, AnUntimedRecordIsNoMeasurementButTheLatestChoice) {
  Task task = small_matmul();
  MeasureRecord first = untimed_record(task, tiled(task, 1).steps_json());
  MeasureRecord second = untimed_record(task, tiled(task, 2).steps_json());
  EXPECT_TRUE(first.untimed());
  EXPECT_EQ(first.result.machine, this_machine());
  MeasureRecord back = record_from_json(record_to_json(first));
  EXPECT_TRUE(back.untimed());
  EXPECT_EQ(record_to_json(back)["result"]["error"], "not_measured");
  std::vector<MeasureRecord> records = {first, second};
  EXPECT_EQ(best_program(records, task.key()).record, nullptr);
  ASSERT_NE(latest_untimed(records, task.key()), nullptr);
  EXPECT_EQ(latest_untimed(records, task.key())->steps, second.steps);
  records.push_back(make_record(task, 3, 1e-3));
  EXPECT_EQ(best_program(records, task.key()).record->steps, records[2].steps);
}

TEST(Records, RoundTripAndHelpers) {
  std::string path = temp_path("roundtrip.jsonl");
  std::remove(path.c_str());
  Task a = small_matmul(32), b = small_matmul(48);
  {
    RecordLog log(path);
    log.append({make_record(a, 0, 3e-3), make_record(a, 1, 1e-3), make_record(b, 0, 2e-3)});
    log.append({make_record(a, 2, 0.5e-3, ErrorKind::kWrongResult), make_record(b, 1, 4e-3)});
  }
  LoadReport rep;
  auto recs = load_records(path, &rep, false);
  ASSERT_EQ(recs.size(), 5u);
  EXPECT_EQ(rep.skipped, 0);
  EXPECT_EQ(recs[3].result.error, ErrorKind::kWrongResult);
  EXPECT_EQ(recs[3].result.error_msg, "boom");
  EXPECT_EQ(recs[1].result.costs_s.size(), 3u);
  EXPECT_EQ(recs[0].steps, tiled(a, 0).steps_json());
  EXPECT_EQ(recs[0].task_key(), a.key());
  EXPECT_EQ(recs[0].result.timestamp, 1795000000);

  const MeasureRecord* best = best_program(recs, a.key()).record;
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(best->steps, tiled(a, 1).steps_json());  // the wrong result is never best
  EXPECT_EQ(best_program(recs, small_matmul(16).key()).record, nullptr);

  // The record's JSON form as measure/records.h documents it.
  nlohmann::json j = record_to_json(recs[0]);
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["task"]["workload"], "matmul");
  EXPECT_EQ(j["result"]["error"], "none");
  EXPECT_FALSE(j["result"].contains("error_msg"));
  EXPECT_EQ(record_from_json(j).steps, recs[0].steps);
  std::remove(path.c_str());
}

TEST(Records, AResultNamesTheMachineAndTheNodeThatMeasuredIt) {
  MeasureRecord r = make_record(small_matmul(32), 0, 1e-3);
  r.result.machine = MachineKind{"Some CPU", "avx512", 8, "Some GPU"};
  r.result.node = "host7 rank 3";
  nlohmann::json j = record_to_json(r);
  EXPECT_EQ(j["result"]["machine"], nlohmann::json::parse(R"({"cpu":"Some CPU","isa":"avx512","cores":8,"gpu":"Some GPU"})"));
  EXPECT_EQ(j["result"]["node"], "host7 rank 3");
  MeasureRecord back = record_from_json(j);
  EXPECT_EQ(back.result.machine, r.result.machine);
  EXPECT_EQ(back.result.node, "host7 rank 3");
  // Records written before machines were named load with the machine unknown.
  j["result"].erase("machine");
  EXPECT_FALSE(record_from_json(j).result.machine.known());
  j["result"]["machine"] = {{"cpu", "x"}, {"cores", "many"}};
  EXPECT_THROW(record_from_json(j), LoomError);
}

TEST(Records, EveryMeasurementNamesThisMachine) {
  Measurer m(fast_options());
  Task task = small_matmul(32);
  MeasureResult r = m.measure(task, {tiled(task, 0)})[0];
  ASSERT_TRUE(r.ok()) << r.error_msg;
  EXPECT_EQ(r.machine, this_machine());
  EXPECT_FALSE(this_machine().cpu.empty());
  EXPECT_GT(this_machine().cores, 0);
  EXPECT_TRUE(r.node.empty());
}

// A timestamp past int64 was converted anyway (undefined behaviour, found
// by fuzzing); a negative cost would rank a program first.
TEST(Records, ImpossibleTimestampsAndNegativeCostsAreSkipped) {
  std::string path = temp_path("impossible.jsonl");
  std::remove(path.c_str());
  Task a = small_matmul(32);
  {
    std::ofstream out(path);
    const std::string task = a.to_json().dump();
    out << "{\"task\": " << task << ", \"steps\": [], \"result\": {\"costs_s\": [1e-3], \"error\": \"none\", \"timestamp\": 1.8e50}}\n";
    out << "{\"task\": " << task << ", \"steps\": [], \"result\": {\"costs_s\": [-1e-3], \"error\": \"none\"}}\n";
    out << "{\"task\": " << task << ", \"steps\": [], \"result\": {\"costs_s\": [1e-3], \"error\": \"none\", \"timestamp\": 1795000000}}\n";
  }
  LoadReport rep;
  auto recs = load_records(path, &rep, false);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].result.timestamp, 1795000000);
  ASSERT_EQ(rep.warnings.size(), 2u);
  EXPECT_NE(rep.warnings[0].find("timestamp"), std::string::npos) << rep.warnings[0];
  EXPECT_NE(rep.warnings[1].find("non-negative"), std::string::npos) << rep.warnings[1];
  std::remove(path.c_str());
}

TEST(Records, MalformedAndTruncatedLinesAreSkipped) {
  std::string path = temp_path("damaged.jsonl");
  std::remove(path.c_str());
  Task a = small_matmul(32);
  {
    RecordLog log(path);
    log.append({make_record(a, 0, 3e-3), make_record(a, 1, 1e-3)});
  }
  {
    std::ofstream out(path, std::ios::app);
    out << "this is not json\n";
    out << "{\"task\": {\"workload\": \"nope\"}, \"steps\": [], \"result\": {\"costs_s\": [], \"error\": \"none\"}}\n";
    out << "\n";
    out << "{\"task\": " << a.to_json().dump() << ", \"steps\": [], \"result\": {\"costs_s\": [1], \"error\": \"bad\"}}\n";
  }
  {
    RecordLog log(path);
    log.append({make_record(a, 2, 2e-3)});
  }
  // Cut the file in the middle of the last record.
  std::string text = read_all(path);
  size_t cut = text.size() - 40;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text.substr(0, cut);
  }
  LoadReport rep;
  auto recs = load_records(path, &rep, false);
  EXPECT_EQ(recs.size(), 2u);
  EXPECT_EQ(rep.skipped, 4);
  ASSERT_EQ(rep.warnings.size(), 4u);
  EXPECT_NE(rep.warnings[0].find(":3: skipped malformed JSON"), std::string::npos) << rep.warnings[0];
  EXPECT_NE(rep.warnings[1].find("unknown workload"), std::string::npos) << rep.warnings[1];
  EXPECT_NE(rep.warnings[2].find("unknown error kind"), std::string::npos) << rep.warnings[2];
  EXPECT_NE(rep.warnings[3].find("truncated last line"), std::string::npos) << rep.warnings[3];

  // Appending after a cut line starts a fresh line: nothing more is lost.
  {
    RecordLog log(path);
    log.append({make_record(a, 3, 1e-3), make_record(a, 0, 5e-3)});
  }
  LoadReport rep2;
  recs = load_records(path, &rep2, false);
  EXPECT_EQ(recs.size(), 4u);
  EXPECT_EQ(rep2.skipped, 4);
  EXPECT_NE(rep2.warnings[3].find("malformed JSON"), std::string::npos);  // the cut line, now complete
  std::remove(path.c_str());
}

TEST(Records, MissingLogIsAnError) {
  EXPECT_THROW(load_records(temp_path("does_not_exist.jsonl")), LoomError);
}

// A device would be read forever (/dev/zero never ends).
TEST(Records, ALogThatIsNotARegularFileIsAnError) {
  try {
    load_records("/dev/zero");
    FAIL() << "read /dev/zero as a log";
  } catch (const LoomError& e) {
    EXPECT_EQ(std::string(e.what()), "/dev/zero: not a regular file (a log must be one)");
  }
}

// Checks that every complete line parses; returns the number of records.
size_t check_complete_lines(const std::string& path) {
  std::string text = read_all(path);
  size_t last_nl = text.rfind('\n');
  std::string complete = last_nl == std::string::npos ? "" : text.substr(0, last_nl + 1);
  size_t n = 0;
  std::istringstream in(complete);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    EXPECT_NO_THROW(record_from_json(nlohmann::json::parse(line))) << line.substr(0, 200);
    ++n;
  }
  LoadReport rep;
  auto recs = load_records(path, &rep, false);
  EXPECT_EQ(recs.size(), n);
  EXPECT_LE(rep.skipped, 1);  // at most a cut last line
  return n;
}

// A forked appender tells its parent through a pipe each time a batch is in
// the log, so the parent kills it after an event, not after a guessed sleep.
struct BatchSignal {
  int fd[2] = {-1, -1};
  BatchSignal() {
    if (::pipe(fd) != 0) fd[0] = fd[1] = -1;
  }
  ~BatchSignal() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void send() {  // in the child
    if (::write(fd[1], "b", 1) != 1) _exit(1);
  }
  bool wait_for(int batches) {  // in the parent; false if the child died first
    ::close(fd[1]);
    fd[1] = -1;
    char c;
    for (int k = 0; k < batches; ++k)
      if (::read(fd[0], &c, 1) != 1) return false;
    return true;
  }
};

TEST(Records, KillDashNineOfAnAppenderLeavesParsableLines) {
  std::string path = temp_path("killed_appender.jsonl");
  std::remove(path.c_str());
  Task a = small_matmul(32);
  std::vector<MeasureRecord> batch;
  for (int i = 0; i < 200; ++i) batch.push_back(make_record(a, i % 4, 1e-3 * (i + 1)));
  BatchSignal appended;
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    RecordLog log(path);
    for (;;) {  // until killed
      log.append(batch);
      appended.send();
    }
  }
  // Two whole batches are in the file; the kill lands in a later append.
  ASSERT_TRUE(appended.wait_for(2));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  size_t n = check_complete_lines(path);
  EXPECT_GT(n, 200u);
  std::remove(path.c_str());
}

TEST(Records, KillDashNineOfATunerMidBatchLeavesParsableLines) {
  std::string path = temp_path("killed_tuner.jsonl");
  std::remove(path.c_str());
  Task task = small_matmul();
  // The killed tuner cannot remove its reference files: give it a temp dir.
  std::string tmp = temp_path("tuner_tmp");
  std::filesystem::create_directories(tmp);
  BatchSignal appended;
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // A tuner: batches of 4 candidates, each appended when measured.
    ::setenv("TMPDIR", tmp.c_str(), 1);
    Measurer m(fast_options());
    RecordLog log(path);
    for (int round = 0;; ++round) {
      std::vector<State> states;
      for (int i = 0; i < 4; ++i) states.push_back(tiled(task, round * 4 + i));
      auto rs = m.measure(task, states);
      std::vector<nlohmann::json> steps;
      for (auto& s : states) steps.push_back(s.steps_json());
      log.append(task, steps, rs);
      appended.send();
    }
  }
  // Two batches appended; the kill lands while the next one is measured.
  ASSERT_TRUE(appended.wait_for(2));
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  size_t n = check_complete_lines(path);
  EXPECT_GE(n, 8u);
  EXPECT_EQ(n % 4, 0u);  // whole batches only
  auto recs = load_records(path, nullptr, false);
  for (const auto& r : recs) EXPECT_TRUE(r.result.ok()) << r.result.error_msg;
  std::remove(path.c_str());
  std::filesystem::remove_all(tmp);
}

}  // namespace
}  // namespace loom
