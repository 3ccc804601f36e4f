#include "experiments/config.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "costmodel/cost_model.h"
#include "experiments/baselines/baseline.h"
#include "experiments/task_file.h"
#include "graph/graph.h"
#include "graph/onnx_import.h"
#include "graph/tasks.h"
#include "ir/error.h"
#include "ir/json_fields.h"
#include "ir/settings_table.h"
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

namespace {

using C = ExperimentConfig;

// "`onednn`, `openblas` (CPU), `cublas`, `cudnn` (CUDA)": the list's
// libraries, each target kind's after them.
std::string baseline_range() {
  std::string s;
  const auto& list = operator_baselines();
  for (size_t i = 0; i < list.size(); ++i) {
    s += (s.empty() ? "`" : ", `") + std::string(list[i].name) + "`";
    if (i + 1 == list.size() || list[i + 1].gpu != list[i].gpu) s += list[i].gpu ? " (CUDA)" : " (CPU)";
  }
  return s;
}

const SettingsTable<C>& cost_model_table() {
  static const SettingsTable<C> t({
      custom_setting<C>(
          "kind", alternatives(cost_model_kinds(), "`", ", "), "", "the cost model: `mlp` a LibTorch MLP, `xgb` XGBoost, `random` random scores",
          [](const nlohmann::json& v, const std::string& where, C& c) {
            c.cost_model = string(v, where);
            const auto& kinds = cost_model_kinds();
            if (std::find(kinds.begin(), kinds.end(), c.cost_model) == kinds.end())
              throw LoomError(where + ": expected " + cost_model_kind_names());
          },
          [](const C& c) { return nlohmann::json(c.cost_model); }),
      custom_setting<C>(
          "options", "object", "{}", "the model's settings: the `cost_model.options` tables below",
          [](const nlohmann::json& v, const std::string& where, C& c) {
            if (!v.is_object()) throw LoomError(where + ": expected an object");
            c.cost_model_options = v;
          },
          [](const C& c) { return c.cost_model_options; }),
      string_setting("pretrained", &C::pretrained_model,
                     "a model file saved by `loom costmodel train` to start from (relative to the config's folder; "
                     "its kind must be `cost_model.kind`, and `cost_model.options` override the settings saved "
                     "with it); \"\" = none"),
      string_setting("scope", &C::cost_model_scope,
                     "`shared`: one model learns from every task's programs (Ansor's choice); `task`: each task has "
                     "its own copy of the model (the pretrained file, or a new one) that learns from its own "
                     "programs only, from the start or after `task_model_after` programs",
                     {"shared", "task"}),
      integer_setting("task_model_after", &C::task_model_after, 0, 1 << 30,
                      "with scope `task`: the programs a task measures before its own model takes over; until "
                      "then the shared model scores it, and its own is then fitted on all of them. 0: its own "
                      "from the first round"),
  });
  return t;
}

const SettingsTable<C>& outputs_table() {
  static const SettingsTable<C> t({
      custom_setting<C>(
          "log", "path", "`<name>.jsonl`", "the append-only JSON-lines log (resumed by the next `loom tune`)",
          [](const nlohmann::json& v, const std::string& where, C& c) { c.log_path = string(v, where); },
          [](const C& c) { return nlohmann::json(c.log_path); }),
      custom_setting<C>(
          "export", "path", "`<name>_export`", "folder for `loom export`",
          [](const nlohmann::json& v, const std::string& where, C& c) { c.export_dir = string(v, where); },
          [](const C& c) { return nlohmann::json(c.export_dir); }),
      custom_setting<C>(
          "report", "path", "`<name>_report`", "folder for `loom report` (CSV, Markdown, `tuning.png`)",
          [](const nlohmann::json& v, const std::string& where, C& c) { c.report_dir = string(v, where); },
          [](const C& c) { return nlohmann::json(c.report_dir); }),
  });
  return t;
}

// Every key of a config, in parse order: the target before the tasks that
// are made for it.
const SettingsTable<C>& config_table() {
  static const SettingsTable<C> t({
      string_setting("name", &C::name,
                     "experiment name; default output names derive from it (a network config: the model's file "
                     "name)"),
      custom_setting<C>(
          "comment", "text", "none", "free text (ignored)", [](const nlohmann::json&, const std::string&, C&) {},
          [](const C&) { return nlohmann::json(); }),
      custom_setting<C>(
          "target", "`cpu -threads=N [-isa=avx512\\|avx2\\|sse4]`, `cuda -arch=sm_NN`", "`cpu -threads=1`",
          "what the tasks are compiled for; `-isa` sets the vector width the sketch rules decide with and the "
          "LLVM backend emits (16, 8, 4 floats; default: the host's)",
          [](const nlohmann::json& v, const std::string& where, C& c) {
            try {
              c.target = Target::parse(string(v, where));
            } catch (const LoomError& e) {
              std::string m = e.what();
              throw LoomError(m.rfind("target", 0) == 0 ? m : "target: " + m);
            }
          },
          [](const C& c) { return nlohmann::json(c.target.to_string()); }),
      custom_setting<C>(
          "network", "path", "none",
          "instead of `tasks`: a model (`.onnx` or graph `.json`, relative to the config's folder) whose fused "
          "subgraphs become the tasks, weighted by their occurrences (as `loom network tasks` lists them); "
          "`baselines` then default to onednn (`loom report` compares the whole network with PyTorch and ONNX "
          "Runtime, end to end, and each task's main operator with oneDNN's primitive for it)",
          [](const nlohmann::json& v, const std::string& where, C& c) {
            c.network = string(v, where);
            if (c.network.empty()) throw LoomError(where + ": expected a model file");
            c.baselines = {"onednn"};
          },
          [](const C& c) { return c.network.empty() ? nlohmann::json() : nlohmann::json(c.network); }),
      custom_setting<C>(
          "tasks", "array", "none (required without `network`)",
          "`workload` (see `loom workloads`), `params` (missing ones take the workload's defaults), `constants` "
          "(inputs that are weights, e.g. `[\"B\"]`: the schedule may choose their layout, transformed once outside "
          "the timed region), `weight` (how often the task occurs; the task scheduler minimises the weighted "
          "total latency; default 1)",
          [](const nlohmann::json& v, const std::string&, C& c) {
            if (!c.network.empty()) throw LoomError("tasks: a network config lists no tasks (they are the network's)");
            if (!v.is_array() || v.empty()) throw LoomError("tasks: expected a non-empty array of tasks");
            for (size_t i = 0; i < v.size(); ++i) {
              const auto& t = v[i];
              std::string path = "tasks[" + std::to_string(i) + "]";
              check_keys(t, path, {"workload", "params", "constants", "weight", "comment"});
              ConfigTask ct;
              if (t.contains("weight")) ct.weight = number(t["weight"], path + ".weight", 0, 1e12);
              nlohmann::json tj = {{"workload", t.value("workload", nlohmann::json())},
                                   {"params", t.value("params", nlohmann::json::object())},
                                   {"target", c.target.to_string()}};
              if (t.contains("constants")) tj["constants"] = t["constants"];
              ct.task = Task::from_json(tj, path);
              c.tasks.push_back(std::move(ct));
            }
          },
          [](const C& c) {
            if (!c.network.empty()) return nlohmann::json();  // the model's tasks: named by it, not listed
            nlohmann::json tl = nlohmann::json::array();
            for (const auto& t : c.tasks) {
              nlohmann::json tj = {{"workload", t.task.workload}, {"params", t.task.params}, {"weight", t.weight}};
              if (!t.task.constants.empty()) tj["constants"] = t.task.constants;
              tl.push_back(tj);
            }
            return tl;
          }),
      custom_setting<C>(
          "batch", "[1, 1048576]", "the model's",
          "network configs: the model's batch, checked against its inputs (models of another batch: "
          "`scripts/make_models.py DIR --batch N`)",
          [](const nlohmann::json& v, const std::string& where, C& c) {
            if (c.network.empty()) throw LoomError("batch: only a network config has one");
            c.batch = integer(v, where, 1, 1 << 20);
          },
          [](const C& c) { return c.batch > 0 ? nlohmann::json(c.batch) : nlohmann::json(); }),
      custom_setting<C>(
          "input_shapes", "object", "the file's",
          "network configs: static shapes for inputs the ONNX file leaves dynamic, e.g. `{\"input_ids\": [1, "
          "128]}` (as `--shape input_ids=1x128` on the `network` verbs); each must name an input and agree with "
          "its static dims",
          [](const nlohmann::json& shapes, const std::string&, C& c) {
            if (c.network.empty()) throw LoomError("input_shapes: only a network config has one");
            if (!shapes.is_object())
              throw LoomError("input_shapes: expected {\"NAME\": [dims...], ...}, got " + shapes.dump());
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
          },
          [](const C& c) { return c.input_shapes.empty() ? nlohmann::json() : nlohmann::json(c.input_shapes); }),
      custom_setting<C>(
          "search", "object", "below", "the search: every key in the `search.` table",
          [](const nlohmann::json& v, const std::string& where, C& c) { c.search = SearchSettings::from_json(v, where); },
          [](const C& c) { return c.search.to_json(); }),
      custom_setting<C>(
          "cost_model", "object", "below", "the cost model: the `cost_model.` rows",
          [](const nlohmann::json& v, const std::string& where, C& c) {
            cost_model_table().parse_into(v, where, c);
            if (c.task_model_after > 0 && c.cost_model_scope != "task")
              throw LoomError("cost_model.task_model_after: only with cost_model.scope \"task\" (a shared model has "
                              "no per-task models to hand over to)");
          },
          [](const C& c) { return cost_model_table().to_json(c); }),
      custom_setting<C>(
          "measure", "object", "below", "measurement: every key in the `measure.` table",
          [](const nlohmann::json& v, const std::string& where, C& c) {
            std::set<std::string> given;
            c.measure = measure_options_from_json(v, where, c.measure, &given);
            c.flush_cache_given = given.count("flush_cache") > 0;
          },
          [](const C& c) { return measure_options_to_json(c.measure); }),
      custom_setting<C>(
          "baselines", baseline_range(), "`[\"onednn\", \"openblas\"]`",
          "libraries `loom report` compares each task with",
          [](const nlohmann::json& v, const std::string&, C& c) {
            if (!v.is_array()) throw LoomError("baselines: expected an array of library names");
            c.baselines.clear();
            for (size_t i = 0; i < v.size(); ++i) {
              std::string b = string(v[i], "baselines[" + std::to_string(i) + "]");
              if (!find_operator_baseline(b))
                throw LoomError("baselines[" + std::to_string(i) + "]: unknown library '" + b + "' (expected " +
                                operator_baseline_names() + ")");
              c.baselines.push_back(b);
            }
          },
          [](const C& c) { return nlohmann::json(c.baselines); }),
      custom_setting<C>(
          "schedule_database", "`\"shipped\"`, `\"none\"` or an array of records logs", "`\"shipped\"`",
          "tuned records each task's rounds measure first (`search.first_round_measures`): its own programs "
          "there, then its similar tasks' re-fitted to it; `shipped`: experiments/schedules/database/, the "
          "records of this machine kind only (paths relative to the config's folder)",
          [](const nlohmann::json& v, const std::string& where, C& c) {
            c.schedule_databases.clear();
            if (v.is_string() && (v == "shipped" || v == "none")) {
              if (v == "shipped") c.schedule_databases = {"shipped"};
              return;
            }
            if (!v.is_array()) throw LoomError(where + ": expected \"shipped\", \"none\" or an array of records logs");
            for (size_t i = 0; i < v.size(); ++i)
              c.schedule_databases.push_back(string(v[i], where + "[" + std::to_string(i) + "]"));
          },
          [](const C& c) {
            if (c.schedule_databases == std::vector<std::string>{"shipped"}) return nlohmann::json("shipped");
            if (c.schedule_databases.empty()) return nlohmann::json("none");
            return nlohmann::json(c.schedule_databases);
          }),
      custom_setting<C>(
          "outputs", "object", "below", "output paths, relative to the config file's folder: the `outputs.` rows",
          [](const nlohmann::json& v, const std::string& where, C& c) { outputs_table().parse_into(v, where, c); },
          [](const C& c) { return outputs_table().to_json(c); }),
  });
  return t;
}

const char* const kDocHeader = "| key | meaning | range | default |\n|---|---|---|---|\n";

}  // namespace

ExperimentConfig ExperimentConfig::from_json(const nlohmann::json& j) {
  ExperimentConfig c;
  std::set<std::string> given;
  config_table().parse_into(j, "", c, &given);
  if (!given.count("network") && !given.count("tasks")) throw LoomError("tasks: expected a non-empty array of tasks");
  if (given.count("network") && !given.count("name")) c.name = std::filesystem::path(c.network).stem().string();
  // A network's tasks each measure a few programs first, led by the schedule
  // database's: every task has a time soon and the task scheduler spends
  // the rest where it pays (ResNet-18 in five minutes: every task timed after
  // 35 s instead of 140 s, the same estimate after 90 s instead of 200 s;
  // docs/results/2026-12-07-untimed-schedules-xeon.md).
  if (given.count("network") && !(j.contains("search") && j["search"].contains("first_round_measures")))
    c.search.first_round_measures = kNetworkFirstRoundMeasures;
  return c;
}

std::vector<std::string> ExperimentConfig::doc_names() { return {"config", "measure", "search", "cost_model.options"}; }

std::string ExperimentConfig::doc_table(const std::string& which) {
  std::string rows;
  if (which == "config")
    rows = config_table().doc_rows("") + cost_model_table().doc_rows("cost_model.") + outputs_table().doc_rows("outputs.");
  else if (which == "measure")
    rows = measure_options_doc("measure.");
  else if (which == "search")
    rows = SearchSettings::doc_table("search.");
  else if (which == "cost_model.options")
    rows = cost_model_settings_doc();
  else
    throw LoomError("unknown settings table '" + which + "' (known: config, measure, search, cost_model.options)");
  return std::string("<!-- generated by `loom config doc " + which + "` -->\n") + kDocHeader + rows;
}

ExperimentConfig ExperimentConfig::load(const std::string& path) {
  ExperimentConfig c;
  try {
    c = from_json(read_json_file(path));
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
  for (std::string& db : c.schedule_databases)
    if (db != "shipped" && std::filesystem::path(db).is_relative()) db = (base / db).string();
  if (!c.network.empty()) {
    if (std::filesystem::path(c.network).is_relative()) c.network = (base / c.network).string();
    int64_t weight_bytes = 0;
    try {
      weight_bytes = add_network_tasks(c);
    } catch (const LoomError& e) {
      std::string m = e.what();
      throw LoomError(path + ": " + (m.rfind("batch", 0) == 0 ? m : "network: " + m));
    }
    // A network's tasks are timed as the network runs them: cold (caches
    // flushed) where its weights exceed half the last-level cache, so that
    // every inference reads them from memory; warm where they fit with room
    // to spare and stay cached between inferences (measured in
    // docs/results/2026-12-07-network-table-and-warm-tuning-zen5.md). An
    // unknown cache size: cold.
    if (!c.flush_cache_given) {
      const int64_t cache = last_level_cache_bytes();
      c.measure.flush_cache = cache <= 0 || 2 * weight_bytes > cache;
    }
  }
  return c;
}

nlohmann::json ExperimentConfig::to_json() const { return config_table().to_json(*this); }

}  // namespace loom
