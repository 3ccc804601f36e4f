// XGBoost cost model (Ansor's choice), through the C API; only xgb_model.cc
// includes xgboost. Rows are statements; a program's score is the sum of its
// rows' outputs, trained with a custom "pack-sum" objective (see xgb_model.cc).
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "costmodel/cost_model.h"

namespace loom {

struct XgbSettings {
  int max_depth = 10;
  double eta = 0.2;
  double gamma = 0.001;
  double min_child_weight = 0;
  double subsample = 1.0;
  int max_bin = 64;               // histogram bins per feature (log-scaled features have few values)
  // Fixed rounds and no held-out validation by default (as Ansor): early
  // stopping on the few programs of an online fit's validation share cut
  // the model to a handful of trees, whose tied scores stalled the search
  // (docs/results/2026-11-29-first-tuning.md).
  int max_rounds = 100;           // boosting rounds per fit
  int early_stopping_rounds = 30; // rounds without validation improvement (when validating)
  double valid_fraction = 0.0;    // programs held out for early stopping (0: none)
  double max_train_seconds = 10;  // wall-clock bound per fit (checked per round)
  std::string objective = "pack-sum-rank";  // or "pack-sum-mse"
  int threads = 1;
  int seed = 0;

  static XgbSettings from_json(const nlohmann::json& j, const std::string& where = "xgb");
  nlohmann::json to_json() const;
};

std::unique_ptr<CostModel> make_xgb_model(const XgbSettings& settings = {});

}  // namespace loom
