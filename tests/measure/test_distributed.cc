// Distributed measurement (measure/distributed/) over an in-process
// transport: the coordinator and real measurement nodes (each with its own
// worker processes) as threads of this test. The MPI transport itself is
// tested through `mpirun ... loom tune --distributed` (tests/experiments).
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <future>
#include <mutex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "ir/error.h"
#include "measure/distributed/coordinator.h"
#include "measure/distributed/node.h"
#include "measure_test_util.h"

namespace loom {
namespace {

using namespace measure_test;

// Mailboxes of a job of `size` ranks in one process.
struct Hub {
  explicit Hub(int size) : boxes(static_cast<size_t>(size)) {}
  struct Box {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::pair<int, std::string>> messages;
  };
  std::deque<Box> boxes;
};

class HubTransport : public Transport {
 public:
  HubTransport(Hub& hub, int rank) : hub_(hub), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(hub_.boxes.size()); }
  std::string host() const override { return "test"; }
  void send(int to, const std::string& bytes) override {
    Hub::Box& box = hub_.boxes[static_cast<size_t>(to)];
    std::lock_guard<std::mutex> lock(box.mu);
    box.messages.emplace_back(rank_, bytes);
    box.cv.notify_all();
  }
  bool receive(int* from, std::string* bytes, double wait_s) override {
    Hub::Box& box = hub_.boxes[static_cast<size_t>(rank_)];
    std::unique_lock<std::mutex> lock(box.mu);
    if (!box.cv.wait_for(lock, std::chrono::duration<double>(wait_s), [&] { return !box.messages.empty(); }))
      return false;
    *from = box.messages.front().first;
    *bytes = std::move(box.messages.front().second);
    box.messages.pop_front();
    return true;
  }

 private:
  Hub& hub_;
  int rank_;
};

// Nodes 1..n_nodes of `hub` as threads; joined (after the coordinator's quit)
// on destruction.
struct Nodes {
  Nodes(Hub& hub, int n_nodes) {
    for (int r = 1; r <= n_nodes; ++r) transports.push_back(std::make_unique<HubTransport>(hub, r));
    for (auto& t : transports)
      exits.push_back(std::async(std::launch::async, [&t] { return run_measurement_node(*t, [](const std::string&) {}); }));
  }
  std::vector<std::unique_ptr<HubTransport>> transports;
  std::vector<std::future<int>> exits;
};

std::vector<nlohmann::json> tile_variants(const Task& task, int n) {
  std::vector<nlohmann::json> steps;
  for (int v = 0; v < n; ++v) steps.push_back(tiled(task, v).steps_json());
  return steps;
}

MeasureOptions one_build_per_node() {
  MeasureOptions o = fast_options();
  o.n_parallel_builds = 1;  // shares of one candidate: every node gets some
  o.node_timeout_s = 5;
  return o;
}

TEST(Distributed, ABatchIsDealtToTheNodesAndComesBackInItsOrder) {
  Hub hub(3);
  Nodes nodes(hub, 2);
  HubTransport t0(hub, 0);
  Task task = small_matmul();
  std::vector<nlohmann::json> steps = tile_variants(task, 6);
  steps[3] = "not a step list";  // its result must land at index 3
  std::vector<MeasureResult> results;
  {
    DistributedMeasurer dm(t0, one_build_per_node(), [](const std::string&) {});
    results = dm.measure_steps(task, steps);
  }
  ASSERT_EQ(results.size(), 6u);
  std::set<std::string> node_names;
  for (size_t i = 0; i < results.size(); ++i) {
    if (i == 3) {
      EXPECT_EQ(results[i].error, ErrorKind::kInvalidSchedule);
      continue;
    }
    EXPECT_TRUE(results[i].ok()) << i << ": " << results[i].error_msg;
    EXPECT_EQ(results[i].machine, this_machine());
    node_names.insert(results[i].node);
  }
  EXPECT_EQ(node_names, (std::set<std::string>{"test rank 1", "test rank 2"}));
  for (auto& e : nodes.exits) EXPECT_EQ(e.get(), 0);
}

// Sets an environment variable for one test's scope.
struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  const char* name_;
};

TEST(Distributed, ASilentNodesShareGoesToTheOtherNodes) {
  ScopedEnv fault("LOOM_TEST_NODE_FAULT", "2:silent_after=0");  // read by each node at its start
  Hub hub(3);
  Nodes nodes(hub, 2);
  HubTransport t0(hub, 0);
  Task task = small_matmul();
  MeasureOptions o = one_build_per_node();
  o.node_timeout_s = 1;
  std::vector<std::string> lines;
  std::vector<MeasureResult> results;
  {
    DistributedMeasurer dm(t0, o, [&](const std::string& l) { lines.push_back(l); });
    results = dm.measure_steps(task, tile_variants(task, 4));
    EXPECT_FALSE(dm.nodes()[0].lost);
    EXPECT_TRUE(dm.nodes()[1].lost);
  }
  for (const auto& r : results) {
    EXPECT_TRUE(r.ok()) << r.error_msg;
    EXPECT_EQ(r.node, "test rank 1");
  }
  bool said = false;
  for (const auto& l : lines) said |= l.rfind("node test rank 2 lost: silent for", 0) == 0;
  EXPECT_TRUE(said) << "no line says that rank 2 was lost";
  for (auto& e : nodes.exits) EXPECT_EQ(e.get(), 0);  // the silent one still hears quit
}

TEST(Distributed, NodesOfAnotherMachineKindStayIdle) {
  Hub hub(3);
  Nodes nodes(hub, 1);
  // Rank 2 poses as another machine and counts the work it is dealt.
  HubTransport t2(hub, 2);
  auto work_dealt = std::async(std::launch::async, [&t2] {
    MachineKind other{"Other CPU", "avx2", 64, ""};
    t2.send(0, nlohmann::json{{"type", "hello"}, {"machine", other.to_json()}, {"host", "other"}}.dump());
    int work = 0;
    for (;;) {
      int from = -1;
      std::string bytes;
      if (!t2.receive(&from, &bytes, 0.2)) {
        t2.send(0, R"({"type":"alive"})");
        continue;
      }
      const std::string type = nlohmann::json::parse(bytes).value("type", "");
      if (type == "quit") return work;
      work += type == "work";
    }
  });
  HubTransport t0(hub, 0);
  Task task = small_matmul();
  std::vector<std::string> lines;
  std::vector<MeasureResult> results;
  {
    DistributedMeasurer dm(t0, one_build_per_node(), [&](const std::string& l) { lines.push_back(l); });
    results = dm.measure_steps(task, tile_variants(task, 3));
  }
  EXPECT_EQ(work_dealt.get(), 0);
  for (const auto& r : results) EXPECT_EQ(r.node, "test rank 1");
  bool said = false;
  for (const auto& l : lines) said |= l.find("other rank 2 (Other CPU (avx2, 64 cores)) stays idle") != std::string::npos;
  EXPECT_TRUE(said) << "no line names the idle node";
}

TEST(Distributed, ANodeEndsWhenItsCoordinatorFallsSilent) {
  Hub hub(2);
  HubTransport t0(hub, 0), t1(hub, 1);
  auto exit_code = std::async(std::launch::async, [&t1] { return run_measurement_node(t1, [](const std::string&) {}); });
  int from = -1;
  std::string hello;
  ASSERT_TRUE(t0.receive(&from, &hello, 30));
  EXPECT_EQ(nlohmann::json::parse(hello)["type"], "hello");
  MeasureOptions o = fast_options();
  o.node_timeout_s = 0.5;
  t0.send(1, nlohmann::json{{"type", "setup"}, {"measure", measure_options_to_json(o)}}.dump());
  ASSERT_EQ(exit_code.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_EQ(exit_code.get(), 1);
}

TEST(Distributed, AJobOfOneRankIsAOneLineError) {
  Hub hub(1);
  HubTransport t0(hub, 0);
  try {
    DistributedMeasurer dm(t0, fast_options(), [](const std::string&) {});
    FAIL() << "a job without nodes was accepted";
  } catch (const LoomError& e) {
    EXPECT_NE(std::string(e.what()).find("no measurement node"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace loom
