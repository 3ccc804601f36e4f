// Runs body(i) for i in [0, n) on up to `threads` threads (0: the hardware's),
// each taking the next index as it finishes one; returns when all are done.
// For independent per-program work of the cost model's data (lowering,
// feature extraction), whose cost varies by program.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace loom {

template <typename Body>
void parallel_for(size_t n, int threads, const Body& body) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::max(1, std::min<int>(threads, static_cast<int>(n)));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) body(i);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

}  // namespace loom
