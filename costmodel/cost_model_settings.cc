// The settings of every cost model (the config's cost_model.options, the
// --settings of `loom costmodel train`): one table each, which parses them
// (unknown keys and values out of range are errors), echoes them and
// documents them (`loom config doc`). Torch-free, so a build without
// LibTorch still parses and documents the mlp model's settings.
#include <climits>

#include "costmodel/cost_model.h"
#include "costmodel/mlp_model.h"
#include "costmodel/xgb_model.h"
#include "ir/settings_table.h"

namespace loom {

namespace {

const SettingsTable<MlpSettings>& mlp_table() {
  using S = MlpSettings;
  static const SettingsTable<S> t({
      integer_setting("hidden", &S::hidden, 1, 4096, "width of each hidden layer"),
      integer_setting("layers", &S::layers, 1, 8, "hidden layers (ReLU)"),
      number_setting("learning_rate", &S::learning_rate, 1e-7, 1.0, "Adam's learning rate"),
      number_setting("weight_decay", &S::weight_decay, 0.0, 1.0, "Adam's weight decay (L2)"),
      integer_setting("batch_programs", &S::batch_programs, 2, 1 << 20, "programs per minibatch"),
      integer_setting("max_epochs", &S::max_epochs, 0, 1 << 20, "epochs per fit"),
      integer_setting("patience", &S::patience, 1, 1 << 20, "epochs without validation improvement before stopping"),
      number_setting("valid_fraction", &S::valid_fraction, 0.0, 0.9, "programs held out for early stopping"),
      number_setting("max_train_seconds", &S::max_train_seconds, 0.0, 1e6,
                     "wall-clock bound per fit (checked per minibatch)"),
      number_setting("mse_weight", &S::mse_weight, 0.0, 1e6, "weight of the MSE term next to the pairwise rank loss"),
      integer_setting("threads", &S::threads, 1, 1024, "LibTorch intra-op threads (training and inference)"),
      integer_setting("seed", &S::seed, 0, INT32_MAX, "seed of member 0 (member m uses seed + m)"),
      integer_setting("members", &S::members, 1, 64, "networks in the ensemble (scores averaged)"),
      number_setting("dropout", &S::dropout, 0.0, 0.9, "dropout after each hidden layer while training"),
      integer_setting("average_epochs", &S::average_epochs, 0, 1000,
                      "each member also tries the mean of the weights of the epochs within this many of its best one "
                      "and keeps it if it ranks its validation programs better (0 = off)"),
      integer_setting("head_layers", &S::head_layers, 0, 8,
                      "program head: Linear+ReLU layers over the sum of a program's statement vectors, added to the "
                      "sum of the statements' scores (0 = the plain sum)"),
      number_setting("input_clip", &S::input_clip, 0.0, 1e6,
                     "standardized inputs are clipped to [-input_clip, input_clip] (0 = off)"),
  });
  return t;
}

const SettingsTable<XgbSettings>& xgb_table() {
  using S = XgbSettings;
  static const SettingsTable<S> t({
      integer_setting("max_depth", &S::max_depth, 1, 64, "depth of each tree"),
      number_setting("eta", &S::eta, 1e-6, 1.0, "learning rate"),
      number_setting("gamma", &S::gamma, 0.0, 1e6, "minimum loss reduction of a split"),
      number_setting("min_child_weight", &S::min_child_weight, 0.0, 1e6, "minimum hessian sum of a leaf"),
      number_setting("subsample", &S::subsample, 1e-3, 1.0, "share of rows per tree"),
      integer_setting("max_bin", &S::max_bin, 2, 1 << 16, "histogram bins per feature"),
      integer_setting("max_rounds", &S::max_rounds, 0, 1 << 20, "boosting rounds per fit"),
      integer_setting("early_stopping_rounds", &S::early_stopping_rounds, 1, 1 << 20,
                      "rounds without validation improvement before stopping (when validating)"),
      number_setting("valid_fraction", &S::valid_fraction, 0.0, 0.9, "programs held out for early stopping (0: none)"),
      number_setting("max_train_seconds", &S::max_train_seconds, 0.0, 1e6,
                     "wall-clock bound per fit (checked per round)"),
      string_setting("objective", &S::objective,
                     "`pack-sum-rank`: pairwise logistic loss between programs of a task; `pack-sum-mse`: squared "
                     "error weighted by the label",
                     {"pack-sum-rank", "pack-sum-mse"}),
      integer_setting("threads", &S::threads, 1, 1024, "XGBoost threads"),
      integer_setting("seed", &S::seed, 0, INT32_MAX, "XGBoost's seed"),
  });
  return t;
}

const SettingsTable<RandomModelSettings>& random_table() {
  using S = RandomModelSettings;
  static const SettingsTable<S> t({
      integer_setting("seed", &S::seed, 0, INT32_MAX, "scores are a hash of the program's features and this seed"),
  });
  return t;
}

}  // namespace

MlpSettings MlpSettings::from_json(const nlohmann::json& j, const std::string& where) {
  return mlp_table().parse(j, where);
}
nlohmann::json MlpSettings::to_json() const { return mlp_table().to_json(*this); }

XgbSettings XgbSettings::from_json(const nlohmann::json& j, const std::string& where) {
  return xgb_table().parse(j, where);
}
nlohmann::json XgbSettings::to_json() const { return xgb_table().to_json(*this); }

RandomModelSettings RandomModelSettings::from_json(const nlohmann::json& j, const std::string& where) {
  return random_table().parse(j, where);
}
nlohmann::json RandomModelSettings::to_json() const { return random_table().to_json(*this); }

std::string cost_model_settings_doc() {
  return mlp_table().doc_rows("cost_model.options (mlp).") + xgb_table().doc_rows("cost_model.options (xgb).") +
         random_table().doc_rows("cost_model.options (random).");
}

}  // namespace loom
