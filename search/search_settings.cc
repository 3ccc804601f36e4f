#include "search/search_settings.h"

#include <iomanip>
#include <sstream>
#include <type_traits>
#include <variant>
#include <vector>

#include "ir/error.h"

namespace loom {

namespace {

// The names an enum setting reads and writes, in the enum's order.
const std::vector<std::string>& names_of(SearchStrategy*) {
  static const std::vector<std::string> n = {"evolutionary", "random"};
  return n;
}
const std::vector<std::string>& names_of(TaskSchedulerKind*) {
  static const std::vector<std::string> n = {"gradient", "round_robin"};
  return n;
}

using Member = std::variant<int SearchSettings::*, double SearchSettings::*, uint64_t SearchSettings::*,
                            SearchStrategy SearchSettings::*, TaskSchedulerKind SearchSettings::*>;

struct Field {
  const char* key;
  Member member;
  double lo, hi;  // numeric range, inclusive (unused by enums)
  const char* doc;
};

// Every search setting, in the order of the docs table (the echo is a JSON
// object: sorted by key).
const std::vector<Field>& fields() {
  using S = SearchSettings;
  static const std::vector<Field> f = {
      {"num_trials", &S::num_trials, 1, 1e7, "measurements in total, all tasks together"},
      {"measures_per_round", &S::measures_per_round, 1, 1e5,
       "measured per round: the top predicted states not measured before (nor their loop nest under other steps), "
       "neighbours of the best measured programs "
       "by one innermost tile length (CPU: half as many as the random ones, rounded up), and `eps_greedy` random"},
      {"eps_greedy", &S::eps_greedy, 0, 1, "share of states per round sampled at random (without the model)"},
      {"transfer_per_round", &S::transfer_per_round, 0, 1e5,
       "per round, up to this many of the best measured programs of the run's other tasks (in their rank order) whose "
       "steps replay on this task (the same stages and loop extents: a dilated conv and a conv of one shape) are "
       "measured first, without the model; 0 = off"},
      {"population", &S::population, 1, 1e6, "evolutionary population"},
      {"generations", &S::generations, 0, 1000, "evolutionary generations per round"},
      {"mutation_prob", &S::mutation_prob, 0, 1, "probability that a child is a mutation of a parent"},
      {"crossover_prob", &S::crossover_prob, 0, 1,
       "probability that a child is a crossover of two parents (else a copy); with `mutation_prob` at most 1"},
      {"init_measured_ratio", &S::init_measured_ratio, 0, 1,
       "share of the initial population taken from the best measured states"},
      {"init_min_fresh", &S::init_min_fresh, 0, 1e6, "at least this many fresh samples in the initial population"},
      {"early_stopping", &S::early_stopping, 0, 1e6,
       "stop a task after this many rounds without improvement (0 = off)"},
      {"model_warmup_records", &S::model_warmup_records, 0, 1e6,
       "while the model has learned from fewer programs (a pretrained file's included), random scores instead"},
      {"seed", &S::seed, 0, 0, "the one seed all randomness flows from"},
      {"strategy", &S::strategy, 0, 0,
       "`evolutionary` (Ansor) or `random` (pure random search, the ablation baseline: no model, no evolution)"},
      {"task_scheduler", &S::task_scheduler, 0, 0, "`gradient` (Ansor) or `round_robin`"},
      {"scheduler_alpha", &S::scheduler_alpha, 0, 1, "weight of the gradient scheduler's backward gradient"},
      {"scheduler_beta", &S::scheduler_beta, 0, 1e6, "bound of its similarity-based forward gradient"},
      {"scheduler_window", &S::scheduler_window, 1, 1000, "its backward window, in rounds"},
      {"scheduler_eps", &S::scheduler_eps, 0, 1, "its exploration: share of rounds given to a random task"},
      {"confirm_top", &S::confirm_top, 0, 1e5,
       "after the budget, each task's `confirm_top` best programs are measured `confirm_rounds` more times (not "
       "trials; appended to the log) and the best is the program with the lowest median over all its "
       "measurements: the fastest of a thousand single measurements on a shared machine is partly luck. "
       "0 = off (Ansor's behaviour)"},
      {"confirm_rounds", &S::confirm_rounds, 0, 1000, "re-measurements of each confirmed program"},
  };
  return f;
}

std::string range_text(double lo, double hi) {
  std::ostringstream os;
  os << std::setprecision(12) << "[" << lo << ", " << hi << "]";
  return os.str();
}

template <typename T>
void parse_field(const nlohmann::json& v, const std::string& where, const Field& f, T& out) {
  if constexpr (std::is_enum_v<T>) {
    const auto& names = names_of(static_cast<T*>(nullptr));
    for (size_t i = 0; i < names.size(); ++i)
      if (v.is_string() && v.get<std::string>() == names[i]) {
        out = static_cast<T>(i);
        return;
      }
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : " or ") + ("\"" + n + "\"");
    throw LoomError(where + ": expected " + list + ", got " + v.dump());
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
      throw LoomError(where + ": expected a non-negative integer, got " + v.dump());
    out = v.get<uint64_t>();
  } else if constexpr (std::is_integral_v<T>) {
    if (!v.is_number_integer() || v.get<int64_t>() < f.lo || v.get<int64_t>() > f.hi)
      throw LoomError(where + ": expected an integer in " + range_text(f.lo, f.hi) + ", got " + v.dump());
    out = static_cast<T>(v.get<int64_t>());
  } else {
    if (!v.is_number() || v.get<double>() < f.lo || v.get<double>() > f.hi)
      throw LoomError(where + ": expected a number in " + range_text(f.lo, f.hi) + ", got " + v.dump());
    out = v.get<double>();
  }
}

template <typename T>
nlohmann::json value_json(const T& x) {
  if constexpr (std::is_enum_v<T>) {
    return names_of(static_cast<T*>(nullptr)).at(static_cast<size_t>(x));
  } else {
    return x;
  }
}

}  // namespace

SearchSettings SearchSettings::from_json(const nlohmann::json& j, const std::string& path) {
  SearchSettings s;
  if (j.is_null()) return s;
  if (!j.is_object()) throw LoomError(path + ": expected an object");
  for (const auto& item : j.items()) {
    const std::string& k = item.key();
    const nlohmann::json& v = item.value();
    const Field* field = nullptr;
    for (const Field& f : fields())
      if (k == f.key) field = &f;
    if (!field) throw LoomError(path + "." + k + ": unknown key");
    std::visit([&](auto member) { parse_field(v, path + "." + k, *field, s.*member); }, field->member);
  }
  if (s.mutation_prob + s.crossover_prob > 1.0)
    throw LoomError(path + ": mutation_prob + crossover_prob must not exceed 1");
  return s;
}

nlohmann::json SearchSettings::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const Field& f : fields()) std::visit([&](auto member) { j[f.key] = value_json(this->*member); }, f.member);
  return j;
}

std::string SearchSettings::doc_table(const std::string& prefix) {
  const SearchSettings defaults;
  std::string out;
  for (const Field& f : fields()) {
    std::string def, range;
    std::visit(
        [&](auto member) {
          using T = std::remove_cv_t<std::remove_reference_t<decltype(defaults.*member)>>;
          nlohmann::json d = value_json(defaults.*member);
          def = d.is_string() ? "`" + d.get<std::string>() + "`" : d.dump();
          if constexpr (std::is_enum_v<T>) {
            for (const auto& n : names_of(static_cast<T*>(nullptr))) range += (range.empty() ? "" : ", ") + ("`" + n + "`");
          } else if constexpr (std::is_same_v<T, uint64_t>) {
            range = "≥ 0";
          } else {
            range = range_text(f.lo, f.hi);
          }
        },
        f.member);
    out += "| `" + prefix + f.key + "` | " + f.doc + " | " + range + " | " + def + " |\n";
  }
  return out;
}

}  // namespace loom
