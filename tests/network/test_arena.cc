// The executor's arenas: zeroed, huge-page aligned, parts on cache lines.
#include <gtest/gtest.h>

#include <cstdint>

#include "network/arena.h"

namespace loom::graph {
namespace {

TEST(FloatArena, IsZeroedAndAlignedToAHugePage) {
  FloatArena a(3 << 20);  // 12 MB
  ASSERT_NE(a.data(), nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % (2u << 20), 0u);
  EXPECT_EQ(a.size(), size_t{3} << 20);
  EXPECT_EQ(a.data()[0], 0.0f);
  EXPECT_EQ(a.data()[a.size() - 1], 0.0f);
  a.data()[a.size() - 1] = 1.0f;  // the whole size is writable
}

TEST(FloatArena, MovesItsMemory) {
  FloatArena a(16);
  float* p = a.data();
  FloatArena b(std::move(a));
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(a.data(), nullptr);
}

TEST(FloatArena, OfNoFloatsHasNoMemory) { EXPECT_EQ(FloatArena(0).data(), nullptr); }

TEST(ArenaLayout, StartsEachPartOnACacheLine) {
  ArenaLayout l;
  EXPECT_EQ(l.add(3), 0u);
  EXPECT_EQ(l.add(20), 16u);  // 64 bytes: 16 floats
  EXPECT_EQ(l.add(1), 48u);
  EXPECT_EQ(l.total(), 49u);
}

}  // namespace
}  // namespace loom::graph
