// The reference interpreter of a graph: every node lowered on its own
// (graph/ops.h) and evaluated by ir/'s reference evaluator (double
// accumulation). The correctness oracle of the passes, the importer and the
// executor's tests; slow (a ResNet-50 takes minutes).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace loom::graph {

using Values = std::map<std::string, std::vector<float>>;

// Every value by name (inputs and constants included). `inputs` must hold
// each graph input with the right number of elements; throws LoomError
// naming the input otherwise.
Values interpret(const Graph& g, const Values& inputs);

// The value `inputs` gives for graph input `in`; throws LoomError naming the
// input when it is missing or has another number of elements.
const std::vector<float>& graph_input_value(const GraphInput& in, const Values& inputs);

// Deterministic uniform values in [-1, 1) for every graph input; integers
// in [0, integer_range) for an integer input.
Values random_graph_inputs(const Graph& g, uint64_t seed);

}  // namespace loom::graph
