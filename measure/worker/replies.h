// What both halves of a measurement worker (CPU: worker_session, GPU:
// gpu_session) reply the same way: error replies (measure/protocol.h) and the
// first step of every build, replaying the request's steps and lowering them.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/stmt.h"
#include "measure/task.h"

namespace loom {

using WorkerReply = std::function<void(const nlohmann::json&)>;

// {"type":"error", "id", "error": kind, "msg", "exit"}.
nlohmann::json error_reply(int id, const char* kind, const std::string& msg, bool exit = false);

// The request's "steps" replayed on the task's DAG and lowered; on failure
// replies invalid_schedule ("replay: ..." or "lower: ...") and returns none.
std::optional<LoweredFunc> replay_and_lower(const Task& task, const nlohmann::json& req, const WorkerReply& reply);

}  // namespace loom
