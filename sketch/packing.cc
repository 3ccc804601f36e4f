#include "sketch/packing.h"

#include <utility>

namespace loom {

std::vector<int> order_with_last(int ndim, int last) {
  std::vector<int> order;
  for (int d = 0; d < ndim; ++d)
    if (d != last) order.push_back(d);
  order.push_back(last);
  return order;
}

State pack_inputs(const State& state, int* stage, const std::vector<sketch_analysis::PackableInput>& inputs) {
  State s = state;
  const std::string reader = s.stage(*stage).name();
  // Each cache_read inserts a stage right after its tensor (before the
  // reader): re-find the stages by name after each.
  std::vector<std::pair<std::string, int>> by_name;
  for (const auto& in : inputs) by_name.push_back({s.stage(in.stage).name(), in.dim});
  for (const auto& [input, dim] : by_name) {
    const int t = s.stage_index(input);
    s = s.cache_read(t, BufferScope::kLocal, {s.stage_index(reader)});
    const int copy = t + 1;
    const int ndim = static_cast<int>(s.stage(copy).op->axes.size());
    if (dim == ndim - 1) continue;
    const std::vector<int> order = order_with_last(ndim, dim);
    s = s.storage_layout(copy, order).reorder(copy, order);
  }
  *stage = s.stage_index(reader);
  return s;
}

}  // namespace loom
