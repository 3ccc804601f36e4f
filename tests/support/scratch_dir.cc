#include "tests/support/scratch_dir.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace loom::testing {

namespace fs = std::filesystem;

namespace {

pid_t owner = 0;

// Only the process that made the folder removes it: a forked child that
// exits normally must not take its parent's files.
void remove_scratch_dir() {
  if (::getpid() != owner) return;
  std::error_code ec;
  fs::remove_all(scratch_dir(), ec);
}

}  // namespace

const fs::path& scratch_dir() {
  static const fs::path dir = [] {
    owner = ::getpid();
    fs::path d = fs::temp_directory_path() / ("loom_scratch." + std::to_string(owner));
    fs::create_directories(d);
    return d;
  }();
  // Registered once `dir` exists, so it runs before `dir` is destroyed.
  static const bool removed_at_exit = std::atexit(remove_scratch_dir) == 0;
  (void)removed_at_exit;
  return dir;
}

std::string scratch_path(const std::string& name) {
  const fs::path p = scratch_dir() / name;
  std::error_code ec;
  fs::remove(p, ec);
  return p.string();
}

std::string write_scratch_file(const std::string& name, const std::string& bytes) {
  const std::string p = scratch_path(name);
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

}  // namespace loom::testing
