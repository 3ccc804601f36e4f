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
  int max_rounds = 300;           // boosting rounds per fit
  int early_stopping_rounds = 30; // rounds without validation improvement
  double valid_fraction = 0.15;   // programs held out for early stopping
  double max_train_seconds = 10;  // wall-clock bound per fit (checked per round)
  std::string objective = "pack-sum-rank";  // or "pack-sum-mse"
  int threads = 1;
  int seed = 0;

  static XgbSettings from_json(const nlohmann::json& j, const std::string& where = "xgb");
  nlohmann::json to_json() const;
};

std::unique_ptr<CostModel> make_xgb_model(const XgbSettings& settings = {});

}  // namespace loom
