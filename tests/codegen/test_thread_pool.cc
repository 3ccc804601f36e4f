// The persistent thread pool behind parallel loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "codegen/runtime/thread_pool.h"

namespace loom {
namespace {

struct Recorder {
  std::vector<std::atomic<int>> hits;
  std::mutex mu;
  std::set<std::thread::id> threads;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  std::vector<std::thread::id> range_threads;  // who ran ranges[i]
  std::condition_variable others_done;         // a range was recorded
  int64_t chunks = 0;                          // expected ranges, where a test waits on them
  explicit Recorder(int64_t n) : hits(n) {}
};

void record(int64_t begin, int64_t end, void* closure) {
  auto* r = static_cast<Recorder*>(closure);
  for (int64_t i = begin; i < end; ++i) r->hits[i].fetch_add(1);
  std::lock_guard<std::mutex> lock(r->mu);
  r->threads.insert(std::this_thread::get_id());
  r->ranges.push_back({begin, end});
  r->range_threads.push_back(std::this_thread::get_id());
}

TEST(ThreadPool, CoversRangeOnceInNearEqualChunks) {
  for (int64_t n : {1, 2, 5, 100, 1001}) {
    for (int threads : {1, 2, 4}) {
      Recorder r(n);
      loom_parallel_for(n, record, &r, threads);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(r.hits[i].load(), 1) << n << " " << threads << " " << i;
      const int64_t used = std::min<int64_t>(threads, n);
      const int64_t chunks = used == 1 ? 1 : std::min<int64_t>(4 * used, n);
      EXPECT_EQ(static_cast<int64_t>(r.ranges.size()), chunks) << n << " " << threads;
      EXPECT_LE(static_cast<int64_t>(r.threads.size()), used);
      for (auto& [b, e] : r.ranges) {
        EXPECT_GE(e - b, n / chunks);
        EXPECT_LE(e - b, n / chunks + 1);
      }
    }
  }
}

// The caller's first chunk stalls (as if its core were taken by another
// process) until every other chunk has run: the worker runs its own chunks,
// then the caller's remaining ones. With static chunks the others could not
// all run, and the stall ends only at its 30 s limit.
void stall_first_chunk(int64_t begin, int64_t end, void* closure) {
  auto* r = static_cast<Recorder*>(closure);
  if (begin == 0) {
    std::unique_lock<std::mutex> lock(r->mu);
    r->others_done.wait_for(lock, std::chrono::seconds(30),
                            [&] { return static_cast<int64_t>(r->ranges.size()) == r->chunks - 1; });
  }
  record(begin, end, closure);
  r->others_done.notify_all();
}

TEST(ThreadPool, AnIdleThreadTakesTheChunksOfAStalledOne) {
  Recorder r(8);
  r.chunks = 8;  // 4 per thread
  loom_parallel_for(8, stall_first_chunk, &r, 2);
  for (int64_t i = 0; i < 8; ++i) ASSERT_EQ(r.hits[i].load(), 1) << i;
  ASSERT_EQ(r.ranges.size(), 8u);
  int by_caller = 0;
  for (const auto& id : r.range_threads) by_caller += id == std::this_thread::get_id();
  // Static chunking would leave chunks 1-3 to the stalled caller.
  EXPECT_EQ(by_caller, 1) << "the worker took the caller's chunks 1-3 while chunk 0 stalled";
}

TEST(ThreadPool, ZeroExtentDoesNothing) {
  Recorder r(1);
  loom_parallel_for(0, record, &r, 4);
  EXPECT_TRUE(r.ranges.empty());
}

void nested_body(int64_t begin, int64_t end, void* closure) {
  auto* r = static_cast<Recorder*>(closure);
  EXPECT_TRUE(in_parallel_region());
  for (int64_t i = begin; i < end; ++i) {
    // A nested parallel loop runs serially on this thread: one chunk.
    struct Inner { Recorder* r; int64_t row; } inner{r, i};
    loom_parallel_for(
        10, [](int64_t b, int64_t e, void* c) {
          auto* in = static_cast<Inner*>(c);
          EXPECT_EQ(b, 0);
          EXPECT_EQ(e, 10);
          for (int64_t k = b; k < e; ++k) in->r->hits[in->row * 10 + k].fetch_add(1);
        },
        &inner, 4);
  }
}

TEST(ThreadPool, NestedParallelForRunsSerially) {
  Recorder r(80);
  EXPECT_FALSE(in_parallel_region());
  loom_parallel_for(8, nested_body, &r, 2);
  EXPECT_FALSE(in_parallel_region());
  for (int i = 0; i < 80; ++i) ASSERT_EQ(r.hits[i].load(), 1);
}

TEST(ThreadPool, ManyRegionsAndConcurrentCallers) {
  std::atomic<int64_t> total{0};
  auto body = [](int64_t b, int64_t e, void* c) {
    static_cast<std::atomic<int64_t>*>(c)->fetch_add(e - b);
  };
  for (int rep = 0; rep < 2000; ++rep) loom_parallel_for(7, body, &total, 2);
  EXPECT_EQ(total.load(), 7 * 2000);
  total = 0;
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t)
    callers.emplace_back([&] {
      for (int rep = 0; rep < 300; ++rep) loom_parallel_for(13, body, &total, 3);
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(total.load(), 13 * 300 * 3);
  EXPECT_GE(ThreadPool::global().num_workers(), 2);
}

TEST(ThreadPool, WorkersThatFellAsleepRunTheNextRegion) {
  ThreadPool pool;
  Recorder first(8);
  pool.parallel_for(8, record, &first, 2);
  while (pool.num_sleeping() < 1) std::this_thread::yield();  // the worker found no region and sleeps
  Recorder r(8);
  r.chunks = 8;
  pool.parallel_for(8, stall_first_chunk, &r, 2);  // only the woken worker can run chunks 1-7
  for (int64_t i = 0; i < 8; ++i) ASSERT_EQ(r.hits[i].load(), 1) << i;
  EXPECT_EQ(r.threads.size(), 2u);
}

TEST(ThreadPool, PrivatePoolShutsDown) {
  ThreadPool pool;
  Recorder r(50);
  pool.parallel_for(50, record, &r, 3);
  for (int i = 0; i < 50; ++i) ASSERT_EQ(r.hits[i].load(), 1);
  EXPECT_EQ(pool.num_workers(), 2);
}

TEST(ThreadPool, WorksInForkedChild) {
  std::atomic<int64_t> total{0};
  auto body = [](int64_t b, int64_t e, void* c) {
    static_cast<std::atomic<int64_t>*>(c)->fetch_add(e - b);
  };
  loom_parallel_for(10, body, &total, 2);  // workers started in the parent
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::atomic<int64_t> child_total{0};
    loom_parallel_for(100, body, &child_total, 2);
    _exit(child_total.load() == 100 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  loom_parallel_for(10, body, &total, 2);
  EXPECT_EQ(total.load(), 20);
}

}  // namespace
}  // namespace loom
