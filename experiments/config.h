// Experiment configs: the JSON file `loom tune` (and later `loom report`,
// `loom baseline`) reads. Parsed strictly: an unknown key or a wrong type is a
// LoomError naming its JSON path ("tasks[2].params.K: expected a positive
// integer"). The full schema is documented in experiments/README.md.
#pragma once

#include "graph/graph.h"

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/measurer.h"
#include "measure/task.h"
#include "search/search_settings.h"
#include "sketch/sketch_task.h"

namespace loom {

struct ConfigTask {
  Task task;
  double weight = 1;
};

struct ExperimentConfig {
  std::string name = "experiment";
  Target target;
  std::vector<ConfigTask> tasks;
  // A network config names a model (.onnx or graph .json; relative to the
  // config's folder) instead of tasks: load() extracts its fused subgraphs
  // as tasks weighted by their occurrences (graph/tasks.h). `batch`, when
  // given, must be the model's batch (the first dimension of its inputs).
  std::string network;
  int batch = 0;
  // `input_shapes`: {"input_ids": [1, 128]} pins the model's dynamic input
  // dimensions (graph::load_graph).
  graph::InputShapes input_shapes;
  SearchSettings search;
  std::string cost_model = "xgb";               // xgb | mlp | random
  nlohmann::json cost_model_options = nlohmann::json::object();
  // A saved model to start from ("" = none; relative to the config's folder).
  // Its kind must be cost_model.kind; cost_model.options override the
  // settings saved with it (the MLP keeps training from its weights online).
  std::string pretrained_model;
  // "shared": one model learns from every task's programs (Ansor's choice);
  // "task": each task starts from its own copy of the model (the pretrained
  // file, or a new one) and learns from its own programs only.
  std::string cost_model_scope = "shared";
  // With scope "task": the programs a task measures before its own model
  // takes over (the shared one scores it until then; its own is then fitted
  // on all of them). 0: its own from the first round.
  int task_model_after = 0;
  MeasureOptions measure;
  std::vector<std::string> baselines = {"onednn", "openblas"};  // libraries `loom report` compares with
  // Records logs a task's rounds measure first; "shipped" stands for
  // experiments/schedules/database/ (resolved by the verbs); empty: none.
  std::vector<std::string> schedule_databases = {"shipped"};
  // outputs: relative paths are relative to the config file's folder.
  std::string log_path;     // default <name>.jsonl
  std::string export_dir;   // default <name>_export
  std::string report_dir;   // default <name>_report

  // Whether the config's measure object gave flush_cache (else load()
  // decides it for a network).
  bool flush_cache_given = false;

  // Parsing, the echo and the docs come from one table per object
  // (config.cc; the measure, search and cost-model settings from their own
  // components' tables).
  static ExperimentConfig from_json(const nlohmann::json& j);
  // Reads the file, resolves relative paths, and for a network config
  // imports the model and fills `tasks`.
  static ExperimentConfig load(const std::string& path);
  // search.first_round_measures of a network config that does not set it.
  static constexpr int kNetworkFirstRoundMeasures = 8;
  // Every effective setting, defaults included (echoed at start-up).
  nlohmann::json to_json() const;
  // The settings tables `loom config doc` prints: "config", "measure",
  // "search", "cost_model.options"; each a Markdown table under a marker
  // line naming its command (experiments/README.md holds them verbatim).
  static std::vector<std::string> doc_names();
  static std::string doc_table(const std::string& which);
};

}  // namespace loom
