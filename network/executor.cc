#include "network/executor.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "codegen/llvm/llvm_jit.h"
#include "network/arena.h"
#include "network/default_schedule.h"
#include "ir/error.h"
#include "ir/lower.h"
#include "measure/measurer.h"
#include "measure/records.h"
#include "measure/task.h"

namespace loom::graph {

namespace {

// Where a value lives while the network runs.
struct Location {
  enum Kind { kInput, kConstant, kBuffer } kind = kBuffer;
  int buffer = -1;  // kBuffer
};

}  // namespace

struct NetworkExecutor::Impl {
  struct Kernel {
    std::unique_ptr<CompiledKernel> fn;
    std::vector<int> arg_inputs;  // per argument: the group input it is, or -1 for the output
    std::vector<std::shared_ptr<const BlockedLayout>> arg_layouts;  // per argument: set if pre-transformed
  };
  std::vector<Kernel> kernels;  // per task
  // The memory plan's buffers, each a part of one arena; every constant a
  // kernel reads, in the order the groups run (each one read as it is once,
  // and per group and argument the blocked copy of a pre-transformed weight,
  // made once here, outside every timed run).
  FloatArena activations, weights;
  // Where a kernel argument or a graph output lives, resolved once: its
  // data, or (data nullptr) the graph input it is, set at each run; read
  // from element `offset` on.
  struct Ref {
    float* data = nullptr;
    int graph_input = -1;
    int64_t offset = 0;
  };
  std::vector<std::vector<Ref>> group_args;  // per group, its kernel's arguments
  std::vector<Ref> outputs;                  // per graph output
};

std::vector<int> argument_inputs(const LoweredFunc& f, const ComputeDAG& dag) {
  const auto& inputs = dag.input_names();
  std::vector<int> out;
  for (const auto& arg : f.args) {
    auto it = std::find(inputs.begin(), inputs.end(), arg.layout ? arg.layout->source : arg.name);
    out.push_back(it == inputs.end() ? -1 : static_cast<int>(it - inputs.begin()));
  }
  return out;
}

void check_network_fits_memory(const Graph& g) {
  const double limit = physical_memory_bytes();
  if (limit <= 0) return;
  // At least every graph input and output, and the largest value while it
  // is written (the memory plan reuses the rest): a lower bound, enough to
  // refuse a network that cannot run before anything is allocated.
  double io = 0, largest = 0;
  std::string largest_name;
  auto bytes_of = [&](const std::string& v) { return 4.0 * static_cast<double>(num_elements(g.shape(v))); };
  for (const auto& in : g.inputs) io += bytes_of(in.name);
  for (const auto& out : g.outputs) io += bytes_of(out);
  auto consider = [&](const std::string& v) {
    if (bytes_of(v) > largest) largest = bytes_of(v), largest_name = v;
  };
  for (const auto& in : g.inputs) consider(in.name);
  for (const auto& n : g.nodes) consider(n.output);
  const double need = std::max(io, largest);
  if (need <= limit) return;
  throw LoomError("value '" + largest_name + "' [" + shape_string(g.shape(largest_name)) + "] is " +
                  bytes_text(largest) + "; running the network needs at least " + bytes_text(need) +
                  ", over the machine's physical memory of " + bytes_text(limit));
}

NetworkExecutor::NetworkExecutor(const Graph& g, const ExecutorOptions& opts)
    : impl_(std::make_unique<Impl>()), tasks_((check_network_fits_memory(g), extract_tasks(g))) {
  std::vector<MeasureRecord> records;
  if (!opts.log.empty()) records = load_records(opts.log);
  Target target;
  target.threads = opts.threads;
  const int width = opts.vector_width > 0 ? opts.vector_width : target.vector_width();

  for (size_t t = 0; t < tasks_.tasks.size(); ++t) {
    const NetworkTask& nt = tasks_.tasks[t];
    const std::string what = "task " + std::to_string(t) + " (" + subgraph_summary(nt.subgraph) + ")";
    KernelSummary summary;
    summary.task = static_cast<int>(t);
    Impl::Kernel k;
    try {
      Task task = Task::make(nt.workload(), nt.subgraph, target);
      State state;
      ProgramCost best = records.empty() ? ProgramCost{} : best_program(records, task.key());
      auto given = opts.schedules.find(nt.subgraph.dump());
      const MeasureRecord* untimed = best.record ? nullptr : latest_untimed(records, task.key());
      if (best.record) {
        state = State::from_json(task.dag, best.record->steps);
        summary.tuned = true;
        summary.measured_s = best.cost_s;
      } else if (untimed) {
        state = State::from_json(task.dag, untimed->steps);
        summary.untimed_in_log = true;
      } else if (given != opts.schedules.end()) {
        state = State::from_json(task.dag, given->second);
        summary.given = true;
      } else {
        state = default_schedule(task.dag, opts.threads, width);
      }
      LoweredFunc f = lower(state);
      LLVMCompileOptions copts;
      copts.num_threads = opts.threads;
      copts.vector_width = width;
      k.fn = compile_llvm(f, copts);
      summary.compile_s = k.fn->compile_seconds();
      k.arg_inputs = argument_inputs(f, *task.dag);
      for (const auto& arg : f.args) k.arg_layouts.push_back(arg.layout);
    } catch (const LoomError& e) {
      throw LoomError(what + ": " + e.what());
    }
    impl_->kernels.push_back(std::move(k));
    summaries_.push_back(summary);
  }

  // Weights in the layouts their kernels chose, transformed once, and the
  // constants read as they are, laid out in the order the groups read them.
  // A constant several groups of one task read (a recurrent layer's weight
  // at every step) has one blocked copy, so that it stays in the caches.
  const Graph& net = tasks_.graph;
  ArenaLayout weight_layout;
  std::map<std::string, size_t> constant_offset;
  std::map<std::pair<std::string, const BlockedLayout*>, int64_t> blocked_offset;
  std::vector<std::vector<int64_t>> pretransformed_offset(tasks_.groups.size());  // -1 where not
  for (size_t gi = 0; gi < tasks_.groups.size(); ++gi) {
    const Impl::Kernel& k = impl_->kernels[tasks_.task_of_group[gi]];
    pretransformed_offset[gi].assign(k.arg_inputs.size(), -1);
    for (size_t a = 0; a < k.arg_inputs.size(); ++a) {
      if (k.arg_inputs[a] < 0) continue;
      const std::string& v = tasks_.group_inputs[gi][k.arg_inputs[a]].value;
      if (k.arg_layouts[a]) {
        if (!net.is_constant(v)) throw LoomError("group " + std::to_string(gi) + ": " + v + " is pre-transformed but not a constant");
        auto [it, added] = blocked_offset.try_emplace({v, k.arg_layouts[a].get()}, 0);
        if (added) {
          const size_t n = static_cast<size_t>(k.arg_layouts[a]->size());
          it->second = static_cast<int64_t>(weight_layout.add(n));
          pretransformed_bytes_ += static_cast<int64_t>(n * sizeof(float));
        }
        pretransformed_offset[gi][a] = it->second;
      } else if (net.is_constant(v) && !constant_offset.count(v)) {
        constant_offset[v] = weight_layout.add(net.constants.at(v).data.size());
      }
    }
  }
  impl_->weights = FloatArena(weight_layout.total());
  for (const auto& [v, offset] : constant_offset) {
    const std::vector<float>& data = net.constants.at(v).data;
    std::copy(data.begin(), data.end(), impl_->weights.data() + offset);
  }
  for (const auto& [key, offset] : blocked_offset)
    key.second->apply(net.constants.at(key.first).data.data(), impl_->weights.data() + offset);

  // The memory plan: a group's output takes the smallest free buffer that
  // holds it; a buffer is free again once the last group reading its value
  // has run. Graph outputs keep buffers of their own.
  std::map<std::string, Location> where;
  for (const auto& in : net.inputs) where[in.name] = {Location::kInput, -1};
  for (const auto& [name, c] : net.constants) where[name] = {Location::kConstant, -1};
  std::map<std::string, size_t> last_use;
  for (size_t gi = 0; gi < tasks_.groups.size(); ++gi)
    for (const auto& in : tasks_.group_inputs[gi]) last_use[in.value] = gi;
  std::vector<int> free_buffers, group_buffer;
  std::vector<size_t> sizes;  // per buffer, in floats
  for (size_t gi = 0; gi < tasks_.groups.size(); ++gi) {
    const std::string& out = tasks_.groups[gi].output(net);
    const size_t n = static_cast<size_t>(num_elements(net.shape(out)));
    unplanned_bytes_ += static_cast<int64_t>(n * sizeof(float));
    const bool graph_output = std::count(net.outputs.begin(), net.outputs.end(), out) > 0;
    int buf = -1;
    if (!graph_output) {
      for (int b : free_buffers)
        if (sizes[b] >= n && (buf < 0 || sizes[b] < sizes[buf])) buf = b;
    }
    if (buf >= 0) {
      free_buffers.erase(std::find(free_buffers.begin(), free_buffers.end(), buf));
    } else {
      buf = static_cast<int>(sizes.size());
      sizes.push_back(n);
      if (!graph_output) planned_bytes_ += static_cast<int64_t>(n * sizeof(float));
    }
    group_buffer.push_back(buf);
    where[out] = {Location::kBuffer, buf};
    std::set<std::string> read;  // a value read at several offsets is freed once
    for (const auto& in : tasks_.group_inputs[gi]) {
      const std::string& v = in.value;
      const Location& loc = where.at(v);
      const bool is_output = std::count(net.outputs.begin(), net.outputs.end(), v) > 0;
      if (loc.kind == Location::kBuffer && last_use.at(v) == gi && !is_output && read.insert(v).second)
        free_buffers.push_back(loc.buffer);
    }
  }
  ArenaLayout buffer_layout;
  std::vector<size_t> buffer_offset;
  for (size_t n : sizes) buffer_offset.push_back(buffer_layout.add(n));
  impl_->activations = FloatArena(buffer_layout.total());

  // Every kernel argument and graph output resolved to its data.
  auto resolve = [&](const GroupInput& in) {
    Impl::Ref r;
    r.offset = in.offset;
    const Location& loc = where.at(in.value);
    if (loc.kind == Location::kBuffer) {
      r.data = impl_->activations.data() + buffer_offset[loc.buffer];
    } else if (loc.kind == Location::kConstant) {
      auto it = constant_offset.find(in.value);
      r.data = it != constant_offset.end() ? impl_->weights.data() + it->second
                                           : const_cast<float*>(net.constants.at(in.value).data.data());
    } else {
      for (size_t i = 0; i < net.inputs.size(); ++i)
        if (net.inputs[i].name == in.value) r.graph_input = static_cast<int>(i);
    }
    return r;
  };
  for (size_t gi = 0; gi < tasks_.groups.size(); ++gi) {
    const Impl::Kernel& k = impl_->kernels[tasks_.task_of_group[gi]];
    std::vector<Impl::Ref> args;
    for (size_t a = 0; a < k.arg_inputs.size(); ++a) {
      const int in = k.arg_inputs[a];
      if (pretransformed_offset[gi][a] >= 0) args.push_back({impl_->weights.data() + pretransformed_offset[gi][a], -1});
      else if (in < 0) args.push_back({impl_->activations.data() + buffer_offset[group_buffer[gi]], -1});
      else args.push_back(resolve(tasks_.group_inputs[gi][in]));
    }
    impl_->group_args.push_back(std::move(args));
  }
  for (const auto& o : net.outputs) impl_->outputs.push_back(resolve({o, 0}));
}

NetworkExecutor::~NetworkExecutor() = default;

Values NetworkExecutor::run(const Values& inputs, std::vector<double>* group_seconds,
                            std::vector<double>* rerun_seconds) {
  const Graph& net = tasks_.graph;
  std::vector<float*> input_ptr;
  // Kernels never write their inputs.
  for (const auto& in : net.inputs) input_ptr.push_back(const_cast<float*>(graph_input_value(in, inputs).data()));
  auto data = [&](const Impl::Ref& r) { return (r.data ? r.data : input_ptr[r.graph_input]) + r.offset; };
  std::vector<float*> args;
  for (size_t gi = 0; gi < tasks_.groups.size(); ++gi) {
    const Impl::Kernel& k = impl_->kernels[tasks_.task_of_group[gi]];
    args.clear();
    for (const Impl::Ref& r : impl_->group_args[gi]) args.push_back(data(r));
    if (!group_seconds && !rerun_seconds) {
      k.fn->run(args.data());
      continue;
    }
    auto timed_run = [&] {
      const auto t0 = std::chrono::steady_clock::now();
      k.fn->run(args.data());
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    const double first = timed_run();
    if (group_seconds) {
      group_seconds->resize(tasks_.groups.size());
      (*group_seconds)[gi] += first;
    }
    if (rerun_seconds) {
      rerun_seconds->resize(tasks_.groups.size());
      const double again = timed_run();
      (*rerun_seconds)[gi] += std::min(again, timed_run());
    }
  }
  Values out;
  for (size_t i = 0; i < net.outputs.size(); ++i) {
    const float* p = data(impl_->outputs[i]);
    out[net.outputs[i]].assign(p, p + num_elements(net.shape(net.outputs[i])));
  }
  return out;
}

}  // namespace loom::graph
