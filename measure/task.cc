#include "measure/task.h"

#include <climits>
#include <sstream>

#include "ir/error.h"
#include "ir/workload_registry.h"

namespace loom {

namespace {

// Index arithmetic must not overflow: a tensor whose element count overflows
// 64 bits, or one past the 32-bit indices of CUDA kernels, is refused before
// anything is compiled or allocated. (Whether a task fits the machine's
// memory is the measurer's check: check_task_fits_memory.)
void check_sizes(const Task& t) {
  const std::string what = "params: " + t.description();
  for (const auto& op : t.dag->ops()) {
    int64_t n = 1;
    for (int64_t d : op->shape) {
      if (__builtin_mul_overflow(n, d, &n))
        throw LoomError(what + ": tensor " + op->name + " has more than 2^63 elements");
    }
    if (t.target.is_gpu() && n > INT32_MAX)
      throw LoomError(what + ": tensor " + op->name + " has " + std::to_string(n) +
                      " elements, more than the 2^31 - 1 that CUDA kernels' 32-bit indices reach");
  }
}

}  // namespace

Task Task::make(const std::string& workload, const nlohmann::json& params, const Target& target,
                const std::vector<std::string>& constants) {
  const WorkloadKind* kind = find_workload_kind(workload);
  if (!kind) throw LoomError("unknown workload '" + workload + "' (known: " + workload_kind_names() + ")");
  if (kind->marks_own_constants && !constants.empty())
    throw LoomError("constants: a " + workload + " marks its constant inputs itself");
  Task t;
  t.workload = workload;
  t.target = target;
  auto dag = std::make_shared<ComputeDAG>(kind->build(params, t.params));
  for (const auto& name : constants) {
    if (!dag->is_input(name)) {
      std::string inputs;
      for (const auto& n : dag->input_names()) inputs += (inputs.empty() ? "" : ", ") + n;
      throw LoomError("constants: '" + name + "' is not an input of " + workload + " (inputs: " + inputs + ")");
    }
    if (dag->is_constant(name)) throw LoomError("constants: '" + name + "' is listed twice");
    dag->mark_constant(name);
  }
  t.constants = constants;
  t.dag = dag;
  check_sizes(t);
  return t;
}

const WorkloadKind& Task::kind() const {
  const WorkloadKind* k = find_workload_kind(workload);
  if (!k) throw LoomError("unknown workload '" + workload + "'");
  return *k;
}

nlohmann::json Task::to_json() const {
  nlohmann::json j = {{"workload", workload}, {"params", params}, {"dtype", dtype}, {"target", target.to_string()}};
  if (!constants.empty()) j["constants"] = constants;
  return j;
}

Task Task::from_json(const nlohmann::json& j, const std::string& path) {
  if (!j.is_object()) throw LoomError(path + ": expected an object");
  for (const auto& [k, v] : j.items())
    if (k != "workload" && k != "params" && k != "dtype" && k != "target" && k != "constants")
      throw LoomError(path + "." + k + ": unknown key (expected workload, params, dtype, target, constants)");
  if (!j.contains("workload") || !j["workload"].is_string())
    throw LoomError(path + ".workload: expected a workload name");
  nlohmann::json params = j.value("params", nlohmann::json::object());
  if (!params.is_object()) throw LoomError(path + ".params: expected an object");
  std::string dtype = "float32";
  if (j.contains("dtype")) {
    if (!j["dtype"].is_string() || j["dtype"] != "float32")
      throw LoomError(path + ".dtype: only \"float32\" is supported");
  }
  Target target;
  if (j.contains("target")) {
    if (!j["target"].is_string()) throw LoomError(path + ".target: expected a string like \"cpu -threads=1\"");
    try {
      target = Target::parse(j["target"].get<std::string>());
    } catch (const LoomError& e) {
      throw LoomError(path + "." + e.what());
    }
  }
  std::vector<std::string> constants;
  if (j.contains("constants")) {
    const auto& c = j["constants"];
    if (!c.is_array()) throw LoomError(path + ".constants: expected an array of input names");
    for (const auto& n : c) {
      if (!n.is_string()) throw LoomError(path + ".constants: expected an array of input names");
      constants.push_back(n.get<std::string>());
    }
  }
  try {
    Task t = make(j["workload"].get<std::string>(), params, target, constants);
    t.dtype = dtype;
    return t;
  } catch (const LoomError& e) {
    std::string msg = e.what();
    if (msg.rfind("params.", 0) == 0 || msg.rfind("params: ", 0) == 0 || msg.rfind("constants: ", 0) == 0)
      throw LoomError(path + "." + msg);
    throw LoomError(path + ".workload: " + msg);
  }
}

std::string Task::key() const { return to_json().dump(); }

std::string Task::similarity_group() const { return kind().similarity_key(params); }

std::string Task::description() const {
  std::string s = kind().describe(params);
  for (const auto& c : constants) s += " " + c + "=const";
  return s;
}

}  // namespace loom
