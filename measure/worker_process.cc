#include "measure/worker_process.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "ir/error.h"

namespace loom {

std::string signal_description(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* desc = sigdescr_np(sig);
  std::string s = abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
  if (desc) s += std::string(" (") + desc + ")";
  return s;
}

std::string wait_status_description(int status) {
  if (WIFSIGNALED(status)) return "killed by " + signal_description(WTERMSIG(status));
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended (status " + std::to_string(status) + ")";
}

WorkerProcess::~WorkerProcess() {
  if (alive()) kill_and_reap();
  close_fd();
}

void WorkerProcess::close_fd() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  decoder_.clear();
}

// AddressSanitizer reserves terabytes of address space for its shadow
// memory: under it (scripts/test.sh --sanitize) a worker cannot start with
// RLIMIT_AS set, so the memory limit is not enforced there.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

bool worker_memory_limit_enforced() { return !kAddressSanitizer; }

void WorkerProcess::spawn(const std::string& exe, int64_t max_memory_mb) {
  if (alive()) kill_and_reap();
  close_fd();
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw LoomError(std::string("socketpair failed: ") + std::strerror(errno));
  // Everything the child needs is prepared before fork: after it, only
  // async-signal-safe calls.
  std::string arg_fd = "--fd=3";
  char* argv[] = {const_cast<char*>(exe.c_str()), const_cast<char*>(arg_fd.c_str()), nullptr};
  rlimit as{};
  as.rlim_cur = as.rlim_max = max_memory_mb > 0 ? rlim_t(max_memory_mb) << 20 : RLIM_INFINITY;
  rlimit core{0, 0};
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    throw LoomError(std::string("fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    // Its own process group: a process a candidate starts (fork) is killed
    // with the worker (kill_and_reap, try_reap).
    ::setpgid(0, 0);
    // Ctrl-C in the terminal reaches the whole foreground process group: the
    // tuner finishes its batch and stops, so its workers must not die on it.
    // (An ignored signal stays ignored across exec.)
    ::signal(SIGINT, SIG_IGN);
    if (sv[1] == 3) {
      ::fcntl(3, F_SETFD, 0);
    } else if (::dup2(sv[1], 3) < 0) {
      ::_exit(127);
    }
    if (max_memory_mb > 0 && !kAddressSanitizer) ::setrlimit(RLIMIT_AS, &as);
    ::setrlimit(RLIMIT_CORE, &core);
    ::execv(exe.c_str(), argv);
    const char msg[] = "loom worker: exec failed\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::close(sv[1]);
  fd_ = sv[0];
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
  pid_ = pid;
}

bool WorkerProcess::pump() {
  if (fd_ < 0) return false;
  char buf[65536];
  while (true) {
    ssize_t r = ::read(fd_, buf, sizeof buf);
    if (r > 0) {
      decoder_.feed(buf, static_cast<size_t>(r));
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    return false;  // EOF or error
  }
}

std::string WorkerProcess::kill_and_reap() {
  std::string how = "not running";
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    int status = 0;
    try_reap(&status, /*block=*/true);
    how = wait_status_description(status);
    pid_ = -1;
  }
  close_fd();
  return how;
}

// Reaps the worker once it has exited, after killing what is left of its
// process group: until it is reaped its pid is not reused, so the group id
// still names its group alone.
bool WorkerProcess::try_reap(int* status, bool block) {
  siginfo_t info{};
  const int flags = WEXITED | WNOWAIT | (block ? 0 : WNOHANG);
  while (::waitid(P_PID, static_cast<id_t>(pid_), &info, flags) < 0)
    if (errno != EINTR) return false;
  if (info.si_pid != pid_) return false;  // still running (WNOHANG)
  ::kill(-pid_, SIGKILL);
  while (::waitpid(pid_, status, 0) < 0 && errno == EINTR) {}
  return true;
}

std::string WorkerProcess::reap(double wait_s) {
  if (pid_ <= 0) {
    close_fd();
    return "not running";
  }
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  int status = 0;
  while (true) {
    if (try_reap(&status, /*block=*/false)) {
      pid_ = -1;
      close_fd();
      return wait_status_description(status);
    }
    if (std::chrono::steady_clock::now() >= end) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return kill_and_reap() + " (closed its socket but did not exit)";
}

bool WorkerProcess::exited() {
  if (pid_ <= 0) return true;
  int status = 0;
  if (try_reap(&status, /*block=*/false)) {
    pid_ = -1;
    close_fd();
    return true;
  }
  return false;
}

void WorkerProcess::shutdown(double wait_s) {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
  if (pid_ > 0) reap(wait_s);
  close_fd();
}

}  // namespace loom
