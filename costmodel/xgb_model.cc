// The XGBoost cost model, through the C API (the only file including xgboost).
//
// The sum trick: every statement row is one XGBoost row; a program's score is
// the sum of its rows' margins. XGBoost's built-in objectives cannot express
// that, so each boosting round uses a custom objective computed per program
// and handed to all its rows (d score / d row margin = 1, so each row gets the
// program's gradient and hessian):
//   pack-sum-rank (default): pairwise logistic loss between programs of the
//     same task with different labels; each program is paired with up to 16
//     random partners per round.
//   pack-sum-mse: squared error between the summed score and the label,
//     weighted by the label (floor 0.05) so the fast programs dominate, as
//     Ansor's pack-sum regression does.
// base_score is 0 so a program's score does not grow with its row count.
// Every fit starts from scratch (trees cannot be warm-started meaningfully when
// labels are renormalized) and runs max_rounds boosting rounds within a
// wall-clock bound; with valid_fraction > 0 it stops early on the pairwise
// accuracy of a held-out share of the programs (a fixed share: see
// stable_split) and is cut back to the best round.
#include <xgboost/c_api.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "costmodel/metrics.h"
#include "costmodel/xgb_model.h"
#include "ir/error.h"

namespace loom {

namespace {

void check(int rc, const char* what) {
  if (rc != 0) throw LoomError(std::string("xgboost: ") + what + ": " + XGBGetLastError());
}

// A DMatrix of the statement rows of some programs, with each row's program.
struct Rows {
  DMatrixHandle m = nullptr;
  std::vector<size_t> row_program;  // position in the program list
  Rows() = default;
  Rows(const Rows&) = delete;
  Rows& operator=(const Rows&) = delete;
  ~Rows() {
    if (m) XGDMatrixFree(m);
  }
};

void make_rows(const std::vector<ProgramFeatures>& programs, const std::vector<size_t>& which, Rows* r) {
  std::vector<float> data;
  for (size_t k = 0; k < which.size(); ++k) {
    const ProgramFeatures& f = programs[which[k]];
    if (!f.valid) continue;
    data.insert(data.end(), f.values.begin(), f.values.end());
    for (int s = 0; s < f.num_stmts; ++s) r->row_program.push_back(k);
  }
  // NaN marks missing values; every feature here is present (zeros are real).
  check(XGDMatrixCreateFromMat(data.data(), r->row_program.size(), kNumFeatures, std::nanf(""), &r->m),
        "create DMatrix");
}

class XgbModel : public CostModel {
 public:
  explicit XgbModel(const XgbSettings& s) : s_(s), rng_(static_cast<uint64_t>(s.seed)) {}
  ~XgbModel() override { free_booster(); }

  std::string name() const override { return "xgb"; }
  nlohmann::json settings_json() const override { return s_.to_json(); }

  std::vector<float> predict_features(const std::vector<ProgramFeatures>& programs) override {
    std::vector<size_t> all(programs.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    std::vector<float> out = program_scores(programs, all, /*training=*/false);
    for (size_t i = 0; i < programs.size(); ++i)
      if (!programs[i].valid) out[i] = kInvalidProgramScore;
    return out;
  }

  void fit(const std::vector<ProgramFeatures>& programs, const std::vector<float>& labels,
           const std::vector<int>& groups) override {
    using Clock = std::chrono::steady_clock;
    auto start = Clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };

    std::vector<size_t> usable;
    for (size_t i = 0; i < programs.size(); ++i)
      if (programs[i].valid && programs[i].num_stmts > 0) usable.push_back(i);
    if (usable.size() < 2) return;
    std::vector<size_t> train, valid;
    stable_split(usable, usable.size() >= 20 ? s_.valid_fraction : 0.0, static_cast<uint64_t>(s_.seed), &train,
                 &valid);

    Rows trows, vrows;
    make_rows(programs, train, &trows);
    if (!valid.empty()) make_rows(programs, valid, &vrows);
    std::vector<float> vlabels;
    std::vector<int> vgroups;
    for (size_t i : valid) vlabels.push_back(labels[i]), vgroups.push_back(groups[i]);

    free_booster();
    check(XGBoosterCreate(&trows.m, 1, &booster_), "create booster");
    set_params();

    const size_t n = train.size();
    std::vector<float> y(n);
    std::vector<int> g(n);
    for (size_t k = 0; k < n; ++k) y[k] = labels[train[k]], g[k] = groups[train[k]];
    // Programs of each task, for pair sampling.
    std::map<int, std::vector<size_t>> members;
    for (size_t k = 0; k < n; ++k) members[g[k]].push_back(k);

    std::vector<float> grad(trows.row_program.size()), hess(trows.row_program.size());
    double best_acc = -1;
    int best_round = -1, rounds = 0;
    for (int round = 0; round < s_.max_rounds && elapsed() < s_.max_train_seconds; ++round) {
      std::vector<double> score(n, 0.0), pg(n, 0.0), ph(n, 0.0);
      if (round > 0) {
        const float* m = nullptr;
        bst_ulong len = 0;
        check(XGBoosterPredict(booster_, trows.m, 1, 0, 1, &len, &m), "predict");
        for (size_t r = 0; r < len; ++r) score[trows.row_program[r]] += m[r];
      }
      if (s_.objective == "pack-sum-mse") {
        for (size_t k = 0; k < n; ++k) {
          double w = std::max(0.05, static_cast<double>(y[k]));
          pg[k] = w * (score[k] - y[k]);
          ph[k] = w;
        }
      } else {
        for (size_t k = 0; k < n; ++k) {
          const auto& mem = members[g[k]];
          for (int t = 0; t < 16 && mem.size() > 1; ++t) {
            size_t j = mem[rng_() % mem.size()];
            if (y[j] == y[k]) continue;
            double sign = y[k] > y[j] ? 1.0 : -1.0;
            double sig = 1.0 / (1.0 + std::exp(sign * (score[k] - score[j])));  // sigma(-sign*d)
            pg[k] -= sign * sig, pg[j] += sign * sig;
            double h = std::max(sig * (1 - sig), 1e-6);
            ph[k] += h, ph[j] += h;
          }
        }
      }
      for (size_t r = 0; r < trows.row_program.size(); ++r) {
        grad[r] = static_cast<float>(pg[trows.row_program[r]]);
        hess[r] = static_cast<float>(std::max(ph[trows.row_program[r]], 1e-6));
      }
      check(XGBoosterBoostOneIter(booster_, trows.m, grad.data(), hess.data(), grad.size()), "boost");
      rounds = round + 1;
      if (valid.empty()) continue;
      double acc = pairwise_accuracy(scores_of(vrows, valid.size(), false), vlabels, vgroups);
      if (acc > best_acc + 1e-6) {
        best_acc = acc, best_round = round;
      } else if (round - best_round >= s_.early_stopping_rounds) {
        break;
      }
    }
    char summary[160];
    if (valid.empty())
      std::snprintf(summary, sizeof summary, "%d boosting rounds, no validation (%zu programs, %zu rows)", rounds,
                    n, trows.row_program.size());
    else
      std::snprintf(summary, sizeof summary,
                    "%d boosting rounds kept of %d, validation pairwise %.3f (%zu programs, %zu rows)",
                    best_round >= 0 ? best_round + 1 : rounds, rounds, best_acc, n, trows.row_program.size());
    last_fit_summary_ = summary;
    if (best_round >= 0 && best_round + 1 < rounds) {
      BoosterHandle cut = nullptr;
      check(XGBoosterSlice(booster_, 0, best_round + 1, 1, &cut), "slice");
      free_booster();
      booster_ = cut;
    }
  }

 protected:
  std::string serialize() const override {
    if (!booster_) return "";
    bst_ulong len = 0;
    const char* buf = nullptr;
    check(XGBoosterSaveModelToBuffer(booster_, R"({"format": "ubj"})", &len, &buf), "save");
    return std::string(buf, len);
  }

  void deserialize(const std::string& p) override {
    free_booster();
    if (p.empty()) return;
    check(XGBoosterCreate(nullptr, 0, &booster_), "create booster");
    check(XGBoosterLoadModelFromBuffer(booster_, p.data(), p.size()), "load");
    set_params();
  }

 private:
  void set_params() {
    auto set = [&](const char* k, const std::string& v) { check(XGBoosterSetParam(booster_, k, v.c_str()), k); };
    set("booster", "gbtree");
    set("tree_method", "hist");
    set("max_depth", std::to_string(s_.max_depth));
    set("eta", std::to_string(s_.eta));
    set("gamma", std::to_string(s_.gamma));
    set("min_child_weight", std::to_string(s_.min_child_weight));
    set("subsample", std::to_string(s_.subsample));
    set("max_bin", std::to_string(s_.max_bin));
    set("base_score", "0");
    set("nthread", std::to_string(s_.threads));
    set("seed", std::to_string(s_.seed));
    set("verbosity", "0");
  }

  void free_booster() {
    if (booster_) XGBoosterFree(booster_);
    booster_ = nullptr;
  }

  std::vector<float> scores_of(const Rows& rows, size_t num_programs, bool training) {
    std::vector<float> out(num_programs, 0.0f);
    if (!booster_ || rows.row_program.empty()) return out;
    const float* m = nullptr;
    bst_ulong len = 0;
    check(XGBoosterPredict(booster_, rows.m, 1, 0, training ? 1 : 0, &len, &m), "predict");
    for (size_t r = 0; r < len; ++r) out[rows.row_program[r]] += m[r];
    return out;
  }

  std::vector<float> program_scores(const std::vector<ProgramFeatures>& programs, const std::vector<size_t>& which,
                                    bool training) {
    if (!booster_) return std::vector<float>(which.size(), 0.0f);
    Rows rows;
    make_rows(programs, which, &rows);
    return scores_of(rows, which.size(), training);
  }

  XgbSettings s_;
  std::mt19937_64 rng_;
  BoosterHandle booster_ = nullptr;
};

}  // namespace

std::unique_ptr<CostModel> make_xgb_model(const XgbSettings& settings) {
  return std::make_unique<XgbModel>(settings);
}

}  // namespace loom
