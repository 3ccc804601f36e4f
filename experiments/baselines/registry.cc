// The per-operator baselines, listed once: `loom report` runs a config's
// `baselines` by name from here, `loom baseline` every one for the task's
// target, and the config parser checks names against it.
#include "experiments/baselines/baseline.h"

#include "ir/settings_table.h"

namespace loom {

const std::vector<OperatorBaseline>& operator_baselines() {
  static const std::vector<OperatorBaseline> list = {
      {"onednn", false, run_onednn_baselines},
      {"openblas", false, run_openblas_baselines},
      {"cublas", true, run_cublas_baselines},
      {"cudnn", true, run_cudnn_baselines},
  };
  return list;
}

const OperatorBaseline* find_operator_baseline(const std::string& name) {
  for (const auto& b : operator_baselines())
    if (name == b.name) return &b;
  return nullptr;
}

std::string operator_baseline_names() {
  std::vector<std::string> names;
  for (const auto& b : operator_baselines()) names.push_back(b.name);
  return alternatives(names);
}

std::vector<BaselineResult> OperatorBaseline::run_for(const Task& task, const TimingOptions& timing,
                                                      const TensorMap& inputs, const TensorMap& reference) const {
  if (gpu != task.target.is_gpu())
    return {unsupported_baseline(name, "", "not available for target " + task.target.to_string())};
  return run(task, timing, inputs, reference);
}

}  // namespace loom
