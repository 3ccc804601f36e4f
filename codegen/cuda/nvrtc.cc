#include "codegen/cuda/nvrtc.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

#include "ir/error.h"

#ifdef LOOM_HAVE_CUDA
#include <nvrtc.h>
#endif

namespace loom {

#ifdef LOOM_HAVE_CUDA
bool nvrtc_available() { return true; }

std::string compile_cuda_to_ptx(const std::string& source, const std::string& arch, std::string* log) {
  if (arch.rfind("sm_", 0) != 0) throw LoomError("nvrtc: arch must be sm_NN, got '" + arch + "'");
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, source.c_str(), "loom_kernel.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS)
    throw LoomError("nvrtc: cannot create program");
  const std::string arch_opt = "--gpu-architecture=compute_" + arch.substr(3);
  std::vector<const char*> opts = {arch_opt.c_str(), "--std=c++17", "-default-device"};
  nvrtcResult res = nvrtcCompileProgram(prog, static_cast<int>(opts.size()), opts.data());
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string l(log_size, '\0');
  if (log_size) nvrtcGetProgramLog(prog, l.data());
  while (!l.empty() && (l.back() == '\0' || l.back() == '\n')) l.pop_back();
  if (log) *log = l;
  if (res != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&prog);
    throw LoomError(std::string("nvrtc: ") + nvrtcGetErrorString(res) + ": " + l.substr(0, 4000));
  }
  size_t ptx_size = 0;
  nvrtcGetPTXSize(prog, &ptx_size);
  std::string ptx(ptx_size, '\0');
  nvrtcGetPTX(prog, ptx.data());
  nvrtcDestroyProgram(&prog);
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  return ptx;
}
#else
bool nvrtc_available() { return false; }
std::string compile_cuda_to_ptx(const std::string&, const std::string&, std::string*) {
  throw LoomError("nvrtc: this build has no CUDA toolkit (LOOM_HAVE_CUDA is off)");
}
#endif

std::string ptxas_path() {
  const char* env = std::getenv("LOOM_PTXAS");
  std::string p = env && *env ? env : "/usr/local/cuda/bin/ptxas";
  return access(p.c_str(), X_OK) == 0 ? p : "";
}

PtxasReport run_ptxas(const std::string& ptx, const std::string& arch) {
  const std::string exe = ptxas_path();
  if (exe.empty()) throw LoomError("ptxas not found (set LOOM_PTXAS)");
  char tmpl[] = "/tmp/loom_ptxXXXXXX";
  int fd = mkstemp(tmpl);
  if (fd < 0) throw LoomError("ptxas: cannot create a temp file");
  close(fd);
  const std::string path = tmpl;
  {
    std::ofstream out(path, std::ios::binary);
    out << ptx;
  }
  const std::string cmd = exe + " -arch=" + arch + " -v " + path + " -o /dev/null 2>&1";
  PtxasReport r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    std::remove(path.c_str());
    throw LoomError("ptxas: cannot run " + exe);
  }
  char buf[4096];
  while (fgets(buf, sizeof(buf), p)) r.log += buf;
  int status = pclose(p);
  std::remove(path.c_str());
  if (status != 0) throw LoomError("ptxas failed: " + r.log.substr(0, 4000));
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex regs(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  static const std::regex spill(R"((\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex stack(R"((\d+) bytes stack frame)");
  std::istringstream in(r.log);
  std::string line, cur;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, entry)) {
      cur = m[1];
      r.kernels[cur];
      continue;
    }
    if (cur.empty()) continue;
    PtxasKernelUsage& u = r.kernels[cur];
    if (std::regex_search(line, m, regs)) u.registers = std::stoi(m[1]);
    if (std::regex_search(line, m, smem)) u.shared_bytes = std::stoll(m[1]);
    if (std::regex_search(line, m, spill)) u.spill_bytes = std::stoll(m[1]) + std::stoll(m[2]);
    if (std::regex_search(line, m, stack)) u.stack_bytes = std::stoll(m[1]);
  }
  return r;
}

std::string check_ptxas_limits(const PtxasReport& r, int max_registers, int64_t max_shared_bytes) {
  std::string bad;
  for (const auto& [name, u] : r.kernels) {
    if (u.registers > max_registers)
      bad += name + ": " + std::to_string(u.registers) + " registers; ";
    if (u.shared_bytes > max_shared_bytes)
      bad += name + ": " + std::to_string(u.shared_bytes) + " bytes shared memory; ";
  }
  return bad;
}

}  // namespace loom
