// The default cost model: an ensemble of small per-statement MLPs in LibTorch
// whose outputs are summed per program (only mlp_model.cc includes LibTorch).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "costmodel/cost_model.h"

namespace loom {

struct MlpSettings {
  int hidden = 128;               // width of each hidden layer
  int layers = 2;                 // hidden layers (ReLU)
  double learning_rate = 2e-3;    // Adam
  double weight_decay = 1e-5;     // Adam (L2)
  int batch_programs = 256;       // programs per minibatch
  int max_epochs = 150;           // per fit
  int patience = 15;              // epochs without validation improvement before stopping
  double valid_fraction = 0.15;   // programs held out for early stopping
  double max_train_seconds = 5;   // wall-clock bound per fit (checked per minibatch)
  double mse_weight = 0.1;        // weight of the MSE term next to the pairwise rank loss
  int threads = 1;                // torch intra-op threads (training and inference)
  int seed = 0;
  int members = 5;                // networks in the ensemble (scores averaged); member m uses seed + m
  double dropout = 0.1;           // dropout after each hidden layer while training
  // Weight averaging: each member also tries the mean of the weights of the
  // epochs within this many of its best one and keeps it if it ranks its
  // validation programs better (0 = off;
  // docs/results/2026-11-30-costmodel-data-weight-averaging.md).
  int average_epochs = 5;
  // Program head: the sum of a program's statement vectors (the last hidden
  // layer) through this many Linear(hidden)+ReLU layers and a Linear(1),
  // added to the sum of the statements' outputs (0 = the plain sum). It sees
  // the statements together (a packing copy and the kernel that reads it;
  // docs/results/2026-11-30-costmodel-program-head.md).
  int head_layers = 1;
  // Standardized inputs are clipped to [-input_clip, input_clip] (0 = off).
  // Online, the first fit sees a few dozen programs: a feature constant
  // among them (std floored at 1e-3) turns any later difference into an
  // input in the hundreds, and the evolutionary search, maximizing the
  // score, finds such programs (hopelessly slow ones scored best). Clipped, the network cannot
  // extrapolate far beyond what it saw; the standardization is recomputed
  // at every fit, so the range follows the data.
  double input_clip = 8;

  // Strict: unknown keys or out-of-range values throw LoomError naming `where.key`.
  static MlpSettings from_json(const nlohmann::json& j, const std::string& where = "mlp");
  nlohmann::json to_json() const;
};

std::unique_ptr<CostModel> make_mlp_model(const MlpSettings& settings = {});

// The scores of an mlp model (one made by make_mlp_model or loaded) from
// LibTorch's forward pass: the reference its own inference is tested against.
std::vector<float> mlp_libtorch_scores(CostModel& mlp, const std::vector<ProgramFeatures>& programs);

}  // namespace loom
