#include "tunables/tunables.hpp"

#include <algorithm>
#include <charconv>
#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "core/printable.hpp"
#include "rt/error.hpp"

namespace rt::tun {

// Every row's default lies inside its range and its type is a plain integer: checked at
// compile time so a bad row in the table never reaches a user.
#define RT_TUNABLE(name, type, def, lo, hi, unit, origin, doc)                                       \
  static_assert(std::integral<type> && !std::same_as<type, bool>, "tunables.def: " #name " must have an integer type"); \
  static_assert(type{lo} <= type{def} && type{def} <= type{hi}, "tunables.def: default of " #name " outside [min, max]");
#include "tunables/tunables.def"
#undef RT_TUNABLE

namespace {

enum class value_status { ok, malformed, out_of_range };

// Parses a whole decimal integer (an optional '-' then digits) and stores it when in [lo, hi].
template <class T>
value_status parse_value(std::string_view text, T lo, T hi, T& out) {
  T v{};
  const char* const end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec == std::errc::invalid_argument || ptr != end) return value_status::malformed;
  if (ec == std::errc::result_out_of_range || v < lo || v > hi) return value_status::out_of_range;
  out = v;
  return value_status::ok;
}

struct tunable_row {
  std::string_view name;
  std::string_view unit;
  std::string_view origin;
  std::string def;
  std::string lo;
  std::string hi;
  std::string (*value)(const tunables&);
  value_status (*set)(tunables&, std::string_view);
};

struct feature_row {
  std::string_view name;
  bool def;
  std::string_view origin;
  bool features::*member;
};

const std::vector<tunable_row>& tunable_rows() {
  static const std::vector<tunable_row> rows = {
#define RT_TUNABLE(name_, type_, def_, lo_, hi_, unit_, origin_, doc_)                               \
  tunable_row{#name_,                                                                                 \
              unit_,                                                                                  \
              origin_,                                                                                \
              std::to_string(type_{def_}),                                                            \
              std::to_string(type_{lo_}),                                                             \
              std::to_string(type_{hi_}),                                                             \
              [](const tunables& t) { return std::to_string(t.name_); },                             \
              [](tunables& t, std::string_view v) { return parse_value<type_>(v, lo_, hi_, t.name_); }},
#include "tunables/tunables.def"
#undef RT_TUNABLE
  };
  return rows;
}

const std::vector<feature_row>& feature_rows() {
  static const std::vector<feature_row> rows = {
#define RT_FEATURE(NAME, def_, origin_, doc_) feature_row{#NAME, def_, origin_, &features::NAME},
#include "tunables/features.def"
#undef RT_FEATURE
  };
  return rows;
}

constexpr std::string_view kNoPrefix = "NO_";

std::string_view trim(std::string_view s) {
  constexpr std::string_view ws = " \t\n\r\f\v";
  const auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

const tunable_row* find_tunable(std::string_view name) {
  for (const tunable_row& r : tunable_rows()) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

const feature_row* find_feature(std::string_view name) {
  for (const feature_row& r : feature_rows()) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

// A feature named by "NAME" or "NO_NAME"; on is false for the NO_ form.
struct feature_ref {
  const feature_row* row = nullptr;
  bool on = true;
};

feature_ref find_feature_item(std::string_view item) {
  if (const feature_row* r = find_feature(item)) return {r, true};
  if (item.starts_with(kNoPrefix)) {
    if (const feature_row* r = find_feature(item.substr(kNoPrefix.size()))) return {r, false};
  }
  return {};
}

// Concatenates its pieces. Messages are built with this rather than chains of operator+ on
// temporaries, which g++ 12 at -O3 misreports under -Wrestrict (GCC bug 105329).
std::string cat(std::initializer_list<std::string_view> parts) {
  std::size_t n = 0;
  for (const std::string_view p : parts) n += p.size();
  std::string s;
  s.reserve(n);
  for (const std::string_view p : parts) s += p;
  return s;
}

std::string range_text(const tunable_row& r) { return cat({"[", r.lo, ", ", r.hi, "] ", r.unit}); }

std::string valid_names() {
  std::string s = "valid tunables (name=value): ";
  bool first = true;
  for (const tunable_row& r : tunable_rows()) {
    if (!first) s += ", ";
    s += r.name;
    first = false;
  }
  s += "; valid features (NAME enables, NO_NAME disables): ";
  first = true;
  for (const feature_row& r : feature_rows()) {
    if (!first) s += ", ";
    s += r.name;
    first = false;
  }
  return s;
}

// The item is quoted with its control characters escaped: the message stays one line.
[[noreturn]] void fail(std::string_view item, std::string_view why) {
  throw rt::config_error(rt::core::printable(cat({"RT_TUNE item '", item, "': ", why})));
}

void apply_assignment(settings& out, std::string_view item, std::string_view name, std::string_view value) {
  const tunable_row* row = find_tunable(name);
  if (row == nullptr) {
    if (find_feature_item(name).row != nullptr) {
      fail(item, cat({"'", name, "' is a feature and takes no value: write ", name, " or NO_", name}));
    }
    fail(item, cat({"unknown tunable '", name, "'; ", valid_names()}));
  }
  switch (row->set(out.t, value)) {
    case value_status::ok:
      return;
    case value_status::malformed:
      fail(item, cat({"'", value, "' is not a decimal integer; ", row->name, " takes an integer in ", range_text(*row)}));
    case value_status::out_of_range:
      fail(item, cat({"value ", value, " out of range: ", row->name, " takes an integer in ", range_text(*row)}));
  }
}

void apply_feature(settings& out, std::string_view item) {
  const feature_ref ref = find_feature_item(item);
  if (ref.row == nullptr) {
    if (const tunable_row* t = find_tunable(item)) {
      fail(item, cat({"tunable '", item, "' needs a value: ", item, "=<integer in ", range_text(*t), ">"}));
    }
    fail(item, cat({"unknown name '", item, "'; ", valid_names()}));
  }
  out.f.*(ref.row->member) = ref.on;
}

void pad(std::string& line, std::string_view cell, std::size_t width) {
  line += cell;
  line.append(width + 2 - std::min(width, cell.size()), ' ');
}

}  // namespace

settings parse(std::string_view rt_tune, const settings& base) {
  settings out = base;
  std::size_t pos = 0;
  while (pos <= rt_tune.size()) {
    std::size_t comma = rt_tune.find(',', pos);
    if (comma == std::string_view::npos) comma = rt_tune.size();
    const std::string_view item = trim(rt_tune.substr(pos, comma - pos));
    pos = comma + 1;
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      apply_feature(out, item);
    } else {
      apply_assignment(out, item, trim(item.substr(0, eq)), trim(item.substr(eq + 1)));
    }
  }
  return out;
}

std::string describe(const settings& s) {
  std::size_t w_name = 4, w_value = 5, w_def = 7, w_range = 5, w_unit = 4;
  for (const tunable_row& r : tunable_rows()) {
    w_name = std::max(w_name, r.name.size());
    w_value = std::max(w_value, r.value(s.t).size());
    w_def = std::max(w_def, r.def.size());
    w_range = std::max(w_range, r.lo.size() + r.hi.size() + 4);
    w_unit = std::max(w_unit, r.unit.size());
  }
  std::string out = "tunables (RT_TUNE name=value; * = not the default)\n";
  std::string head = "  ";
  pad(head, "name", w_name);
  pad(head, "value", w_value);
  pad(head, "default", w_def);
  pad(head, "range", w_range);
  pad(head, "unit", w_unit);
  out += head;
  out += "origin\n";
  for (const tunable_row& r : tunable_rows()) {
    const std::string value = r.value(s.t);
    std::string line = value == r.def ? "  " : "* ";
    pad(line, r.name, w_name);
    pad(line, value, w_value);
    pad(line, r.def, w_def);
    pad(line, cat({"[", r.lo, ", ", r.hi, "]"}), w_range);
    pad(line, r.unit, w_unit);
    out += line;
    out += r.origin;
    out += '\n';
  }

  std::size_t w_feat = 4;
  for (const feature_row& r : feature_rows()) w_feat = std::max(w_feat, r.name.size());
  out += "features (RT_TUNE NAME enables, NO_NAME disables; * = not the default)\n";
  head = "  ";
  pad(head, "name", w_feat);
  pad(head, "value", 5);
  pad(head, "default", 7);
  out += head;
  out += "origin\n";
  for (const feature_row& r : feature_rows()) {
    const bool on = s.f.*(r.member);
    std::string line = on == r.def ? "  " : "* ";
    pad(line, r.name, w_feat);
    pad(line, on ? "on" : "off", 5);
    pad(line, r.def ? "on" : "off", 7);
    out += line;
    out += r.origin;
    out += '\n';
  }
  return out;
}

std::string encode(const settings& s) {
  std::string out;
  const auto add = [&out](std::string_view item) {
    if (!out.empty()) out += ',';
    out += item;
  };
  for (const tunable_row& r : tunable_rows()) {
    const std::string value = r.value(s.t);
    if (value != r.def) add(cat({r.name, "=", value}));
  }
  for (const feature_row& r : feature_rows()) {
    const bool on = s.f.*(r.member);
    if (on != r.def) add(on ? std::string(r.name) : cat({kNoPrefix, r.name}));
  }
  return out;
}

}  // namespace rt::tun
