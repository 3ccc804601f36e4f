// loom tune CONFIG.json: tune every task of an experiment config, writing the
// log as it goes. Prints every effective setting first, a progress line per
// measured round, and a summary table at the end. Ctrl-C stops after the
// current batch with the log intact; a second Ctrl-C exits at once.
//
// With --distributed (under mpirun) rank 0 does all of this and every other
// rank is a measurement node (measure/distributed/): the config is read by
// rank 0 only.
#include <csignal>
#include <cstdio>

#include "experiments/config.h"
#include "experiments/verbs.h"
#include "ir/error.h"
#include "measure/distributed/coordinator.h"
#include "measure/distributed/node.h"
#include "measure/distributed/transport.h"
#include "measure/machine.h"
#include "search/tuner.h"

namespace loom::cli {

namespace {
void on_sigint(int) {
  Tuner::request_stop();
  std::signal(SIGINT, SIG_DFL);
}
}  // namespace

namespace {
int tune(const std::string& file, int trials, double time_budget_s, Transport* transport);
}  // namespace

int tune_verb(const Args& args) {
  std::string file;
  int trials = 0;
  double time_budget_s = 0;
  bool distributed = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--trials") trials = int_flag(args, i, "--trials");
    else if (args[i] == "--time-budget") time_budget_s = duration_flag(args, i, "--time-budget");
    else if (args[i] == "--distributed") distributed = true;
    else if (!args[i].empty() && args[i][0] == '-') throw LoomError("unknown option " + args[i]);
    else if (file.empty()) file = args[i];
    else throw LoomError("tune takes one CONFIG.json");
  }
  if (file.empty())
    throw LoomError("usage: loom tune CONFIG.json [--trials N] [--time-budget DURATION] [--distributed]");
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

int tune(const std::string& file, int trials, double time_budget_s, Transport* transport) {
  ExperimentConfig cfg = ExperimentConfig::load(file);
  if (trials > 0) cfg.search.num_trials = trials;
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
  const std::vector<std::string> databases = resolve_schedule_databases(cfg.schedule_databases);
  if (!databases.empty()) {
    std::vector<std::string> notes;
    std::vector<MeasureRecord> records = this_machines_records(databases, &notes);
    for (const std::string& note : notes) std::printf("note: %s\n", note.c_str());
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
