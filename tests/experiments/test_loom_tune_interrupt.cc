// Ctrl-C during `loom tune`: the terminal sends SIGINT to the whole
// foreground process group (tuner and workers); tuning stops after the
// current batch, exits normally, and the log holds only real measurements.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/support/scratch_dir.h"

namespace {

TEST(LoomTune, CtrlCStopsAfterTheBatchWithTheLogIntact) {
  auto dir = loom::testing::scratch_dir() / ("loom_sigint_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string config = (dir / "c.json").string(), log = (dir / "c.jsonl").string(),
              out = (dir / "out.txt").string();
  std::ofstream(config) << R"({"name": "c", "target": "cpu -threads=1",
    "tasks": [{"workload": "matmul", "params": {"M": 64, "N": 64, "K": 64}}],
    "search": {"num_trials": 100000, "measures_per_round": 8, "population": 64, "seed": 3},
    "cost_model": {"kind": "random"}, "measure": {"repeat": 2, "min_repeat_ms": 5},
    "outputs": {"log": ")" << log << R"("}})";
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setpgid(0, 0);  // its own group, like a foreground job in a terminal
    int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    execl(LOOM_BINARY, LOOM_BINARY, "tune", config.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid, pid);
  // Wait until a few batches are in the log, then "press Ctrl-C".
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  auto lines = [&] {
    std::ifstream in(log);
    return std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n');
  };
  while (lines() < 16 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_GE(lines(), 16) << "tuning did not start";
  kill(-pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  std::ifstream o(out);
  std::stringstream text;
  text << o.rdbuf();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text.str();
  EXPECT_NE(text.str().find("interrupted"), std::string::npos) << text.str();
  std::ifstream in(log);
  std::string line;
  int records = 0;
  while (std::getline(in, line)) {
    nlohmann::json r = nlohmann::json::parse(line);  // every line complete
    EXPECT_EQ(r["result"]["error"], "none") << line;  // no worker killed by the Ctrl-C
    ++records;
  }
  EXPECT_EQ(records % 8, 0);  // whole batches only
  std::filesystem::remove_all(dir);
}

}  // namespace
