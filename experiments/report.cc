#include "experiments/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include "graph/tasks.h"
#include "ir/error.h"
#include "ir/reference.h"
#include "measure/records.h"
#include "measure/timing.h"

namespace loom {

namespace {

const BaselineResult* fastest(const std::vector<BaselineResult>& baselines, bool as_given_only) {
  const BaselineResult* best = nullptr;
  for (const auto& b : baselines)
    if (b.supported && b.check.empty() && b.median_s > 0 && (!as_given_only || b.inputs_as_given) &&
        (!best || b.median_s < best->median_s))
      best = &b;
  return best;
}

std::string ratio_text(double ratio) {
  char buf[32];
  if (ratio <= 0) return "n/a";
  std::snprintf(buf, sizeof buf, "%.2f", ratio);
  return buf;
}

}  // namespace

std::string baseline_name(const BaselineResult* b) {
  return b ? b->library + " (" + b->variant + ")" : "none";
}

const BaselineResult* TaskReport::best_baseline() const { return fastest(baselines, false); }
const BaselineResult* TaskReport::best_baseline_as_given() const { return fastest(baselines, true); }
double TaskReport::ratio() const { return ratio_to(best_baseline()); }
double TaskReport::ratio_as_given() const { return ratio_to(best_baseline_as_given()); }

std::vector<double> TaskReport::paired_ratios(const BaselineResult* b) const {
  std::vector<double> paired;
  if (!b) return paired;
  const size_t index = static_cast<size_t>(b - baselines.data());
  if (index < baseline_rounds.size() && baseline_rounds[index].size() == loom_rounds.size())
    for (size_t k = 0; k < loom_rounds.size(); ++k)
      if (loom_rounds[k] > 0 && baseline_rounds[index][k] > 0) paired.push_back(baseline_rounds[index][k] / loom_rounds[k]);
  return paired;
}

double TaskReport::ratio_to(const BaselineResult* b) const {
  if (!b || loom_s <= 0) return 0;
  std::vector<double> paired = paired_ratios(b);
  // Without per-round times (a report built elsewhere): the medians' ratio.
  return paired.empty() ? b->median_s / loom_s : median(std::move(paired));
}

void TaskReport::add_round(double loom_round_s, const std::vector<BaselineResult>& round) {
  loom_rounds.push_back(loom_round_s);
  if (baselines.empty()) {
    baselines = round;
    baseline_rounds.assign(round.size(), {});
  }
  for (size_t i = 0; i < round.size() && i < baseline_rounds.size(); ++i)
    baseline_rounds[i].push_back(round[i].supported && round[i].check.empty() ? round[i].median_s : 0.0);
}

void TaskReport::summarize_rounds() {
  auto median_of_positive = [](const std::vector<double>& times, double* out) {
    std::vector<double> v;
    for (double t : times)
      if (t > 0) v.push_back(t);
    if (!v.empty()) *out = median(std::move(v));
  };
  median_of_positive(loom_rounds, &loom_s);
  for (size_t i = 0; i < baselines.size() && i < baseline_rounds.size(); ++i)
    median_of_positive(baseline_rounds[i], &baselines[i].median_s);
}

std::string TaskReport::unsteady() const {
  char buf[320];
  std::string out;
  auto note = [&](const std::string& text) { out += (out.empty() ? "" : "; ") + text; };
  const BaselineResult* seen = nullptr;
  for (const BaselineResult* b : {best_baseline(), best_baseline_as_given()}) {
    if (!b || b == seen) continue;
    seen = b;
    std::vector<double> r = paired_ratios(b);
    if (r.size() < 2) continue;
    std::sort(r.begin(), r.end());
    // The quartiles (linear interpolation; the extremes for 2 or 3 rounds).
    auto quantile = [&](double p) {
      const double x = p * static_cast<double>(r.size() - 1);
      const size_t i = static_cast<size_t>(x);
      return i + 1 < r.size() ? r[i] + (x - static_cast<double>(i)) * (r[i + 1] - r[i]) : r[i];
    };
    const double q1 = r.size() > 3 ? quantile(0.25) : r.front(), q3 = r.size() > 3 ? quantile(0.75) : r.back();
    if (q3 > kMaxRatioSpread * q1) {
      std::snprintf(buf, sizeof buf, "the middle half of its per-round ratios to %s spans %.2f-%.2f",
                    baseline_name(b).c_str(), q1, q3);
      note(buf);
    }
  }
  if (tuned_s > 0 && loom_s > kMaxSlowdownFromTuning * tuned_s) {
    std::snprintf(buf, sizeof buf, "Loom ran at %.2f of its speed in the log (%.3f ms there, %.3f ms now)",
                  tuned_s / loom_s, tuned_s * 1e3, loom_s * 1e3);
    note(buf);
  }
  return out;
}

namespace {

std::vector<BaselineResult> run_baselines(const ExperimentConfig& cfg, const Task& task,
                                          const TimingOptions& timing, const TensorMap& in,
                                          const TensorMap& ref) {
  std::vector<BaselineResult> out;
  for (const auto& lib : cfg.baselines) {
    const OperatorBaseline* b = find_operator_baseline(lib);  // names checked by the config
    std::vector<BaselineResult> r = b ? b->run_for(task, timing, in, ref)
                                      : std::vector<BaselineResult>{unsupported_baseline(lib, "", "unknown library")};
    out.insert(out.end(), r.begin(), r.end());
  }
  return out;
}

}  // namespace

std::vector<TaskReport> build_report(const ExperimentConfig& cfg, const ReportOptions& opts) {
  std::vector<MeasureRecord> records;
  if (std::filesystem::exists(cfg.log_path)) records = load_records(cfg.log_path);
  MeasureOptions mopts = cfg.measure;
  if (opts.min_repeat_ms > 0) mopts.min_repeat_ms = opts.min_repeat_ms;
  mopts.quiet_wait_ms = opts.quiet_wait_ms;
  Measurer measurer(mopts);
  TimingOptions timing;
  timing.repeat = mopts.repeat;
  timing.min_repeat_ms = mopts.min_repeat_ms;
  timing.flush_cache = mopts.flush_cache;  // the baselines as Loom's programs
  timing.quiet_wait_ms = mopts.quiet_wait_ms;
  std::vector<TaskReport> out;
  for (const auto& ct : cfg.tasks) {
    const Task& task = ct.task;
    TaskReport r;
    r.task = task.description();
    r.workload = task.workload;
    r.flops = task.dag->flop_count();
    r.weight = ct.weight;
    const std::string key = task.key();
    double best = INFINITY;
    int64_t t_first = 0, t_last = 0;
    std::unordered_set<std::string> programs;
    for (const auto& rec : records) {
      if (rec.task_key() != key) continue;
      if (!t_first) t_first = rec.result.timestamp;
      t_last = rec.result.timestamp;
      // A program measured again (the tuner's confirmation) is not a trial.
      if (!programs.insert(rec.steps.dump()).second) continue;
      ++r.trials;
      if (rec.result.ok()) best = std::min(best, rec.result.median_s());
      r.curve.emplace_back(r.trials, std::isfinite(best) ? r.flops / best / 1e9 : 0.0);
    }
    r.tuning_s = static_cast<double>(t_last - t_first);
    const ProgramCost best_prog = best_program(records, key);
    const MeasureRecord* best_rec = best_prog.record;
    if (!best_rec) r.loom_error = "no valid record in the log";
    else r.tuned_s = best_prog.cost_s;

    // A network's task: the baselines compute its main operator (the
    // registry workload equivalent to it), on that workload's own data.
    Task baseline_task = task;
    std::string leaves_out;
    const auto eq = task.kind().equivalent_workload(task.params);
    if (eq && eq->workload != task.workload) {
      baseline_task = Task::make(eq->workload, eq->params, task.target);
      leaves_out = eq->leaves_out;
    }
    const bool baselines_run = !cfg.baselines.empty() && eq.has_value();
    TensorMap inputs, ref;
    if (baselines_run) {
      inputs = random_inputs(*baseline_task.dag, 1);
      ref = evaluate_reference(*baseline_task.dag, inputs);
    }
    int rounds = opts.remeasure ? std::max(opts.rounds, 1) : 1;
    for (int round = 0; round < rounds; ++round) {
      double loom_this_round = 0;
      if (best_rec) {
        if (opts.remeasure) {
          auto res = measurer.measure_steps(task, {best_rec->steps});
          if (res[0].ok()) loom_this_round = res[0].median_s();
          else r.loom_error = std::string(error_kind_name(res[0].error)) + ": " + res[0].error_msg;
        } else {
          loom_this_round = best_prog.cost_s;
        }
      }
      std::vector<BaselineResult> results;
      timing.probe_threads = baseline_task.target.threads;
      if (baselines_run) results = run_baselines(cfg, baseline_task, timing, inputs, ref);
      for (auto& b : results)
        if (!leaves_out.empty()) b.variant += "; " + baseline_task.workload + " without the " + leaves_out;
        else if (baseline_task.workload != task.workload) b.variant += "; " + baseline_task.workload;
      r.add_round(loom_this_round, results);
    }
    r.summarize_rounds();
    if (r.loom_s > 0) r.loom_error.clear();
    out.push_back(std::move(r));
  }
  return out;
}

std::string write_report(const ExperimentConfig& cfg, const std::vector<TaskReport>& reports) {
  namespace fs = std::filesystem;
  fs::create_directories(cfg.report_dir);
  std::ostringstream md, csv, curves;
  md << "| task | Loom GFLOP/s | best baseline | baseline GFLOP/s | Loom / baseline "
        "| best baseline, inputs as given | its GFLOP/s | Loom / it | trials | tuning time (s) |\n"
     << "|---|---|---|---|---|---|---|---|---|---|\n";
  csv << "task,workload,flops,weight,loom_ms,loom_gflops,baseline,baseline_ms,baseline_gflops,ratio,"
         "baseline_as_given,baseline_as_given_ms,baseline_as_given_gflops,ratio_as_given,trials,tuning_s,loom_tuned_ms,"
         "unsteady\n";
  curves << "task,trials,best_gflops\n";
  char buf[1024];
  std::string unsteady_notes;
  for (const auto& r : reports) {
    const BaselineResult* b = r.best_baseline();
    const BaselineResult* given = r.best_baseline_as_given();
    const std::string unsteady = r.unsteady();
    std::snprintf(buf, sizeof buf, "| %s | %.2f | %s | %.2f | %s | %s | %.2f | %s | %d | %.0f |\n", r.task.c_str(),
                  r.loom_gflops(), baseline_name(b).c_str(), b ? b->gflops(r.flops) : 0.0,
                  ratio_text(r.ratio()).c_str(), baseline_name(given).c_str(), given ? given->gflops(r.flops) : 0.0,
                  ratio_text(r.ratio_as_given()).c_str(), r.trials, r.tuning_s);
    md << buf;
    std::snprintf(buf, sizeof buf, "\"%s\",%s,%.0f,%g,%.6f,%.3f,\"%s\",%.6f,%.3f,%.4f,\"%s\",%.6f,%.3f,%.4f,%d,%.0f,%.6f,\"%s\"\n",
                  r.task.c_str(), r.workload.c_str(), r.flops, r.weight, r.loom_s * 1e3, r.loom_gflops(),
                  baseline_name(b).c_str(), b ? b->median_s * 1e3 : 0.0, b ? b->gflops(r.flops) : 0.0, r.ratio(),
                  baseline_name(given).c_str(), given ? given->median_s * 1e3 : 0.0, given ? given->gflops(r.flops) : 0.0,
                  r.ratio_as_given(), r.trials, r.tuning_s, r.tuned_s * 1e3, unsteady.c_str());
    csv << buf;
    if (!unsteady.empty()) unsteady_notes += "- " + r.task + ": " + unsteady + "\n";
    for (const auto& [t, g] : r.curve) curves << "\"" << r.task << "\"," << t << "," << g << "\n";
  }
  if (!unsteady_notes.empty())
    md << "\nUnsteady (the middle half of a ratio's rounds spread past " << TaskReport::kMaxRatioSpread
       << "x, or Loom re-measured below 1/" << TaskReport::kMaxSlowdownFromTuning
       << " of its speed in the log; these ratios may not hold on a quiet machine):\n\n"
       << unsteady_notes;
  // Baseline lines for the plot: the best baseline per task.
  std::ostringstream base_csv;
  base_csv << "task,baseline,gflops\n";
  for (const auto& r : reports)
    if (const BaselineResult* b = r.best_baseline())
      base_csv << "\"" << r.task << "\",\"" << b->library << " (" << b->variant << ")\"," << b->gflops(r.flops) << "\n";
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream((fs::path(cfg.report_dir) / name).string()) << text;
  };
  write("report.md", md.str());
  write("report.csv", csv.str());
  write("curves.csv", curves.str());
  write("baselines.csv", base_csv.str());
  return md.str();
}

}  // namespace loom
