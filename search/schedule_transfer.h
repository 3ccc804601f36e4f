// Programs measured for some tasks, carried over to others: the same task's
// best program replays as it is; a similar task (the same stages, other loop
// extents: a conv of another image size or channel count) gets the best
// programs of its nearest measured tasks with every split re-fitted to its
// own extents. What a network runs before any of its own programs is timed,
// beside the cost model's prediction (transfer-tuning's observation that
// the schedules of one network's kernels serve another's).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "costmodel/cost_model.h"
#include "ir/state.h"
#include "measure/records.h"
#include "search/evolutionary_search.h"

namespace loom {

// Split lengths for a loop of `extent` close to `lengths` (a split of
// another extent): the length next to the loop's fixed end (the innermost for
// an inner-to-outer split) is fitted first, each to the divisor of what is
// left nearest it in ratio, or to itself where no divisor is near and it
// fits (a split that does not divide). The product never exceeds `extent`.
std::vector<int64_t> refit_split_lengths(const std::vector<int64_t>& lengths, int64_t extent,
                                         bool inner_to_outer = true);

// Replays `steps` on `dag`, each split (SP) whose loop has another extent
// here re-fitted to it (refit_split_lengths). Throws LoomError naming the
// step when one does not apply (other stages, another loop structure).
State refit_program(std::shared_ptr<const ComputeDAG> dag, const std::vector<StepPtr>& steps);

// How far apart two DAGs' loops are: the mean over their stages' loops of
// |log2| of the ratio of the extents (1: each twice or half the other's on
// average); +infinity when their stages or loops do not correspond (a
// program of one cannot replay on the other).
double extent_distance(const ComputeDAG& a, const ComputeDAG& b);

// The measured programs of a set of records, by task, offered to other
// tasks of the same target.
class ScheduleLibrary {
 public:
  // Keeps the tasks with at least one valid record and their best
  // `per_task` programs (measure/records.h's ranking).
  explicit ScheduleLibrary(const std::vector<MeasureRecord>& records, int per_task = 3);

  // The best program measured for this very task (its key), if any.
  std::optional<State> same_task(const Task& task) const;
  // All the programs kept of this very task, best first (those that replay).
  std::vector<State> same_task_programs(const Task& task) const;
  // The best programs of the `nearest` tasks of the same workload kind
  // nearest to `task` (extent_distance, nearer still for the same target
  // and similarity group) and at most `max_distance` from it, re-fitted to
  // it: the nearest task's first, each task's best first. Programs that do
  // not replay are left out; the task itself is not among the sources.
  //
  // Farther sources replay but mislead: on the model zoo, a GPT block's
  // QKV matmul (1x128x2304) given a BERT program of the transposed layout
  // (128x1x768, distance 4.1) ran 10x slower than the model's own pick,
  // a ViT's patch convolution given a 1x1 conv's (2.3) and Inception's
  // pools given global pools' (2.1-3.1) lost too; MNASNet's depthwise
  // and pointwise convs at distances up to 1.06 ran 1.5-4x faster on
  // MobileNet-V2's programs re-fitted.
  static constexpr double kMaxDistance = 1.5;
  std::vector<State> similar(const Task& task, int nearest = 4, double max_distance = kMaxDistance) const;

  size_t tasks() const { return entries_.size(); }

 private:
  struct Entry {
    Task task;
    std::vector<std::vector<StepPtr>> programs;  // best first
    std::string key, group, target;  // the task's, computed once (each a serialization)
  };
  std::vector<Entry> entries_;
  std::unordered_map<std::string, size_t> by_key_;
};

// The program among `candidates` (other tasks' programs re-fitted to `task`)
// that `model` scores best; nullopt when there is none. The model ranks
// such programs, each tuned for a task near this one, far better than it
// ranks them against programs its own evolution found: those it scores
// too high (on MNASNet's depthwise convs a re-fitted program it prefers ran
// 1.5-4x faster than the evolution's pick it scored higher still).
std::optional<State> best_scored(const Task& task, CostModel& model, const std::vector<State>& candidates);
// The candidates in the order of their scores, best first.
std::vector<State> by_score(std::vector<State> candidates, const ScoreFn& score);

// The records of these logs measured on this machine kind (CPU and vector
// extension): times from another CPU rank programs for that CPU. One line
// per log with records left out goes to `notes`. Throws LoomError for a
// log that cannot be read.
std::vector<MeasureRecord> this_machines_records(const std::vector<std::string>& paths,
                                                 std::vector<std::string>* notes = nullptr);

}  // namespace loom
