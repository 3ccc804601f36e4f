#include "measure/records.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/error.h"
#include "measure/timing.h"

namespace loom {

namespace {

MeasureRecord parse_record(const nlohmann::json& j, std::map<std::string, Task>* task_cache) {
  if (!j.is_object()) throw LoomError("expected a JSON object");
  for (const auto& [k, v] : j.items())
    if (k != "task" && k != "steps" && k != "result" && k != "version")
      throw LoomError(k + ": unknown key");
  if (j.contains("version") && (!j["version"].is_number_integer() || j["version"] != kRecordVersion))
    throw LoomError("version: unsupported record version " + j["version"].dump());
  if (!j.contains("task")) throw LoomError("task: missing");
  if (!j.contains("steps") || !j["steps"].is_array()) throw LoomError("steps: expected an array");
  if (!j.contains("result") || !j["result"].is_object()) throw LoomError("result: expected an object");
  MeasureRecord r;
  std::string raw = j["task"].dump();
  auto it = task_cache ? task_cache->find(raw) : std::map<std::string, Task>::iterator{};
  if (task_cache && it != task_cache->end()) {
    r.task = it->second;
  } else {
    r.task = Task::from_json(j["task"], "task");
    if (task_cache) task_cache->emplace(raw, r.task);
  }
  r.steps = j["steps"];
  r.result = result_from_json(j["result"], "result");
  return r;
}

}  // namespace

nlohmann::json record_to_json(const MeasureRecord& r) {
  return {{"task", r.task.to_json()}, {"steps", r.steps}, {"result", result_to_json(r.result)}, {"version", kRecordVersion}};
}

MeasureRecord record_from_json(const nlohmann::json& j) { return parse_record(j, nullptr); }

RecordLog::RecordLog(const std::string& path, bool fsync_each_batch) : path_(path), fsync_(fsync_each_batch) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw LoomError(path + ": cannot open log for appending: " + std::strerror(errno));
  // A cut last line (crash mid-write) must not swallow the next record.
  int rfd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (rfd >= 0) {
    struct stat st{};
    char last = '\n';
    if (::fstat(rfd, &st) == 0 && st.st_size > 0 && ::pread(rfd, &last, 1, st.st_size - 1) == 1 && last != '\n') {
      if (::write(fd_, "\n", 1) != 1) {
        ::close(rfd);
        throw LoomError(path + ": write failed: " + std::strerror(errno));
      }
    }
    ::close(rfd);
  }
}

RecordLog::~RecordLog() {
  if (fd_ >= 0) ::close(fd_);
}

void RecordLog::append(const std::vector<MeasureRecord>& batch) {
  std::string text;
  for (const auto& r : batch) {
    // Written in the order of records.h (task first) for human readers.
    nlohmann::json j = record_to_json(r);
    nlohmann::ordered_json line;
    for (const char* key : {"task", "steps", "result", "version"}) line[key] = j[key];
    text += line.dump() + "\n";
  }
  size_t done = 0;
  while (done < text.size()) {
    ssize_t w = ::write(fd_, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw LoomError(path_ + ": write failed: " + std::strerror(errno));
    done += static_cast<size_t>(w);
  }
  if (fsync_ && ::fsync(fd_) != 0) throw LoomError(path_ + ": fsync failed: " + std::strerror(errno));
}

void RecordLog::append(const Task& task, const std::vector<nlohmann::json>& steps,
                       const std::vector<MeasureResult>& results) {
  if (steps.size() != results.size()) throw LoomError("RecordLog::append: steps and results differ in length");
  std::vector<MeasureRecord> batch(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    batch[i].task = task;
    batch[i].steps = steps[i].is_array() ? steps[i] : nlohmann::json::array();
    batch[i].result = results[i];
  }
  append(batch);
}

std::vector<MeasureRecord> load_records(const std::string& path, LoadReport* report, bool warn) {
  // A device or a pipe as a log (/dev/full, /dev/zero) would be read forever.
  struct stat st{};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw LoomError(path + ": not a regular file (a log must be one)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw LoomError(path + ": cannot open log");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  LoadReport local;
  LoadReport& rep = report ? *report : local;
  std::vector<MeasureRecord> out;
  std::map<std::string, Task> cache;
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    bool complete = nl != std::string::npos;
    std::string line = text.substr(pos, complete ? nl - pos : std::string::npos);
    pos = complete ? nl + 1 : text.size();
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    ++rep.lines;
    std::string why;
    try {
      out.push_back(parse_record(nlohmann::json::parse(line), &cache));
      ++rep.records;
      continue;
    } catch (const nlohmann::json::exception&) {
      why = complete ? "malformed JSON" : "truncated last line (a crash mid-write?)";
    } catch (const LoomError& e) {
      why = std::string("malformed record: ") + e.what();
    }
    ++rep.skipped;
    rep.warnings.push_back(path + ":" + std::to_string(line_no) + ": skipped " + why);
  }
  if (warn) {
    for (size_t i = 0; i < rep.warnings.size() && i < 10; ++i)
      std::fprintf(stderr, "warning: %s\n", rep.warnings[i].c_str());
    if (rep.warnings.size() > 10)
      std::fprintf(stderr, "warning: %s: %zu more bad lines skipped\n", path.c_str(), rep.warnings.size() - 10);
  }
  return out;
}

namespace {

// ranked_programs of the records of one task (in log order).
std::vector<ProgramCost> rank_programs(const std::vector<const MeasureRecord*>& task_records) {
  struct Program {
    const MeasureRecord* latest = nullptr;
    std::vector<double> medians;  // in log order
    bool wrong = false;
  };
  std::map<std::string, Program> programs;
  for (const MeasureRecord* rp : task_records) {
    const MeasureRecord& r = *rp;
    Program& p = programs[r.steps.dump()];
    if (r.result.error == ErrorKind::kWrongResult) p.wrong = true;
    if (!r.result.ok()) continue;
    p.latest = &r;
    p.medians.push_back(r.result.median_s());
  }
  std::vector<ProgramCost> once;
  std::vector<std::pair<ProgramCost, double>> again;  // with its first measurement
  for (auto& [steps, p] : programs) {
    if (p.wrong || p.medians.empty()) continue;
    if (p.medians.size() == 1) {
      once.push_back({p.latest, p.medians[0], 1});
      continue;
    }
    again.push_back({{p.latest, median(p.medians), static_cast<int>(p.medians.size())}, p.medians.front()});
  }
  // Ties: in the order of their latest records in the log (deterministic).
  auto by_cost = [](const ProgramCost& a, const ProgramCost& b) {
    return a.cost_s < b.cost_s || (a.cost_s == b.cost_s && a.record < b.record);
  };
  std::sort(again.begin(), again.end(), [&](const auto& a, const auto& b) { return by_cost(a.first, b.first); });
  std::sort(once.begin(), once.end(), by_cost);
  // The first measurement of the best program measured again.
  const double bar = again.empty() ? -1 : again.front().second;
  std::vector<ProgramCost> out;
  size_t u = 0;
  while (u < once.size() && once[u].cost_s < bar) out.push_back(once[u++]);
  for (const auto& a : again) out.push_back(a.first);
  out.insert(out.end(), once.begin() + static_cast<std::ptrdiff_t>(u), once.end());
  return out;
}

}  // namespace

std::vector<ProgramCost> ranked_programs(const std::vector<MeasureRecord>& records, const std::string& task_key) {
  std::vector<const MeasureRecord*> task_records;
  for (const auto& r : records)
    if (r.task_key() == task_key) task_records.push_back(&r);
  return rank_programs(task_records);
}

std::vector<std::vector<const MeasureRecord*>> best_records_per_task(const std::vector<MeasureRecord>& records,
                                                                     int per_task) {
  // Each record's key once (a key is its task serialized): grouping by
  // ranked_programs per task read every record's key once per task, a
  // quadratic that took 14 s for a 733-task database.
  std::vector<std::vector<const MeasureRecord*>> by_task;  // in the order tasks first appear
  std::map<std::string, size_t> index;
  for (const auto& r : records) {
    auto [it, added] = index.emplace(r.task_key(), by_task.size());
    if (added) by_task.emplace_back();
    by_task[it->second].push_back(&r);
  }
  std::vector<std::vector<const MeasureRecord*>> out;
  for (const auto& task_records : by_task) {
    std::vector<const MeasureRecord*> best;
    for (const ProgramCost& p : rank_programs(task_records)) {
      if (static_cast<int>(best.size()) >= per_task) break;
      best.push_back(p.record);
    }
    if (!best.empty()) out.push_back(std::move(best));
  }
  return out;
}

ProgramCost best_program(const std::vector<MeasureRecord>& records, const std::string& task_key) {
  auto ranked = ranked_programs(records, task_key);
  return ranked.empty() ? ProgramCost{} : ranked.front();
}

std::string measure_key(const std::string& task_key, const nlohmann::json& steps) {
  return task_key + "|" + steps.dump();
}

MeasureRecord untimed_record(const Task& task, const nlohmann::json& steps) {
  MeasureRecord r{task, steps, {}};
  r.result.error = ErrorKind::kNotMeasured;
  r.result.error_msg = "chosen with nothing timed";
  r.result.machine = this_machine();
  r.result.timestamp = static_cast<int64_t>(std::time(nullptr));
  return r;
}

const MeasureRecord* latest_untimed(const std::vector<MeasureRecord>& records, const std::string& task_key) {
  const MeasureRecord* out = nullptr;
  for (const auto& r : records)
    if (r.untimed() && r.task_key() == task_key) out = &r;
  return out;
}

}  // namespace loom
