// loom export CONFIG.json... [--check [--cc COMPILER]... [--rounds N]]: the
// best schedule of every task of each config into its export folder
// (experiments/export.h), and for a network config the whole network as C
// (experiments/network_export.h);
// --check builds, checks and times every artifact against the tuner's kernel
// (experiments/export_check.h) and fails when one is wrong or slower.
#include <algorithm>
#include <cstdio>
#include <utility>

#include "codegen/llvm/llvm_jit.h"
#include "experiments/config.h"
#include "experiments/export.h"
#include "experiments/export_check.h"
#include "experiments/network_export.h"
#include "experiments/verbs.h"
#include "ir/error.h"

namespace loom::cli {

namespace {

void print_check(const std::vector<ExportCheckResult>& results, const ExportCheckOptions& opts,
                 const std::string& cpu) {
  std::printf("\nexport check on %s: %d interleaved rounds, medians; speed = the tuner's kernel's time "
              "(re-measured now) / the build's time, the median of the rounds' ratios\n",
              cpu.c_str(), opts.rounds);
  std::printf("%-44s %-22s %10s %7s %10s  %s\n", "task (threads)", "build", "ms", "speed", "vs record", "check");
  for (const ExportCheckResult& r : results) {
    std::string threads = " (" + std::to_string(r.threads) + ")";
    std::string task = r.task.size() + threads.size() > 44 ? r.task.substr(0, 41 - threads.size()) + "..." : r.task;
    task += threads;
    if (!r.jit_problem.empty()) {
      std::printf("%-44s %-22s %10s %7s %10s  %s\n", task.c_str(), "tuner's kernel", "-", "-", "-",
                  r.jit_problem.c_str());
    } else {
      std::printf("%-44s %-22s %10.4f %7.3f %9.3fx  ok\n", task.c_str(), "tuner's kernel", r.jit_s * 1e3, 1.0,
                  r.record_s / r.jit_s);
    }
    for (const ExportCheckRow& row : r.builds) {
      if (!row.problem.empty()) {
        std::printf("%-44s %-22s %10s %7s %10s  %s\n", "", row.build.c_str(), "-", "-", "-", row.problem.c_str());
        continue;
      }
      std::printf("%-44s %-22s %10.4f %7.3f %9.3fx  ok\n", "", row.build.c_str(), row.median_s * 1e3, row.speed,
                  r.record_s / row.median_s);
    }
  }
  for (const ExportCheckResult& r : results) {
    if (!r.jit_problem.empty()) std::printf("!! %s: the tuner's kernel: %s\n", r.task.c_str(), r.jit_problem.c_str());
    for (const ExportCheckRow& row : r.builds) {
      if (!export_check_failed(r, row, opts.max_slowdown)) continue;
      if (!row.problem.empty())
        std::printf("!! %s: %s: %s\n", r.task.c_str(), row.build.c_str(), row.problem.c_str());
      else
        std::printf("!! %s: %s runs at %.2fx the tuner's kernel's speed (%.4f vs %.4f ms): slower by more than %.0f%%\n",
                    r.task.c_str(), row.build.c_str(), row.speed, row.median_s * 1e3, r.jit_s * 1e3,
                    (opts.max_slowdown - 1) * 100);
    }
  }
}

}  // namespace

int export_verb(const Args& args) {
  std::vector<std::string> configs;
  bool check = false;
  ExportCheckOptions opts;
  bool compilers_given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--check") {
      check = true;
    } else if (args[i] == "--rounds") {
      opts.rounds = int_flag(args, i, "--rounds");
    } else if (args[i] == "--cc") {
      if (i + 1 >= args.size()) throw LoomError("--cc needs a compiler");
      if (!compilers_given) opts.compilers.clear();
      compilers_given = true;
      opts.compilers.push_back(args[++i]);
    } else if (!args[i].empty() && args[i][0] == '-') {
      throw LoomError("unknown option " + args[i]);
    } else {
      configs.push_back(args[i]);
    }
  }
  if (configs.empty())
    throw LoomError("usage: loom export CONFIG.json... [--check [--cc COMPILER]... [--rounds N]]");
  // Every config first (a bad one stops before anything is written).
  std::vector<ExperimentConfig> cfgs;
  for (const auto& c : configs) cfgs.push_back(ExperimentConfig::load(c));
  std::vector<std::vector<ExportedFiles>> exported;
  std::vector<std::pair<const ExperimentConfig*, NetworkExport>> networks;
  for (const ExperimentConfig& cfg : cfgs) {
    auto records = load_records(cfg.log_path);
    std::vector<Task> tasks;
    for (const auto& t : cfg.tasks) tasks.push_back(t.task);
    auto files = export_best(tasks, records, cfg.export_dir);
    for (const auto& f : files) {
      std::printf("%s\n    %s\n    %s\n", f.task.c_str(), f.header_path.c_str(), f.c_path.c_str());
      if (!f.library_path.empty()) std::printf("    %s\n    %s\n", f.library_path.c_str(), f.object_path.c_str());
      std::printf("    %s\n    %s\n", f.record_path.c_str(), f.loop_nest_path.c_str());
    }
    if (files.size() < tasks.size())
      std::printf("%zu task(s) have no valid record in %s\n", tasks.size() - files.size(), cfg.log_path.c_str());
    exported.push_back(files);
    if (!cfg.network.empty()) {
      NetworkExport net = export_network(cfg, records);
      networks.push_back({&cfg, net});
      std::printf("the whole network: %s\n    %s\n    %s (%zu kernel sources; %d task(s) on an untimed schedule, %d "
                  "on a default schedule)\n",
                  net.header_path.c_str(), net.c_path.c_str(), net.weights_path.c_str(), net.kernel_sources.size(),
                  net.untimed_schedules, net.default_schedules);
    }
  }
  if (!check) return kExitOk;
  std::fflush(stdout);  // the list before the check's progress lines

  // One run: every config's tasks checked, one table.
  std::vector<ExportCheckResult> results;
  for (size_t k = 0; k < cfgs.size(); ++k) {
    opts.measure = cfgs[k].measure;
    auto r = check_exports(exported[k], cfgs[k].export_dir, opts);
    results.insert(results.end(), r.begin(), r.end());
  }
  std::string cpu = llvm_host_cpu_description();
  cpu = cpu.substr(0, cpu.find(' '));
  for (const auto& r : results)
    for (const auto& files : exported)
      for (const auto& f : files)
        if (f.stem == r.stem) note_check_in_c_source(f, r, cpu);
  print_check(results, opts, cpu);
  bool networks_ok = true;
  for (const auto& [cfg, net] : networks) {
    for (const std::string& cc : opts.compilers) {
      NetworkExportCheck nc = check_network_export(*cfg, net, cc, std::max(opts.rounds, 1));
      if (!nc.problem.empty()) {
        std::printf("!! %s: the network's C (%s): %s\n", cfg->network.c_str(), cc.c_str(), nc.problem.c_str());
        networks_ok = false;
        continue;
      }
      std::printf("%s: the network's C (%s) matches the executor (max |error| %.3g); %.3f ms vs the executor's %.3f ms "
                  "(medians of %d runs each, one after the other)\n",
                  cfg->network.c_str(), cc.c_str(), nc.max_abs_error, nc.c_s * 1e3, nc.executor_s * 1e3,
                  std::max(opts.rounds, 1));
    }
  }
  if (!networks_ok) return kExitFailure;
  for (const auto& r : results) {
    if (!r.jit_problem.empty()) return kExitFailure;
    for (const auto& row : r.builds)
      if (export_check_failed(r, row, opts.max_slowdown)) return kExitFailure;
  }
  return kExitOk;
}

}  // namespace loom::cli
