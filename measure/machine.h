// The kind of machine a program was timed on: timings compare only between
// machines of one kind, so every record names it and a distributed tuning
// job measures each task on nodes of one kind only.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace loom {

struct MachineKind {
  std::string cpu;  // /proc/cpuinfo's model name, "" = unknown (records written before the field)
  std::string isa;  // widest vector extension: avx512 | avx2 | sse4 | "" (other)
  int cores = 0;    // hardware threads the process may use
  std::string gpu;  // the NVIDIA GPU's name, "" = none

  bool known() const { return !cpu.empty(); }
  // "AMD EPYC 9B45 (avx512, 2 cores)" [+ ", NVIDIA H200"].
  std::string name() const;
  bool operator==(const MachineKind& o) const {
    return cpu == o.cpu && isa == o.isa && cores == o.cores && gpu == o.gpu;
  }
  bool operator!=(const MachineKind& o) const { return !(*this == o); }

  // {"cpu":..., "isa":..., "cores":N, "gpu":... only when there is one}
  nlohmann::json to_json() const;
  // Strict: unknown keys and bad values throw LoomError naming `path`.
  static MachineKind from_json(const nlohmann::json& j, const std::string& path = "machine");
};

// This machine, read once (/proc/cpuinfo, the affinity mask, the NVIDIA
// driver's /proc entries). $LOOM_TEST_MACHINE_CPU replaces the CPU's name:
// tests make one machine pose as several kinds.
const MachineKind& this_machine();

// The size of this machine's last-level data cache in bytes (sysfs, else
// CPUID), 0 when neither says. $LOOM_TEST_LLC_BYTES replaces it, for tests.
int64_t last_level_cache_bytes();
// The same from CPUID alone (x86; 0 elsewhere or when it does not say).
int64_t cpuid_last_level_cache_bytes();

}  // namespace loom
