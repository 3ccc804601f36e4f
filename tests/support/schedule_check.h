// Test support: run a schedule through lowering and a backend and compare
// its outputs with the reference evaluator on random inputs.
#pragma once

#include <memory>
#include <string>

#include "ir/compute_dag.h"
#include "ir/state.h"
#include "ir/stmt.h"

namespace loom::testing {

std::shared_ptr<const ComputeDAG> workload(const std::string& name, const std::string& params_json);

// Lowers, compiles with the C backend, runs, compares every output with the
// reference. Returns "" when they match, else a description.
std::string check_with_c_backend(const State& s, uint64_t seed = 7);

// Runs an already lowered function with the C backend on the DAG's random
// inputs and returns the outputs by name.
std::map<std::string, std::vector<float>> run_c_backend(const ComputeDAG& dag, const LoweredFunc& f,
                                                        uint64_t seed);

}  // namespace loom::testing
