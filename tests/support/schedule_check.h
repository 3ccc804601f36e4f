// Test support: run a schedule through lowering and a backend and compare
// its outputs with the reference evaluator on random inputs.
#pragma once

#include <memory>
#include <string>

#include "codegen/c/source.h"
#include "ir/compute_dag.h"
#include "ir/state.h"
#include "ir/stmt.h"

namespace loom::testing {

std::shared_ptr<const ComputeDAG> workload(const std::string& name, const std::string& params_json);

// Lowers, compiles with the C backend, runs, compares every output with the
// reference. Returns "" when they match, else a description. Both forms of
// the C backend are checked: the scalar oracle form and the vector form
// (vector_c_options: what `loom export` writes).
std::string check_with_c_backend(const State& s, uint64_t seed = 7);

// The vector form: explicit vectors of the host's width, unrolled at
// emission as the LLVM backend unrolls.
CSourceOptions vector_c_options();

// Runs an already lowered function with the C backend on the DAG's random
// inputs and returns the outputs by name.
std::map<std::string, std::vector<float>> run_c_backend(const ComputeDAG& dag, const LoweredFunc& f,
                                                        uint64_t seed, const CSourceOptions& opts = {});

}  // namespace loom::testing
