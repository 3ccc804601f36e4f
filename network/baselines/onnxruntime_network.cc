#include "network/baselines/onnxruntime_network.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "ir/error.h"
#include "measure/timing.h"

#ifndef LOOM_ORT_RUNNER
#error "LOOM_ORT_RUNNER (the path of onnxruntime_runner.js) is set by experiments/CMakeLists.txt"
#endif
#ifndef LOOM_ORT_PACKAGE
#error "LOOM_ORT_PACKAGE (the onnxruntime-node folder setup installs) is set by experiments/CMakeLists.txt"
#endif

extern char** environ;

namespace loom {

namespace fs = std::filesystem;

namespace {

std::string package_dir() {
  const char* env = std::getenv("LOOM_ONNXRUNTIME");
  return env && *env ? env : LOOM_ORT_PACKAGE;
}

// The node program on $PATH, or "".
std::string find_node() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const fs::path p = fs::path(dir.empty() ? "." : dir) / "node";
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "";
}

}  // namespace

std::string OnnxRuntimeNetwork::unavailable_reason() {
  if (find_node().empty()) return "node is not on PATH (scripts/setup.sh installs Debian's nodejs)";
  const fs::path pkg = package_dir();
  if (!fs::exists(pkg / "package.json"))
    return "onnxruntime-node is not installed at " + pkg.string() + " (scripts/setup.sh installs it; $LOOM_ONNXRUNTIME names another)";
  return "";
}

struct OnnxRuntimeNetwork::Impl {
  pid_t pid = -1;
  FILE* to = nullptr;    // the runner's stdin
  FILE* from = nullptr;  // its stdout
  std::string model, version, scratch, stderr_path;
  std::vector<std::string> inputs;

  // The runner's stderr, its last line, for messages.
  std::string stderr_tail() const {
    std::ifstream in(stderr_path);
    std::string line, last;
    while (std::getline(in, line))
      if (!line.empty()) last = line;
    return last;
  }

  nlohmann::json read_reply() {
    char* line = nullptr;
    size_t cap = 0;
    const ssize_t n = ::getline(&line, &cap, from);
    std::string text = n > 0 ? std::string(line, n) : "";
    std::free(line);
    if (n <= 0) {
      const std::string tail = stderr_tail();
      throw LoomError("ONNX Runtime's runner for " + model + " exited" + (tail.empty() ? "" : " (" + tail + ")"));
    }
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object())
      throw LoomError("ONNX Runtime's runner answered '" + text.substr(0, 80) + "', not a JSON object");
    if (j.contains("error")) throw LoomError("ONNX Runtime on " + model + ": " + j["error"].get<std::string>());
    return j;
  }

  nlohmann::json call(const nlohmann::json& cmd) {
    const std::string line = cmd.dump() + "\n";
    if (std::fwrite(line.data(), 1, line.size(), to) != line.size() || std::fflush(to) != 0)
      throw LoomError("ONNX Runtime's runner for " + model + " does not read its commands");
    return read_reply();
  }
};

OnnxRuntimeNetwork::OnnxRuntimeNetwork(const std::string& model, int threads) : impl_(std::make_unique<Impl>()) {
  const std::string why = unavailable_reason();
  if (!why.empty()) throw LoomError("ONNX Runtime: " + why);
  impl_->model = model;
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/loom-onnxruntime-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw LoomError("ONNX Runtime: cannot create a temp directory in " + tmpl);
  impl_->scratch = tmpl;
  impl_->stderr_path = tmpl + "/stderr.txt";

  int in_pipe[2], out_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0)
    throw LoomError(std::string("ONNX Runtime: pipe: ") + std::strerror(errno));
  const std::string node = find_node(), pkg = package_dir(), runner = LOOM_ORT_RUNNER,
                    threads_arg = std::to_string(threads);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, impl_->stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const char* argv[] = {node.c_str(), runner.c_str(), pkg.c_str(), model.c_str(), threads_arg.c_str(), nullptr};
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, node.c_str(), &actions, nullptr, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw LoomError("ONNX Runtime: cannot start " + node + ": " + std::strerror(rc));
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  impl_->pid = pid;
  impl_->to = ::fdopen(in_pipe[1], "w");
  impl_->from = ::fdopen(out_pipe[0], "r");
  // A runner that dies must not kill this process with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  const nlohmann::json ready = impl_->read_reply();
  impl_->version = ready.value("version", "");
  for (const auto& i : ready.at("inputs")) impl_->inputs.push_back(i.at("name").get<std::string>());
}

OnnxRuntimeNetwork::~OnnxRuntimeNetwork() {
  if (impl_->to) {
    std::fputs("{\"cmd\": \"quit\"}\n", impl_->to);
    std::fclose(impl_->to);
  }
  if (impl_->from) std::fclose(impl_->from);
  if (impl_->pid > 0) {
    int status = 0;
    ::waitpid(impl_->pid, &status, 0);
  }
  std::error_code ec;
  if (!impl_->scratch.empty()) fs::remove_all(impl_->scratch, ec);
}

std::string OnnxRuntimeNetwork::version() const { return impl_->version; }
const std::vector<std::string>& OnnxRuntimeNetwork::input_names() const { return impl_->inputs; }

void OnnxRuntimeNetwork::feed(const std::vector<std::string>& names, const std::vector<TorchTensor>& inputs) {
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string file = impl_->scratch + "/input" + std::to_string(i) + ".bin";
    std::ofstream out(file, std::ios::binary);
    out.write(reinterpret_cast<const char*>(inputs[i].data.data()),
              static_cast<std::streamsize>(inputs[i].data.size() * sizeof(float)));
    if (!out) throw LoomError("ONNX Runtime: cannot write " + file);
    list.push_back({{"name", names[i]}, {"file", file}, {"dims", inputs[i].shape}});
  }
  impl_->call({{"cmd", "feed"}, {"inputs", list}});
}

std::vector<double> OnnxRuntimeNetwork::run(int times) {
  const nlohmann::json r = impl_->call({{"cmd", "run"}, {"times", times}});
  std::vector<double> s;
  for (const auto& t : r.at("s")) s.push_back(t.get<double>());
  if (s.size() != static_cast<size_t>(times))
    throw LoomError("ONNX Runtime: asked for " + std::to_string(times) + " runs, got " + std::to_string(s.size()) + " times");
  return s;
}

void OnnxRuntimeNetwork::wait_until_idle() {
  // ONNX Runtime's pool spins for about 30 ms after a run (on the Xeon).
  wait_for_idle_threads(1.0, 10, 0.05, impl_->pid);
}

std::vector<TorchTensor> OnnxRuntimeNetwork::outputs() {
  const nlohmann::json r = impl_->call({{"cmd", "fetch"}, {"dir", impl_->scratch}});
  std::vector<TorchTensor> out;
  for (size_t i = 0; i < r.at("outputs").size(); ++i) {
    TorchTensor t;
    for (const auto& d : r["outputs"][i].at("dims")) t.shape.push_back(d.get<int64_t>());
    int64_t n = 1;
    for (int64_t d : t.shape) n *= d;
    t.data.resize(n);
    const std::string file = impl_->scratch + "/output" + std::to_string(i) + ".bin";
    std::ifstream in(file, std::ios::binary);
    in.read(reinterpret_cast<char*>(t.data.data()), static_cast<std::streamsize>(n * sizeof(float)));
    if (!in) throw LoomError("ONNX Runtime: cannot read " + file);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace loom
