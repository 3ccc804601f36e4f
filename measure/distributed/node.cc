#include "measure/distributed/node.h"

#include <csignal>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <map>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "ir/error.h"
#include "measure/batch_runner.h"
#include "measure/distributed/protocol.h"
#include "measure/machine.h"
#include "measure/measurer.h"

namespace loom {

namespace {

struct NodeFault {
  std::string kind;  // "" | die_after | silent_after
  int after = 0;
};

NodeFault node_fault_from_env(int rank) {
  const char* env = std::getenv("LOOM_TEST_NODE_FAULT");
  std::string s = env ? env : "";
  size_t pos = 0;
  while (pos < s.size()) {
    size_t comma = s.find(',', pos);
    std::string item = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t colon = item.find(':'), eq = item.find('=');
    if (colon == std::string::npos || eq == std::string::npos || eq < colon)
      throw LoomError("LOOM_TEST_NODE_FAULT: expected RANK:KIND=N items, got '" + item + "'");
    try {
      if (std::stoi(item.substr(0, colon)) == rank)
        return {item.substr(colon + 1, eq - colon - 1), std::stoi(item.substr(eq + 1))};
    } catch (const std::exception&) {
      throw LoomError("LOOM_TEST_NODE_FAULT: bad number in '" + item + "'");
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return {};
}

// Measures one share: the reply to send.
nlohmann::json measure_share(Measurer& measurer, std::map<std::string, Task>& tasks, const nlohmann::json& msg) {
  const int id = msg.value("id", -1);
  try {
    const std::string text = msg.at("task").dump();
    auto it = tasks.find(text);
    if (it == tasks.end()) it = tasks.emplace(text, Task::from_json(msg.at("task"))).first;
    const Task& task = it->second;
    std::vector<nlohmann::json> steps = msg.at("steps").get<std::vector<nlohmann::json>>();
    if (msg.value("best_s", 0.0) > 0) measurer.note_best(task, msg.value("best_s", 0.0));
    nlohmann::json results = nlohmann::json::array();
    for (const MeasureResult& r : measurer.measure_steps(task, steps)) results.push_back(result_to_json(r));
    return {{"type", "done"}, {"id", id}, {"results", results}};
  } catch (const std::exception& e) {
    return {{"type", "failed"}, {"id", id}, {"error", e.what()}};
  }
}

// The one thread that measures the node's shares, in order: a worker
// process dies with the thread that spawned it (PR_SET_PDEATHSIG), so the
// pool's workers must live on a thread that outlives every share.
class ShareThread {
 public:
  explicit ShareThread(std::function<nlohmann::json(const nlohmann::json&)> measure)
      : measure_(std::move(measure)), thread_([this] { loop(); }) {}
  ~ShareThread() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();  // after the share being measured, if any
  }
  void push(nlohmann::json share) {
    std::lock_guard<std::mutex> lock(mu_);
    todo_.push_back(std::move(share));
    cv_.notify_all();
  }
  bool pop_reply(nlohmann::json* reply) {
    std::lock_guard<std::mutex> lock(mu_);
    if (replies_.empty()) return false;
    *reply = std::move(replies_.front());
    replies_.pop_front();
    return true;
  }
  bool idle() {
    std::lock_guard<std::mutex> lock(mu_);
    return todo_.empty() && !measuring_;
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || !todo_.empty(); });
      if (stop_) return;
      nlohmann::json share = std::move(todo_.front());
      todo_.pop_front();
      measuring_ = true;
      lock.unlock();
      nlohmann::json reply = measure_(share);
      lock.lock();
      measuring_ = false;
      replies_.push_back(std::move(reply));
    }
  }
  std::function<nlohmann::json(const nlohmann::json&)> measure_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<nlohmann::json> todo_, replies_;
  bool measuring_ = false, stop_ = false;
  std::thread thread_;  // last: started once the rest exists
};

}  // namespace

int run_measurement_node(Transport& t, const std::function<void(const std::string&)>& print) {
  const NodeFault fault = node_fault_from_env(t.rank());
  const std::string me = t.host() + " rank " + std::to_string(t.rank());
  double timeout_s = distributed::kSetupWaitS, beat_s = distributed::heartbeat_s(timeout_s);
  double last_heard = steady_seconds(), last_sent = steady_seconds();
  auto send = [&](const nlohmann::json& msg) {
    t.send(0, msg.dump());
    last_sent = steady_seconds();
  };
  send({{"type", "hello"}, {"machine", this_machine().to_json()}, {"host", t.host()}});

  std::unique_ptr<Measurer> measurer;
  std::map<std::string, Task> tasks;  // by their JSON text: a DAG is built once
  std::unique_ptr<ShareThread> shares;  // after the measurer: destroyed (joined) first
  int completed = 0;
  bool silent = false;
  for (;;) {
    nlohmann::json reply;
    while (shares && shares->pop_reply(&reply)) {
      if (!silent) send(reply);
      ++completed;
    }
    int from = -1;
    std::string bytes;
    if (t.receive(&from, &bytes, shares && !shares->idle() ? 0.01 : std::min(beat_s, 0.1)) && from == 0) {
      last_heard = steady_seconds();
      nlohmann::json msg = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
      const std::string type = msg.is_object() ? msg.value("type", "") : "";
      if (type == "quit") {
        if (msg.value("peer_lost", false)) t.peer_lost();
        return 0;  // a share still measured is finished first (ShareThread's destructor)
      }
      if (type == "setup" && !measurer) {
        MeasureOptions opts = measure_options_from_json(msg.value("measure", nlohmann::json()), "measure");
        measurer = std::make_unique<Measurer>(opts);
        shares = std::make_unique<ShareThread>(
            [&measurer, &tasks](const nlohmann::json& share) { return measure_share(*measurer, tasks, share); });
        timeout_s = opts.node_timeout_s;
        beat_s = distributed::heartbeat_s(timeout_s);
      } else if (type == "work" && !silent) {
        if (fault.kind == "die_after" && completed >= fault.after) std::raise(SIGKILL);
        if (fault.kind == "silent_after" && completed >= fault.after) {
          silent = true;
          continue;
        }
        if (!measurer) {
          send({{"type", "failed"}, {"id", msg.value("id", -1)}, {"error", "work dealt before setup"}});
          continue;
        }
        shares->push(std::move(msg));
      }
    }
    if (!silent && steady_seconds() - last_sent >= beat_s) send({{"type", "alive"}});
    if (steady_seconds() - last_heard > timeout_s) {
      print(me + ": rank 0 silent for " + std::to_string(static_cast<int>(timeout_s)) + " s: this node ends");
      return 1;
    }
  }
}

}  // namespace loom
