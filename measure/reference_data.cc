#include "measure/reference_data.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "ir/error.h"
#include "measure/timing.h"

namespace loom {

namespace {

struct FileCloser {
  void operator()(FILE* f) const { if (f) std::fclose(f); }
};
using File = std::unique_ptr<FILE, FileCloser>;

constexpr char kMagic[8] = {'L', 'O', 'O', 'M', 'R', 'E', 'F', '1'};

void put(FILE* f, const void* p, size_t n, const std::string& path) {
  if (n && std::fwrite(p, 1, n, f) != n) throw LoomError(path + ": write failed");
}
void get(FILE* f, void* p, size_t n, const std::string& path) {
  if (n && std::fread(p, 1, n, f) != n) throw LoomError(path + ": truncated reference file");
}

}  // namespace

ReferenceData compute_reference(const Task& task, uint64_t seed) {
  const ComputeDAG& dag = *task.dag;
  ReferenceData ref;
  ref.inputs = random_inputs(dag, seed);
  auto t0 = std::chrono::steady_clock::now();
  auto all = evaluate_reference(dag, ref.inputs);
  ref.compute_s = seconds_since(t0);
  for (const auto& out : dag.output_names()) ref.outputs[out] = std::move(all.at(out));
  return ref;
}

void write_reference_file(const std::string& path, const ReferenceData& ref) {
  File f(std::fopen(path.c_str(), "wb"));
  if (!f) throw LoomError(path + ": cannot create reference file: " + std::strerror(errno));
  put(f.get(), kMagic, sizeof kMagic, path);
  uint32_t count = static_cast<uint32_t>(ref.inputs.size() + ref.outputs.size());
  put(f.get(), &count, 4, path);
  for (int role = 0; role < 2; ++role) {
    for (const auto& [name, data] : role == 0 ? ref.inputs : ref.outputs) {
      uint8_t r = static_cast<uint8_t>(role);
      uint32_t len = static_cast<uint32_t>(name.size());
      uint64_t n = data.size();
      put(f.get(), &r, 1, path);
      put(f.get(), &len, 4, path);
      put(f.get(), name.data(), len, path);
      put(f.get(), &n, 8, path);
      put(f.get(), data.data(), n * sizeof(float), path);
    }
  }
  if (std::fflush(f.get()) != 0) throw LoomError(path + ": write failed");
}

ReferenceData read_reference_file(const std::string& path) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) throw LoomError(path + ": cannot open reference file: " + std::strerror(errno));
  char magic[8];
  get(f.get(), magic, 8, path);
  if (std::memcmp(magic, kMagic, 8) != 0) throw LoomError(path + ": not a Loom reference file");
  uint32_t count = 0;
  get(f.get(), &count, 4, path);
  ReferenceData ref;
  for (uint32_t i = 0; i < count; ++i) {
    uint8_t role = 0;
    uint32_t len = 0;
    uint64_t n = 0;
    get(f.get(), &role, 1, path);
    get(f.get(), &len, 4, path);
    if (role > 1 || len > 4096) throw LoomError(path + ": malformed reference file");
    std::string name(len, '\0');
    get(f.get(), name.data(), len, path);
    get(f.get(), &n, 8, path);
    if (n > (uint64_t(1) << 36)) throw LoomError(path + ": malformed reference file");
    TensorData& data = role == 0 ? ref.inputs[name] : ref.outputs[name];
    data.resize(n);
    get(f.get(), data.data(), n * sizeof(float), path);
  }
  return ref;
}

std::string compare_with_reference(const TensorData& got, const TensorData& ref, double rtol,
                                   double atol) {
  double scale = 1.0;
  for (float v : ref)
    if (std::isfinite(v)) scale = std::max(scale, double(std::fabs(v)));
  return compare_outputs(got, ref, rtol, atol * scale);
}

}  // namespace loom
