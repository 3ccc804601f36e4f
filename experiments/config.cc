#include "experiments/config.h"

#include <filesystem>

#include "experiments/task_file.h"
#include "graph/graph.h"
#include "graph/onnx_import.h"
#include "graph/tasks.h"
#include "ir/error.h"
#include "ir/json_fields.h"
#include "measure/machine.h"

namespace loom {

namespace {

using json_fields::check_keys;
using json_fields::integer;
using json_fields::number;

std::string string(const nlohmann::json& j, const std::string& path) {
  if (!j.is_string()) throw LoomError(path + ": expected a string, got " + j.dump());
  return j.get<std::string>();
}

// The tasks of a network config's model, and its batch checked; returns the
// bytes of its weights.
int64_t add_network_tasks(ExperimentConfig& c) {
  graph::Graph g = graph::load_graph(c.network, c.input_shapes);
  for (const auto& in : g.inputs) {
    if (c.batch > 0 && (in.shape.empty() || in.shape[0] != c.batch))
      throw LoomError("batch: " + c.network + " has input '" + in.name + "' of shape " + graph::shape_string(in.shape) +
                      ", not batch " + std::to_string(c.batch) + " (make the model with that batch, e.g. " +
                      "scripts/make_models.py --batch " + std::to_string(c.batch) + ")");
  }
  graph::NetworkTasks nt = graph::extract_tasks(g);
  for (const auto& t : nt.tasks) {
    ConfigTask ct;
    ct.weight = t.weight;
    ct.task = Task::make(t.workload(), t.subgraph, c.target);
    c.tasks.push_back(ct);
  }
  int64_t weight_bytes = 0;
  for (const auto& [name, constant] : g.constants)
    weight_bytes += static_cast<int64_t>(constant.data.size() * sizeof(float));
  return weight_bytes;
}

}  // namespace

ExperimentConfig ExperimentConfig::from_json(const nlohmann::json& j) {
  check_keys(j, "", {"name", "comment", "target", "tasks", "network", "batch", "input_shapes", "search", "cost_model",
                     "measure", "baselines", "outputs"});
  ExperimentConfig c;
  if (j.contains("name")) c.name = string(j["name"], "name");
  if (j.contains("target")) {
    try {
      c.target = Target::parse(string(j["target"], "target"));
    } catch (const LoomError& e) {
      std::string m = e.what();
      throw LoomError(m.rfind("target", 0) == 0 ? m : "target: " + m);
    }
  }
  if (j.contains("network")) {
    c.network = string(j["network"], "network");
    if (c.network.empty()) throw LoomError("network: expected a model file");
    if (j.contains("tasks")) throw LoomError("tasks: a network config lists no tasks (they are the network's)");
    if (j.contains("batch")) c.batch = integer(j["batch"], "batch", 1, 1 << 20);
    if (j.contains("input_shapes")) {
      const auto& shapes = j["input_shapes"];
      if (!shapes.is_object()) throw LoomError("input_shapes: expected {\"NAME\": [dims...], ...}, got " + shapes.dump());
      for (const auto& [name, dims] : shapes.items()) {
        std::string spec = name + "=";
        if (!dims.is_array() || dims.empty()) throw LoomError("input_shapes." + name + ": expected a list of dims");
        for (size_t d = 0; d < dims.size(); ++d) {
          if (!dims[d].is_number_integer()) throw LoomError("input_shapes." + name + ": expected integer dims");
          spec += (d ? "x" : "") + std::to_string(dims[d].get<int64_t>());
        }
        try {
          graph::parse_input_shape(spec, c.input_shapes);
        } catch (const LoomError& e) {
          throw LoomError("input_shapes." + name + ": " + e.what());
        }
      }
    }
    if (!j.contains("name")) c.name = std::filesystem::path(c.network).stem().string();
    // A network is compared with PyTorch end to end; each task's main
    // operator with oneDNN's primitive for it (loom report).
    c.baselines = {"onednn"};
  } else if (j.contains("batch") || j.contains("input_shapes")) {
    throw LoomError(std::string(j.contains("batch") ? "batch" : "input_shapes") + ": only a network config has one");
  } else if (!j.contains("tasks") || !j["tasks"].is_array() || j["tasks"].empty()) {
    throw LoomError("tasks: expected a non-empty array of tasks");
  }
  for (size_t i = 0; c.network.empty() && i < j["tasks"].size(); ++i) {
    const auto& t = j["tasks"][i];
    std::string path = "tasks[" + std::to_string(i) + "]";
    check_keys(t, path, {"workload", "params", "constants", "weight", "comment"});
    ConfigTask ct;
    if (t.contains("weight")) ct.weight = number(t["weight"], path + ".weight", 0, 1e12);
    nlohmann::json tj = {{"workload", t.value("workload", nlohmann::json())},
                         {"params", t.value("params", nlohmann::json::object())},
                         {"target", c.target.to_string()}};
    if (t.contains("constants")) tj["constants"] = t["constants"];
    ct.task = Task::from_json(tj, path);
    c.tasks.push_back(ct);
  }
  if (j.contains("search")) c.search = SearchSettings::from_json(j["search"], "search");
  if (j.contains("cost_model")) {
    const auto& m = j["cost_model"];
    check_keys(m, "cost_model", {"kind", "options", "pretrained", "scope", "task_model_after"});
    if (m.contains("kind")) {
      c.cost_model = string(m["kind"], "cost_model.kind");
      if (c.cost_model != "mlp" && c.cost_model != "xgb" && c.cost_model != "random")
        throw LoomError("cost_model.kind: expected \"mlp\", \"xgb\" or \"random\"");
    }
    if (m.contains("options")) {
      if (!m["options"].is_object()) throw LoomError("cost_model.options: expected an object");
      c.cost_model_options = m["options"];
    }
    if (m.contains("pretrained")) c.pretrained_model = string(m["pretrained"], "cost_model.pretrained");
    if (m.contains("scope")) {
      c.cost_model_scope = string(m["scope"], "cost_model.scope");
      if (c.cost_model_scope != "shared" && c.cost_model_scope != "task")
        throw LoomError("cost_model.scope: expected \"shared\" or \"task\"");
    }
    if (m.contains("task_model_after")) {
      c.task_model_after = integer(m["task_model_after"], "cost_model.task_model_after", 0, 1 << 30);
      if (c.task_model_after > 0 && c.cost_model_scope != "task")
        throw LoomError("cost_model.task_model_after: only with cost_model.scope \"task\" (a shared model has no "
                        "per-task models to hand over to)");
    }
  }
  // A network's tasks are timed with the caches flushed unless the config
  // says otherwise; load() times them warm when the network's weights fit
  // in the last-level cache (see there).
  MeasureOptions measure_defaults;
  measure_defaults.flush_cache = !c.network.empty();
  c.measure = measure_options_from_json(j.value("measure", nlohmann::json()), "measure", measure_defaults);
  if (j.contains("baselines")) {
    if (!j["baselines"].is_array()) throw LoomError("baselines: expected an array of library names");
    c.baselines.clear();
    for (size_t i = 0; i < j["baselines"].size(); ++i) {
      std::string b = string(j["baselines"][i], "baselines[" + std::to_string(i) + "]");
      if (b != "onednn" && b != "openblas" && b != "cublas" && b != "cudnn")
        throw LoomError("baselines[" + std::to_string(i) + "]: unknown library '" + b +
                        "' (expected onednn, openblas, cublas or cudnn)");
      c.baselines.push_back(b);
    }
  }
  if (j.contains("outputs")) {
    const auto& o = j["outputs"];
    check_keys(o, "outputs", {"log", "export", "report"});
    if (o.contains("log")) c.log_path = string(o["log"], "outputs.log");
    if (o.contains("export")) c.export_dir = string(o["export"], "outputs.export");
    if (o.contains("report")) c.report_dir = string(o["report"], "outputs.report");
  }
  return c;
}

ExperimentConfig ExperimentConfig::load(const std::string& path) {
  ExperimentConfig c;
  bool flush_given = false;
  try {
    const nlohmann::json j = read_json_file(path);
    flush_given = j.is_object() && j.contains("measure") && j["measure"].is_object() &&
                  j["measure"].contains("flush_cache");
    c = from_json(j);
  } catch (const LoomError& e) {
    std::string m = e.what();
    if (m.rfind(path, 0) == 0) throw;
    throw LoomError(path + ": " + m);
  }
  // Outputs default to files named after the experiment, and relative paths
  // are taken from the config's folder, so a config runs the same from anywhere.
  std::filesystem::path base = std::filesystem::path(path).parent_path();
  auto resolve = [&](std::string& p, const std::string& fallback) {
    if (p.empty()) p = fallback;
    if (std::filesystem::path(p).is_relative()) p = (base / p).string();
  };
  resolve(c.log_path, c.name + ".jsonl");
  resolve(c.export_dir, c.name + "_export");
  resolve(c.report_dir, c.name + "_report");
  if (!c.pretrained_model.empty() && std::filesystem::path(c.pretrained_model).is_relative())
    c.pretrained_model = (base / c.pretrained_model).string();
  if (!c.network.empty()) {
    if (std::filesystem::path(c.network).is_relative()) c.network = (base / c.network).string();
    int64_t weight_bytes = 0;
    try {
      weight_bytes = add_network_tasks(c);
    } catch (const LoomError& e) {
      std::string m = e.what();
      throw LoomError(path + ": " + (m.rfind("batch", 0) == 0 ? m : "network: " + m));
    }
    // Where a network's weights exceed the last-level cache, every inference
    // reads them from memory, not from the cache a kernel's own repeated
    // runs leave them in: its tasks are timed cold (ResNet-50, one thread:
    // the network ran 4% faster, and the estimate came within 5-9% of the
    // measured latency instead of 22% below it). Where they fit with room to
    // spare, they stay in the cache from one inference to the next, and a
    // flush times a kernel colder than it runs: MobileNet-V2 (14 MB, 32 MB
    // cache) tuned warm ran 1.34-1.43x PyTorch's speed against 1.17-1.27x
    // tuned cold. Weights that fill most of the cache share it with the
    // activations and, on a shared machine, with other processes, and are
    // partly evicted between one kernel's runs in the network: the BERT
    // layer (28 MB) tuned warm ran 0.92-1.01x against 1.21-1.25x tuned cold.
    // Hence cold once the weights exceed half the cache.
    const int64_t cache = last_level_cache_bytes();
    if (!flush_given && cache > 0) c.measure.flush_cache = 2 * weight_bytes > cache;
  }
  return c;
}

nlohmann::json ExperimentConfig::to_json() const {
  nlohmann::json out = {{"name", name},
                        {"target", target.to_string()},
                        {"search", search.to_json()},
                        {"cost_model",
                         {{"kind", cost_model},
                          {"options", cost_model_options},
                          {"pretrained", pretrained_model},
                          {"scope", cost_model_scope},
                          {"task_model_after", task_model_after}}},
                        {"measure", measure_options_to_json(measure)},
                        {"baselines", baselines},
                        {"outputs", {{"log", log_path}, {"export", export_dir}, {"report", report_dir}}}};
  if (!network.empty()) {
    // The model's tasks are its subgraphs: named by the model, not listed.
    out["network"] = network;
    if (batch > 0) out["batch"] = batch;
    if (!input_shapes.empty()) out["input_shapes"] = input_shapes;
    return out;
  }
  nlohmann::json tl = nlohmann::json::array();
  for (const auto& t : this->tasks) {
    nlohmann::json tj = {{"workload", t.task.workload}, {"params", t.task.params}, {"weight", t.weight}};
    if (!t.task.constants.empty()) tj["constants"] = t.task.constants;
    tl.push_back(tj);
  }
  out["tasks"] = tl;
  return out;
}

}  // namespace loom
