#include "costmodel/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "costmodel/mlp_model.h"
#include "costmodel/xgb_model.h"
#include "ir/error.h"
#include "ir/settings_table.h"

namespace loom {

// ---- dataset -----------------------------------------------------------------

int FeatureDataset::group_of(const std::string& task_key) {
  for (size_t i = 0; i < task_keys.size(); ++i)
    if (task_keys[i] == task_key) return static_cast<int>(i);
  task_keys.push_back(task_key);
  return static_cast<int>(task_keys.size() - 1);
}

std::vector<float> FeatureDataset::normalized_throughput() const {
  std::vector<double> best(task_keys.size(), std::numeric_limits<double>::infinity());
  for (size_t i = 0; i < size(); ++i)
    if (programs[i].valid) best[groups[i]] = std::min(best[groups[i]], costs[i]);
  std::vector<float> y(size(), 0.0f);
  for (size_t i = 0; i < size(); ++i)
    if (programs[i].valid && std::isfinite(costs[i]) && costs[i] > 0)
      y[i] = static_cast<float>(best[groups[i]] / costs[i]);
  return y;
}

std::string machine_label(const MachineKind& m) {
  return m.known() ? m.name() : "machines the records do not name";
}

std::string ranking_group(const std::string& task_key, const MachineKind& machine) {
  return machine.known() ? task_key + "\n" + machine.name() : task_key;
}

// ---- CostModel -----------------------------------------------------------------

void CostModel::update(const std::vector<TrainingRecord>& records) {
  if (records.empty()) return;
  std::vector<State> states;
  states.reserve(records.size());
  for (const auto& r : records) states.push_back(r.state);
  std::vector<ProgramFeatures> feats = extract_features(states, feature_options_);
  for (size_t i = 0; i < records.size(); ++i) {
    data_.programs.push_back(std::move(feats[i]));
    data_.costs.push_back(records[i].cost_s);
    data_.groups.push_back(data_.group_of(ranking_group(records[i])));
    add_trained_on(records[i].machine);
  }
  fit(data_.programs, data_.normalized_throughput(), data_.groups);
}

void CostModel::add_trained_on(const MachineKind& m) {
  for (auto& t : trained_on_)
    if (t.machine == m) {
      ++t.programs;
      return;
    }
  trained_on_.push_back({m, 1});
}

size_t CostModel::programs_learned() const {
  size_t n = 0;
  for (const auto& t : trained_on_) n += t.programs;
  return n;
}

bool CostModel::trained_on_kind_of(const MachineKind& m) const {
  for (const auto& t : trained_on_)
    if (t.machine.known() && t.machine.cpu == m.cpu && t.machine.isa == m.isa && t.machine.gpu == m.gpu) return true;
  return false;
}

std::vector<float> CostModel::predict(const Task&, const std::vector<State>& states) {
  return predict_features(extract_features(states, feature_options_));
}

nlohmann::json CostModel::trained_on_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& t : trained_on_)
    list.push_back({{"machine", t.machine.known() ? t.machine.to_json() : nlohmann::json()}, {"programs", t.programs}});
  return list;
}

void CostModel::save(const std::string& path) const {
  std::string payload = serialize();
  nlohmann::json header = {{"loom_cost_model", 1},
                           {"model", name()},
                           {"feature_version", kFeatureVersion},
                           {"num_features", kNumFeatures},
                           {"settings", settings_json()},
                           {"trained_on", trained_on_json()},
                           {"payload_bytes", payload.size()},
                           {"payload_fnv1a64", cost_model_payload_checksum(payload)}};
  std::ofstream out(path, std::ios::binary);
  if (!out) throw LoomError("cannot write cost model file '" + path + "'");
  out << header.dump() << '\n';
  out.write(payload.data(), static_cast<std::streamsize>(payload.size()));
  if (!out) throw LoomError("error writing cost model file '" + path + "'");
}

uint64_t cost_model_payload_checksum(const std::string& payload) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a, 64 bits
  for (unsigned char c : payload) h = (h ^ c) * 1099511628211ull;
  return h;
}

namespace {

// Reads header + payload; checks the header's fields, the feature layout
// and that the payload is exactly the rest of the file (a size is never
// trusted before it is allocated).
nlohmann::json read_model_file(const std::string& path, std::string* payload) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw LoomError("cannot read cost model file '" + path + "'");
  std::string line;
  std::getline(in, line);
  nlohmann::json h = nlohmann::json::parse(line, nullptr, false);
  if (h.is_discarded() || !h.is_object() || !h.contains("loom_cost_model"))
    throw LoomError(path + ": not a Loom cost model file");
  if (!in.good()) throw LoomError(path + ": no payload after the header line");
  auto integer = [&](const char* key) {
    if (!h.contains(key) || !h[key].is_number_integer())
      throw LoomError(path + ": header field '" + key + "' is missing or not an integer");
    return h[key].get<int64_t>();
  };
  if (!h.contains("model") || !h["model"].is_string())
    throw LoomError(path + ": header field 'model' is missing or not a string");
  if (h.contains("settings") && !h["settings"].is_object())
    throw LoomError(path + ": header field 'settings' is not an object");
  if (h.contains("trained_on") && !h["trained_on"].is_array())
    throw LoomError(path + ": header field 'trained_on' is not a list");
  const int64_t version = integer("feature_version"), features = integer("num_features");
  if (version != kFeatureVersion || features != kNumFeatures)
    throw LoomError(path + ": saved with feature layout v" + std::to_string(version) + " (" +
                    std::to_string(features) + " features); this build uses v" + std::to_string(kFeatureVersion) +
                    " (" + std::to_string(kNumFeatures) + ")");
  const int64_t n = integer("payload_bytes");
  const std::streamoff start = in.tellg();
  in.seekg(0, std::ios::end);
  const std::streamoff rest = in.tellg() - start;
  in.seekg(start);
  if (n != rest)
    throw LoomError(path + ": header says " + std::to_string(n) + " payload bytes, the file holds " +
                    std::to_string(rest));
  payload->resize(static_cast<size_t>(n));
  in.read(payload->data(), static_cast<std::streamsize>(n));
  if (in.gcount() != n) throw LoomError(path + ": truncated payload");
  // XGBoost's reader trusts the lengths inside its payload (a flipped byte
  // asks for hundreds of GB): a payload is parsed only when it is the one
  // that was saved.
  if (!h.contains("payload_fnv1a64") || !h["payload_fnv1a64"].is_number_unsigned())
    throw LoomError(path + ": header field 'payload_fnv1a64' is missing (saved by an older Loom: train the model again)");
  if (h["payload_fnv1a64"].get<uint64_t>() != cost_model_payload_checksum(*payload))
    throw LoomError(path + ": the payload does not match its checksum (the file is corrupt)");
  return h;
}

}  // namespace

void CostModel::load(const std::string& path) {
  std::string payload;
  nlohmann::json h = read_model_file(path, &payload);
  if (h.value("model", "") != name())
    throw LoomError(path + ": holds a '" + h.value("model", "") + "' model, not '" + name() + "'");
  std::vector<TrainedOn> trained_on;
  if (h.contains("trained_on")) {
    const auto& list = h["trained_on"];
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string where = path + ": trained_on[" + std::to_string(i) + "]";
      const auto& e = list[i];
      if (!e.is_object() || !e.contains("programs") || !e["programs"].is_number_unsigned() || !e.contains("machine"))
        throw LoomError(where + ": expected {\"machine\": {...} or null, \"programs\": N}");
      TrainedOn t;
      if (!e["machine"].is_null()) t.machine = MachineKind::from_json(e["machine"], where + ".machine");
      t.programs = e["programs"].get<size_t>();
      trained_on.push_back(t);
    }
  }
  deserialize(payload);
  trained_on_ = std::move(trained_on);
}

std::string trained_elsewhere_warning(const CostModel& model, const std::string& file, const MachineKind& here) {
  if (model.trained_on_kind_of(here)) return "";
  const std::string advice = "; this machine is " + here.name() +
                             ": its ranking may not carry over (`loom costmodel train` on this machine's logs makes one "
                             "for it)";
  std::string where;
  for (const auto& t : model.trained_on())
    where += (where.empty() ? "" : ", ") + machine_label(t.machine) + " (" + std::to_string(t.programs) + " programs)";
  if (where.empty()) return "cost model " + file + " does not say which machine its training programs were timed on" + advice;
  return "cost model " + file + " was trained on programs timed on " + where + advice;
}

// ---- random model ------------------------------------------------------------

namespace {

// Scores are a hash of the program's features and the seed: uniform in
// [0, 1), unrelated to performance, yet reproducible (so a saved and loaded
// random model predicts the same).
class RandomModel : public CostModel {
 public:
  explicit RandomModel(uint64_t seed) : seed_(seed) {}
  void fit(const std::vector<ProgramFeatures>&, const std::vector<float>&, const std::vector<int>&) override {}
  std::vector<float> predict_features(const std::vector<ProgramFeatures>& programs) override {
    std::vector<float> out;
    out.reserve(programs.size());
    for (const auto& p : programs) {
      if (!p.valid) {
        out.push_back(kInvalidProgramScore);
        continue;
      }
      uint64_t h = 1469598103934665603ull ^ seed_;
      for (float v : p.values) {
        uint32_t bits;
        std::memcpy(&bits, &v, sizeof bits);
        h = (h ^ bits) * 1099511628211ull;
      }
      h ^= h >> 33;
      h *= 0xff51afd7ed558ccdull;
      h ^= h >> 33;
      out.push_back(static_cast<float>((h >> 40) * (1.0 / 16777216.0)));
    }
    return out;
  }
  std::string name() const override { return "random"; }
  nlohmann::json settings_json() const override { return {{"seed", seed_}}; }

 protected:
  std::string serialize() const override { return std::to_string(seed_); }
  void deserialize(const std::string& p) override { seed_ = std::stoull(p); }

 private:
  uint64_t seed_;
};

}  // namespace

// ---- factory -------------------------------------------------------------------

namespace {

// Every kind of cost model, listed once (a new one is a row here).
struct CostModelKind {
  const char* name;
  std::unique_ptr<CostModel> (*make)(const nlohmann::json& settings);
};

std::unique_ptr<CostModel> make_random_model(const nlohmann::json& s) {
  return std::make_unique<RandomModel>(static_cast<uint64_t>(RandomModelSettings::from_json(s).seed));
}

const std::vector<CostModelKind>& kind_table() {
  static const std::vector<CostModelKind> k = {
      {"mlp", [](const nlohmann::json& s) { return make_mlp_model(MlpSettings::from_json(s)); }},
      {"xgb", [](const nlohmann::json& s) { return make_xgb_model(XgbSettings::from_json(s)); }},
      {"random", make_random_model},
  };
  return k;
}

}  // namespace

const std::vector<std::string>& cost_model_kinds() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& k : kind_table()) n.push_back(k.name);
    return n;
  }();
  return names;
}

std::string cost_model_kind_names() { return alternatives(cost_model_kinds()); }

std::unique_ptr<CostModel> make_cost_model(const std::string& kind, const nlohmann::json& settings) {
  nlohmann::json s = settings.is_null() ? nlohmann::json::object() : settings;
  for (const auto& k : kind_table())
    if (kind == k.name) return k.make(s);
  throw LoomError("unknown cost model '" + kind + "' (expected " + cost_model_kind_names() + ")");
}

std::unique_ptr<CostModel> load_cost_model(const std::string& path, const nlohmann::json& overrides) {
  std::string payload;
  nlohmann::json h = read_model_file(path, &payload);
  nlohmann::json settings = h.value("settings", nlohmann::json::object());
  // MLP files written before the program head and the input clipping
  // existed have neither.
  if (h.value("model", "") == "mlp" && settings.is_object()) {
    if (!settings.contains("head_layers")) settings["head_layers"] = 0;
    if (!settings.contains("input_clip")) settings["input_clip"] = 0;
  }
  if (!overrides.is_object()) throw LoomError(path + ": setting overrides must be an object");
  if (settings.is_object())
    for (const auto& [key, value] : overrides.items()) settings[key] = value;
  auto m = make_cost_model(h.value("model", ""), settings);
  m->load(path);
  return m;
}


}  // namespace loom
