// The fuzz targets. Each reads its bytes the way Loom reads that kind of
// file and then does what the first verb to read it does next (a task
// file's steps are replayed and lowered, a model's tasks extracted), so the
// fuzzer reaches the code that trusts what the parser accepted.
#include "tests/fuzz/targets/fuzz_targets.h"

#include <cstring>

#include "costmodel/cost_model.h"
#include "experiments/config.h"
#include "experiments/task_file.h"
#include "graph/graph.h"
#include "graph/onnx_import.h"
#include "graph/tasks.h"
#include "ir/error.h"
#include "ir/lower.h"
#include "ir/state.h"
#include "ir/workload_registry.h"
#include "measure/records.h"
#include "measure/task.h"
#include "tests/support/scratch_dir.h"

namespace loom::fuzz {
namespace {

// Some parsers read a file: the bytes go to the process's scratch folder.
std::string write_scratch(const std::string& name, const uint8_t* data, size_t size) {
  return loom::testing::write_scratch_file(name, std::string(reinterpret_cast<const char*>(data), size));
}

// Replays steps on a task's DAG and lowers the program, as `loom run` does
// before compiling it.
void replay_and_lower(const std::shared_ptr<const ComputeDAG>& dag, const nlohmann::json& steps) {
  try {
    State s = State::from_json(dag, steps);
    lower(s);
  } catch (const LoomError&) {
  }
}

// The fused tasks of a model, as `loom network tasks` and a network config
// make them.
void extract_network_tasks(const graph::Graph& g) {
  graph::NetworkTasks nt = graph::extract_tasks(g);
  for (const auto& t : nt.tasks) Task::make(t.workload(), t.subgraph, Target{});
}

void experiment_config(const uint8_t* data, size_t size) {
  const std::string path = write_scratch("config.json", data, size);
  try {
    ExperimentConfig c = ExperimentConfig::load(path);
    c.to_json();
    make_cost_model(c.cost_model, c.cost_model_options);
  } catch (const LoomError&) {
  }
}

void task_file(const uint8_t* data, size_t size) {
  const std::string path = write_scratch("task.json", data, size);
  try {
    TaskFile tf = read_task_file(path, {"candidates"});
    replay_and_lower(tf.task.dag, tf.steps);
  } catch (const LoomError&) {
  }
}

void records_log(const uint8_t* data, size_t size) {
  const std::string path = write_scratch("log.jsonl", data, size);
  try {
    LoadReport report;
    std::vector<MeasureRecord> records = load_records(path, &report, /*warn=*/false);
    // A resumed tune replays every record's steps; a few show the same.
    for (size_t i = 0; i < records.size() && i < 4; ++i) replay_and_lower(records[i].task.dag, records[i].steps);
    ranked_programs(records, records.empty() ? "" : records[0].task_key());
  } catch (const LoomError&) {
  }
}

// A steps array, replayed on small tasks whose stages the committed
// schedules name: a matmul, a conv2d+bias+ReLU and a softmax.
void steps(const uint8_t* data, size_t size) {
  static const std::vector<std::shared_ptr<const ComputeDAG>> dags = [] {
    std::vector<std::shared_ptr<const ComputeDAG>> out;
    for (const char* name : {"matmul", "conv2d_bias_relu", "softmax"})
      out.push_back(std::make_shared<ComputeDAG>(make_workload(name, find_workload(name)->small_params)));
    return out;
  }();
  nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return;
  for (const auto& dag : dags) replay_and_lower(dag, j);
}

// The checksum keeps corrupt payloads from XGBoost's reader (which trusts
// their lengths); MLP payloads, read by Loom's own code, are given a
// matching checksum so that the fuzzer reaches that code.
void cost_model_file(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  const size_t nl = bytes.find('\n');
  if (nl != std::string::npos) {
    nlohmann::json h = nlohmann::json::parse(bytes.substr(0, nl), nullptr, false);
    if (h.is_object() && h.value("model", nlohmann::json()) == "mlp") {
      h["payload_fnv1a64"] = cost_model_payload_checksum(bytes.substr(nl + 1));
      bytes = h.dump() + bytes.substr(nl);
    }
  }
  const std::string path =
      write_scratch("model.bin", reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  try {
    load_cost_model(path);
  } catch (const LoomError&) {
  }
}

// The graph JSON, then a NUL byte, then the bytes of its weights file
// ("model.bin", the name the seeds' JSON gives).
void graph_json(const uint8_t* data, size_t size) {
  const uint8_t* nul = static_cast<const uint8_t*>(std::memchr(data, 0, size));
  const size_t json_size = nul ? static_cast<size_t>(nul - data) : size;
  write_scratch("model.bin", nul ? nul + 1 : data + size, nul ? size - json_size - 1 : 0);
  const std::string path = write_scratch("model.json", data, json_size);
  try {
    extract_network_tasks(graph::load_graph(path));
  } catch (const LoomError&) {
  }
}

void onnx_model(const uint8_t* data, size_t size) {
  try {
    extract_network_tasks(graph::import_onnx_bytes(std::string(reinterpret_cast<const char*>(data), size), "model.onnx"));
  } catch (const LoomError&) {
  }
}

}  // namespace

const std::vector<FuzzTarget>& fuzz_targets() {
  static const std::vector<FuzzTarget> targets = {
      {"experiment_config", "an experiment config (loom tune/report/export)", experiment_config},
      {"task_file", "a task file with steps (loom run/sample/baseline)", task_file},
      {"records_log", "a records log (resume, report, export, cost-model training)", records_log},
      {"steps", "a steps array replayed on small matmul, conv2d+bias+ReLU and softmax tasks", steps},
      {"cost_model_file", "a saved cost model (pretrained_model, loom costmodel eval)", cost_model_file},
      {"graph_json", "a graph JSON, a NUL byte, its weights file (loom network)", graph_json},
      {"onnx_model", "an ONNX model (loom network import)", onnx_model},
  };
  return targets;
}

const FuzzTarget* find_fuzz_target(const std::string& name) {
  for (const FuzzTarget& t : fuzz_targets())
    if (name == t.name) return &t;
  return nullptr;
}

}  // namespace loom::fuzz
