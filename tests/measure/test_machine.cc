// What Loom reads about this machine.
#include <gtest/gtest.h>

#include "measure/machine.h"

namespace loom {
namespace {

// Where sysfs is not mounted (a chroot, some containers), the last-level
// cache decides a network's cold or warm timing from CPUID instead: both
// must name the same cache.
TEST(Machine, CpuidNamesTheLastLevelCacheThatSysfsNames) {
  const int64_t cpuid = cpuid_last_level_cache_bytes();
  if (cpuid == 0) GTEST_SKIP() << "CPUID does not describe the caches on this machine";
  EXPECT_EQ(cpuid, last_level_cache_bytes());
  EXPECT_GE(cpuid, int64_t{1} << 20) << "a last-level cache under 1 MB: a lower level was taken";
}

}  // namespace
}  // namespace loom
