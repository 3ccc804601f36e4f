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

// Chunks per participating thread: a thread whose own chunks are done
// takes the remaining chunks of the others, so a thread slowed down by
// another process (a shared machine) does not hold the region up by a whole
// static share.
constexpr int kChunksPerThread = 4;
constexpr int kMaxThreads = 256;

struct Job {
  uint64_t generation = 0;
  int64_t extent = 0;
  int nthreads = 0;  // participants: the caller (0) and workers 1..nthreads-1
  int64_t nchunks = 0;
  ParallelBody body = nullptr;
  void* closure = nullptr;
};

// [begin, end) of part c when [0, extent) is split into n near-equal parts.
void part_range(int64_t extent, int64_t n, int64_t c, int64_t* begin, int64_t* end) {
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
  std::atomic<int> pending{0};          // workers not yet done with the region
  // Thread t owns chunks [first_chunk(t), first_chunk(t + 1)) (contiguous, so
  // a balanced region keeps static chunking's locality); next_chunk[t] is
  // the next of them to run, claimed by t or, once t's own are gone, by a
  // thread helping it.
  std::atomic<int64_t> next_chunk[kMaxThreads];

  // Runs chunks until none is left: its own first, then the others'.
  void run_chunks(const Job& j, int self) {
    for (int k = 0; k < j.nthreads; ++k) {
      const int t = (self + k) % j.nthreads;
      int64_t own_begin, own_end;
      part_range(j.nchunks, j.nthreads, t, &own_begin, &own_end);
      for (;;) {
        const int64_t c = next_chunk[t].fetch_add(1, std::memory_order_relaxed);
        if (c >= own_end) break;
        int64_t b, e;
        part_range(j.extent, j.nchunks, c, &b, &e);
        if (b < e) j.body(b, e, j.closure);
      }
    }
  }

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
      const int self = index + 1;  // participant 0 is the caller
      if (self < j.nthreads) {
        run_chunks(j, self);
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
  int n = static_cast<int>(std::min<int64_t>(std::min(std::max(num_threads, 1), kMaxThreads), extent));
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
  Job job;
  {
    std::lock_guard<std::mutex> lock(p.mu);
    p.job.generation += 1;
    p.job.extent = extent;
    p.job.nthreads = n;
    p.job.nchunks = std::min<int64_t>(extent, static_cast<int64_t>(n) * kChunksPerThread);
    p.job.body = body;
    p.job.closure = closure;
    for (int t = 0; t < n; ++t) {
      int64_t own_begin, own_end;
      part_range(p.job.nchunks, n, t, &own_begin, &own_end);
      p.next_chunk[t].store(own_begin, std::memory_order_relaxed);
    }
    job = p.job;
    // Publishes the counters with the job (release; workers acquire it).
    p.generation.store(p.job.generation, std::memory_order_release);
  }
  p.cv.notify_all();

  t_in_parallel = true;
  p.run_chunks(job, 0);
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
