// Program features for the learned cost model (in the spirit of Ansor's 164
// per-statement features; the list, its order and the meaning of every entry
// are documented next to where each is computed, in features.cc and
// features_buffer_access.cc, and `feature_names()` returns them).
//
// A lowered program yields one feature row per buffer-store statement (the
// innermost statements of its loop nests); a model scores each row and sums
// the scores per program. Counts are log-scaled as log2(1 + x); one-hot
// flags are 0/1.
//
// Amounts that grow with the problem — op counts times trips, bytes and
// cache lines touched per buffer (also per reuse), allocation times outer
// trips, the outer trip count, estimated cache traffic — are expressed
// relative to the task's nominal FLOP count F (of a State's DAG): log2(1 + x)
// - log2(1 + F) where x > 0. Within a task this is a constant shift, so it
// changes no ranking a model could learn; across tasks a larger shape is no
// longer an extrapolation. Measured by `loom costmodel transfer` (each task
// shape held out) on 28,946 search-chosen programs of 46 shapes: pairwise
// 0.589 -> 0.593 for the MLP, lowest task 0.32 -> 0.51; XGBoost 0.581 ->
// 0.589.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/state.h"
#include "ir/stmt.h"

namespace loom {

// Bump when the meaning or order of features changes: saved models record it
// and refuse to load against a different layout.
constexpr int kFeatureVersion = 3;
// Per-buffer access features are kept for this many buffers per statement
// (the ones with the most bytes accessed); missing ones are zero.
constexpr int kMaxFeatureBuffers = 5;
constexpr int kFeaturesPerBuffer = 18;
// 16 arithmetic + 33 annotation + 8 GPU + 5*18 buffer + 10 intensity curve
// + 4 allocation + 5 outer-loop + 13 inner loop / registers / caches.
constexpr int kNumFeatures = 16 + 33 + 8 + kMaxFeatureBuffers * kFeaturesPerBuffer + 10 + 4 + 5 + 13;

// Feature rows of one program: `num_stmts` rows of kNumFeatures floats,
// row-major. `valid` is false when the state could not be lowered (an invalid
// schedule); such a program has no rows and models give it the lowest score.
struct ProgramFeatures {
  bool valid = false;
  int num_stmts = 0;
  std::vector<float> values;
  const float* row(int i) const { return values.data() + static_cast<size_t>(i) * kNumFeatures; }
};

// Name of every feature, in row order ("float_mad", "vec_len", "B0.reuse_ct", ...).
const std::vector<std::string>& feature_names();
// Index of a named feature; throws LoomError for an unknown name.
int feature_index(const std::string& name);

// `task_flops` > 0: amounts relative to it (above); 0: absolute.
ProgramFeatures extract_features(const LoweredFunc& f, double task_flops = 0);
// Lowers then extracts, relative to the DAG's FLOP count; an unlowerable
// state gives valid = false.
ProgramFeatures extract_features(const State& s);

struct FeatureOptions {
  int num_threads = 0;  // worker threads; 0 = hardware concurrency
};
// Extracts the features of many states in parallel (order preserved).
std::vector<ProgramFeatures> extract_features(const std::vector<State>& states,
                                              const FeatureOptions& options = {});

namespace feature_detail {

// One loop enclosing a statement (outer -> inner in a LoopStack).
struct LoopInfo {
  int64_t var_id = 0;
  int64_t extent = 1;
  ForKind kind = ForKind::kSerial;
  int64_t auto_unroll = 0;
  bool unrolled = false;  // the code generator unrolls it (annotation or auto-unroll step)
};

// Linear form of a flat buffer index in the enclosing loop variables:
// index ~= sum coef[d] * var_d + const. Floor division by a constant divides
// the coefficients; modulo keeps them (an approximation good for strides).
// `used[d]` is true when var_d appears at all (also non-linearly).
struct IndexForm {
  std::vector<double> coef;
  std::vector<bool> used;
};

IndexForm index_form(const Expr& index, const std::vector<LoopInfo>& loops);

// One buffer's accesses within one statement.
struct BufferAccess {
  std::string buffer;
  bool read = false, write = false;
  int count = 0;                // accesses per statement execution
  IndexForm form;               // of the first access
  int64_t buffer_elems = 1;     // total size of the buffer (elements)
};

// Appends the kMaxFeatureBuffers * kFeaturesPerBuffer buffer-access features
// (sorted by bytes, zero-padded) and returns the unique bytes touched by all
// accesses over loops [level, n) for level = 0..n (for the intensity curve).
std::vector<double> buffer_access_features(const std::vector<BufferAccess>& accesses,
                                           const std::vector<LoopInfo>& loops, float* out);
// Elements one access touches over loops [level, n): the span of its index,
// capped by the distinct iterations of the loops it uses and the buffer size.
double access_footprint(const BufferAccess& a, const std::vector<LoopInfo>& loops, size_t level);
// Names of the buffer-access features of one slot (without the "Bk." prefix).
const std::vector<std::string>& buffer_feature_names();

// Row positions of the amounts expressed relative to the task's FLOP count.
const std::vector<int>& task_relative_features();

inline float log_count(double x) {
  return x > 0 ? static_cast<float>(std::log2(1.0 + x)) : 0.0f;
}

}  // namespace feature_detail

}  // namespace loom
