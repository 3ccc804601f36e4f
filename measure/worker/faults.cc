// Test-only fault injection for the worker (see MeasureOptions::test_faults).
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <sys/prctl.h>
#include <unistd.h>

#include "measure/worker/worker_session.h"

namespace loom {

namespace {

[[noreturn]] void spin_forever() {
  volatile uint64_t counter = 0;
  while (true) counter = counter + 1;
}

void segfault() {
  // An address the compiler cannot see is null (a plain null store may be
  // turned into a trap instruction).
  volatile uintptr_t addr = 16;
  *reinterpret_cast<volatile int*>(addr) = 1;
}

void runaway_allocation() {
  // Allocates and touches memory until the worker's RLIMIT_AS stops it
  // (std::bad_alloc), as a kernel with a runaway temp allocation would.
  std::vector<std::unique_ptr<char[]>> hog;
  while (true) {
    hog.emplace_back(new char[64 << 20]);
    std::memset(hog.back().get(), 1, 64 << 20);
  }
}

}  // namespace

void inject_build_fault(const std::string& fault) {
  if (fault == "build_spin") spin_forever();
  if (fault == "build_segfault") segfault();
}

void inject_run_fault(const std::string& fault) {
  if (fault == "spin") spin_forever();
  if (fault == "segfault") segfault();
  if (fault == "abort") std::abort();
  if (fault == "oom") runaway_allocation();
  // A first run made slow by something else than the kernel (cold pages, a
  // sleeping thread pool): 4 ms more, in the checking run only.
  if (fault == "cold_first_run" || fault == "disturbed_check") std::this_thread::sleep_for(std::chrono::milliseconds(4));
  // Hostile code: a process left behind, threads left spinning.
  if (fault == "fork" && ::fork() == 0) {
    ::prctl(PR_SET_NAME, "loom_fork_test");  // found by name in the tests
    spin_forever();
  }
  if (fault == "spin_threads")
    for (int i = 0; i < 2; ++i) std::thread(spin_forever).detach();
}

// Both checking runs slowed by something beside the kernel: a build on the
// other worker holding one of the cores a multi-threaded kernel runs on.
void inject_recheck_fault(const std::string& fault) {
  if (fault == "disturbed_check") std::this_thread::sleep_for(std::chrono::milliseconds(4));
}

double simulated_cost_s(const nlohmann::json& steps) {
  // FNV-1a over the steps' text, finished by a 64-bit mixer: distinct
  // programs get distinct costs (no ties to order differently).
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : steps.dump()) h = (h ^ c) * 1099511628211ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return 1e-3 * (1.0 + static_cast<double>(h >> 11) / 9007199254740992.0);
}

}  // namespace loom
