// The runtime's tunables and features (DESIGN.md §1 SCHED_FEAT row): one struct member per
// row of tunables.def / features.def, default-initialised from the table, overridable by
// RT_TUNE. Plain data: policy/ reads it, nothing here touches threads or clocks.
//
// RT_TUNE syntax (docs/design/tunables.md):
//   items separated by ','; whitespace around items, names and values is ignored;
//   "name=value"  sets a tunable (decimal integer, within the row's range);
//   "NAME"        enables a feature, "NO_NAME" disables it;
//   empty items are ignored (so "" and "a=1," are fine); a later item overrides an earlier one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace rt::tun {

struct tunables {
#define RT_TUNABLE(name, type, def, min, max, unit, origin, doc) type name = def;
#include "tunables/tunables.def"
#undef RT_TUNABLE
  bool operator==(const tunables&) const = default;
};

struct features {
#define RT_FEATURE(NAME, def, origin, doc) bool NAME = def;
#include "tunables/features.def"
#undef RT_FEATURE
  bool operator==(const features&) const = default;
};

struct settings {
  tunables t;
  features f;
  bool operator==(const settings&) const = default;
};

// Applies the RT_TUNE string `rt_tune` on top of `base`. Throws rt::config_error
// (rt/error.hpp) on an unknown name, a malformed item or value, or a value out of range; the
// message quotes the item and lists what is valid (the names, or the range and unit).
settings parse(std::string_view rt_tune, const settings& base = settings{});

// Every row, one per line under a "tunables" and a "features" heading: name, value, default,
// range, unit, origin; rows whose value differs from the default are marked with '*'.
std::string describe(const settings& s);

// The RT_TUNE string of the rows of `s` that differ from the defaults ("" when none), in table
// order; parse(encode(s)) == s.
std::string encode(const settings& s);

}  // namespace rt::tun
