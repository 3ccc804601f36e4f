// Reduction terms that read a buffer's zero padding are skipped: the loop
// nest is copied per run of border positions with the tap loop over the
// valid taps only; the same results (JIT and vector C against the scalar C
// of the program as lowered).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "codegen/c/compile.h"
#include "codegen/passes/zero_padding_taps.h"
#include "llvm_test_util.h"

namespace loom {
namespace {

using namespace llvm_test;

int count_ifs(const Stmt& body) {
  int n = 0;
  visit_stmt(body, [&](const Stmt& s) { n += s->kind == StmtKind::kIf; });
  return n;
}

// The extents of the loops over `var_name`, in program order.
std::vector<int64_t> loop_extents(const Stmt& body, const std::string& var_name) {
  std::vector<int64_t> out;
  visit_stmt(body, [&](const Stmt& s) {
    if (s->kind == StmtKind::kFor && s->loop_var->name == var_name) out.push_back(s->extent);
  });
  return out;
}

// pad[x] = X[x - 1] for x in 1..len, 0 at x = 0 and len + 1.
Stmt pad_loop(const Var& x, int64_t len) {
  Expr inside = Expr(x) >= 1 && Expr(x) < len + 1;
  Expr clamped = min(max(Expr(x) - 1, Expr(0)), Expr(len - 1));
  return make_for(x, len + 2, ForKind::kSerial, make_store("pad", x, select(inside, ld("X", clamped), float_imm(0.0))));
}

// The padded buffer's declaration.
Buffer pad_buffer(int64_t len) {
  Buffer p = buf("pad", {len + 2});
  p.scope = BufferScope::kLocal;
  return p;
}

// A 1-D convolution over `len` points, 3 taps, padding 1, `channels` output
// channels in a vector loop: pad[x] = X[x - 1] inside, 0 outside; then
// Y[i, c] += pad[i + r] * W[r, c].
LoweredFunc conv1d(int64_t len, int64_t channels, ForKind channel_loop = ForKind::kVectorized) {
  Var x = make_var("x", len + 2), i = make_var("i", len), r = make_var("r", 3), c = make_var("c", channels),
      i0 = make_var("i0", len), c0 = make_var("c0", channels);
  Stmt pad = pad_loop(x, len);
  Stmt init = make_for(i0, len, ForKind::kSerial,
                       make_for(c0, channels, ForKind::kSerial, make_store("Y", Expr(i0) * channels + c0, float_imm(0.0))));
  Expr y = Expr(i) * channels + c;
  Stmt acc = make_for(
      i, len, ForKind::kSerial,
      make_for(r, 3, ForKind::kSerial,
               make_for(c, channels, channel_loop,
                        make_store("Y", y, ld("Y", y) + ld("pad", Expr(i) + r) * ld("W", Expr(r) * channels + c)))));
  return func("conv1d", {buf("X", {len}), buf("W", {3, channels}), buf("Y", {len, channels})},
              make_allocate("pad", make_seq({pad, init, acc})), {pad_buffer(len)});
}

TEST(ZeroPaddingTaps, BorderPositionsRunOnlyTheirValidTaps) {
  LoweredFunc f = conv1d(8, 256);
  LoweredFunc r = skip_zero_padding_taps(f);
  // i = 0: taps 1..2; i = 1..6: all three; i = 7: taps 0..1.
  EXPECT_EQ(loop_extents(r.body, "r"), (std::vector<int64_t>{2, 3, 2})) << to_string(r);
  EXPECT_EQ(count_ifs(r.body), 2);
  expect_rewritten_matches_oracle(f, 16, 1e-5f);
}

// Y[i, c] += pad[i + r] * W[c] after the padding of X, in loops over i and
// r (r outside i when `taps_outside`) and c inside them, of these kinds.
int copies_in(bool taps_outside, ForKind outer, ForKind middle, ForKind inner) {
  const int64_t len = 8, channels = 256;
  Var x = make_var("x", len + 2), i = make_var("i", len), r = make_var("r", 3), c = make_var("c", channels);
  Expr y = Expr(i) * channels + c;
  Stmt store = make_store("Y", y, ld("Y", y) + ld("pad", Expr(i) + r) * ld("W", c));
  Var first = taps_outside ? r : i, second = taps_outside ? i : r;
  Stmt nest = make_for(first, first->extent, outer,
                       make_for(second, second->extent, middle, make_for(c, channels, inner, store)));
  LoweredFunc f = func("taps", {buf("X", {len}), buf("W", {channels}), buf("Y", {len, channels})},
                       make_allocate("pad", make_seq({pad_loop(x, len), nest})), {pad_buffer(len)});
  return count_ifs(skip_zero_padding_taps(f).body);
}

TEST(ZeroPaddingTaps, ATapLoopOutsideThePositionsLoopIsLeftAlone) {
  // The bounds of r depend on i, which runs inside it.
  EXPECT_EQ(copies_in(/*taps_outside=*/true, ForKind::kSerial, ForKind::kSerial, ForKind::kVectorized), 0);
  EXPECT_EQ(copies_in(/*taps_outside=*/false, ForKind::kSerial, ForKind::kSerial, ForKind::kVectorized), 2);
}

TEST(ZeroPaddingTaps, NoCopyInsideAVectorLoop) {
  // The tap loop inside the vector loop: its valid taps would differ by lane.
  EXPECT_EQ(copies_in(false, ForKind::kVectorized, ForKind::kSerial, ForKind::kSerial), 0);
}

TEST(ZeroPaddingTaps, NoCopyOfALoopEmittedUnrolled) {
  // Copies would multiply the unrolled code.
  EXPECT_EQ(copies_in(false, ForKind::kUnrolled, ForKind::kSerial, ForKind::kVectorized), 0);
}

TEST(ZeroPaddingTaps, BufferWrittenTwiceIsNotTakenForPadding) {
  LoweredFunc f = conv1d(8, 256);
  // A second store into pad: its zeros are no longer known.
  Var z = make_var("z", 1);
  Stmt extra = make_for(z, 1, ForKind::kSerial, make_store("pad", z, float_imm(1.0)));
  Stmt alloc = f.body;
  std::vector<Stmt> seq = alloc->body[0]->body;
  seq.insert(seq.begin() + 1, extra);
  f.body = make_allocate("pad", make_seq(seq));
  EXPECT_EQ(count_ifs(skip_zero_padding_taps(f).body), 0);
}

}  // namespace
}  // namespace loom
