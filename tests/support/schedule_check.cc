#include "tests/support/schedule_check.h"

#include <nlohmann/json.hpp>

#include "codegen/c/compile.h"
#include "codegen/runtime/host_cpu.h"
#include "ir/lower.h"
#include "ir/reference.h"
#include "ir/workload_registry.h"

namespace loom::testing {

std::shared_ptr<const ComputeDAG> workload(const std::string& name, const std::string& params_json) {
  return std::make_shared<const ComputeDAG>(make_workload(name, nlohmann::json::parse(params_json)));
}

CSourceOptions vector_c_options() {
  CSourceOptions o;
  o.vector_width = host_vector_width();
  o.unroll_at_emission = true;
  return o;
}

std::map<std::string, std::vector<float>> run_c_backend(const ComputeDAG& dag, const LoweredFunc& f,
                                                        uint64_t seed, const CSourceOptions& opts) {
  auto inputs = random_inputs(dag, seed);
  std::map<std::string, std::vector<float>> bufs = inputs;
  for (const auto& name : dag.output_names())
    bufs[name].assign(shape_size(dag.op(name)->shape), -12345.0f);
  CompiledCModule m = CompiledCModule::from_func(f, opts);
  add_pretransformed_arguments(f, bufs);
  std::vector<float*> args;
  for (const auto& b : f.args) args.push_back(bufs.at(b.name).data());
  m.run(args);
  std::map<std::string, std::vector<float>> out;
  for (const auto& name : dag.output_names()) out[name] = bufs[name];
  return out;
}

std::string check_with_c_backend(const State& s, uint64_t seed) {
  const ComputeDAG& dag = s.dag();
  LoweredFunc f = lower(s);
  auto ref = evaluate_reference(dag, random_inputs(dag, seed));
  const std::pair<const char*, CSourceOptions> forms[] = {{"scalar C", {}}, {"vector C", vector_c_options()}};
  for (const auto& [form, opts] : forms) {
    auto got = run_c_backend(dag, f, seed, opts);
    for (const auto& name : dag.output_names()) {
      std::string err = compare_outputs(got.at(name), ref.at(name));
      if (!err.empty()) return std::string(form) + ": " + name + ": " + err + "\n" + to_string(f);
    }
  }
  return "";
}

}  // namespace loom::testing
