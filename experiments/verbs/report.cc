// loom report CONFIG.json: Loom's best vs the baselines for every task of a
// config, re-measured interleaved in this run; writes CSV + Markdown and the
// tuning-curve PNG into the report folder. For a network config also the
// whole network against PyTorch, end to end (experiments/network_report.h).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "experiments/network_report.h"
#include "graph/onnx_import.h"
#include "graph/tasks.h"
#include "network/untimed_schedules.h"
#include "experiments/report.h"
#include "experiments/verbs.h"
#include "ir/error.h"

namespace loom::cli {

namespace {

// Renders a report CSV to PNG with one of the scripts/ plotters.
bool plot(const ExperimentConfig& cfg, const std::string& script_name, const std::string& png_name) {
  const std::string script = std::string(LOOM_SOURCE_DIR) + "/scripts/" + script_name;
  const std::string cmd =
      "/usr/bin/python3 " + script + " " + cfg.report_dir + " " + cfg.report_dir + "/" + png_name + " > /dev/null 2>&1";
  return std::filesystem::exists(script) && std::system(cmd.c_str()) == 0;
}

}  // namespace

int report_verb(const Args& args) {
  std::string file;
  ReportOptions opts;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--rounds") opts.rounds = int_flag(args, i, "--rounds");
    else if (args[i] == "--quiet-wait-ms") opts.quiet_wait_ms = int_flag(args, i, "--quiet-wait-ms", 0);
    else if (args[i] == "--no-remeasure") opts.remeasure = false;
    else if (args[i] == "--min-repeat-ms") opts.min_repeat_ms = int_flag(args, i, "--min-repeat-ms");
    else if (!args[i].empty() && args[i][0] == '-') throw LoomError("unknown option " + args[i]);
    else if (file.empty()) file = args[i];
    else throw LoomError("report takes one CONFIG.json");
  }
  if (file.empty()) throw LoomError("usage: loom report CONFIG.json [--rounds N] [--min-repeat-ms MS] [--quiet-wait-ms MS] [--no-remeasure]");
  ExperimentConfig cfg = ExperimentConfig::load(file);
  auto reports = build_report(cfg, opts);
  std::printf("%-52s %10s %10s %8s %7s %9s  %s\n", "task", "Loom GF/s", "base GF/s", "ratio", "trials",
              "tuning s", "baseline");
  int unsteady = 0;
  for (const auto& r : reports) {
    const BaselineResult* b = r.best_baseline();
    std::printf("%-52s %10.2f %10.2f %8.3f %7d %9.0f  %s\n", r.task.substr(0, 52).c_str(), r.loom_gflops(),
                b ? b->gflops(r.flops) : 0.0, r.ratio(), r.trials, r.tuning_s,
                baseline_name(b).c_str());
    if (!r.loom_error.empty()) std::printf("    loom: %s\n", r.loom_error.c_str());
    if (const std::string why = r.unsteady(); !why.empty()) {
      std::printf("    unsteady: %s\n", why.c_str());
      ++unsteady;
    }
    // Every variant: the fastest may have prepacked an input outside its
    // timing; the ratio against the fastest that read the inputs as given
    // (as Loom's programs do) is the like-for-like one.
    for (const auto& x : r.baselines)
      if (!x.supported) std::printf("    %s: unsupported: %s\n", x.library.c_str(), x.reason.c_str());
      else if (!x.check.empty()) std::printf("    %s (%s): WRONG RESULT: %s\n", x.library.c_str(), x.variant.c_str(), x.check.c_str());
      else
        std::printf("    %s (%s): %.2f GFLOP/s, Loom / it %.3f%s\n", x.library.c_str(), x.variant.c_str(),
                    x.gflops(r.flops), r.ratio_to(&x),
                    x.inputs_as_given ? "  (inputs as given)" : "  (an input prepacked outside the timing)");
  }
  if (unsteady)
    std::printf("warning: %d of %zu tasks ran unsteadily (above): the load changed under them, or was heavier than "
                "during their tuning, so their ratios may not hold on a quiet machine; run the report again when "
                "it is quieter, or with more --rounds\n",
                unsteady, reports.size());
  write_report(cfg, reports);
  const bool plotted = plot(cfg, "plot_tuning.py", "tuning.png");
  std::printf("report: %s/report.md, report.csv, curves.csv%s\n", cfg.report_dir.c_str(),
              plotted ? ", tuning.png" : " (plot skipped: python3-matplotlib missing?)");
  if (cfg.network.empty()) return kExitOk;

  // A network config: the whole network against PyTorch and ONNX Runtime, end to end.
  // Tasks without a record run what `network run` would choose for them
  // with nothing timed, not default schedules.
  std::map<std::string, nlohmann::json> untimed;
  if (std::any_of(reports.begin(), reports.end(), [](const TaskReport& t) { return t.loom_s <= 0; })) {
    graph::UntimedScheduleOptions uo;
    uo.cost_model = untimed_cost_model(cfg);
    uo.databases = resolve_schedule_databases(cfg.schedule_databases);
    uo.log = cfg.log_path;
    uo.threads = cfg.target.threads;
    const graph::UntimedSchedules u =
        graph::choose_untimed_schedules(graph::extract_tasks(graph::load_graph(cfg.network, cfg.input_shapes)), uo);
    for (const std::string& note : u.notes) std::printf("note: %s\n", note.c_str());
    std::printf("\n%zu tasks without a record: schedules chosen in %.1f s, none timed (%d from the database as "
                "measured, %d re-fitted from similar tasks, %d predicted by the cost model)\n",
                u.schedules.size(), u.seconds, u.same_task, u.refitted, u.predicted);
    untimed = u.schedules;
  }
  NetworkReport net = build_network_report(cfg, reports, opts, untimed);
  const NetworkComparison& e = net.end_to_end;
  std::printf("\n%s, %d thread%s: Loom %.3f ms", cfg.network.c_str(), net.threads, net.threads == 1 ? "" : "s",
              e.loom_median_s() * 1e3);
  if (e.baselines.empty()) std::printf(" (no TorchScript file next to the model and no ONNX Runtime: no baseline)");
  std::printf("\nestimated from the tasks: %.3f ms%s; %d trials, tuning time %.0f s\n", net.estimated_s * 1e3,
              net.unmeasured_tasks ? (" (" + std::to_string(net.unmeasured_tasks) + " tasks unmeasured)").c_str() : "",
              net.trials, net.tuning_s);
  std::printf("%s", comparison_lines(e, 1e-3).c_str());
  write_network_report(cfg, net, reports);
  const bool net_plotted = plot(cfg, "plot_network.py", "network.png");
  std::printf("report: %s/network.md, network.csv, network_curve.csv%s\n", cfg.report_dir.c_str(),
              net_plotted ? ", network.png" : " (plot skipped: python3-matplotlib missing?)");
  return e.outputs_match() ? kExitOk : kExitFailure;
}

}  // namespace loom::cli
