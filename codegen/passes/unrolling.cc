#include "codegen/passes/unrolling.h"

#include <climits>

namespace loom {

namespace {
int64_t sat_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > INT64_MAX / b ? INT64_MAX : a * b;
}
int64_t sat_add(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }
}  // namespace

int64_t nest_steps_vectorized(const Stmt& s) {
  if (!s) return 0;
  switch (s->kind) {
    case StmtKind::kStore: return 1;
    case StmtKind::kFor: {
      int64_t body = s->body.empty() ? 0 : nest_steps_vectorized(s->body[0]);
      return s->for_kind == ForKind::kVectorized ? body : sat_mul(s->extent, body);
    }
    default: {
      int64_t total = 0;
      for (const auto& c : s->body) total = sat_add(total, nest_steps_vectorized(c));
      return total;
    }
  }
}

bool unrolled_at_emission(const Stmt& loop, int64_t auto_unroll_limit) {
  const int64_t steps = nest_steps_vectorized(loop);
  if (steps > kMaxUnrolledSteps) return false;
  return loop->for_kind == ForKind::kUnrolled || (auto_unroll_limit > 0 && steps <= auto_unroll_limit);
}

}  // namespace loom
