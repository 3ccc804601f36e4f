// loom costmodel train|eval: fit a cost model on record logs, and measure how
// well a saved model ranks the programs of record logs.
//
//   loom costmodel train LOG... --model mlp|xgb|random --out FILE
//        [--settings JSON|@FILE] [--split task|record|none] [--test-fraction F]
//        [--seed N] [--threads N] [--k K] [--cost min|median] [--json]
//        [--predictions CSV] [--train-only LOG...]
//     Trains on the records (the train side of the split) and, when the split
//     leaves a test side, reports the ranking metrics on it. The logs after
//     --train-only only train: they never enter the split, so more data can
//     be measured against the same held-out records; a train-only program
//     that is also a held-out one (--split record), or of a held-out task
//     (--split task), is left out.
//   loom costmodel eval FILE LOG... [--split ...] [--test-fraction F] [--seed N]
//        [--threads N] [--k K] [--cost min|median] [--json] [--predictions CSV]
//     Ranking metrics of a saved model on the records (the test side of the
//     split: the same options as `train` select the same held-out records).
//
//   loom costmodel transfer LOG... [--model mlp|xgb|random] [--settings JSON|@FILE]
//        [--by task|machine|network] [--folds K] [--seed N] [--threads N] [--k K]
//        [--cost min|median] [--json] [--table FILE] [--train-only LOG...]
//     Grouped cross-validation (costmodel/transfer_eval.h): each task shape
//     (or machine kind) is held out once and ranked by a model trained on the
//     others; --folds 0 (the default) holds out one at a time. --table writes
//     the per-task results as a Markdown table. The logs after --train-only
//     train the folds that do not hold out their task and are never ranked.
//     --by network: the arguments are network configs (their logs and task
//     weights); each network is held out once, and its TenSet top-1 and
//     top-k scores printed (costmodel/transfer_eval.h; --table: per network).
//
//   loom costmodel collect WORKLOAD ... (costmodel_collect.cc): measure random
//     schedules into a log.
//
// A record's cost is the median of its repeat groups (--cost min: their
// minimum). Metrics are computed within each task over the successfully measured
// records: pairwise accuracy, top-1 / top-k recall of the truly best
// programs, best-of-top-k relative to the best, Spearman correlation.
// --predictions writes one CSV row per evaluated record (task, label =
// throughput normalized per task or -1 for a failed one, score, steps) for
// analyses of where a model errs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "costmodel/cost_model.h"
#include "costmodel/metrics.h"
#include "costmodel/training_data.h"
#include "costmodel/transfer_eval.h"
#include "experiments/config.h"
#include "experiments/verbs.h"
#include "ir/error.h"

namespace loom::cli {

namespace {

struct Options {
  std::vector<std::string> positional;
  std::vector<std::string> train_only;  // train, transfer: the logs after --train-only
  std::string model = "mlp", out, split = "none", predictions, table, by = "task";
  int folds = 0;
  nlohmann::json settings = nlohmann::json::object();
  double test_fraction = 0.2;
  uint64_t seed = 0;
  int threads = 0, k = 10;
  bool json = false;
  CostStatistic cost = CostStatistic::kMedian;
};

std::string value(const Args& a, size_t& i) {
  if (i + 1 >= a.size()) throw LoomError(a[i] + " needs a value");
  return a[++i];
}

double number(const std::string& flag, const std::string& v, double lo, double hi) {
  try {
    size_t used = 0;
    double d = std::stod(v, &used);
    if (used != v.size() || d < lo || d > hi) throw std::invalid_argument("x");
    return d;
  } catch (const std::exception&) {
    std::ostringstream os;
    os << flag << ": expected a number in [" << lo << ", " << hi << "], got '" << v << "'";
    throw LoomError(os.str());
  }
}

// train: the options that make a model (--model, --out, --settings);
// transfer: also the fold options.
Options parse(const Args& a, bool train, bool transfer = false) {
  Options o;
  bool after_train_only = false;  // positional logs from here on train only
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string& f = a[i];
    if (transfer && f == "--out") throw LoomError("unknown option --out (transfer trains one model per fold and keeps none)");
    if (train && f == "--model") o.model = value(a, i);
    else if (train && f == "--out") o.out = value(a, i);
    else if (train && f == "--settings") {
      std::string v = value(a, i), text = v;
      if (!v.empty() && v[0] == '@') {
        std::ifstream in(v.substr(1));
        if (!in) throw LoomError("--settings: cannot read '" + v.substr(1) + "'");
        std::stringstream ss;
        ss << in.rdbuf();
        text = ss.str();
      }
      o.settings = nlohmann::json::parse(text, nullptr, false);
      if (o.settings.is_discarded() || !o.settings.is_object())
        throw LoomError("--settings: expected a JSON object");
    } else if (!transfer && f == "--split") {
      o.split = value(a, i);
      if (o.split != "task" && o.split != "record" && o.split != "none")
        throw LoomError("--split: expected task, record or none, got '" + o.split + "'");
    } else if (f == "--test-fraction") o.test_fraction = number(f, value(a, i), 0.0, 0.95);
    else if (f == "--seed") o.seed = static_cast<uint64_t>(number(f, value(a, i), 0, 1e15));
    else if (f == "--threads") o.threads = static_cast<int>(number(f, value(a, i), 1, 1024));
    else if (f == "--k") o.k = static_cast<int>(number(f, value(a, i), 1, 1e6));
    else if (f == "--json") o.json = true;
    else if (!transfer && f == "--predictions") o.predictions = value(a, i);
    else if (transfer && f == "--table") o.table = value(a, i);
    else if (train && f == "--train-only") after_train_only = true;
    else if (transfer && f == "--folds") o.folds = static_cast<int>(number(f, value(a, i), 0, 1e6));
    else if (transfer && f == "--by") {
      o.by = value(a, i);
      if (o.by != "task" && o.by != "machine" && o.by != "network")
        throw LoomError("--by: expected task, machine or network, got '" + o.by + "'");
    }
    else if (f == "--cost") {
      std::string v = value(a, i);
      if (v == "min") o.cost = CostStatistic::kMin;
      else if (v == "median") o.cost = CostStatistic::kMedian;
      else throw LoomError("--cost: expected min or median, got '" + v + "'");
    }
    else if (!f.empty() && f[0] == '-') throw LoomError("unknown option " + f);
    else (after_train_only ? o.train_only : o.positional).push_back(f);
  }
  if (after_train_only && o.train_only.empty()) throw LoomError("--train-only needs at least one LOG after it");
  return o;
}

std::vector<TrainingRecord> load(const std::vector<std::string>& logs, CostStatistic cost) {
  RecordLoadStats st;
  auto records = read_training_records(logs, &st, cost);
  std::printf("records: %zu from %zu log(s): %zu programs (%zu records were repeats of a program, their "
              "timings pooled, %zu of them with other steps that lower to the same loop nest; %zu programs "
              "without a valid measurement), %zu lines skipped\n",
              st.records, logs.size(), records.size(), st.merged, st.same_code, st.failed, st.skipped);
  if (!st.first_problem.empty()) std::printf("  first skipped line: %s\n", st.first_problem.c_str());
  if (records.empty()) throw LoomError("no usable records in the logs");
  return records;
}

size_t count_tasks(const std::vector<TrainingRecord>& r, const std::vector<size_t>& idx) {
  std::vector<std::string> keys;
  for (size_t i : idx) keys.push_back(r[i].task->key());
  std::sort(keys.begin(), keys.end());
  return static_cast<size_t>(std::unique(keys.begin(), keys.end()) - keys.begin());
}

// Scores the records `idx` and prints (and returns) the ranking metrics.
RankingMetrics evaluate(CostModel& m, const std::vector<TrainingRecord>& records, const std::vector<size_t>& idx,
                        const Options& o) {
  std::vector<TrainingRecord> sel;
  for (size_t i : idx) sel.push_back(records[i]);
  auto t0 = std::chrono::steady_clock::now();
  FeatureDataset d = make_feature_dataset(sel, m.feature_options());
  std::vector<float> scores = m.predict_features(d.programs);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<float> labels = d.normalized_throughput();
  for (size_t i = 0; i < sel.size(); ++i)
    if (!(labels[i] > 0)) labels[i] = -1;  // failed or unlowerable: left out
  RankingMetrics r = ranking_metrics(scores, labels, d.groups, o.k);
  if (!o.predictions.empty()) {
    std::ofstream csv(o.predictions);
    if (!csv) throw LoomError("--predictions: cannot write '" + o.predictions + "'");
    csv << "task,label,score,steps\n";
    auto quoted = [](std::string t) {
      for (size_t p = 0; (p = t.find('"', p)) != std::string::npos; p += 2) t.insert(p, 1, '"');
      return '"' + t + '"';
    };
    for (size_t i = 0; i < sel.size(); ++i)
      csv << quoted(sel[i].task->description()) << ',' << labels[i] << ',' << scores[i] << ','
          << quoted(sel[i].state.steps_json().dump()) << '\n';
  }
  std::printf("%s on %zu held-out records (features + predict %.2f s):\n  %s\n", m.name().c_str(), sel.size(),
              secs, r.to_string().c_str());
  if (d.task_keys.size() > 1) {
    // Per task: which workloads the model ranks poorly.
    for (size_t g = 0; g < d.task_keys.size(); ++g) {
      std::vector<float> ts, tl;
      std::string name;
      for (size_t i = 0; i < sel.size(); ++i) {
        if (d.groups[i] != static_cast<int>(g)) continue;
        ts.push_back(scores[i]), tl.push_back(labels[i]);
        if (name.empty()) name = sel[i].task->description();
      }
      RankingMetrics t = ranking_metrics(ts, tl, std::vector<int>(ts.size(), 0), o.k);
      std::printf("    pairwise %.3f  spearman %.3f  (%zu programs)  %s\n", t.pairwise_accuracy, t.spearman,
                  t.num_programs, name.c_str());
    }
  }
  if (o.json) {
    nlohmann::json j = r.to_json();
    j["model"] = m.name();
    j["split"] = o.split;
    std::printf("%s\n", j.dump().c_str());
  }
  return r;
}

int train(const Args& args) {
  Options o = parse(args, true);
  if (o.positional.empty() || o.out.empty())
    throw LoomError("usage: loom costmodel train LOG... --model mlp|xgb|random --out FILE");
  auto model = make_cost_model(o.model, o.settings);
  if (o.threads) model->feature_options().num_threads = o.threads;
  std::printf("model: %s  settings: %s\n", model->name().c_str(), model->settings_json().dump().c_str());
  std::printf("split: %s  test-fraction: %g  seed: %llu  k: %d  cost: %s\n", o.split.c_str(), o.test_fraction,
              static_cast<unsigned long long>(o.seed), o.k, o.cost == CostStatistic::kMin ? "min" : "median");
  auto records = load(o.positional, o.cost);
  std::vector<size_t> tr, te;
  split_records(records, o.split, o.test_fraction, o.seed, &tr, &te);
  std::printf("train: %zu records over %zu tasks; test: %zu records over %zu tasks\n", tr.size(),
              count_tasks(records, tr), te.size(), count_tasks(records, te));
  if (o.split == "task") {
    std::vector<std::string> names;
    for (size_t i : te)
      if (std::find(names.begin(), names.end(), records[i].task->description()) == names.end())
        names.push_back(records[i].task->description());
    for (const auto& n : names) std::printf("  held-out task: %s\n", n.c_str());
  }
  std::vector<TrainingRecord> train_set;
  for (size_t i : tr) train_set.push_back(records[i]);
  if (!o.train_only.empty()) {
    std::printf("train-only logs:\n");
    // What a train-only record must not share with a held-out one: its task
    // (--split task) or its program (--split record).
    auto key = [&](const TrainingRecord& r) { return o.split == "task" ? r.task->key() : program_key(r); };
    std::set<std::string> held_out;
    for (size_t i : te) held_out.insert(key(records[i]));
    size_t kept = 0, left_out = 0;
    for (auto& r : load(o.train_only, o.cost)) {
      if (held_out.count(key(r))) {
        ++left_out;
        continue;
      }
      train_set.push_back(std::move(r));
      ++kept;
    }
    std::printf("train-only: %zu records train, %zu left out (%s)\n", kept, left_out,
                o.split == "task" ? "of a held-out task" : "a held-out program");
  }
  auto t0 = std::chrono::steady_clock::now();
  model->update(train_set);
  std::printf("trained in %.2f s (features + fit)\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  if (!model->last_fit_summary().empty()) std::printf("fit: %s\n", model->last_fit_summary().c_str());
  model->save(o.out);
  std::printf("saved %s\n", o.out.c_str());
  if (!te.empty()) evaluate(*model, records, te, o);
  return kExitOk;
}

int eval(const Args& args) {
  Options o = parse(args, false);
  if (o.positional.size() < 2) throw LoomError("usage: loom costmodel eval FILE LOG...");
  auto model = load_cost_model(o.positional[0]);
  if (o.threads) model->feature_options().num_threads = o.threads;
  std::printf("model: %s (%s)  settings: %s\n", model->name().c_str(), o.positional[0].c_str(),
              model->settings_json().dump().c_str());
  std::printf("split: %s  test-fraction: %g  seed: %llu  k: %d  cost: %s\n", o.split.c_str(), o.test_fraction,
              static_cast<unsigned long long>(o.seed), o.k, o.cost == CostStatistic::kMin ? "min" : "median");
  auto records = load(std::vector<std::string>(o.positional.begin() + 1, o.positional.end()), o.cost);
  std::vector<size_t> tr, te;
  split_records(records, o.split, o.test_fraction, o.seed, &tr, &te);
  if (o.split == "none") te = tr;  // evaluate on everything
  if (te.empty()) throw LoomError("the split leaves no records to evaluate");
  evaluate(*model, records, te, o);
  return kExitOk;
}

int transfer(const Args& args) {
  Options o = parse(args, true, true);
  if (o.positional.empty()) throw LoomError("usage: loom costmodel transfer LOG... [--model mlp|xgb|random] [--by task|machine] [--folds K] [--train-only LOG...]");
  TransferOptions t;
  t.model = o.model;
  t.settings = o.settings;
  t.unit = o.by == "machine" ? TransferUnit::kMachine : o.by == "network" ? TransferUnit::kNetwork : TransferUnit::kTask;
  t.folds = o.folds;
  t.seed = o.seed;
  t.k = o.k;
  if (o.threads) t.features.num_threads = o.threads;
  std::printf("model: %s  settings: %s\n", o.model.c_str(), make_cost_model(o.model, o.settings)->settings_json().dump().c_str());
  std::printf("held out by: %s  folds: %s  seed: %llu  k: %d  cost: %s\n", o.by.c_str(),
              o.folds ? std::to_string(o.folds).c_str() : "one per unit", static_cast<unsigned long long>(o.seed), o.k,
              o.cost == CostStatistic::kMin ? "min" : "median");
  // --by network: the positional arguments are network configs; their logs
  // hold the records, their tasks' weights weigh the top-k scores.
  std::vector<std::string> logs = o.positional;
  if (t.unit == TransferUnit::kNetwork) {
    logs.clear();
    for (const std::string& path : o.positional) {
      ExperimentConfig cfg = ExperimentConfig::load(path);
      if (cfg.network.empty()) throw LoomError(path + ": --by network takes network configs (a `network` key)");
      for (const auto& task : cfg.tasks) {
        t.networks.network_of_task[task.task.key()] = cfg.name;
        t.networks.weight_of_task[task.task.key()] = task.weight;
      }
      logs.push_back(cfg.log_path);
    }
  }
  auto records = load(logs, o.cost);
  std::vector<TrainingRecord> train_only;
  if (!o.train_only.empty()) {
    std::printf("train only, never ranked: ");
    train_only = load(o.train_only, o.cost);
  }
  std::fflush(stdout);
  TransferReport rep = evaluate_transfer(records, t, [](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }, train_only);
  std::printf("\nheld-out %ss, per task:\n", o.by.c_str());
  for (const auto& h : rep.groups)
    std::printf("  fold %3d  pairwise %.3f  top1 %.0f  top%d %.2f  spearman %6.3f  (%zu programs)  %s\n", h.fold + 1,
                h.metrics.pairwise_accuracy, h.metrics.top1_recall, o.k, h.metrics.topk_recall, h.metrics.spearman,
                h.metrics.num_programs, h.name.c_str());
  std::printf("overall (%d folds over %d %ss): %s\n  per task: mean pairwise %.3f, lowest %.3f (%s)\n", rep.folds,
              rep.units, o.by.c_str(), rep.overall.to_string().c_str(), rep.mean_pairwise, rep.min_pairwise,
              rep.min_group.c_str());
  if (!rep.networks.empty()) {
    std::printf("\nheld-out networks: top-k score = latency with every task's best measured program / with the best "
                "of the model's top k (tasks weighted by occurrence)\n");
    for (const auto& n : rep.networks)
      std::printf("  %-24s top-1 %.3f  top-%d %.3f  (%d tasks)\n", n.name.c_str(), n.top1, o.k, n.topk, n.tasks);
  }
  if (!o.table.empty() && !rep.networks.empty()) {
    std::ofstream md(o.table);
    if (!md) throw LoomError("--table: cannot write '" + o.table + "'");
    md << "| held-out network | tasks | top-1 score | top-" << o.k << " score |\n|---|---|---|---|\n";
    char row[256];
    for (const auto& n : rep.networks) {
      std::snprintf(row, sizeof row, "| %s | %d | %.3f | %.3f |\n", n.name.c_str(), n.tasks, n.top1, n.topk);
      md << row;
    }
  } else if (!o.table.empty()) {
    std::ofstream md(o.table);
    if (!md) throw LoomError("--table: cannot write '" + o.table + "'");
    md << "| held-out task | pairwise | top-1 | top-" << o.k << " recall | Spearman | programs |\n|---|---|---|---|---|---|\n";
    char row[512];
    for (const auto& h : rep.groups) {
      std::snprintf(row, sizeof row, "| %s | %.3f | %.0f | %.2f | %.3f | %zu |\n", h.name.c_str(),
                    h.metrics.pairwise_accuracy, h.metrics.top1_recall, h.metrics.topk_recall, h.metrics.spearman,
                    h.metrics.num_programs);
      md << row;
    }
    std::snprintf(row, sizeof row, "| **all %zu tasks** (pairs pooled) | **%.3f** | %.2f | %.2f | %.3f | %zu |\n",
                  rep.overall.num_tasks, rep.overall.pairwise_accuracy, rep.overall.top1_recall,
                  rep.overall.topk_recall, rep.overall.spearman, rep.overall.num_programs);
    md << row;
  }
  if (o.json) std::printf("%s\n", rep.to_json().dump().c_str());
  return kExitOk;
}

}  // namespace

int costmodel_verb(const Args& args) {
  if (args.empty()) throw LoomError("usage: loom costmodel train|eval|transfer|collect ... (see loom help)");
  Args rest(args.begin() + 1, args.end());
  if (args[0] == "train") return train(rest);
  if (args[0] == "eval") return eval(rest);
  if (args[0] == "transfer") return transfer(rest);
  if (args[0] == "collect") return costmodel_collect(rest);
  throw LoomError("unknown costmodel command '" + args[0] + "' (expected train, eval, transfer or collect)");
}

}  // namespace loom::cli
