#include <gtest/gtest.h>

#include "ir/lower.h"
#include "tests/support/schedule_check.h"

namespace loom {
namespace {

TEST(LowerSmoke, MatmulTiled) {
  auto dag = testing::workload("matmul", R"({"M":16,"N":20,"K":12})");
  State s = State::initial(dag);
  int c = s.stage_index("C");
  ASSERT_GE(c, 0) << dag->to_string();
  EXPECT_EQ(testing::check_with_c_backend(s), "");
  s = s.split(c, 0, {4});
  s = s.split(c, 2, {8});
  std::cout << to_string(lower(s));
  EXPECT_EQ(testing::check_with_c_backend(s), "");
}

}  // namespace
}  // namespace loom
