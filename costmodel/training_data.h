// Training data for the cost model from measure-record logs (measure/records.h).
// A record's cost is the median (default, as measure/ reports it) or the
// minimum of its costs_s (on a shared machine interference only adds time;
// on Loom's own logs the median ranked better). Records with an error are
// kept with cost +inf (they train as "slowest" and are left out of ranking
// metrics). Malformed or truncated lines, and records whose steps do not
// replay, are skipped and counted. Records of the same program (same task,
// same kind of machine, and the same steps or steps that lower to the same
// loop nest — e.g. a re-collection with the same seed, several logs, or
// tile sizes of a stage computed one element at a time) are one training
// program whose cost is the statistic over all their timings: repeats make
// labels less noisy, a program never lands on both sides of a held-out
// split, and no pair of one program's timings is ranked.
#pragma once

#include <string>
#include <vector>

#include "costmodel/cost_model.h"

namespace loom {

struct RecordLoadStats {
  size_t lines = 0, records = 0, failed = 0, skipped = 0;
  size_t merged = 0;       // records of a program already read (their timings pooled)
  size_t same_code = 0;    // of those, with other steps that lower to the same loop nest
  std::string first_problem;  // "FILE:LINE: why" of the first skipped line
};

enum class CostStatistic { kMin, kMedian };

// What makes two records one program: their ranking group (task and kind
// of machine) and their steps, or else their lowered loop nest (set by
// read_training_records). Records with one key pool their timings.
std::string program_key(const std::string& ranking_group, const nlohmann::json& steps);
inline std::string program_key(const TrainingRecord& r) {
  return r.program.empty() ? program_key(ranking_group(r), r.state.steps_json()) : r.program;
}

// Throws LoomError when a file cannot be opened.
std::vector<TrainingRecord> read_training_records(const std::vector<std::string>& paths,
                                                  RecordLoadStats* stats = nullptr,
                                                  CostStatistic statistic = CostStatistic::kMedian);

// Held-out split for evaluation. "task": a `test_fraction` of the distinct
// tasks (at least one, never all when there are two or more) go to the test
// side; "record": that fraction of the records, tasks mixed; "none": all
// records train, none test. Deterministic for a seed and record order.
void split_records(const std::vector<TrainingRecord>& records, const std::string& mode, double test_fraction,
                   uint64_t seed, std::vector<size_t>* train, std::vector<size_t>* test);

// Features of every record (in parallel), grouped by task key.
FeatureDataset make_feature_dataset(const std::vector<TrainingRecord>& records,
                                    const FeatureOptions& options = {});

}  // namespace loom
