// One worker child process (the `loom_worker` executable) and the socket to
// it. The child gets its end of a socketpair as fd 3, an address-space limit
// (RLIMIT_AS), no core dumps, and dies with the thread that spawned it
// (PR_SET_PDEATHSIG), so a killed tuner leaves no workers behind.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "measure/protocol.h"

namespace loom {

class WorkerProcess {
 public:
  WorkerProcess() = default;
  ~WorkerProcess();  // kills and reaps a live child
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Starts the child; throws LoomError when fork/exec set-up fails.
  void spawn(const std::string& exe, int64_t max_memory_mb);
  bool alive() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  int fd() const { return fd_; }

  // False when the child is gone.
  bool send(const nlohmann::json& msg) { return alive() && wire::write_frame(fd_, msg); }
  // Non-blocking: reads what is available into the decoder. False on EOF or
  // a socket error (the child closed its end: it exited or crashed).
  bool pump();
  // Next complete message, if any (throws LoomError on a malformed frame).
  bool next(nlohmann::json* msg) { return decoder_.next(msg); }

  // SIGKILL (if alive) + reap; returns how it ended.
  std::string kill_and_reap();
  // Waits (up to `wait_s`) for a child that closed its socket, then kills
  // it; returns how it ended: "killed by SIGSEGV", "exited with status 1".
  std::string reap(double wait_s = 1.0);
  // True when the child already exited (non-blocking check); reaps it.
  bool exited();

  // Closes the socket (a worker exits on EOF) and reaps it.
  void shutdown(double wait_s = 0.5);

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  wire::FrameDecoder decoder_;
  void close_fd();
  bool try_reap(int* status, bool block);
};

// "SIGSEGV (segmentation fault)".
// Whether spawn's max_memory_mb is enforced (RLIMIT_AS): not in a build
// with AddressSanitizer, whose shadow memory needs the address space.
bool worker_memory_limit_enforced();

std::string signal_description(int sig);
// Human description of a waitpid status.
std::string wait_status_description(int status);

}  // namespace loom
