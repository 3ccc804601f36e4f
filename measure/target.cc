#include "measure/target.h"

#include <sstream>
#include <stdexcept>
#include <vector>

#include "codegen/runtime/host_cpu.h"
#include "ir/error.h"

namespace loom {

namespace {

// Every target kind. A new one is a row here, its options in parse().
struct TargetKind {
  const char* name;
  bool gpu;
};
const std::vector<TargetKind>& target_kinds() {
  static const std::vector<TargetKind> k = {{"cpu", false}, {"cuda", true}};
  return k;
}

const TargetKind* find_kind(const std::string& name) {
  for (const auto& k : target_kinds())
    if (name == k.name) return &k;
  return nullptr;
}

}  // namespace

bool Target::is_gpu() const {
  const TargetKind* k = find_kind(kind);
  return k && k->gpu;
}

Target Target::parse(const std::string& s) {
  std::istringstream in(s);
  Target t;
  if (!(in >> t.kind)) throw LoomError("target: empty target string");
  if (!find_kind(t.kind)) {
    std::string names;
    for (const auto& k : target_kinds()) names += std::string(names.empty() ? "" : " or ") + k.name;
    throw LoomError("target: unknown kind '" + t.kind + "' (expected " + names + ")");
  }
  std::string opt;
  while (in >> opt) {
    auto eq = opt.find('=');
    std::string key = opt.substr(0, eq), val = eq == std::string::npos ? "" : opt.substr(eq + 1);
    if (key == "-threads" && t.is_cpu()) {
      try {
        size_t used = 0;
        t.threads = std::stoi(val, &used);
        if (used != val.size() || t.threads < 1) throw std::invalid_argument("bad");
      } catch (const std::exception&) {
        throw LoomError("target: -threads expects a positive integer, got '" + val + "'");
      }
    } else if (key == "-isa" && t.is_cpu()) {
      if (val != "avx512" && val != "avx2" && val != "sse4")
        throw LoomError("target: -isa expects avx512, avx2 or sse4, got '" + val + "'");
      t.isa = val;
    } else if (key == "-arch" && t.is_gpu()) {
      if (val.rfind("sm_", 0) != 0) throw LoomError("target: -arch expects sm_NN, got '" + val + "'");
      t.arch = val;
    } else {
      throw LoomError("target: unknown option '" + opt + "' for " + t.kind);
    }
  }
  if (t.is_gpu() && t.arch.empty()) t.arch = "sm_90";
  return t;
}

std::string Target::to_string() const {
  std::string s = kind;
  if (is_cpu()) {
    s += " -threads=" + std::to_string(threads);
    if (!isa.empty()) s += " -isa=" + isa;
  } else {
    s += " -arch=" + arch;
  }
  return s;
}

int Target::vector_width() const {
  if (!is_cpu()) return 1;
  if (isa == "avx512") return 16;
  if (isa == "avx2") return 8;
  if (isa == "sse4") return 4;
  return host_vector_width();
}

}  // namespace loom
