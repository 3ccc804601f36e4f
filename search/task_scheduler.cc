#include "search/task_scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace loom {

double TaskScheduler::gradient(const std::vector<TaskProgress>& tasks, size_t i) const {
  const TaskProgress& t = tasks[i];
  if (!std::isfinite(t.best_cost) || t.trials == 0) return -std::numeric_limits<double>::infinity();
  const auto& h = t.best_history;
  double per_round = std::max(1.0, static_cast<double>(t.trials) / std::max<size_t>(h.size(), 1));
  double backward = 0;
  size_t w = static_cast<size_t>(settings_.scheduler_window);
  const bool window_full = h.size() > w && std::isfinite(h[h.size() - 1 - w]);
  if (window_full) backward = (h.back() - h[h.size() - 1 - w]) / (w * per_round);
  double forward = -t.best_cost / t.trials;
  // Ansor's optimistic bound: a task far below the best throughput of its
  // similar tasks could gain that much. Only while it still improves: a
  // task whose last `window` rounds found nothing better (a 7x7 stem over
  // 3 channels held to the 3x3 convs' GFLOP/s) would otherwise take every
  // round from then on.
  const bool stalled = window_full && backward == 0;
  double max_similar = 0;  // best throughput among similar tasks
  for (const auto& o : tasks)
    if (o.group == t.group && std::isfinite(o.best_cost) && o.best_cost > 0)
      max_similar = std::max(max_similar, o.flops / o.best_cost);
  if (max_similar > 0 && !stalled)
    forward = std::min(forward, settings_.scheduler_beta * t.flops / max_similar - t.best_cost);
  double alpha = settings_.scheduler_alpha;
  return t.weight * (alpha * backward + (1 - alpha) * forward);
}

int TaskScheduler::next(const std::vector<TaskProgress>& tasks, std::mt19937_64& rng) const {
  std::vector<int> open;
  for (size_t i = 0; i < tasks.size(); ++i)
    if (!tasks[i].finished) open.push_back(static_cast<int>(i));
  if (open.empty()) return -1;
  // Warm-up: every task once, in order.
  for (int i : open)
    if (tasks[i].best_history.empty()) return i;
  if (settings_.task_scheduler == TaskSchedulerKind::kRoundRobin) {
    int best = open[0];
    for (int i : open)
      if (tasks[i].best_history.size() < tasks[best].best_history.size()) best = i;
    return best;
  }
  std::uniform_real_distribution<double> u(0, 1);
  if (u(rng) < settings_.scheduler_eps) return open[rng() % open.size()];
  int best = open[0];
  double best_g = std::numeric_limits<double>::infinity();
  for (int i : open) {
    double g = gradient(tasks, i);
    if (g < best_g) best_g = g, best = i;
  }
  return best;
}

}  // namespace loom
