// Reference evaluator: interprets a ComputeDAG directly from its definition
// (the unscheduled program), for tests and for checking measured candidates.
//
// Each op body is compiled once into a flat node array with resolved
// variable slots and buffer pointers, then evaluated per output point.
// Float arithmetic runs in double; reductions accumulate in double; stored
// values are rounded to float. Integer `/` and `%` are floor division/modulo.
// Select is lazy. An out-of-bounds load throws LoomError.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/compute_dag.h"
#include "ir/error.h"

namespace loom {

using TensorData = std::vector<float>;  // row-major

// Evaluates every op in topological order. `inputs` must hold every input of
// the DAG with the right number of elements (extra entries are ignored).
// Returns all tensors by name, inputs included.
std::map<std::string, TensorData> evaluate_reference(const ComputeDAG& dag,
                                                     const std::map<std::string, TensorData>& inputs);

// Deterministic uniform values in [-1, 1) for every input of the DAG; each
// input gets its own stream derived from (seed, name).
std::map<std::string, TensorData> random_inputs(const ComputeDAG& dag, uint64_t seed);

// "" when |got - expected| <= atol + rtol * |expected| everywhere (NaN only
// matches NaN), else one line: mismatch count, the worst element (index, got,
// expected) and the first one.
std::string compare_outputs(const TensorData& got, const TensorData& expected,
                            double rtol = 1e-3, double atol = 1e-4);

// Number of elements of a shape.
int64_t shape_size(const std::vector<int64_t>& shape);

}  // namespace loom
