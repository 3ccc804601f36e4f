#include "measure/distributed/coordinator.h"

#include <chrono>
#include <deque>

#include <nlohmann/json.hpp>

#include "ir/error.h"
#include "measure/batch_runner.h"
#include "measure/distributed/protocol.h"

namespace loom {

namespace {

// What must be equal for two nodes' timings of a task to compare.
std::string kind_key(const MachineKind& m, const Target& target) {
  return target.is_gpu() ? m.gpu : m.cpu + "|" + m.isa + "|" + std::to_string(m.cores);
}

std::string seconds_text(double s) { return std::to_string(static_cast<int>(s + 0.5)) + " s"; }

}  // namespace

DistributedMeasurer::DistributedMeasurer(Transport& transport, MeasureOptions opts,
                                         std::function<void(const std::string&)> print)
    : t_(transport), opts_(std::move(opts)), print_(std::move(print)) {
  if (t_.size() < 2)
    throw LoomError("--distributed: the job has one rank and so no measurement node (start it with mpirun -n N, N >= 2)");
  for (int r = 1; r < t_.size(); ++r) nodes_.push_back(NodeInfo{r, "", {}, false, 0, steady_seconds()});

  // Every node says hello once it has started; one that does not in time is lost.
  const double wait_s = std::max(opts_.node_timeout_s, 30.0), deadline = steady_seconds() + wait_s;
  size_t hellos = 0;
  while (hellos < nodes_.size() && steady_seconds() < deadline) {
    int from = -1;
    std::string bytes;
    if (!t_.receive(&from, &bytes, 0.1) || from < 1 || from > static_cast<int>(nodes_.size())) continue;
    nlohmann::json msg = nlohmann::json::parse(bytes, nullptr, false);
    NodeInfo& node = nodes_[from - 1];
    if (node.machine.known() || !msg.is_object() || msg.value("type", "") != "hello") continue;
    try {
      node.machine = MachineKind::from_json(msg.at("machine"));
      node.host = msg.at("host").get<std::string>();
      ++hellos;
      node.last_heard = steady_seconds();
    } catch (const std::exception& e) {
      lose(node, std::string("sent a malformed hello: ") + e.what());
    }
  }
  const std::string setup = nlohmann::json{{"type", "setup"}, {"measure", measure_options_to_json(opts_)}}.dump();
  for (NodeInfo& node : nodes_) {
    if (node.machine.known()) {
      t_.send(node.rank, setup);
      print_("node " + node.name() + ": " + node.machine.name());
    } else if (!node.lost) {
      lose(node, "no hello within " + seconds_text(wait_s));
    }
  }
  heartbeat_ = std::thread([this] {
    const std::string alive = nlohmann::json{{"type", "alive"}}.dump();
    const double beat = distributed::heartbeat_s(opts_.node_timeout_s);
    while (!stop_.load()) {
      for (const NodeInfo& node : nodes_) t_.send(node.rank, alive);
      for (double slept = 0; slept < beat && !stop_.load(); slept += 0.02)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
}

DistributedMeasurer::~DistributedMeasurer() {
  stop_.store(true);
  if (heartbeat_.joinable()) heartbeat_.join();
  // Lost nodes too: one that was only silent hears it and ends.
  bool any_lost = false;
  for (const NodeInfo& node : nodes_) any_lost |= node.lost;
  const std::string quit = nlohmann::json{{"type", "quit"}, {"peer_lost", any_lost}}.dump();
  for (const NodeInfo& node : nodes_) t_.send(node.rank, quit);
}

void DistributedMeasurer::lose(NodeInfo& node, const std::string& why) {
  node.lost = true;
  t_.peer_lost();
  print_("node " + node.name() + " lost: " + why);
}

const std::vector<int>& DistributedMeasurer::nodes_for(const Target& target) {
  const std::string& target_kind = target.kind;
  auto it = kinds_.find(target_kind);
  if (it != kinds_.end()) return it->second;
  std::map<std::string, std::vector<int>> groups;
  std::vector<std::string> order;  // first appearance, by rank
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const NodeInfo& node = nodes_[i];
    if (node.lost || !node.machine.known() || (target.is_gpu() && node.machine.gpu.empty())) continue;
    const std::string key = kind_key(node.machine, target);
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(static_cast<int>(i));
  }
  if (groups.empty()) throw LoomError("no measurement node can measure " + target_kind + " tasks");
  std::string best = order.front();
  for (const auto& key : order)
    if (groups[key].size() > groups[best].size()) best = key;
  const std::vector<int>& chosen = groups[best];
  std::string names, idle;
  for (int i : chosen) names += (names.empty() ? "" : ", ") + nodes_[i].name();
  for (const auto& key : order)
    if (key != best)
      for (int i : groups[key]) idle += "; " + nodes_[i].name() + " (" + nodes_[i].machine.name() + ") stays idle";
  const MachineKind& kind = nodes_[chosen.front()].machine;
  print_(target_kind + " tasks are measured on " + std::to_string(chosen.size()) + " node(s) of kind " +
         (target.is_gpu() ? kind.gpu : kind.name()) + ": " + names + idle);
  return kinds_[target_kind] = chosen;
}

std::vector<MeasureResult> DistributedMeasurer::measure_steps(const Task& task,
                                                              const std::vector<nlohmann::json>& steps) {
  const std::vector<int>& eligible = nodes_for(task.target);
  const nlohmann::json task_json = task.to_json();
  double& best = best_by_task_[task.key()];
  const int per_share = std::max(1, opts_.n_parallel_builds);
  std::vector<MeasureResult> results(steps.size());
  std::deque<int> pending;
  for (size_t i = 0; i < steps.size(); ++i) pending.push_back(static_cast<int>(i));
  size_t remaining = steps.size();
  struct Share {
    int id;
    std::vector<int> candidates;
  };
  std::map<int, Share> busy;  // node index -> its share
  auto requeue = [&](int node) {
    auto b = busy.find(node);
    if (b == busy.end()) return;
    for (auto c = b->second.candidates.rbegin(); c != b->second.candidates.rend(); ++c) pending.push_front(*c);
    busy.erase(b);
  };

  bool caught_up = false;  // every queued message read since the last deal
  while (remaining > 0) {
    bool any_alive = false;
    for (int ni : eligible) {
      if (nodes_[ni].lost) continue;
      any_alive = true;
      if (busy.count(ni) || pending.empty()) continue;
      Share share{next_share_id_++, {}};
      nlohmann::json share_steps = nlohmann::json::array();
      while (!pending.empty() && static_cast<int>(share.candidates.size()) < per_share) {
        share.candidates.push_back(pending.front());
        share_steps.push_back(steps[pending.front()]);
        pending.pop_front();
      }
      t_.send(nodes_[ni].rank, nlohmann::json{{"type", "work"}, {"id", share.id}, {"task", task_json},
                                              {"steps", share_steps}, {"best_s", best}}.dump());
      busy[ni] = std::move(share);
    }
    if (!any_alive)
      throw LoomError("no measurement node of this " + task.target.kind + " task's kind is left (all lost); " +
                      std::to_string(steps.size() - remaining) + " of this batch's " + std::to_string(steps.size()) +
                      " candidates were measured, the log holds every batch before it");

    int from = -1;
    std::string bytes;
    if (t_.receive(&from, &bytes, caught_up ? 0.05 : 0)) {
      const int ni = from - 1;
      if (ni < 0 || ni >= static_cast<int>(nodes_.size()) || nodes_[ni].lost) continue;
      nodes_[ni].last_heard = steady_seconds();
      nlohmann::json msg = nlohmann::json::parse(bytes, nullptr, false);
      const std::string type = msg.is_object() ? msg.value("type", "") : "";
      auto b = busy.find(ni);
      const bool current = b != busy.end() && msg.value("id", -1) == b->second.id;
      if (type == "failed" && current)
        throw LoomError("node " + nodes_[ni].name() + " cannot measure " + task.description() + ": " +
                        msg.value("error", std::string("no reason given")));
      if (type != "done" || !current) continue;  // heartbeats; a share dealt again elsewhere
      try {
        const nlohmann::json& list = msg.at("results");
        if (!list.is_array() || list.size() != b->second.candidates.size())
          throw LoomError("expected " + std::to_string(b->second.candidates.size()) + " results");
        std::vector<MeasureResult> got;
        for (const auto& r : list) got.push_back(result_from_json(r));
        for (size_t k = 0; k < got.size(); ++k) {
          MeasureResult& r = results[b->second.candidates[k]];
          r = std::move(got[k]);
          r.node = nodes_[ni].name();
          if (r.ok() && (best == 0 || r.median_s() < best)) best = r.median_s();
          --remaining;
        }
        nodes_[ni].measured += static_cast<int>(got.size());
        busy.erase(b);
      } catch (const std::exception& e) {
        lose(nodes_[ni], std::string("sent malformed results: ") + e.what());
        requeue(ni);
      }
      continue;
    }
    // Nothing more queued: every node's last message is known, so silence is real.
    caught_up = true;
    for (size_t ni = 0; ni < nodes_.size(); ++ni) {
      if (nodes_[ni].lost || steady_seconds() - nodes_[ni].last_heard <= opts_.node_timeout_s) continue;
      const size_t share = busy.count(static_cast<int>(ni)) ? busy[static_cast<int>(ni)].candidates.size() : 0;
      lose(nodes_[ni], "silent for " + seconds_text(steady_seconds() - nodes_[ni].last_heard) +
                           (share ? "; its " + std::to_string(share) + " candidate(s) go to the other nodes" : ""));
      requeue(static_cast<int>(ni));
    }
  }
  return results;
}

}  // namespace loom
