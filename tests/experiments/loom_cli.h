// Runs the real `loom` program (LOOM_BINARY) for the CLI tests.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace loom::testing {

struct CliResult {
  int exit_code;
  std::string output;  // stdout and stderr together
};

inline CliResult run_loom(const std::string& args) {
  std::string cmd = std::string(LOOM_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

// "" when the onnxruntime-node package that scripts/setup.sh installs next to
// the loom binary is there, else why not: the ONNX Runtime baseline is
// optional (setup goes on without the npm registry), so its tests skip.
inline std::string onnxruntime_missing() {
  const std::string binary = LOOM_BINARY;
  const std::string package = binary.substr(0, binary.find_last_of('/')) +
                              "/onnxruntime-node/node_modules/onnxruntime-node/package.json";
  if (FILE* f = std::fopen(package.c_str(), "r")) {
    std::fclose(f);
    return "";
  }
  return package + " is missing (scripts/setup.sh could not install onnxruntime-node)";
}

}  // namespace loom::testing
