// Cost models: settings are strict, save/load round-trips to identical
// predictions, and on data with a known ordering the MLP and XGBoost rank well.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>

#include "costmodel/cost_model.h"
#include "costmodel/metrics.h"
#include "ir/error.h"
#include "tests/support/matmul_schedules.h"
#include "measure/machine.h"
#include "tests/support/scratch_dir.h"

namespace loom {
namespace {

// Programs of 1-4 statement rows; each row has 8 random features (the rest
// zero, as most real features of a statement are) and contributes
// h(x) = 2 x0 - x1 + 0.5 x2 x3 + sin(x4) (x5..x7 are noise); a program's true
// score is the sum over its rows, squashed monotonically into (0, 1) as the
// label. Groups are tasks.
struct Synthetic {
  std::vector<ProgramFeatures> programs;
  std::vector<float> labels;
  std::vector<int> groups;
};

// n programs, each filled by make(rng, rows) which appends its statement
// rows and returns its label; `groups` tasks, round robin.
template <typename Make>
Synthetic generate(size_t n, uint64_t seed, int groups, Make make) {
  std::mt19937_64 rng(seed);
  Synthetic d;
  for (size_t p = 0; p < n; ++p) {
    ProgramFeatures f;
    f.valid = true;
    d.labels.push_back(make(rng, &f));
    f.num_stmts = static_cast<int>(f.values.size() / kNumFeatures);
    d.programs.push_back(std::move(f));
    d.groups.push_back(static_cast<int>(p % groups));
  }
  return d;
}

Synthetic synthetic(size_t n, uint64_t seed) {
  std::normal_distribution<float> normal;
  return generate(n, seed, 4, [&](std::mt19937_64& rng, ProgramFeatures* f) {
    const int stmts = 1 + static_cast<int>(rng() % 4);
    double total = 0;
    for (int s = 0; s < stmts; ++s) {
      std::vector<float> row(kNumFeatures, 0.0f);
      for (int k = 0; k < 8; ++k) row[k] = normal(rng);
      total += 2 * row[0] - row[1] + 0.5 * row[2] * row[3] + std::sin(row[4]);
      f->values.insert(f->values.end(), row.begin(), row.end());
    }
    return static_cast<float>(1.0 / (1.0 + std::exp(-total / 4)));
  });
}

double heldout_accuracy(const std::string& kind, const nlohmann::json& settings) {
  Synthetic train = synthetic(800, 1), test = synthetic(300, 2);
  auto m = make_cost_model(kind, settings);
  m->fit(train.programs, train.labels, train.groups);
  return pairwise_accuracy(m->predict_features(test.programs), test.labels, test.groups);
}

// The one-line error of loading `path` ("loaded" when it loads).
std::string load_error(const std::string& path, const nlohmann::json& overrides = nlohmann::json::object()) {
  try {
    load_cost_model(path, overrides);
    return "loaded";
  } catch (const LoomError& e) {
    return e.what();
  }
}

TEST(Models, MlpRanksSyntheticProgramsWell) {
  double acc = heldout_accuracy("mlp", {{"max_train_seconds", 60}, {"max_epochs", 60}});
  EXPECT_GT(acc, 0.9);
  std::printf("mlp synthetic held-out pairwise accuracy %.3f\n", acc);
}

TEST(Models, MlpWithWeightAveragingRanksSyntheticProgramsWell) {
  // Each member may replace its best epoch's weights by their mean with the
  // neighbouring epochs' (kept only when it ranks the validation share better).
  double acc = heldout_accuracy("mlp", {{"max_train_seconds", 60}, {"max_epochs", 60}, {"average_epochs", 4}});
  EXPECT_GT(acc, 0.9);
  std::printf("mlp (weight averaging) synthetic held-out pairwise accuracy %.3f\n", acc);
}

// Two statement rows per program whose label is the product of their first
// features: no sum of per-statement scores can order these programs, a head
// on the sum of the statements' vectors can.
Synthetic interacting(size_t n, uint64_t seed) {
  std::normal_distribution<float> normal;
  return generate(n, seed, 1, [&](std::mt19937_64& rng, ProgramFeatures* f) {
    float product = 1;
    for (int s = 0; s < 2; ++s) {
      std::vector<float> row(kNumFeatures, 0.0f);
      row[0] = normal(rng);
      row[1] = static_cast<float>(s);  // which statement
      product *= row[0];
      f->values.insert(f->values.end(), row.begin(), row.end());
    }
    return 1.0f / (1.0f + std::exp(-product));
  });
}

TEST(Models, MlpProgramHeadLearnsAnInteractionBetweenStatements) {
  Synthetic train = interacting(1000, 5), test = interacting(300, 6);
  double acc[2];
  for (int head : {0, 1}) {
    auto m = make_cost_model("mlp", {{"max_train_seconds", 60}, {"max_epochs", 80}, {"head_layers", head}});
    m->fit(train.programs, train.labels, train.groups);
    acc[head] = pairwise_accuracy(m->predict_features(test.programs), test.labels, test.groups);
  }
  std::printf("interacting statements: pairwise accuracy %.3f (sum only), %.3f (program head)\n", acc[0], acc[1]);
  EXPECT_LT(acc[0], 0.7);
  EXPECT_GT(acc[1], 0.8);
}

TEST(Models, MlpInputClippingBoundsScoresOfUnseenFeatureValues) {
  // Feature 9 is 0 in every training program (its std is floored at 1e-3):
  // a program where it is +-10 is an input of 10,000 standard deviations.
  // Clipped to input_clip, its score stays near the scores seen in training.
  Synthetic train = synthetic(400, 7), test = synthetic(50, 8);
  auto with_feature_9 = [&](float v) {
    Synthetic odd = test;
    for (auto& p : odd.programs)
      for (int s = 0; s < p.num_stmts; ++s) p.values[static_cast<size_t>(s) * kNumFeatures + 9] = v;
    return odd.programs;
  };
  double moved[2];
  for (int clip : {0, 1}) {
    auto m = make_cost_model("mlp", {{"max_epochs", 20}, {"max_train_seconds", 60}, {"input_clip", clip ? 8.0 : 0.0}});
    m->fit(train.programs, train.labels, train.groups);
    std::vector<float> base = m->predict_features(test.programs);
    const double range = *std::max_element(base.begin(), base.end()) - *std::min_element(base.begin(), base.end());
    moved[clip] = 0;
    for (float v : {10.0f, -10.0f}) {
      std::vector<float> odd = m->predict_features(with_feature_9(v));
      for (size_t i = 0; i < odd.size(); ++i)
        moved[clip] = std::max(moved[clip], std::fabs(static_cast<double>(odd[i] - base[i])) / range);
    }
  }
  std::printf("score change from one unseen feature value, in units of the test scores' range: %.2f unclipped, "
              "%.2f clipped\n",
              moved[0], moved[1]);
  EXPECT_GT(moved[0], 5.0);
  EXPECT_LT(moved[1], 1.0);
}

TEST(Models, XgbRanksSyntheticProgramsWell) {
  double acc = heldout_accuracy("xgb", {{"max_train_seconds", 60}, {"max_depth", 6}});
  EXPECT_GT(acc, 0.9);
  std::printf("xgb synthetic held-out pairwise accuracy %.3f\n", acc);
}

TEST(Models, RandomModelIsNearChance) {
  double acc = heldout_accuracy("random", nlohmann::json::object());
  EXPECT_GT(acc, 0.4);
  EXPECT_LT(acc, 0.6);
}

// Matmul schedules whose throughput is a known function of the schedule: wider
// vectors, larger register tiles and a reduction tile near 8 are faster.
TEST(Models, LearnKnownMatmulOrderingFromRealFeatures) {
  auto task = std::make_shared<const Task>(
      Task::make("matmul", {{"M", 256}, {"N", 256}, {"K", 256}}, Target::parse("cpu -threads=1")));
  std::vector<MatmulTiles> tiles;
  auto states = random_matmul_states(task->dag, 256, 256, 256, 700, 11, &tiles);
  std::vector<TrainingRecord> train, test;
  for (size_t i = 0; i < states.size(); ++i) {
    const auto& t = tiles[i];
    double gflops = 1 + 2 * std::log2(static_cast<double>(t.j[2])) +
                    std::log2(static_cast<double>(t.i[2] * t.j[1])) -
                    0.5 * std::fabs(std::log2(static_cast<double>(t.k)) - 3);
    TrainingRecord r{task, states[i], 1.0 / std::max(0.1, gflops)};
    (i < 500 ? train : test).push_back(r);
  }
  for (const char* kind : {"mlp", "xgb"}) {
    nlohmann::json settings = {{"max_train_seconds", 60}};
    settings[std::string(kind) == "mlp" ? "max_epochs" : "max_rounds"] = 60;
    auto m = make_cost_model(kind, settings);
    m->update(train);
    EXPECT_EQ(m->num_records(), train.size());
    std::vector<State> ts;
    std::vector<float> y;
    for (const auto& r : test) ts.push_back(r.state), y.push_back(static_cast<float>(1.0 / r.cost_s));
    std::vector<float> s = m->predict(*task, ts);
    double acc = pairwise_accuracy(s, y, std::vector<int>(y.size(), 0));
    std::printf("%s matmul known-ordering held-out pairwise accuracy %.3f\n", kind, acc);
    EXPECT_GT(acc, 0.85) << kind;
  }
}

TEST(Models, SaveLoadRoundTripGivesIdenticalPredictions) {
  Synthetic train = synthetic(200, 3), test = synthetic(50, 4);
  test.programs.push_back(ProgramFeatures{});  // an invalid program
  for (const std::string kind : {"mlp", "xgb", "random"}) {
    nlohmann::json settings = kind == "mlp"   ? nlohmann::json{{"max_epochs", 20}}
                              : kind == "xgb" ? nlohmann::json{{"max_rounds", 20}}
                                              : nlohmann::json{{"seed", 5}};
    auto m = make_cost_model(kind, settings);
    m->fit(train.programs, train.labels, train.groups);
    std::vector<float> before = m->predict_features(test.programs);
    std::string path = loom::testing::scratch_dir().string() + "/loom_cm_" + kind + ".model";
    m->save(path);
    auto loaded = load_cost_model(path);
    EXPECT_EQ(loaded->name(), kind);
    EXPECT_EQ(loaded->settings_json(), m->settings_json());
    std::vector<float> after = loaded->predict_features(test.programs);
    EXPECT_EQ(before, after) << kind;
    EXPECT_EQ(after.back(), kInvalidProgramScore) << kind;
    std::remove(path.c_str());
  }
}

// Rewrites a saved model file's header (the payload kept).
template <typename Edit>
void edit_saved_header(const std::string& path, Edit edit) {
  std::string header, payload;
  {
    std::ifstream in(path, std::ios::binary);
    std::getline(in, header);
    payload.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  nlohmann::json h = nlohmann::json::parse(header);
  edit(h);
  std::ofstream out(path, std::ios::binary);
  out << h.dump() << '\n' << payload;
}
template <typename Edit>
void edit_saved_settings(const std::string& path, Edit edit) {
  edit_saved_header(path, [&](nlohmann::json& h) { edit(h["settings"]); });
}

TEST(Models, MlpFileFromBeforeTheProgramHeadLoadsWithoutOne) {
  // Such files have no "head_layers" (nor "input_clip") in their settings:
  // their networks have no head and no clipping, whatever today's defaults.
  Synthetic train = synthetic(100, 3), test = synthetic(20, 4);
  auto m = make_cost_model("mlp", {{"max_epochs", 5}, {"head_layers", 0}, {"input_clip", 0}});
  m->fit(train.programs, train.labels, train.groups);
  std::string path = loom::testing::scratch_dir().string() + "/loom_cm_old_mlp.model";
  m->save(path);
  edit_saved_settings(path, [](nlohmann::json& settings) {
    settings.erase("head_layers");
    settings.erase("input_clip");
  });
  auto loaded = load_cost_model(path);
  EXPECT_EQ(loaded->settings_json().at("head_layers"), 0);
  EXPECT_EQ(loaded->settings_json().at("input_clip"), 0);
  EXPECT_EQ(loaded->predict_features(test.programs), m->predict_features(test.programs));
  std::remove(path.c_str());
}

// Records of two machines and one that names none.
std::vector<TrainingRecord> records_from_machines(const MachineKind& a, const MachineKind& b) {
  auto task = std::make_shared<const Task>(
      Task::make("matmul", {{"M", 16}, {"N", 16}, {"K", 16}}, Target::parse("cpu -threads=1")));
  auto states = random_matmul_states(task->dag, 16, 16, 16, 4, 1);
  return {{task, states[0], 1e-3, a}, {task, states[1], 2e-3, a}, {task, states[2], 1e-3, b},
          {task, states[3], 1e-3, MachineKind{}}};
}

TEST(Models, ASavedModelSaysWhichMachinesItWasTrainedOn) {
  const MachineKind a{"CPU A", "avx512", 2, ""}, b{"CPU B", "avx2", 8, ""};
  auto m = make_cost_model("random");
  m->update(records_from_machines(a, b));
  std::string path = loom::testing::scratch_dir().string() + "/loom_cm_trained_on.model";
  m->save(path);
  auto loaded = load_cost_model(path);
  ASSERT_EQ(loaded->trained_on().size(), 3u);
  EXPECT_EQ(loaded->trained_on()[0].machine, a);
  EXPECT_EQ(loaded->trained_on()[0].programs, 2u);
  EXPECT_EQ(loaded->trained_on()[1].machine, b);
  EXPECT_FALSE(loaded->trained_on()[2].machine.known());
  EXPECT_TRUE(loaded->trained_on_kind_of({"CPU A", "avx512", 32, ""})) << "the core count aside";
  EXPECT_FALSE(loaded->trained_on_kind_of({"CPU A", "avx2", 2, ""}));
  EXPECT_FALSE(loaded->trained_on_kind_of({"CPU A", "avx512", 2, "NVIDIA H200"}));
  std::remove(path.c_str());
}

TEST(Models, ASearchOnAnotherKindOfMachineIsWarnedOnce) {
  const MachineKind a{"CPU A", "avx512", 2, ""}, b{"CPU B", "avx2", 8, ""};
  auto m = make_cost_model("random");
  m->update(records_from_machines(a, b));
  EXPECT_EQ(trained_elsewhere_warning(*m, "x.model", a), "");
  const std::string w = trained_elsewhere_warning(*m, "x.model", {"CPU C", "avx512", 2, ""});
  EXPECT_EQ(w.find('\n'), std::string::npos) << w;
  EXPECT_NE(w.find("x.model was trained on programs timed on CPU A (avx512, 2 cores) (2 programs), CPU B (avx2, 8 "
                   "cores) (1 programs), machines the records do not name (1 programs); this machine is CPU C"),
            std::string::npos)
      << w;
}

TEST(Models, AFileThatDoesNotSayWhereItWasTrainedLoadsAndIsWarnedAbout) {
  auto m = make_cost_model("random");
  m->update(records_from_machines({"CPU A", "avx512", 2, ""}, {"CPU B", "avx2", 8, ""}));
  std::string path = loom::testing::scratch_dir().string() + "/loom_cm_no_trained_on.model";
  m->save(path);
  edit_saved_header(path, [](nlohmann::json& h) { h.erase("trained_on"); });
  auto loaded = load_cost_model(path);
  EXPECT_TRUE(loaded->trained_on().empty());
  EXPECT_NE(trained_elsewhere_warning(*loaded, path, {"CPU A", "avx512", 2, ""}).find("does not say which machine"),
            std::string::npos);
  edit_saved_header(path, [](nlohmann::json& h) { h["trained_on"] = nlohmann::json::array({{{"machine", 3}, {"programs", 1}}}); });
  EXPECT_EQ(load_error(path), path + ": trained_on[0].machine: expected an object");
  std::remove(path.c_str());
}

// A pretrained model is saved with the generous bound of offline training;
// online, the config's options replace it. The weights are the saved ones.
TEST(Models, LoadedSettingsCanBeOverridden) {
  Synthetic train = synthetic(100, 3), test = synthetic(20, 4);
  auto m = make_cost_model("mlp", {{"max_epochs", 5}, {"max_train_seconds", 1500}});
  m->fit(train.programs, train.labels, train.groups);
  std::string path = loom::testing::scratch_dir().string() + "/loom_cm_override.model";
  m->save(path);
  auto loaded = load_cost_model(path, {{"max_train_seconds", 5}});
  EXPECT_EQ(loaded->settings_json().at("max_train_seconds"), 5);
  EXPECT_EQ(loaded->predict_features(test.programs), m->predict_features(test.programs));
  std::remove(path.c_str());
}

TEST(Models, OverrideThatChangesTheNetworkShapeFailsToLoad) {
  auto m = make_cost_model("mlp", {{"max_epochs", 1}});
  Synthetic train = synthetic(40, 3);
  m->fit(train.programs, train.labels, train.groups);
  std::string path = loom::testing::scratch_dir().string() + "/loom_cm_override_shape.model";
  m->save(path);
  const std::string narrower = load_error(path, {{"hidden", 64}});
  EXPECT_NE(narrower.find("does not match the network shape"), std::string::npos) << narrower;
  EXPECT_THROW(load_cost_model(path, {{"hiden", 64}}), LoomError);  // still strict
  std::remove(path.c_str());
}

// A payload is parsed only when it is the one saved: XGBoost's reader
// trusts the lengths inside it (one flipped byte asked for 300 GB).
TEST(Models, AFileWhosePayloadDoesNotMatchItsChecksumIsRefused) {
  Synthetic train = synthetic(40, 3);
  auto m = make_cost_model("xgb", {{"max_rounds", 3}});
  m->fit(train.programs, train.labels, train.groups);
  std::string path = loom::testing::scratch_dir().string() + "/loom_cm_corrupt.model";
  m->save(path);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-5, std::ios::end);
    const char c = static_cast<char>(f.get() ^ 0x40);
    f.seekp(-5, std::ios::end);
    f.put(c);
  }
  const std::string corrupt = load_error(path);
  EXPECT_NE(corrupt.find("does not match its checksum"), std::string::npos) << corrupt;
  std::remove(path.c_str());
}

TEST(Models, AFileShorterOrLongerThanItsHeaderSaysIsRefused) {
  auto m = make_cost_model("mlp", {{"max_epochs", 1}});
  Synthetic train = synthetic(40, 3);
  m->fit(train.programs, train.labels, train.groups);
  std::string path = loom::testing::scratch_dir().string() + "/loom_cm_size.model";
  m->save(path);
  { std::ofstream(path, std::ios::app | std::ios::binary) << "x"; }
  const std::string longer = load_error(path);
  EXPECT_NE(longer.find("payload bytes, the file holds"), std::string::npos) << longer;
  std::remove(path.c_str());
}

TEST(Models, MlpRestandardizingOnMoreDataKeepsItsPredictions) {
  // Every fit recomputes the feature standardization on all its programs and
  // re-parametrizes the first layer: a fit that trains no epoch (here: a
  // saved model whose settings say max_epochs 0) predicts as before.
  Synthetic first = synthetic(100, 3), more = synthetic(300, 9), test = synthetic(40, 4);
  auto m = make_cost_model("mlp", {{"max_epochs", 10}, {"input_clip", 0}});
  m->fit(first.programs, first.labels, first.groups);
  std::vector<float> before = m->predict_features(test.programs);
  std::string path = loom::testing::scratch_dir().string() + "/loom_cm_restandardize.model";
  m->save(path);
  edit_saved_settings(path, [](nlohmann::json& settings) { settings["max_epochs"] = 0; });
  auto loaded = load_cost_model(path);
  loaded->fit(more.programs, more.labels, more.groups);
  std::vector<float> after = loaded->predict_features(test.programs);
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) EXPECT_NEAR(after[i], before[i], 1e-3 * (1 + std::fabs(before[i])));
  std::remove(path.c_str());
}

// A second fit starts from the first one's weights (warm start) on twice the
// data; it must not lose what the first fit learned.
TEST(Models, MlpWarmStartOnMoreDataLosesNoAccuracy) {
  Synthetic a = synthetic(200, 5), b = synthetic(200, 6), test = synthetic(200, 7);
  auto m = make_cost_model("mlp", {{"max_train_seconds", 60}, {"max_epochs", 30}});
  m->fit(a.programs, a.labels, a.groups);
  double first = pairwise_accuracy(m->predict_features(test.programs), test.labels, test.groups);
  a.programs.insert(a.programs.end(), b.programs.begin(), b.programs.end());
  a.labels.insert(a.labels.end(), b.labels.begin(), b.labels.end());
  a.groups.insert(a.groups.end(), b.groups.begin(), b.groups.end());
  m->fit(a.programs, a.labels, a.groups);
  double second = pairwise_accuracy(m->predict_features(test.programs), test.labels, test.groups);
  EXPECT_GT(second, first - 0.02);
}

TEST(Models, SettingsAreStrictAndEchoed) {
  EXPECT_THROW(make_cost_model("mlp", {{"hiden", 64}}), LoomError);
  EXPECT_THROW(make_cost_model("mlp", {{"hidden", -1}}), LoomError);
  EXPECT_THROW(make_cost_model("xgb", {{"objective", "rank:pairwise"}}), LoomError);
  EXPECT_THROW(make_cost_model("random", {{"sed", 1}}), LoomError);
  EXPECT_THROW(make_cost_model("svm"), LoomError);
  try {
    make_cost_model("xgb", {{"max_dept", 3}});
    FAIL();
  } catch (const LoomError& e) {
    EXPECT_NE(std::string(e.what()).find("xgb.max_dept: unknown key"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_cost_model("mlp", {{"members", 0}}), LoomError);
  EXPECT_THROW(make_cost_model("mlp", {{"dropout", 1.0}}), LoomError);
  EXPECT_THROW(make_cost_model("mlp", {{"average_epochs", -1}}), LoomError);
  EXPECT_THROW(make_cost_model("mlp", {{"head_layers", 9}}), LoomError);
  EXPECT_THROW(make_cost_model("mlp", {{"input_clip", -1}}), LoomError);
  auto m = make_cost_model("mlp", {{"hidden", 64}});
  EXPECT_EQ(m->settings_json()["hidden"], 64);
  EXPECT_EQ(m->settings_json()["layers"], 2);
  EXPECT_EQ(m->settings_json()["members"], 5);
}

TEST(Models, MlpFitIsReproducibleForASeed) {
  // Initialization, shuffling, validation shares and dropout masks all come
  // from the seed: two fits of the same data predict identically.
  Synthetic train = synthetic(200, 8), test = synthetic(50, 9);
  std::vector<float> scores[2];
  for (auto& out : scores) {
    auto m = make_cost_model("mlp", {{"max_epochs", 5}, {"members", 2}, {"seed", 3}});
    m->fit(train.programs, train.labels, train.groups);
    out = m->predict_features(test.programs);
  }
  EXPECT_EQ(scores[0], scores[1]);
}

TEST(Metrics, KnownValues) {
  // One task, perfect order except one swapped pair.
  std::vector<float> y = {0.1f, 0.2f, 0.3f, 0.4f, 1.0f}, s = {1, 2, 4, 3, 5};
  std::vector<int> g(5, 0);
  RankingMetrics m = ranking_metrics(s, y, g, 2);
  EXPECT_DOUBLE_EQ(m.pairwise_accuracy, 0.9);
  EXPECT_DOUBLE_EQ(m.top1_recall, 1.0);
  EXPECT_DOUBLE_EQ(m.topk_recall, 0.5);  // top-2 by score {5, 4 (y=.3)} vs truly {1.0, .4}
  EXPECT_DOUBLE_EQ(m.topk_score, 1.0);
  EXPECT_NEAR(m.spearman, 0.9, 1e-9);
  // Failed programs (negative labels) are ignored.
  y.push_back(-1), s.push_back(100), g.push_back(0);
  EXPECT_DOUBLE_EQ(ranking_metrics(s, y, g, 2).top1_recall, 1.0);
}

}  // namespace
}  // namespace loom
