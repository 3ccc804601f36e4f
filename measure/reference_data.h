// Reference data of a task: fixed random inputs and the outputs of the
// unscheduled program on them (the reference interpreter, ir/reference.h).
// Computed once per task by the tuner and handed to the workers as a binary
// file that each worker loads once per task.
//
// File format (little-endian): "LOOMREF1", u32 tensor count, then per tensor
// u8 role (0 input, 1 output), u32 name length, name bytes, u64 element
// count, float32 elements.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ir/reference.h"
#include "measure/task.h"

namespace loom {

// The seed of the random inputs every candidate of every task is checked on.
constexpr uint64_t kReferenceSeed = 20240601;

struct ReferenceData {
  std::map<std::string, TensorData> inputs;
  std::map<std::string, TensorData> outputs;
  double compute_s = 0;  // time the interpreter took
};

ReferenceData compute_reference(const Task& task, uint64_t seed = kReferenceSeed);

// Throws LoomError naming the path on I/O failure or a malformed file.
void write_reference_file(const std::string& path, const ReferenceData& ref);
ReferenceData read_reference_file(const std::string& path);

// Outputs are compared with |got - ref| <= atol * scale + rtol * |ref| where
// scale = max(1, max |ref|) over the tensor: reassociated float reductions
// (tiling, vectorization, rfactor) stay well inside it, wrong indices do not.
std::string compare_with_reference(const TensorData& got, const TensorData& ref, double rtol,
                                   double atol);

}  // namespace loom
