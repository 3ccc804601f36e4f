#include "experiments/task_file.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "ir/error.h"
#include "measure/measurer.h"

namespace loom {

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw LoomError(path + ": cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return nlohmann::json::parse(ss.str());
  } catch (const nlohmann::json::exception& e) {  // a syntax error or a number out of range
    std::string what = e.what();
    auto pos = what.find(']');
    if (pos != std::string::npos) what = what.substr(pos + 2);
    if (what.size() > 160) what = what.substr(0, 160) + "...";  // the message quotes the whole token
    throw LoomError(path + ": malformed JSON (" + what + ")");
  }
}

TaskFile read_task_file(const std::string& path, const std::vector<std::string>& extra_keys) {
  nlohmann::json j = read_json_file(path);
  if (!j.is_object()) throw LoomError(path + ": expected a JSON object");
  auto is_extra = [&](const std::string& k) {
    return std::find(extra_keys.begin(), extra_keys.end(), k) != extra_keys.end();
  };
  TaskFile tf;
  if (j.contains("task")) {
    for (const auto& [k, v] : j.items()) {
      if (k == "task" || k == "steps" || k == "result" || k == "version" || k == "comment") continue;
      if (is_extra(k)) tf.extra[k] = v;
      else throw LoomError(path + ": " + k + ": unknown key");
    }
    tf.task = Task::from_json(j["task"], "task");
  } else {
    nlohmann::json t = nlohmann::json::object();
    for (const auto& [k, v] : j.items()) {
      if (k == "steps" || k == "comment") continue;
      if (is_extra(k)) tf.extra[k] = v;
      else t[k] = v;
    }
    tf.task = Task::from_json(t, path);
  }
  if (j.contains("steps")) tf.steps = j["steps"];
  // Refused before a verb allocates the task's data (the reference, a
  // baseline's buffers), not when a worker first runs out of memory.
  try {
    check_task_fits_memory(tf.task, 0);
  } catch (const LoomError& e) {
    throw LoomError(path + ": " + e.what());
  }
  return tf;
}

}  // namespace loom
