#include "network/arena.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include <sys/mman.h>

#include "ir/error.h"

namespace loom::graph {

namespace {

constexpr size_t kHugePage = size_t{2} << 20;

}  // namespace

FloatArena::FloatArena(size_t floats) : floats_(floats) {
  if (floats == 0) return;
  const size_t bytes = (floats * sizeof(float) + kHugePage - 1) / kHugePage * kHugePage;
  // Mapped one huge page larger, so that an aligned start lies inside.
  mapped_bytes_ = bytes + kHugePage;
  mapping_ = ::mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping_ == MAP_FAILED) {
    mapping_ = nullptr;
    throw LoomError("cannot map " + std::to_string(bytes >> 20) + " MB for the network's buffers: " +
                    std::strerror(errno));
  }
  const uintptr_t start = (reinterpret_cast<uintptr_t>(mapping_) + kHugePage - 1) / kHugePage * kHugePage;
  data_ = reinterpret_cast<float*>(start);
#ifdef MADV_HUGEPAGE
  ::madvise(data_, bytes, MADV_HUGEPAGE);  // advice: without THP the pages stay small
#endif
}

FloatArena::~FloatArena() {
  if (mapping_) ::munmap(mapping_, mapped_bytes_);
}

FloatArena::FloatArena(FloatArena&& o) noexcept
    : mapping_(std::exchange(o.mapping_, nullptr)),
      mapped_bytes_(std::exchange(o.mapped_bytes_, 0)),
      data_(std::exchange(o.data_, nullptr)),
      floats_(std::exchange(o.floats_, 0)) {}

FloatArena& FloatArena::operator=(FloatArena&& o) noexcept {
  if (this != &o) {
    if (mapping_) ::munmap(mapping_, mapped_bytes_);
    mapping_ = std::exchange(o.mapping_, nullptr);
    mapped_bytes_ = std::exchange(o.mapped_bytes_, 0);
    data_ = std::exchange(o.data_, nullptr);
    floats_ = std::exchange(o.floats_, 0);
  }
  return *this;
}

size_t ArenaLayout::add(size_t floats) {
  constexpr size_t kAlignFloats = 64 / sizeof(float);
  const size_t offset = (total_ + kAlignFloats - 1) / kAlignFloats * kAlignFloats;
  total_ = offset + floats;
  return offset;
}

}  // namespace loom::graph
