#include "measure/machine.h"

#include <sched.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "ir/error.h"

namespace loom {

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The value of the first "key : value" line of a /proc file.
std::string proc_field(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    size_t colon = line.find(':');
    if (colon != std::string::npos && trim(line.substr(0, colon)) == key) return trim(line.substr(colon + 1));
  }
  return "";
}

MachineKind read_this_machine() {
  MachineKind m;
  m.cpu = proc_field("/proc/cpuinfo", "model name");
  if (m.cpu.empty()) m.cpu = "unknown CPU";
  if (const char* pose = std::getenv("LOOM_TEST_MACHINE_CPU"); pose && *pose) m.cpu = pose;
  std::istringstream flags(" " + proc_field("/proc/cpuinfo", "flags") + " ");
  bool avx512 = false, avx2 = false, sse4 = false;
  for (std::string f; flags >> f;) avx512 |= f == "avx512f", avx2 |= f == "avx2", sse4 |= f == "sse4_2";
  m.isa = avx512 ? "avx512" : avx2 ? "avx2" : sse4 ? "sse4" : "";
  cpu_set_t set;
  m.cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                        : static_cast<int>(std::thread::hardware_concurrency());
  std::error_code ec;
  for (const auto& gpu : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
    m.gpu = proc_field((gpu.path() / "information").string(), "Model");
    if (!m.gpu.empty()) break;
  }
  return m;
}

// "32768K", "32M", "1G" (sysfs cache sizes) in bytes; 0 for anything else.
int64_t cache_size_bytes(const std::string& text) {
  size_t used = 0;
  int64_t n = 0;
  try {
    n = std::stoll(text, &used);
  } catch (const std::exception&) {
    return 0;
  }
  const std::string unit = trim(text.substr(used));
  if (n <= 0) return 0;
  if (unit.empty()) return n;
  if (unit == "K") return n << 10;
  if (unit == "M") return n << 20;
  if (unit == "G") return n << 30;
  return 0;
}

int64_t read_last_level_cache_bytes() {
  int best_level = 0;
  int64_t bytes = 0;
  std::error_code ec;
  for (const auto& index : std::filesystem::directory_iterator("/sys/devices/system/cpu/cpu0/cache", ec)) {
    if (index.path().filename().string().rfind("index", 0) != 0) continue;
    auto field = [&](const char* name) {
      std::ifstream in(index.path() / name);
      std::string v;
      std::getline(in, v);
      return trim(v);
    };
    if (field("type") == "Instruction") continue;
    int level = 0;
    try {
      level = std::stoi(field("level"));
    } catch (const std::exception&) {
      continue;
    }
    if (level > best_level) best_level = level, bytes = cache_size_bytes(field("size"));
  }
  return bytes;
}

}  // namespace

// The deterministic cache parameters of CPUID (Intel leaf 4, AMD leaf
// 0x8000001D, one sub-leaf per cache, the same layout): the size of one
// instance of the highest-level data or unified cache, as the core sees it
// (not glibc's sysconf, which on some AMD CPUs reports the L3 of every
// core complex together).
int64_t cpuid_last_level_cache_bytes() {
#if defined(__x86_64__) || defined(__i386__)
  for (unsigned leaf : {4u, 0x8000001Du}) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid_max(leaf & 0x80000000u, nullptr) < leaf) continue;
    int best_level = 0;
    int64_t bytes = 0;
    for (unsigned sub = 0; sub < 16; ++sub) {
      __cpuid_count(leaf, sub, a, b, c, d);
      const unsigned type = a & 0x1f, level = (a >> 5) & 0x7;
      if (type == 0) break;  // no more caches
      if (type == 2) continue;  // instruction cache
      const int64_t size = int64_t{((b >> 22) & 0x3ff) + 1} * (((b >> 12) & 0x3ff) + 1) * ((b & 0xfff) + 1) *
                           (int64_t{c} + 1);
      if (static_cast<int>(level) > best_level) best_level = static_cast<int>(level), bytes = size;
    }
    if (bytes > 0) return bytes;
  }
#endif
  return 0;
}

int64_t last_level_cache_bytes() {
  if (const char* pose = std::getenv("LOOM_TEST_LLC_BYTES"); pose && *pose) return cache_size_bytes(pose);
  // sysfs first; CPUID where it is not mounted (a chroot, some containers).
  static const int64_t bytes = [] {
    const int64_t from_sysfs = read_last_level_cache_bytes();
    return from_sysfs > 0 ? from_sysfs : cpuid_last_level_cache_bytes();
  }();
  return bytes;
}

std::string MachineKind::name() const {
  std::string s = cpu + " (" + (isa.empty() ? "" : isa + ", ") + std::to_string(cores) + " core" +
                  (cores == 1 ? "" : "s") + ")";
  return gpu.empty() ? s : s + ", " + gpu;
}

nlohmann::json MachineKind::to_json() const {
  nlohmann::json j = {{"cpu", cpu}, {"isa", isa}, {"cores", cores}};
  if (!gpu.empty()) j["gpu"] = gpu;
  return j;
}

MachineKind MachineKind::from_json(const nlohmann::json& j, const std::string& path) {
  if (!j.is_object()) throw LoomError(path + ": expected an object");
  MachineKind m;
  for (const auto& [k, v] : j.items()) {
    if (k == "cpu" || k == "isa" || k == "gpu") {
      if (!v.is_string()) throw LoomError(path + "." + k + ": expected a string");
      (k == "cpu" ? m.cpu : k == "isa" ? m.isa : m.gpu) = v.get<std::string>();
    } else if (k == "cores") {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > (1 << 20))
        throw LoomError(path + ".cores: expected a non-negative integer");
      m.cores = v.get<int>();
    } else {
      throw LoomError(path + "." + k + ": unknown key");
    }
  }
  if (m.cpu.empty()) throw LoomError(path + ".cpu: missing");
  return m;
}

const MachineKind& this_machine() {
  static const MachineKind m = read_this_machine();
  return m;
}

}  // namespace loom
