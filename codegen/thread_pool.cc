#include "codegen/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include <unistd.h>

namespace loom {

namespace {

thread_local bool t_in_parallel = false;

struct Job {
  uint64_t generation = 0;
  int64_t extent = 0;
  int nchunks = 0;
  ParallelBody body = nullptr;
  void* closure = nullptr;
};

// [begin, end) of chunk c when [0, extent) is split into n near-equal parts.
void chunk_range(int64_t extent, int n, int c, int64_t* begin, int64_t* end) {
  int64_t base = extent / n, rem = extent % n;
  *begin = c * base + std::min<int64_t>(c, rem);
  *end = *begin + base + (c < rem ? 1 : 0);
}

}  // namespace

struct ThreadPool::Impl {
  pid_t owner = getpid();  // workers exist only in the process that started them
  std::mutex region_mu;    // one parallel region at a time

  std::mutex mu;  // guards job, stop
  std::condition_variable cv;
  Job job;
  bool stop = false;
  std::atomic<uint64_t> generation{0};  // mirrors job.generation, for spinning
  std::atomic<int> pending{0};          // worker chunks not yet finished

  std::vector<std::thread> workers;
  std::atomic<int> num_workers{0};

  void worker_main(int index, uint64_t seen) {
    t_in_parallel = true;
    for (;;) {
      // Spin briefly for the next region, then block.
      for (int i = 0; i < 4000 && generation.load(std::memory_order_acquire) == seen; ++i) {
        if (i > 1000) std::this_thread::yield();
      }
      Job j;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return stop || job.generation != seen; });
        if (stop) return;
        j = job;
      }
      seen = j.generation;
      int chunk = index + 1;  // chunk 0 belongs to the caller
      if (chunk < j.nchunks) {
        int64_t b, e;
        chunk_range(j.extent, j.nchunks, chunk, &b, &e);
        if (b < e) j.body(b, e, j.closure);
        pending.fetch_sub(1, std::memory_order_acq_rel);
      }
    }
  }

  void ensure_workers(int n) {
    while (static_cast<int>(workers.size()) < n) {
      int index = static_cast<int>(workers.size());
      uint64_t current;
      {
        std::lock_guard<std::mutex> lock(mu);
        current = job.generation;  // a new worker must not replay a finished job
      }
      workers.emplace_back([this, index, current] { worker_main(index, current); });
      num_workers.store(static_cast<int>(workers.size()));
    }
  }
};

ThreadPool::ThreadPool() : impl_(new Impl) {}

ThreadPool::~ThreadPool() {
  if (impl_->owner != getpid()) return;  // fork()ed child: nothing to join
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
  for (auto& t : impl_->workers) t.join();
  delete impl_;
}

ThreadPool& ThreadPool::global() {
  static ThreadPool pool;
  return pool;
}

int ThreadPool::num_workers() const { return impl_->num_workers.load(); }

bool in_parallel_region() { return t_in_parallel; }

void ThreadPool::parallel_for(int64_t extent, ParallelBody body, void* closure, int num_threads) {
  if (extent <= 0) return;
  int n = static_cast<int>(std::min<int64_t>(std::max(num_threads, 1), extent));
  if (n <= 1 || t_in_parallel) {
    body(0, extent, closure);
    return;
  }
  if (impl_->owner != getpid()) {
    // A fork()ed child: the parent's workers do not exist here and the old
    // state (mutexes included) is unusable. Abandon it and start afresh.
    impl_ = new Impl;
  }
  Impl& p = *impl_;
  std::lock_guard<std::mutex> region(p.region_mu);
  p.ensure_workers(n - 1);
  p.pending.store(n - 1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(p.mu);
    p.job.generation += 1;
    p.job.extent = extent;
    p.job.nchunks = n;
    p.job.body = body;
    p.job.closure = closure;
    p.generation.store(p.job.generation, std::memory_order_release);
  }
  p.cv.notify_all();

  int64_t b, e;
  chunk_range(extent, n, 0, &b, &e);
  t_in_parallel = true;
  if (b < e) body(b, e, closure);
  t_in_parallel = false;

  for (int i = 0; p.pending.load(std::memory_order_acquire) != 0; ++i) {
    if (i > 200) std::this_thread::yield();
  }
}

}  // namespace loom

extern "C" void loom_parallel_for(int64_t extent, loom::ParallelBody body, void* closure,
                                  int32_t num_threads) {
  loom::ThreadPool::global().parallel_for(extent, body, closure, num_threads);
}
