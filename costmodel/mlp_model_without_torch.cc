// The mlp cost model in a build without LibTorch (-DLOOM_WITH_TORCH=OFF):
// asking for it is an error that says so, and names the model that works.
#include "costmodel/mlp_model.h"
#include "ir/error.h"

namespace loom {

namespace {
[[noreturn]] void no_torch(const std::string& where) {
  throw LoomError(where + ": the mlp cost model needs LibTorch, and this build of Loom has none "
                          "(configured with -DLOOM_WITH_TORCH=OFF); use the xgb cost model");
}
}  // namespace

std::unique_ptr<CostModel> make_mlp_model(const MlpSettings&) { no_torch("mlp"); }
std::vector<float> mlp_libtorch_scores(CostModel&, const std::vector<ProgramFeatures>&) { no_torch("mlp"); }

}  // namespace loom
