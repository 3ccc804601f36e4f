#include "search/schedule_transfer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "ir/error.h"
#include "measure/machine.h"
#include "ir/step.h"
#include "ir/steps.h"

namespace loom {

namespace {

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d * d <= n; ++d)
    if (n % d == 0) {
      out.push_back(d);
      if (d != n / d) out.push_back(n / d);
    }
  return out;
}

// A divisor is taken over a length that does not divide while it is within
// this ratio of the wanted length: a split that does not divide leaves a
// partial tile (guards or padding), dearer than a somewhat other tile.
constexpr double kDivisorRatio = 1.5;

int64_t fit_length(int64_t wanted, int64_t room) {
  if (room <= 1) return 1;
  if (wanted >= room) return room;
  if (room % wanted == 0) return wanted;
  int64_t best = 1;
  double best_dist = std::numeric_limits<double>::infinity();
  for (int64_t d : divisors(room)) {
    const double dist = std::fabs(std::log(static_cast<double>(d) / static_cast<double>(wanted)));
    if (dist < best_dist || (dist == best_dist && d > best)) best = d, best_dist = dist;
  }
  return best_dist <= std::log(kDivisorRatio) ? best : wanted;
}

// The extent of the loop at leaf position `iter` of `stage`, or 0 when there
// is none.
int64_t leaf_extent(const State& s, int stage, int iter) {
  if (stage < 0 || stage >= static_cast<int>(s.stages().size())) return 0;
  const Stage& st = s.stages()[stage];
  if (iter < 0 || iter >= static_cast<int>(st.leaves.size())) return 0;
  return st.iters[st.leaves[iter]].extent;
}

}  // namespace

std::vector<int64_t> refit_split_lengths(const std::vector<int64_t>& lengths, int64_t extent, bool inner_to_outer) {
  std::vector<int64_t> out(lengths.size(), 1);
  int64_t room = std::max<int64_t>(extent, 1);
  // An inner-to-outer split lists its lengths outer to inner after the
  // remaining outer loop: the last is the innermost, fitted first.
  for (size_t k = 0; k < lengths.size(); ++k) {
    const size_t i = inner_to_outer ? lengths.size() - 1 - k : k;
    const int64_t len = fit_length(std::max<int64_t>(lengths[i], 1), room);
    out[i] = len;
    room /= len;  // what is left for the others (rounded down: the product fits)
  }
  return out;
}

State refit_program(std::shared_ptr<const ComputeDAG> dag, const std::vector<StepPtr>& steps) {
  State s = State::initial(std::move(dag));
  for (size_t i = 0; i < steps.size(); ++i) {
    StepPtr step = steps[i];
    if (const auto* sp = dynamic_cast<const SplitStep*>(step.get())) {
      const int64_t extent = leaf_extent(s, sp->stage, sp->iter);
      if (extent > 0 && extent != sp->extent) {
        auto fitted = std::make_shared<SplitStep>(*sp);
        fitted->extent = extent;
        fitted->lengths = refit_split_lengths(sp->lengths, extent, sp->inner_to_outer);
        step = fitted;
      }
    }
    try {
      s = s.apply(step);
    } catch (const LoomError& e) {
      throw LoomError("step " + std::to_string(i) + " (" + step->tag() + "): " + e.what());
    }
  }
  return s;
}

double extent_distance(const ComputeDAG& a, const ComputeDAG& b) {
  constexpr double kApart = std::numeric_limits<double>::infinity();
  if (a.ops().size() != b.ops().size()) return kApart;
  double d = 0;
  int terms = 0;
  for (size_t i = 0; i < a.ops().size(); ++i) {
    const OpNode& x = *a.ops()[i];
    const OpNode& y = *b.ops()[i];
    if (x.is_placeholder != y.is_placeholder || x.shape.size() != y.shape.size() ||
        x.reduce_axes.size() != y.reduce_axes.size())
      return kApart;
    auto add = [&](int64_t p, int64_t q) {
      d += std::fabs(std::log2(static_cast<double>(std::max<int64_t>(p, 1)) / std::max<int64_t>(q, 1)));
      ++terms;
    };
    for (size_t k = 0; k < x.shape.size(); ++k) add(x.shape[k], y.shape[k]);
    for (size_t k = 0; k < x.reduce_axes.size(); ++k) add(x.reduce_axes[k]->extent, y.reduce_axes[k]->extent);
  }
  return terms ? d / terms : 0;
}

ScheduleLibrary::ScheduleLibrary(const std::vector<MeasureRecord>& records, int per_task) {
  for (const auto& best : best_records_per_task(records, per_task)) {
    Entry e{best.front()->task, {}, {}, {}, {}};
    for (const MeasureRecord* r : best) {
      try {
        e.programs.push_back(steps_from_json(r->steps));
      } catch (const LoomError&) {
        // A step this build no longer reads: not a source.
      }
    }
    if (e.programs.empty() || !e.task.dag) continue;
    e.key = e.task.key();
    e.group = e.task.similarity_group();
    e.target = e.task.target.to_string();
    by_key_[e.key] = entries_.size();
    entries_.push_back(std::move(e));
  }
}

std::optional<State> ScheduleLibrary::same_task(const Task& task) const {
  std::vector<State> all = same_task_programs(task);
  if (all.empty()) return std::nullopt;
  return all.front();
}

std::vector<State> ScheduleLibrary::same_task_programs(const Task& task) const {
  std::vector<State> out;
  auto it = by_key_.find(task.key());
  if (it == by_key_.end()) return out;
  for (const auto& steps : entries_[it->second].programs) {
    try {
      out.push_back(State::replay(task.dag, steps));
    } catch (const LoomError&) {
      // Steps this build lowers otherwise: not offered.
    }
  }
  return out;
}

std::vector<State> ScheduleLibrary::similar(const Task& task, int nearest, double max_distance) const {
  const std::string key = task.key(), group = task.similarity_group();
  const std::string target = task.target.to_string();
  // A source timed with another thread count replays (its parallel loops
  // stay), but one of the same target is nearer; so is one of the same
  // operators (a conv with ReLU6 serves a conv with ReLU: the same stages,
  // another element-wise epilogue).
  // (In extent_distance's units: 0.1 is a tenth of the loops twice as
  // long.)
  constexpr double kOtherTarget = 0.05, kOtherOperators = 0.1;
  std::vector<std::pair<double, size_t>> near;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    const Task& other = e.task;
    if (e.key == key || other.workload != task.workload || other.target.is_gpu() != task.target.is_gpu())
      continue;
    double d = extent_distance(*task.dag, *other.dag);
    if (!(d <= max_distance)) continue;
    if (e.target != target) d += kOtherTarget;
    if (e.group != group) d += kOtherOperators;
    near.push_back({d, i});
  }
  std::sort(near.begin(), near.end());
  std::vector<State> out;
  for (size_t n = 0; n < near.size() && static_cast<int>(n) < nearest; ++n)
    for (const auto& steps : entries_[near[n].second].programs) {
      try {
        out.push_back(refit_program(task.dag, steps));
      } catch (const LoomError&) {
        // Another loop structure after all (e.g. a sketch rule that fired
        // only for the source's extents).
      }
    }
  return out;
}

std::vector<State> by_score(std::vector<State> candidates, const ScoreFn& score) {
  if (candidates.empty()) return candidates;
  const std::vector<float> scores = score(candidates);
  auto key = [&](size_t i) { return std::isfinite(scores[i]) ? scores[i] : -std::numeric_limits<float>::infinity(); };
  std::vector<size_t> order(candidates.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) > key(b); });
  std::vector<State> out;
  for (size_t i : order) out.push_back(std::move(candidates[i]));
  return out;
}

std::optional<State> best_scored(const Task& task, CostModel& model, const std::vector<State>& candidates) {
  if (candidates.empty()) return std::nullopt;
  return by_score(candidates, [&](const std::vector<State>& s) { return model.predict(task, s); }).front();
}

std::vector<MeasureRecord> this_machines_records(const std::vector<std::string>& paths,
                                                 std::vector<std::string>* notes) {
  const MachineKind& here = this_machine();
  std::vector<MeasureRecord> kept;
  for (const std::string& path : paths) {
    std::map<std::string, int> others;
    for (auto& r : load_records(path)) {
      const MachineKind& m = r.result.machine;
      if (m.cpu == here.cpu && m.isa == here.isa) kept.push_back(std::move(r));
      else ++others[m.known() ? m.cpu + " (" + m.isa + ")" : "an unnamed machine"];
    }
    if (notes)
      for (const auto& [machine, n] : others)
        notes->push_back(path + ": " + std::to_string(n) + " records measured on " + machine + ", not on this " +
                         here.cpu + " (" + here.isa + "): left out");
  }
  return kept;
}

}  // namespace loom
