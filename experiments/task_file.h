// A task file: a task plus optional steps, as read by `loom run`,
// `loom baseline` and friends.
//
//   {"workload": "matmul", "params": {...}, "target": "cpu -threads=1", "steps": [...]}
// or a measure record {"task": {...}, "steps": [...], ...}. A "comment" key is
// allowed at the top level; any other unknown key is an error.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "measure/task.h"

namespace loom {

struct TaskFile {
  Task task;
  nlohmann::json steps = nlohmann::json::array();
  nlohmann::json extra = nlohmann::json::object();  // keys a verb accepts besides these
};

nlohmann::json read_json_file(const std::string& path);
// `extra_keys`: additional top-level keys the caller handles (e.g. "candidates").
TaskFile read_task_file(const std::string& path, const std::vector<std::string>& extra_keys = {});

}  // namespace loom
