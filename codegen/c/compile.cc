#include "codegen/c/compile.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>

#include "ir/error.h"

extern char** environ;

namespace loom {

namespace {

// Per-process temp dir, created on first use and removed at exit (it is
// normally empty: every file is unlinked right after use). A forked child
// makes its own and never removes its parent's.
class TempDir {
 public:
  std::string path() {
    std::lock_guard<std::mutex> lock(mu_);
    if (path_.empty() || owner_ != getpid()) {
      const char* base = std::getenv("TMPDIR");
      std::string tmpl = std::string(base && *base ? base : "/tmp") + "/loom-cc-" +
                         std::to_string(getpid()) + "-XXXXXX";
      std::vector<char> buf(tmpl.begin(), tmpl.end());
      buf.push_back('\0');
      if (!mkdtemp(buf.data()))
        throw LoomError("C compile: cannot create temp dir " + tmpl + ": " + std::strerror(errno));
      path_ = buf.data();
      owner_ = getpid();
    }
    return path_;
  }
  ~TempDir() {
    if (!path_.empty() && owner_ == getpid()) rmdir(path_.c_str());
  }

 private:
  std::mutex mu_;
  std::string path_;
  pid_t owner_ = 0;
};

TempDir& temp_dir() {
  static TempDir dir;
  return dir;
}

std::atomic<uint64_t> g_module_counter{0};

std::string first_lines(const std::string& text, int max_lines) {
  std::istringstream in(text);
  std::string line, out;
  for (int i = 0; i < max_lines && std::getline(in, line); ++i) out += (i ? "\n" : "") + line;
  if (std::getline(in, line)) out += "\n...";
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int run_process(const std::vector<std::string>& argv, const std::string& log_path) {
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, cargv[0], &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw LoomError("C compile: cannot start " + argv[0] + ": " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw LoomError("C compile: waitpid failed: " + std::string(std::strerror(errno)));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

namespace {

// An OpenMP module pulls in its runtime (libgomp / libomp) whose worker
// threads outlive a parallel region; unloading the runtime with the module
// would leave them running in unmapped code. Pin whichever is loaded now.
void pin_thread_runtimes() {
  for (const char* lib : {"libgomp.so.1", "libomp.so", "libomp.so.5", "libiomp5.so"}) {
    if (void* h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) dlclose(h);
  }
}

}  // namespace

std::string default_c_compiler() {
  const char* env = std::getenv("LOOM_CC");
  return env && *env ? env : "cc";
}

std::vector<std::string> c_compile_command(const CCompileOptions& opts) {
  std::string cc = opts.compiler;
  if (cc.empty()) {
    cc = default_c_compiler();
  }
  std::vector<std::string> cmd = {cc, opts.opt_level, "-std=c99", "-shared", "-fPIC"};
  if (opts.march_native) cmd.push_back("-march=native");
  if (opts.openmp) cmd.push_back("-fopenmp");
  for (const auto& f : opts.extra_flags) cmd.push_back(f);
  return cmd;
}

CompiledCModule::CompiledCModule(const std::string& source, const std::string& entry,
                                 const CCompileOptions& opts, int num_args)
    : num_args_(num_args), source_(source) {
  const std::string base = temp_dir().path() + "/m" + std::to_string(g_module_counter.fetch_add(1));
  const std::string c_path = base + ".c", so_path = base + ".so", log_path = base + ".log";
  {
    std::ofstream out(c_path, std::ios::binary);
    out << source;
    if (!out) throw LoomError("C compile: cannot write " + c_path);
  }
  std::vector<std::string> cmd = c_compile_command(opts);
  cmd.insert(cmd.end(), {"-o", so_path, c_path, "-lm"});
  int rc = run_process(cmd, log_path);
  std::string log = read_file(log_path);
  std::remove(c_path.c_str());
  std::remove(log_path.c_str());
  if (rc != 0) {
    std::remove(so_path.c_str());
    throw LoomError("C compile failed (" + cmd[0] + " exit " + std::to_string(rc) + "):\n" +
                    first_lines(log, 20));
  }
  handle_ = dlopen(so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::remove(so_path.c_str());
  if (!handle_) {
    const char* err = dlerror();
    throw LoomError("C compile: dlopen failed: " + std::string(err ? err : "unknown error"));
  }
  pin_thread_runtimes();
  fn_ = reinterpret_cast<PackedCFunc>(dlsym(handle_, entry.c_str()));
  if (!fn_) {
    dlclose(handle_);
    handle_ = nullptr;
    throw LoomError("C compile: symbol " + entry + " not found in compiled module");
  }
}

CompiledCModule::~CompiledCModule() {
  if (handle_) dlclose(handle_);
}

CompiledCModule::CompiledCModule(CompiledCModule&& o) noexcept
    : handle_(o.handle_), fn_(o.fn_), num_args_(o.num_args_), source_(std::move(o.source_)) {
  o.handle_ = nullptr;
  o.fn_ = nullptr;
}

CompiledCModule& CompiledCModule::operator=(CompiledCModule&& o) noexcept {
  if (this != &o) {
    if (handle_) dlclose(handle_);
    handle_ = o.handle_;
    fn_ = o.fn_;
    num_args_ = o.num_args_;
    source_ = std::move(o.source_);
    o.handle_ = nullptr;
    o.fn_ = nullptr;
  }
  return *this;
}

CompiledCModule CompiledCModule::from_func(const LoweredFunc& f, const CSourceOptions& src_opts,
                                           CCompileOptions cc_opts) {
  if (src_opts.parallel == CParallel::kOpenMP) cc_opts.openmp = true;
  return CompiledCModule(emit_c_source(f, src_opts), c_function_name(f) + "_packed", cc_opts,
                         static_cast<int>(f.args.size()));
}

void CompiledCModule::run(std::vector<float*> args) const {
  if (!fn_) throw LoomError("C module: run on an empty (moved-from) module");
  if (num_args_ >= 0 && static_cast<int>(args.size()) != num_args_)
    throw LoomError("C module: expected " + std::to_string(num_args_) + " arguments, got " +
                    std::to_string(args.size()));
  fn_(args.data());
}

}  // namespace loom
