#include "codegen/runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include <pthread.h>

namespace loom {

namespace {

thread_local bool t_in_parallel = false;

// Chunks per participating thread: a thread whose own chunks are done
// takes the remaining chunks of the others, so a thread slowed down by
// another process (a shared machine) does not hold the region up by a whole
// static share.
constexpr int kChunksPerThread = 4;
constexpr int kMaxThreads = 256;
// A worker waiting for the next region checks for it this often before it
// yields the core between checks, and this often in all before it sleeps
// (about a millisecond); the caller waiting for the workers yields after
// this many checks.
constexpr int kSpinsBeforeYield = 1000;
constexpr int kSpinsBeforeSleep = 4000;
constexpr int kCallerSpinsBeforeYield = 200;

// Tells the core that this thread spins (x86 `pause`: the other
// hyperthread runs, and the loop does not flood the memory order buffer).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// How many times this process was fork()ed into (counted in each child):
// a pool started before the last fork belongs to the parent. Checked at
// every region; getpid() there was a system call per region.
std::atomic<uint64_t> g_forks{0};

uint64_t forks_so_far() {
  static const bool counting = [] {
    pthread_atfork(nullptr, nullptr, [] { g_forks.fetch_add(1, std::memory_order_relaxed); });
    return true;
  }();
  (void)counting;
  return g_forks.load(std::memory_order_relaxed);
}

struct Job {
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
  uint64_t forks = forks_so_far();  // workers exist only in the process that started them
  std::mutex region_mu;    // one parallel region at a time

  // A region is handed over without locks: the caller writes `job` and the
  // chunk counters, then publishes them with `generation` (release); a
  // worker spinning on `generation` (acquire) reads them, runs its chunks and
  // counts itself out of `pending`. The caller writes the next job only once
  // every worker is out, so no worker reads a job while it changes. Each
  // cache line a region touches on both cores costs a transfer between
  // them, so the job shares its line with the generation, `pending`,
  // `sleepers` and each chunk counter have their own, and no mutex is taken
  // on the way in (docs/results/2026-12-05-parallel-region-dispatch-zen5.md
  // measured both). A worker
  // that found no region for a while sleeps on `cv`; the caller takes `mu`
  // and notifies only when one does.
  struct alignas(64) {
    std::atomic<uint64_t> generation{0};
    Job job;
  } published;
  std::atomic<uint64_t>& generation = published.generation;
  Job& job = published.job;
  alignas(64) std::atomic<int> pending{0};   // workers not yet done with the region
  alignas(64) std::atomic<int> sleepers{0};  // workers blocked (or about to block) on cv
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable cv;
  // Thread t owns chunks [first_chunk(t), first_chunk(t + 1)) (contiguous, so
  // a balanced region keeps static chunking's locality); next_chunk[t].value
  // is the next of them to run, claimed by t or, once t's own are gone, by a
  // thread helping it.
  struct alignas(64) ChunkCounter {
    std::atomic<int64_t> value{0};
  };
  ChunkCounter next_chunk[kMaxThreads];

  // Runs chunks until none is left: its own first, then the others'.
  void run_chunks(const Job& j, int self) {
    for (int k = 0; k < j.nthreads; ++k) {
      const int t = (self + k) % j.nthreads;
      int64_t own_begin, own_end;
      part_range(j.nchunks, j.nthreads, t, &own_begin, &own_end);
      for (;;) {
        const int64_t c = next_chunk[t].value.fetch_add(1, std::memory_order_relaxed);
        if (c >= own_end) break;
        int64_t b, e;
        part_range(j.extent, j.nchunks, c, &b, &e);
        if (b < e) j.body(b, e, j.closure);
      }
    }
  }

  std::vector<std::thread> workers;
  std::atomic<int> num_workers{0};

  // The next generation after `seen`: spins for a while (a kernel's next
  // parallel region usually follows within microseconds), then sleeps.
  uint64_t wait_for_region(uint64_t seen) {
    for (;;) {
      for (int i = 0; i < kSpinsBeforeSleep; ++i) {
        const uint64_t g = generation.load(std::memory_order_acquire);
        if (g != seen) return g;
        if (i > kSpinsBeforeYield) std::this_thread::yield();
        else cpu_relax();
      }
      std::unique_lock<std::mutex> lock(mu);
      // seq_cst with the caller's store of generation and load of sleepers:
      // either it sees this worker asleep, or this worker sees its region.
      sleepers.fetch_add(1, std::memory_order_seq_cst);
      cv.wait(lock, [&] { return generation.load(std::memory_order_seq_cst) != seen; });
      sleepers.fetch_sub(1, std::memory_order_relaxed);
    }
  }

  void worker_main(int index, uint64_t seen) {
    t_in_parallel = true;
    for (;;) {
      seen = wait_for_region(seen);
      if (stop.load(std::memory_order_acquire)) return;
      const Job j = job;
      const int self = index + 1;  // participant 0 is the caller
      if (self < j.nthreads) run_chunks(j, self);
      pending.fetch_sub(1, std::memory_order_acq_rel);
    }
  }

  void ensure_workers(int n) {
    while (static_cast<int>(workers.size()) < n) {
      const int index = static_cast<int>(workers.size());
      // A new worker must not replay a finished job. Only callers (holding
      // region_mu) change generation, so this read is current.
      const uint64_t current = generation.load(std::memory_order_relaxed);
      workers.emplace_back([this, index, current] { worker_main(index, current); });
      num_workers.store(static_cast<int>(workers.size()));
    }
  }

  // Publishes a new generation and wakes the sleeping workers.
  void publish(uint64_t g) {
    generation.store(g, std::memory_order_seq_cst);
    if (sleepers.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard<std::mutex> lock(mu);
      cv.notify_all();
    }
  }
};

ThreadPool::ThreadPool() : impl_(new Impl) {}

ThreadPool::~ThreadPool() {
  if (impl_->forks != forks_so_far()) return;  // fork()ed child: nothing to join
  impl_->stop.store(true, std::memory_order_release);
  impl_->publish(impl_->generation.load() + 1);
  for (auto& t : impl_->workers) t.join();
  delete impl_;
}

ThreadPool& ThreadPool::global() {
  static ThreadPool pool;
  return pool;
}

int ThreadPool::num_workers() const { return impl_->num_workers.load(); }

int ThreadPool::num_sleeping() const { return impl_->sleepers.load(); }

bool in_parallel_region() { return t_in_parallel; }

void ThreadPool::parallel_for(int64_t extent, ParallelBody body, void* closure, int num_threads) {
  if (extent <= 0) return;
  int n = static_cast<int>(std::min<int64_t>(std::min(std::max(num_threads, 1), kMaxThreads), extent));
  if (n <= 1 || t_in_parallel) {
    body(0, extent, closure);
    return;
  }
  if (impl_->forks != forks_so_far()) {
    // A fork()ed child: the parent's workers do not exist here and the old
    // state (mutexes included) is unusable. Abandon it and start afresh.
    impl_ = new Impl;
  }
  Impl& p = *impl_;
  std::lock_guard<std::mutex> region(p.region_mu);
  p.ensure_workers(n - 1);
  // Every worker wakes for every region (those beyond n - 1 only count
  // themselves out), so that none can still be reading the job when the
  // next caller writes it.
  p.pending.store(static_cast<int>(p.workers.size()), std::memory_order_relaxed);
  p.job.extent = extent;
  p.job.nthreads = n;
  p.job.nchunks = std::min<int64_t>(extent, static_cast<int64_t>(n) * kChunksPerThread);
  p.job.body = body;
  p.job.closure = closure;
  for (int t = 0; t < n; ++t) {
    int64_t own_begin, own_end;
    part_range(p.job.nchunks, n, t, &own_begin, &own_end);
    p.next_chunk[t].value.store(own_begin, std::memory_order_relaxed);
  }
  const Job job = p.job;
  p.publish(p.generation.load(std::memory_order_relaxed) + 1);  // releases the job, the counters and pending

  t_in_parallel = true;
  p.run_chunks(job, 0);
  t_in_parallel = false;

  for (int i = 0; p.pending.load(std::memory_order_acquire) != 0; ++i) {
    if (i > kCallerSpinsBeforeYield) std::this_thread::yield();
    else cpu_relax();
  }
}

}  // namespace loom

extern "C" void loom_parallel_for(int64_t extent, loom::ParallelBody body, void* closure,
                                  int32_t num_threads) {
  loom::ThreadPool::global().parallel_for(extent, body, closure, num_threads);
}
