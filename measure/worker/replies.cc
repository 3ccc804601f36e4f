#include "measure/worker/replies.h"

#include "ir/lower.h"
#include "ir/state.h"

namespace loom {

nlohmann::json error_reply(int id, const char* kind, const std::string& msg, bool exit) {
  return {{"type", "error"}, {"id", id}, {"error", kind}, {"msg", msg}, {"exit", exit}};
}

std::optional<LoweredFunc> replay_and_lower(const Task& task, const nlohmann::json& req, const WorkerReply& reply) {
  const int id = req.value("id", -1);
  State state;
  try {
    state = State::from_json(task.dag, req.at("steps"));
  } catch (const std::exception& e) {
    reply(error_reply(id, "invalid_schedule", std::string("replay: ") + e.what()));
    return std::nullopt;
  }
  try {
    return lower(state);
  } catch (const std::exception& e) {
    reply(error_reply(id, "invalid_schedule", std::string("lower: ") + e.what()));
    return std::nullopt;
  }
}

}  // namespace loom
