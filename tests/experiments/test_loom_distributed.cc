// `mpirun ... loom tune CONFIG --distributed` on this machine: rank 0 tunes,
// the other ranks measure. With the simulated timing (LOOM_TEST_FAULT
// simulated_time) a search is reproducible, so the distributed job must
// measure exactly what a local run measures, even when one node dies and
// another falls silent mid-run.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tests/experiments/loom_cli.h"
#include "tests/support/scratch_dir.h"

namespace {

namespace fs = std::filesystem;
using loom::testing::CliResult;

// Runs a shell command line; stdout and stderr together.
CliResult shell(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

// Under AddressSanitizer (scripts/test.sh --sanitize) a process that
// started MPI runs without leak detection: Open MPI's plugins keep
// allocations until exit and are unloaded before LeakSanitizer could name
// them.
constexpr const char* kNoLeakCheck = "ASAN_OPTIONS=\"$ASAN_OPTIONS:detect_leaks=0\" ";

class LoomDistributed : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(LOOM_MPIRUN).empty()) GTEST_SKIP() << "built without MPI (no mpirun found)";
    dir_ = loom::testing::scratch_dir() / ("loom_distributed_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  // A config NAME.json whose log is NAME.jsonl: 24 trials of a small matmul.
  std::string config(const std::string& name) {
    const std::string path = (dir_ / (name + ".json")).string();
    std::ofstream(path) << nlohmann::json{
        {"name", name}, {"target", "cpu -threads=1"},
        {"tasks", {{{"workload", "matmul"}, {"params", {{"M", 64}, {"N", 64}, {"K", 64}}}}}},
        {"search", {{"num_trials", 24}, {"measures_per_round", 8}, {"population", 256}, {"seed", 5}}},
        {"cost_model", {{"kind", "random"}}},
        {"measure", {{"node_timeout_s", 3}}},
        {"outputs", {{"log", (dir_ / (name + ".jsonl")).string()}}}}.dump();
    return path;
  }
  // (steps, costs) of every record of a log, as a multiset.
  std::multiset<std::string> measured(const std::string& name, std::set<std::string>* nodes = nullptr) {
    std::multiset<std::string> out;
    std::ifstream in(dir_ / (name + ".jsonl"));
    for (std::string line; std::getline(in, line);) {
      nlohmann::json j = nlohmann::json::parse(line);
      out.insert(j["steps"].dump() + " " + j["result"]["costs_s"].dump() + " " + j["result"]["error"].dump());
      if (nodes) nodes->insert(j["result"].value("node", ""));
    }
    return out;
  }
  // The ranks' temp folder is dir_: a rank that dies leaves its files there.
  std::string mpirun(int ranks) const {
    return std::string("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TMPDIR=") + dir_.string() + " " +
           kNoLeakCheck + LOOM_MPIRUN + " --oversubscribe --enable-recovery -n " + std::to_string(ranks) +
           " -x LOOM_TEST_FAULT -x LOOM_TEST_NODE_FAULT -x TMPDIR ";
  }
  fs::path dir_;
};

TEST_F(LoomDistributed, ANodeThatDiesAndOneThatFallsSilentLoseNothing) {
  CliResult local = shell("LOOM_TEST_FAULT='*:simulated_time' " + std::string(LOOM_BINARY) + " tune " + config("local"));
  ASSERT_EQ(local.exit_code, 0) << local.output;
  // Rank 2 dies holding its second share, rank 3 falls silent at its third.
  CliResult dist = shell("LOOM_TEST_FAULT='*:simulated_time' LOOM_TEST_NODE_FAULT='2:die_after=1,3:silent_after=2' " +
                         mpirun(4) + LOOM_BINARY + " tune " + config("dist") + " --distributed");
  ASSERT_EQ(dist.exit_code, 0) << dist.output;
  EXPECT_NE(dist.output.find("cpu tasks are measured on 3 node(s)"), std::string::npos) << dist.output;
  EXPECT_NE(dist.output.find("rank 2 lost: silent for"), std::string::npos) << dist.output;
  EXPECT_NE(dist.output.find("rank 3 lost: silent for"), std::string::npos) << dist.output;
  std::set<std::string> nodes;
  EXPECT_EQ(measured("dist", &nodes), measured("local")) << "the job measured other programs than a local run";
  EXPECT_GE(nodes.size(), 2u) << "every record came from one node";
  EXPECT_EQ(nodes.count(""), 0u) << "a record does not name its node";
}

TEST_F(LoomDistributed, OutsideMpirunIsAOneLineError) {
  CliResult r = shell(kNoLeakCheck + std::string(LOOM_BINARY) + " tune " + config("alone") + " --distributed");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("loom tune: error: --distributed: the job has one rank and so no measurement node"),
            std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "alone.jsonl"));
}

}  // namespace
