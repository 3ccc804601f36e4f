// The learned cost model: one interface, three kinds ("xgb", Ansor's choice
// and a config's default; "mlp"; "random", for ablation), made in one place by
// make_cost_model / load_cost_model.
//
// A model scores programs (higher = predicted faster); it never sees LibTorch
// or XGBoost types through this header. Scores are comparable within one task
// only. A program that cannot be lowered scores kInvalidProgramScore.
//
// Online use: `update(records)` appends the newly measured records to the
// model's training set (features are extracted once per record) and retrains
// within the model's time bound (the MLP warm-starts from its current
// weights; XGBoost refits). Labels are normalized throughput per task: the
// best cost of the task's records / the record's cost (failed measurements:
// 0), recomputed at every update as the best improves.
//
// Whether scores are worth using before enough records exist (Ansor returns
// random scores until ~100) is the search policy's decision: it can ask
// num_records().
#pragma once

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "costmodel/features.h"
#include "ir/state.h"
#include "measure/machine.h"
#include "measure/task.h"

namespace loom {

constexpr float kInvalidProgramScore = -std::numeric_limits<float>::infinity();

// One measured schedule.
struct TrainingRecord {
  std::shared_ptr<const Task> task;
  State state;
  double cost_s = std::numeric_limits<double>::infinity();  // +inf: failed measurement
  MachineKind machine;  // where it was timed; unknown for records that do not say
  // What makes records one program: their ranking group and their lowered
  // loop nest (set by read_training_records; different steps can lower to
  // the same code, e.g. tile sizes of a stage computed one element at a
  // time). Empty when not known.
  std::string program;
};

// The group a record's cost ranks in: its task on its machine (timings
// compare only within one task on one kind of machine).
std::string ranking_group(const std::string& task_key, const MachineKind& machine);
inline std::string ranking_group(const TrainingRecord& r) {
  return ranking_group(r.task ? r.task->key() : "", r.machine);
}

// The machine kinds of a model's training programs and how many came from
// each (an unknown kind: records written before records named their machine).
struct TrainedOn {
  MachineKind machine;
  size_t programs = 0;
};
// A machine's name, or "machines the records do not name" for an unknown one.
std::string machine_label(const MachineKind& m);

// Training data as features: programs, their costs and task group ids.
struct FeatureDataset {
  std::vector<ProgramFeatures> programs;
  std::vector<double> costs;  // seconds; +inf = failed
  std::vector<int> groups;    // task id (index into task_keys)
  std::vector<std::string> task_keys;

  size_t size() const { return programs.size(); }
  int group_of(const std::string& task_key);  // adds the task if new
  // best cost in the record's group / its cost; 0 for failed records.
  std::vector<float> normalized_throughput() const;
};

class CostModel {
 public:
  virtual ~CostModel() = default;

  // Adds records to the training set and retrains.
  void update(const std::vector<TrainingRecord>& records);
  // Scores states of one task (features extracted in parallel).
  std::vector<float> predict(const Task& task, const std::vector<State>& states);

  // The same on features (used by the two above, by tools and tests).
  // `fit` trains on programs with labels (higher = better) grouped by task;
  // the MLP warm-starts from its current weights.
  virtual void fit(const std::vector<ProgramFeatures>& programs, const std::vector<float>& labels,
                   const std::vector<int>& groups) = 0;
  virtual std::vector<float> predict_features(const std::vector<ProgramFeatures>& programs) = 0;

  // A file: one JSON header line {"loom_cost_model":1, "model", "feature_version",
  // "num_features", "settings", "trained_on", "payload_bytes", "payload_fnv1a64"}
  // then the model's payload. "trained_on" lists {"machine", "programs"} (a
  // machine of null: records that named none); files saved before it existed
  // load with an empty list.
  void save(const std::string& path) const;
  // Loads a file saved by a model of the same kind (load_cost_model picks the kind).
  void load(const std::string& path);

  // What the last fit did (e.g. "42 boosting rounds kept of 92, validation
  // pairwise 0.81"), for tools and the tuner's log; empty before any fit.
  const std::string& last_fit_summary() const { return last_fit_summary_; }

  virtual std::string name() const = 0;           // "mlp" | "xgb" | "random"
  virtual nlohmann::json settings_json() const = 0;  // every effective setting
  size_t num_records() const { return data_.size(); }
  // The machine kinds of every program the model was ever trained on: its
  // saved file's, then those of the records `update` added.
  const std::vector<TrainedOn>& trained_on() const { return trained_on_; }
  // How many programs that is (a file that does not say counts none).
  size_t programs_learned() const;
  // Whether it was trained on programs timed on a machine of `m`'s kind (the
  // same CPU model, vector ISA and GPU; the core count aside: a ranking does
  // not change with how many cores the machine lends).
  bool trained_on_kind_of(const MachineKind& m) const;
  const FeatureDataset& training_data() const { return data_; }
  FeatureOptions& feature_options() { return feature_options_; }

 protected:
  std::string last_fit_summary_;
  virtual std::string serialize() const = 0;
  virtual void deserialize(const std::string& payload) = 0;

 private:
  nlohmann::json trained_on_json() const;
  void add_trained_on(const MachineKind& m);  // one more training program timed on `m`

  FeatureDataset data_;
  FeatureOptions feature_options_;
  std::vector<TrainedOn> trained_on_;
};

// For a search about to start on `here` with the model saved in `file`: a
// one-line warning when the model was not trained on programs timed on a
// machine of that kind (or its file does not say where they were timed);
// empty when it was.
std::string trained_elsewhere_warning(const CostModel& model, const std::string& file, const MachineKind& here);

// kind: "mlp" | "xgb" | "random"; settings: that model's settings object,
// parsed strictly (unknown keys and bad values throw LoomError).
std::unique_ptr<CostModel> make_cost_model(const std::string& kind,
                                           const nlohmann::json& settings = nlohmann::json::object());
// `overrides` replace settings saved in the file (e.g. a pretrained model's
// generous max_train_seconds by the online bound); a setting that changes the
// shape of the saved model (a network's width) makes the load fail.
std::unique_ptr<CostModel> load_cost_model(const std::string& path,
                                           const nlohmann::json& overrides = nlohmann::json::object());
const std::vector<std::string>& cost_model_kinds();
// "mlp, xgb or random" (for messages).
std::string cost_model_kind_names();
// The checksum a saved model's header holds for its payload (FNV-1a, 64 bits).
uint64_t cost_model_payload_checksum(const std::string& payload);

// Strict JSON settings helpers shared by the models.
// The random model's settings.
struct RandomModelSettings {
  int seed = 0;
  static RandomModelSettings from_json(const nlohmann::json& j, const std::string& where = "random");
  nlohmann::json to_json() const;
};

// The Markdown rows of every cost model's settings (`loom config doc`):
// `| cost_model.options (mlp).KEY | ... |`.
std::string cost_model_settings_doc();


}  // namespace loom
