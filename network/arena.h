// One zeroed allocation of floats for a network's long-lived data (its
// intermediate buffers, its weights in the order the kernels read them),
// aligned to 2 MB and advised to transparent huge pages: a network streams
// megabytes of weights and activations through every run, and with 4-kB
// pages each megabyte is 256 TLB entries that a run after a pause misses
// again. Where the kernel gives no huge pages, the memory is plain pages.
#pragma once

#include <cstddef>

namespace loom::graph {

class FloatArena {
 public:
  FloatArena() = default;
  explicit FloatArena(size_t floats);  // throws LoomError when the memory cannot be had
  ~FloatArena();
  FloatArena(FloatArena&& o) noexcept;
  FloatArena& operator=(FloatArena&& o) noexcept;
  FloatArena(const FloatArena&) = delete;
  FloatArena& operator=(const FloatArena&) = delete;

  float* data() const { return data_; }
  size_t size() const { return floats_; }

 private:
  void* mapping_ = nullptr;
  size_t mapped_bytes_ = 0;
  float* data_ = nullptr;
  size_t floats_ = 0;
};

// Offsets into an arena: each part starts on a 64-byte boundary (a cache
// line, the widest vector).
class ArenaLayout {
 public:
  // Reserves `floats` floats; returns their offset.
  size_t add(size_t floats);
  size_t total() const { return total_; }

 private:
  size_t total_ = 0;
};

}  // namespace loom::graph
