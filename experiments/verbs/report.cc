// loom report CONFIG.json: Loom's best vs the baselines for every task of a
// config, re-measured interleaved in this run; writes CSV + Markdown and the
// tuning-curve PNG into the report folder.
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "experiments/report.h"
#include "experiments/verbs.h"
#include "ir/error.h"

namespace loom::cli {

int report_verb(const Args& args) {
  std::string file;
  ReportOptions opts;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--rounds") opts.rounds = int_flag(args, i, "--rounds");
    else if (args[i] == "--no-remeasure") opts.remeasure = false;
    else if (args[i] == "--min-repeat-ms") opts.min_repeat_ms = int_flag(args, i, "--min-repeat-ms");
    else if (!args[i].empty() && args[i][0] == '-') throw LoomError("unknown option " + args[i]);
    else if (file.empty()) file = args[i];
    else throw LoomError("report takes one CONFIG.json");
  }
  if (file.empty()) throw LoomError("usage: loom report CONFIG.json [--rounds N] [--min-repeat-ms MS] [--no-remeasure]");
  ExperimentConfig cfg = ExperimentConfig::load(file);
  auto reports = build_report(cfg, opts);
  std::printf("%-52s %10s %10s %8s %7s %9s  %s\n", "task", "Loom GF/s", "base GF/s", "ratio", "trials",
              "tuning s", "baseline");
  for (const auto& r : reports) {
    const BaselineResult* b = r.best_baseline();
    std::printf("%-52s %10.2f %10.2f %8.3f %7d %9.0f  %s\n", r.task.substr(0, 52).c_str(), r.loom_gflops(),
                b ? b->gflops(r.flops) : 0.0, r.ratio(), r.trials, r.tuning_s,
                baseline_name(b).c_str());
    if (!r.loom_error.empty()) std::printf("    loom: %s\n", r.loom_error.c_str());
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
  write_report(cfg, reports);
  std::string script = std::string(LOOM_SOURCE_DIR) + "/scripts/plot_tuning.py";
  std::string png = cfg.report_dir + "/tuning.png";
  std::string cmd = "/usr/bin/python3 " + script + " " + cfg.report_dir + " " + png + " > /dev/null 2>&1";
  bool plotted = std::filesystem::exists(script) && std::system(cmd.c_str()) == 0;
  std::printf("report: %s/report.md, report.csv, curves.csv%s\n", cfg.report_dir.c_str(),
              plotted ? ", tuning.png" : " (plot skipped: python3-matplotlib missing?)");
  return kExitOk;
}

}  // namespace loom::cli
