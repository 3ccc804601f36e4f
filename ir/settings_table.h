// Settings as data: one table per settings struct, of {key, member, range,
// doc} rows, drives the strict parsing of its JSON object (unknown keys and
// out-of-range values are one-line errors naming the field's path), the
// start-up echo (to_json) and the documentation table (`loom config doc`,
// whose output the docs hold and a test compares). Defaults are the struct's
// member initializers, or the `defaults` a caller passes.
//
//   const SettingsTable<MeasureOptions>& table() {
//     static const SettingsTable<MeasureOptions> t({
//         integer("repeat", &MeasureOptions::repeat, 1, 1000, "timed groups"),
//         ...});
//     return t;
//   }
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iomanip>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/error.h"

namespace loom {

template <typename S>
struct SettingField {
  std::string key;
  std::string doc;
  std::string range;  // the docs' "range" column
  std::string default_text;  // the docs' "default" column when the default is not a value (else "")
  // Reads `v` (the value of `where`) into `s`; throws LoomError naming `where`.
  std::function<void(const nlohmann::json& v, const std::string& where, S& s)> parse;
  std::function<nlohmann::json(const S& s)> get;
};

// "a, b or c" (`quote` around each name; `last_sep` before the last): the
// choices of a setting, or of any list, in messages and docs.
inline std::string alternatives(const std::vector<std::string>& names, const char* quote = "",
                                const char* last_sep = " or ") {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    s += std::string(i == 0 ? "" : i + 1 == names.size() ? last_sep : ", ") + quote + names[i] + quote;
  return s;
}

namespace settings_detail {

inline std::string range_text(double lo, double hi) {
  std::ostringstream os;
  os << std::setprecision(12) << "[" << lo << ", " << hi << "]";
  return os.str();
}


}  // namespace settings_detail

// An integer member in [lo, hi].
template <typename S, typename T>
SettingField<S> integer_setting(const char* key, T S::*member, int64_t lo, int64_t hi, const char* doc) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  SettingField<S> f{key, doc, settings_detail::range_text(static_cast<double>(lo), static_cast<double>(hi)), "", {}, {}};
  f.parse = [member, lo, hi](const nlohmann::json& v, const std::string& where, S& s) {
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) ||
        v.get<int64_t>() < lo || v.get<int64_t>() > hi)
      throw LoomError(where + ": expected an integer in " +
                      settings_detail::range_text(static_cast<double>(lo), static_cast<double>(hi)) + ", got " +
                      v.dump());
    s.*member = static_cast<T>(v.get<int64_t>());
  };
  f.get = [member](const S& s) { return nlohmann::json(s.*member); };
  return f;
}

// A non-negative 64-bit integer member (seeds).
template <typename S>
SettingField<S> unsigned_setting(const char* key, uint64_t S::*member, const char* doc) {
  SettingField<S> f{key, doc, "≥ 0", "", {}, {}};
  f.parse = [member](const nlohmann::json& v, const std::string& where, S& s) {
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
      throw LoomError(where + ": expected a non-negative integer, got " + v.dump());
    s.*member = v.get<uint64_t>();
  };
  f.get = [member](const S& s) { return nlohmann::json(s.*member); };
  return f;
}

// A number member in [lo, hi].
template <typename S>
SettingField<S> number_setting(const char* key, double S::*member, double lo, double hi, const char* doc) {
  SettingField<S> f{key, doc, settings_detail::range_text(lo, hi), "", {}, {}};
  f.parse = [member, lo, hi](const nlohmann::json& v, const std::string& where, S& s) {
    if (!v.is_number() || v.get<double>() < lo || v.get<double>() > hi)
      throw LoomError(where + ": expected a number in " + settings_detail::range_text(lo, hi) + ", got " + v.dump());
    s.*member = v.get<double>();
  };
  f.get = [member](const S& s) { return nlohmann::json(s.*member); };
  return f;
}

template <typename S>
SettingField<S> bool_setting(const char* key, bool S::*member, const char* doc) {
  SettingField<S> f{key, doc, "`true`, `false`", "", {}, {}};
  f.parse = [member](const nlohmann::json& v, const std::string& where, S& s) {
    if (!v.is_boolean()) throw LoomError(where + ": expected true or false, got " + v.dump());
    s.*member = v.get<bool>();
  };
  f.get = [member](const S& s) { return nlohmann::json(s.*member); };
  return f;
}

// A string member; `names` non-empty: one of them.
template <typename S>
SettingField<S> string_setting(const char* key, std::string S::*member, const char* doc,
                               std::vector<std::string> names = {}) {
  SettingField<S> f{key, doc, names.empty() ? "text" : alternatives(names, "`", ", "), "", {}, {}};
  f.parse = [member, names](const nlohmann::json& v, const std::string& where, S& s) {
    if (!v.is_string()) throw LoomError(where + ": expected a string, got " + v.dump());
    const std::string x = v.get<std::string>();
    if (!names.empty() && std::find(names.begin(), names.end(), x) == names.end())
      throw LoomError(where + ": expected " + alternatives(names, "\"", " or ") + ", got " + v.dump());
    s.*member = x;
  };
  f.get = [member](const S& s) { return nlohmann::json(s.*member); };
  return f;
}

// An enum member named by `names`, in the enum's order.
template <typename S, typename E>
SettingField<S> enum_setting(const char* key, E S::*member, std::vector<std::string> names, const char* doc) {
  static_assert(std::is_enum_v<E>);
  SettingField<S> f{key, doc, alternatives(names, "`", ", "), "", {}, {}};
  f.parse = [member, names](const nlohmann::json& v, const std::string& where, S& s) {
    for (size_t i = 0; i < names.size(); ++i)
      if (v.is_string() && v.get<std::string>() == names[i]) {
        s.*member = static_cast<E>(i);
        return;
      }
    throw LoomError(where + ": expected " + alternatives(names, "\"", " or ") + ", got " + v.dump());
  };
  f.get = [member, names](const S& s) { return nlohmann::json(names.at(static_cast<size_t>(s.*member))); };
  return f;
}

// Any other value: its own parse and echo (null: left out of the echo).
template <typename S>
SettingField<S> custom_setting(const char* key, const std::string& range, const char* default_text, const char* doc,
                               std::function<void(const nlohmann::json&, const std::string&, S&)> parse,
                               std::function<nlohmann::json(const S&)> get) {
  return SettingField<S>{key, doc, range, default_text, std::move(parse), std::move(get)};
}

template <typename S>
class SettingsTable {
 public:
  explicit SettingsTable(std::vector<SettingField<S>> fields) : fields_(std::move(fields)) {}

  const std::vector<SettingField<S>>& fields() const { return fields_; }

  // `j` (null: nothing given) read over `defaults`, in the table's order (a
  // field's parse may read what an earlier one set); `given`, when not
  // null, receives the keys `j` holds.
  S parse(const nlohmann::json& j, const std::string& path, S defaults = S{},
          std::set<std::string>* given = nullptr) const {
    parse_into(j, path, defaults, given);
    return defaults;
  }
  void parse_into(const nlohmann::json& j, const std::string& path, S& s,
                  std::set<std::string>* given = nullptr) const {
    if (j.is_null()) return;
    const std::string prefix = path.empty() ? "" : path + ".";
    if (!j.is_object()) throw LoomError(path + ": expected an object");
    for (const auto& item : j.items())
      if (!find(item.key())) throw LoomError(prefix + item.key() + ": unknown key");
    for (const auto& f : fields_) {
      if (!j.contains(f.key)) continue;
      f.parse(j[f.key], prefix + f.key, s);
      if (given) given->insert(f.key);
    }
  }

  // Every value (a null from a custom field's echo is left out).
  nlohmann::json to_json(const S& s) const {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& f : fields_) {
      nlohmann::json v = f.get(s);
      if (!v.is_null()) j[f.key] = std::move(v);
    }
    return j;
  }

  // The Markdown rows `| key | meaning | range | default |`, keys prefixed
  // by `prefix` (e.g. "search."), defaults those of `defaults`.
  std::string doc_rows(const std::string& prefix, const S& defaults = S{}) const {
    std::string out;
    for (const auto& f : fields_) {
      std::string def = f.default_text;
      if (def.empty()) {
        const nlohmann::json d = f.get(defaults);
        def = d.is_string() ? (d.get<std::string>().empty() ? "\"\"" : "`" + d.get<std::string>() + "`") : d.dump();
      }
      out += "| `" + prefix + f.key + "` | " + f.doc + " | " + f.range + " | " + def + " |\n";
    }
    return out;
  }

 private:
  const SettingField<S>* find(const std::string& key) const {
    for (const auto& f : fields_)
      if (f.key == key) return &f;
    return nullptr;
  }

  std::vector<SettingField<S>> fields_;
};

}  // namespace loom
