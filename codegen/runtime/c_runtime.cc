#include "codegen/runtime/c_runtime.h"

namespace loom {

const char* c_runtime_header() {
  return R"C(/* Loom's kernel runtime: the parallel loops of exported kernels run
   through loom_parallel_for. Build loom_runtime.c with the kernels
   (cc -O2 -pthread -c loom_runtime.c); a static library from `loom export`
   already holds it. */
#ifndef LOOM_RUNTIME_H
#define LOOM_RUNTIME_H
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef void (*loom_parallel_body)(int64_t begin, int64_t end, void* closure);

/* Runs body over [0, extent) with up to num_threads threads (the caller and
   num_threads - 1 workers started on first use, kept for the process). The
   range is split into min(4 * threads, extent) chunks; each thread runs its
   own contiguous run of them, then helps with the others'. Returns when all
   are done. Nested calls, and calls with num_threads <= 1, run serially;
   calls from several threads run one at a time. Not for use across fork(). */
void loom_parallel_for(int64_t extent, loom_parallel_body body, void* closure, int32_t num_threads);

#ifdef __cplusplus
}
#endif
#endif
)C";
}

const char* c_runtime_source() {
  return R"C(/* Loom's kernel runtime (see loom_runtime.h). */
#include "loom_runtime.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

enum { LOOM_CHUNKS_PER_THREAD = 4, LOOM_MAX_THREADS = 256 };
/* A waiting worker checks this often before it yields the core between
   checks, and this often in all before it sleeps; the caller waiting for
   the workers yields after LOOM_CALLER_SPINS checks. */
enum { LOOM_SPINS_BEFORE_YIELD = 1000, LOOM_SPINS_BEFORE_SLEEP = 4000, LOOM_CALLER_SPINS = 200 };

typedef struct {
  int64_t extent;
  int64_t nchunks;
  int nthreads; /* the caller (0) and workers 1..nthreads-1 */
  loom_parallel_body body;
  void* closure;
} loom_job;

/* A region is handed over without locks: the caller writes the job and the
   chunk counters, then publishes them with the generation (release); a
   worker spinning on it (acquire) reads them, runs its chunks and counts
   itself out of loom_pending. The caller writes the next job only once
   every worker is out. The job shares its cache line with the generation;
   loom_pending, loom_sleepers and each chunk counter have their own (each
   line that both cores touch moves between them at every region). */
static struct {
  _Alignas(64) atomic_uint_fast64_t generation;
  loom_job job;
} loom_published;
static _Alignas(64) atomic_int loom_pending;  /* workers not yet done with the region */
static _Alignas(64) atomic_int loom_sleepers; /* workers blocked (or about to) on loom_cv */
static pthread_mutex_t loom_region_mu = PTHREAD_MUTEX_INITIALIZER; /* one region at a time */
static pthread_mutex_t loom_mu = PTHREAD_MUTEX_INITIALIZER;        /* for sleeping only */
static pthread_cond_t loom_cv = PTHREAD_COND_INITIALIZER;
/* Thread t owns chunks [first(t), first(t + 1)); loom_next_chunk[t].value is
   the next of them to run, claimed by t or by a thread helping it. */
static struct {
  _Alignas(64) atomic_int_fast64_t value;
} loom_next_chunk[LOOM_MAX_THREADS];
static int loom_num_workers;                 /* guarded by loom_region_mu */
static uint64_t loom_start_seen[LOOM_MAX_THREADS];
static _Thread_local int loom_in_parallel;

static inline void loom_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* [begin, end) of part c when [0, extent) is split into n near-equal parts. */
static void loom_part_range(int64_t extent, int64_t n, int64_t c, int64_t* begin, int64_t* end) {
  int64_t base = extent / n, rem = extent % n;
  *begin = c * base + (c < rem ? c : rem);
  *end = *begin + base + (c < rem ? 1 : 0);
}

/* Runs chunks until none is left: its own first, then the others'. */
static void loom_run_chunks(const loom_job* j, int self) {
  for (int k = 0; k < j->nthreads; ++k) {
    const int t = (self + k) % j->nthreads;
    int64_t own_begin, own_end;
    loom_part_range(j->nchunks, j->nthreads, t, &own_begin, &own_end);
    for (;;) {
      const int64_t c = atomic_fetch_add_explicit(&loom_next_chunk[t].value, 1, memory_order_relaxed);
      if (c >= own_end) break;
      int64_t b, e;
      loom_part_range(j->extent, j->nchunks, c, &b, &e);
      if (b < e) j->body(b, e, j->closure);
    }
  }
}

/* The next generation after `seen`: spins for a while, then sleeps. */
static uint64_t loom_wait_for_region(uint64_t seen) {
  for (;;) {
    for (int i = 0; i < LOOM_SPINS_BEFORE_SLEEP; ++i) {
      const uint64_t g = atomic_load_explicit(&loom_published.generation, memory_order_acquire);
      if (g != seen) return g;
      if (i > LOOM_SPINS_BEFORE_YIELD) sched_yield();
      else loom_cpu_relax();
    }
    pthread_mutex_lock(&loom_mu);
    /* seq_cst with the caller's store of the generation and load of
       loom_sleepers: either it sees this worker asleep, or this worker sees
       its region. */
    atomic_fetch_add(&loom_sleepers, 1);
    while (atomic_load(&loom_published.generation) == seen) pthread_cond_wait(&loom_cv, &loom_mu);
    atomic_fetch_sub(&loom_sleepers, 1);
    pthread_mutex_unlock(&loom_mu);
  }
}

static void* loom_worker_main(void* arg) {
  const int index = (int)(intptr_t)arg;
  uint64_t seen = loom_start_seen[index]; /* a new worker must not replay a finished job */
  loom_in_parallel = 1;
  for (;;) {
    seen = loom_wait_for_region(seen);
    const loom_job j = loom_published.job;
    const int self = index + 1;
    if (self < j.nthreads) loom_run_chunks(&j, self);
    atomic_fetch_sub_explicit(&loom_pending, 1, memory_order_acq_rel);
  }
  return 0;
}

void loom_parallel_for(int64_t extent, loom_parallel_body body, void* closure, int32_t num_threads) {
  if (extent <= 0) return;
  int64_t n = num_threads < 1 ? 1 : num_threads;
  if (n > LOOM_MAX_THREADS) n = LOOM_MAX_THREADS;
  if (n > extent) n = extent;
  if (n <= 1 || loom_in_parallel) {
    body(0, extent, closure);
    return;
  }
  pthread_mutex_lock(&loom_region_mu);
  while (loom_num_workers < n - 1) {
    loom_start_seen[loom_num_workers] = atomic_load_explicit(&loom_published.generation, memory_order_relaxed);
    pthread_t thread;
    if (pthread_create(&thread, 0, loom_worker_main, (void*)(intptr_t)loom_num_workers) != 0) {
      n = loom_num_workers + 1; /* run with the workers there are */
      break;
    }
    pthread_detach(thread);
    ++loom_num_workers;
  }
  if (n <= 1) {
    pthread_mutex_unlock(&loom_region_mu);
    body(0, extent, closure);
    return;
  }
  /* Every worker wakes for every region (those beyond n - 1 only count
     themselves out), so that none still reads the job when the next caller
     writes it. */
  atomic_store_explicit(&loom_pending, loom_num_workers, memory_order_relaxed);
  loom_job* job = &loom_published.job;
  job->extent = extent;
  job->nthreads = (int)n;
  job->nchunks = extent < n * LOOM_CHUNKS_PER_THREAD ? extent : n * LOOM_CHUNKS_PER_THREAD;
  job->body = body;
  job->closure = closure;
  for (int t = 0; t < n; ++t) {
    int64_t own_begin, own_end;
    loom_part_range(job->nchunks, n, t, &own_begin, &own_end);
    atomic_store_explicit(&loom_next_chunk[t].value, own_begin, memory_order_relaxed);
  }
  const loom_job mine = *job;
  /* Publishes the job, the counters and loom_pending (seq_cst: see
     loom_wait_for_region). */
  atomic_store(&loom_published.generation, atomic_load_explicit(&loom_published.generation, memory_order_relaxed) + 1);
  if (atomic_load(&loom_sleepers) > 0) {
    pthread_mutex_lock(&loom_mu);
    pthread_cond_broadcast(&loom_cv);
    pthread_mutex_unlock(&loom_mu);
  }

  loom_in_parallel = 1;
  loom_run_chunks(&mine, 0);
  loom_in_parallel = 0;
  for (int i = 0; atomic_load_explicit(&loom_pending, memory_order_acquire) != 0; ++i) {
    if (i > LOOM_CALLER_SPINS) sched_yield();
    else loom_cpu_relax();
  }
  pthread_mutex_unlock(&loom_region_mu);
}
)C";
}

}  // namespace loom
