// A small persistent thread pool for the parallel loops of generated kernels.
//
// Generated code outlines the body of a parallel loop into
//   void body(int64_t begin, int64_t end, void* closure)
// and calls loom_parallel_for(extent, body, closure, num_threads). The range
// [0, extent) is split into min(4 * threads, extent) contiguous chunks of
// near-equal size, threads = min(num_threads, extent); each thread (the
// caller and threads - 1 pool workers) owns a contiguous run of them, as
// static scheduling would, and once its own are done takes the ones left of
// the others (a thread slowed down by another process on a shared machine
// no longer holds the region up by its whole share). The call returns when
// all chunks are done.
// A parallel loop reached from inside a worker (nested parallelism), or with
// num_threads <= 1, runs serially on the calling thread. Calls from
// different external threads are serialized (one parallel region at a time).
// After fork(), the child starts its own workers on first use.
//
// Plain C++ (no LLVM): the JIT resolves `loom_parallel_for` to this function.
#pragma once

#include <cstdint>

namespace loom {

using ParallelBody = void (*)(int64_t begin, int64_t end, void* closure);

class ThreadPool {
 public:
  // The process-wide pool (workers are started lazily, kept for the process).
  static ThreadPool& global();

  // Runs body over [0, extent) with up to num_threads threads (see above).
  void parallel_for(int64_t extent, ParallelBody body, void* closure, int num_threads);

  // Number of worker threads started so far (excluding callers).
  int num_workers() const;
  // Workers asleep: those that found no region for about a millisecond
  // (until then they spin, so that the next region starts at once).
  int num_sleeping() const;

  ThreadPool();
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  struct Impl;

 private:
  Impl* impl_;
};

// True while the calling thread is executing a chunk of a parallel loop.
bool in_parallel_region();

}  // namespace loom

extern "C" {
// The runtime entry point the generated code calls.
void loom_parallel_for(int64_t extent, loom::ParallelBody body, void* closure, int32_t num_threads);
}
