// loom tune CONFIG.json: tune every task of an experiment config, writing the
// log as it goes. Prints every effective setting first, a progress line per
// measured round, and a summary table at the end. Ctrl-C stops after the
// current batch with the log intact; a second Ctrl-C exits at once.
//
// --trials 0 times nothing: every task the log has no record of gets a
// schedule chosen untimed (search/untimed_schedule.h: the schedule
// database's, re-fitted similar tasks', or the cost model's pick; the
// config's pretrained model, else the shipped one) written to the log as an
// untimed record, which `network run --log` runs and the next `loom tune`
// measures first.
//
// With --distributed (under mpirun) rank 0 does all of this and every other
// rank is a measurement node (measure/distributed/): the config is read by
// rank 0 only.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>

#include "experiments/config.h"
#include "experiments/verbs.h"
#include "ir/error.h"
#include "measure/distributed/coordinator.h"
#include "measure/distributed/node.h"
#include "measure/distributed/transport.h"
#include "measure/machine.h"
#include "measure/timing.h"
#include "search/tuner.h"
#include "search/untimed_schedule.h"

namespace loom::cli {

namespace {
void on_sigint(int) {
  Tuner::request_stop();
  std::signal(SIGINT, SIG_DFL);
}
}  // namespace

namespace {
int tune(const std::string& file, int trials, double time_budget_s, Transport* transport);
int choose_untimed(const std::string& file);
}  // namespace

int tune_verb(const Args& args) {
  std::string file;
  int trials = -1;  // the config's
  double time_budget_s = 0;
  bool distributed = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--trials") trials = int_flag(args, i, "--trials", 0);
    else if (args[i] == "--time-budget") time_budget_s = duration_flag(args, i, "--time-budget");
    else if (args[i] == "--distributed") distributed = true;
    else if (!args[i].empty() && args[i][0] == '-') throw LoomError("unknown option " + args[i]);
    else if (file.empty()) file = args[i];
    else throw LoomError("tune takes one CONFIG.json");
  }
  if (file.empty())
    throw LoomError("usage: loom tune CONFIG.json [--trials N] [--time-budget DURATION] [--distributed]");
  if (trials == 0) {
    if (distributed) throw LoomError("--trials 0 times nothing: no --distributed");
    return choose_untimed(file);
  }
  std::unique_ptr<Transport> transport;
  if (distributed) {
    transport = make_mpi_transport();
    if (transport->rank() != 0) {
      std::fflush(stdout);
      return run_measurement_node(*transport, [](const std::string& line) {
        std::fprintf(stderr, "%s\n", line.c_str());
      }) == 0 ? kExitOk : kExitFailure;
    }
  }
  try {
    return tune(file, trials, time_budget_s, transport.get());
  } catch (...) {
    // The nodes wait for a setup that will not come: tell them to end.
    if (transport)
      for (int r = 1; r < transport->size(); ++r) transport->send(r, R"({"type":"quit"})");
    throw;
  }
}

namespace {

// The records of a config's schedule database measured on this machine
// kind, with a note for the others.
std::vector<MeasureRecord> schedule_database(const ExperimentConfig& cfg) {
  std::vector<std::string> notes;
  std::vector<MeasureRecord> records = this_machines_records(resolve_schedule_databases(cfg.schedule_databases), &notes);
  for (const std::string& note : notes) std::printf("note: %s\n", note.c_str());
  return records;
}

int choose_untimed(const std::string& file) {
  ExperimentConfig cfg = ExperimentConfig::load(file);
  auto t0 = std::chrono::steady_clock::now();
  const std::string model_file = untimed_cost_model(cfg);
  std::unique_ptr<CostModel> model = load_cost_model(model_file);
  std::vector<MeasureRecord> logged;
  if (std::filesystem::exists(cfg.log_path)) logged = load_records(cfg.log_path);
  std::vector<Task> tasks;
  for (const auto& t : cfg.tasks) tasks.push_back(t.task);
  const auto chosen = untimed_schedules(tasks, *model, schedule_database(cfg), logged, cfg.search);
  RecordLog log(cfg.log_path);
  int n = 0;
  std::map<std::string, int> by_origin;
  for (size_t i = 0; i < chosen.size(); ++i) {
    if (!chosen[i]) continue;
    log.append({untimed_record(tasks[i], chosen[i]->state.steps_json())});
    ++by_origin[untimed_origin_name(chosen[i]->origin)];
    ++n;
  }
  std::string origins;
  for (const auto& [name, count] : by_origin)
    origins += (origins.empty() ? "" : ", ") + std::to_string(count) + " " + name;
  std::printf("chose %d untimed schedules in %.1f s (%s; %s), none timed; %zu tasks the log has already; log: %s\n",
              n, seconds_since(t0), origins.empty() ? "none" : origins.c_str(), model_file.c_str(), tasks.size() - n,
              cfg.log_path.c_str());
  return kExitOk;
}

int tune(const std::string& file, int trials, double time_budget_s, Transport* transport) {
  ExperimentConfig cfg = ExperimentConfig::load(file);
  if (trials >= 0) cfg.search.num_trials = trials;
  if (time_budget_s > 0) cfg.search.time_budget_s = time_budget_s;

  std::printf("loom tune %s\nsettings: %s\n", file.c_str(), cfg.to_json().dump().c_str());
  auto new_model = [&cfg] {
    return cfg.pretrained_model.empty() ? make_cost_model(cfg.cost_model, cfg.cost_model_options)
                                        : load_cost_model(cfg.pretrained_model, cfg.cost_model_options);
  };
  TunerModels models;
  models.shared = new_model();
  const CostModel& model = *models.shared;
  if (model.name() != cfg.cost_model)
    throw LoomError("cost_model.kind is '" + cfg.cost_model + "' but cost_model.pretrained (" + cfg.pretrained_model +
                    ") holds a '" + model.name() + "' model");
  std::string scope;
  if (cfg.cost_model_scope == "task")
    scope = cfg.task_model_after > 0
                ? ", one per task once it has measured " + std::to_string(cfg.task_model_after) + " programs (shared until then)"
                : ", one per task";
  std::printf("cost model: %s %s%s\n", model.name().c_str(), model.settings_json().dump().c_str(), scope.c_str());
  if (!cfg.pretrained_model.empty()) {
    const std::string warning = trained_elsewhere_warning(model, cfg.pretrained_model, this_machine());
    if (!warning.empty()) std::printf("warning: %s\n", warning.c_str());
  }
  if (cfg.cost_model_scope == "task") {
    while (models.per_task.size() < cfg.tasks.size()) models.per_task.push_back(new_model());
    models.per_task_after = cfg.task_model_after;
    if (cfg.task_model_after == 0) models.shared.reset();  // every task has its own from the start
  }
  std::vector<TuneTask> tasks;
  for (const auto& t : cfg.tasks) tasks.push_back({std::make_shared<const Task>(t.task), t.weight});
  TunerOptions opts;
  if (std::vector<MeasureRecord> records = schedule_database(cfg); !records.empty()) {
    opts.database = std::make_shared<const ScheduleLibrary>(records);
    std::printf("schedule database: %zu tasks measured on this machine kind\n", opts.database->tasks());
  }
  opts.search = cfg.search;
  opts.measure = cfg.measure;
  opts.log_path = cfg.log_path;
  if (transport) {
    opts.measurer = std::make_shared<DistributedMeasurer>(*transport, cfg.measure, [](const std::string& line) {
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    });
  }
  std::fflush(stdout);
  Tuner tuner(std::move(tasks), opts, std::move(models));
  std::signal(SIGINT, on_sigint);
  tuner.run();
  std::signal(SIGINT, SIG_DFL);
  std::printf("\n%s", tuner.summary_table().c_str());
  std::printf("log: %s\n", cfg.log_path.c_str());
  return kExitOk;
}

}  // namespace

}  // namespace loom::cli
