// The `loom` program's verbs. Each verb lives in experiments/verbs/<verb>.cc
// and is listed once in experiments/main.cc.
#pragma once

#include <string>
#include <vector>

namespace loom {
struct ExperimentConfig;
}

namespace loom::cli {

using Args = std::vector<std::string>;

// Exit codes shared by all verbs.
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;  // the job ran but the result is bad (e.g. wrong result)
constexpr int kExitUsage = 2;    // bad input: malformed file, unknown workload, invalid step

// The integer value after flag a[i] (i advances past it); throws LoomError
// naming the flag when it is missing, not an integer, or below min_value.
int int_flag(const Args& a, size_t& i, const char* name, int min_value = 1);
// The duration after flag a[i] in seconds: "90", "90s", "5m", "1.5h".
double duration_flag(const Args& a, size_t& i, const char* name);

// The shipped schedule database: the records logs in
// experiments/schedules/database/ (scripts/build_schedule_database.sh).
std::vector<std::string> shipped_schedule_databases();
// The shipped cost model (experiments/models/suite_mlp.model).
std::string shipped_cost_model();
// The model that chooses a config's untimed schedules: its pretrained
// model, else the shipped one.
std::string untimed_cost_model(const ExperimentConfig& cfg);
// `names` with "shipped" replaced by those logs.
std::vector<std::string> resolve_schedule_databases(const std::vector<std::string>& names);

struct Verb {
  const char* name;
  const char* usage;
  const char* summary;
  int (*run)(const Args& args);
};

int workloads_verb(const Args& args);
int run_verb(const Args& args);
int measure_verb(const Args& args);
int baseline_verb(const Args& args);
int tune_verb(const Args& args);
int config_verb(const Args& args);
int report_verb(const Args& args);
int export_verb(const Args& args);
int costmodel_verb(const Args& args);
int sketches_verb(const Args& args);
int sample_verb(const Args& args);
int network_verb(const Args& args);
int records_verb(const Args& args);
int costmodel_collect(const Args& args);  // `loom costmodel collect` (costmodel_collect.cc)

}  // namespace loom::cli
