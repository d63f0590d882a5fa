// RT_TUNE parsing, errors, describe() and encode(). Expected values come from the .def rows
// themselves (included here with this file's own X-macro definitions), never from parse().
#include "tunables/tunables.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "rt/error.hpp"

namespace {

using rt::tun::describe;
using rt::tun::encode;
using rt::tun::parse;
using rt::tun::settings;

static_assert(std::is_base_of_v<std::invalid_argument, rt::config_error>);

const std::vector<std::string> kTunableNames = {
#define RT_TUNABLE(name, type, def, lo, hi, unit, origin, doc) #name,
#include "tunables/tunables.def"
#undef RT_TUNABLE
};

const std::vector<std::string> kFeatureNames = {
#define RT_FEATURE(NAME, def, origin, doc) #NAME,
#include "tunables/features.def"
#undef RT_FEATURE
};

// what() of the config_error parse(text) throws; a test failure when it throws nothing.
std::string error_of(std::string_view text) {
  try {
    parse(text);
  } catch (const rt::config_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "parse(\"" << text << "\") did not throw";
  return {};
}

bool contains(const std::string& haystack, std::string_view needle) { return haystack.find(needle) != std::string::npos; }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> tokens_of(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

// The describe() line of row `name` (the token after the optional '*' marker).
std::string line_for(const std::string& text, const std::string& name) {
  std::string found;
  int matches = 0;
  for (const std::string& line : lines_of(text)) {
    std::vector<std::string> t = tokens_of(line);
    if (!t.empty() && t[0] == "*") t.erase(t.begin());
    if (!t.empty() && t[0] == name) {
      found = line;
      ++matches;
    }
  }
  EXPECT_EQ(matches, 1) << "rows named " << name;
  return found;
}

TEST(TunablesParse, EmptyMeansDefaults) {
  EXPECT_EQ(parse(""), settings{});
  EXPECT_EQ(parse("   \t "), settings{});
  EXPECT_EQ(parse(",, ,"), settings{});
}

TEST(TunablesTable, DefaultsWithinRanges) {
#define RT_TUNABLE(name, type, def, lo, hi, unit, origin, doc)                  \
  EXPECT_LE(type{lo}, type{def}) << #name;                                      \
  EXPECT_LE(type{def}, type{hi}) << #name;                                      \
  EXPECT_LT(type{lo}, type{hi}) << #name << ": a range of one value is not a tunable"; \
  EXPECT_FALSE(std::string_view(unit).empty()) << #name << " needs a unit";     \
  EXPECT_FALSE(std::string_view(origin).empty()) << #name << " needs an origin"; \
  EXPECT_FALSE(std::string_view(doc).empty()) << #name << " needs a doc";
#include "tunables/tunables.def"
#undef RT_TUNABLE
#define RT_FEATURE(NAME, def, origin, doc)                                       \
  EXPECT_FALSE(std::string_view(origin).empty()) << #NAME << " needs an origin"; \
  EXPECT_FALSE(std::string_view(doc).empty()) << #NAME << " needs a doc";
#include "tunables/features.def"
#undef RT_FEATURE
}

TEST(TunablesTable, NamesAreUniqueAndNotPrefixedNo) {
  std::vector<std::string> all = kTunableNames;
  all.insert(all.end(), kFeatureNames.begin(), kFeatureNames.end());
  for (std::size_t i = 0; i < all.size(); ++i) {
    for (std::size_t j = i + 1; j < all.size(); ++j) EXPECT_NE(all[i], all[j]);
  }
  // "NO_X" disables feature X, so no feature may itself be called NO_something.
  for (const std::string& f : kFeatureNames) EXPECT_NE(f.rfind("NO_", 0), 0u) << f;
}

TEST(TunablesParse, EveryTunableAcceptsItsBoundsAndRejectsBeyond) {
#define RT_TUNABLE(name, type, def, lo, hi, unit, origin, doc)                                      \
  {                                                                                                 \
    const std::string lo_s = std::to_string(type{lo});                                              \
    const std::string hi_s = std::to_string(type{hi});                                              \
    EXPECT_EQ(parse(#name "=" + lo_s).t.name, type{lo});                                            \
    EXPECT_EQ(parse(#name "=" + hi_s).t.name, type{hi});                                            \
    const std::string range = "[" + lo_s + ", " + hi_s + "] " + unit;                               \
    const std::string below = #name "=" + std::to_string(static_cast<long long>(type{lo}) - 1);     \
    const std::string above = #name "=" + std::to_string(static_cast<long long>(type{hi}) + 1);     \
    for (const std::string& item : {below, above}) {                                                \
      const std::string e = error_of(item);                                                         \
      EXPECT_TRUE(contains(e, "'" + item + "'")) << e;                                              \
      EXPECT_TRUE(contains(e, "out of range")) << e;                                                \
      EXPECT_TRUE(contains(e, range)) << e;                                                         \
    }                                                                                               \
  }
#include "tunables/tunables.def"
#undef RT_TUNABLE
}

TEST(TunablesParse, EveryFeatureTurnsOnAndOff) {
#define RT_FEATURE(NAME, def, origin, doc)              \
  {                                                     \
    settings off;                                       \
    off.f.NAME = false;                                 \
    settings on;                                        \
    on.f.NAME = true;                                   \
    EXPECT_TRUE(parse(#NAME, off).f.NAME) << #NAME;     \
    EXPECT_FALSE(parse("NO_" #NAME, on).f.NAME) << #NAME; \
    settings expect = off;                              \
    expect.f.NAME = true;                               \
    EXPECT_EQ(parse(#NAME, off), expect) << #NAME;      \
  }
#include "tunables/features.def"
#undef RT_FEATURE
}

TEST(TunablesParse, WhitespaceAndMixedItems) {
  const settings s = parse(" \tdeque_log2_capacity = 10 , NO_SIS_PROP ,SIS_UTIL\t,  search_rounds=7 ");
  settings expect;
  expect.t.deque_log2_capacity = 10;
  expect.t.search_rounds = 7;
  expect.f.SIS_PROP = false;
  expect.f.SIS_UTIL = true;
  EXPECT_EQ(s, expect);
}

TEST(TunablesParse, LaterItemsOverrideEarlierOnes) {
  EXPECT_EQ(parse("search_rounds=3,search_rounds=5").t.search_rounds, 5);
  EXPECT_FALSE(parse("SIS_PROP,NO_SIS_PROP").f.SIS_PROP);
  EXPECT_TRUE(parse("NO_SIS_PROP,SIS_PROP").f.SIS_PROP);
  EXPECT_EQ(parse("search_rounds=3,").t.search_rounds, 3);
}

TEST(TunablesParse, BaseIsKeptForUnmentionedRows) {
  settings base;
  base.t.deque_log2_capacity = 12;
  base.f.ASYM_FENCE = false;
  const settings s = parse("SIS_UTIL,spin_iterations=0", base);
  settings expect = base;
  expect.f.SIS_UTIL = true;
  expect.t.spin_iterations = 0;
  EXPECT_EQ(s, expect);
  EXPECT_EQ(parse("", base), base);
}

TEST(TunablesErrors, UnknownTunableListsValidNames) {
  const std::string e = error_of("no_such_knob=1");
  EXPECT_TRUE(contains(e, "'no_such_knob=1'")) << e;
  EXPECT_TRUE(contains(e, "unknown tunable 'no_such_knob'")) << e;
  for (const std::string& n : kTunableNames) EXPECT_TRUE(contains(e, n)) << n << " missing from: " << e;
  for (const std::string& n : kFeatureNames) EXPECT_TRUE(contains(e, n)) << n << " missing from: " << e;
  EXPECT_FALSE(contains(e, "\n"));
}

TEST(TunablesErrors, UnknownFeatureListsValidNames) {
  for (const std::string item : {"BOGUS", "NO_BOGUS", "sis_prop", "NO_", "NO_search_rounds"}) {
    const std::string e = error_of(item);
    EXPECT_TRUE(contains(e, "'" + item + "'")) << e;
    EXPECT_TRUE(contains(e, "unknown name")) << e;
    EXPECT_TRUE(contains(e, "NO_NAME disables")) << e;
    for (const std::string& n : kFeatureNames) EXPECT_TRUE(contains(e, n)) << n << " missing from: " << e;
    for (const std::string& n : kTunableNames) EXPECT_TRUE(contains(e, n)) << n << " missing from: " << e;
  }
}

TEST(TunablesErrors, MalformedValues) {
  for (const std::string value : {"abc", "1.5", "12abc", "", "+5", "0x10", "1 2", "--1", "5k"}) {
    const std::string item = "search_rounds=" + value;
    const std::string e = error_of(item);
    EXPECT_TRUE(contains(e, "'" + item + "'")) << e;
    EXPECT_TRUE(contains(e, "not a decimal integer")) << e;
    EXPECT_TRUE(contains(e, "search_rounds takes an integer in [1, 64] rounds")) << e;
  }
}

TEST(TunablesErrors, OutOfRangeNamesRangeAndUnit) {
  for (const std::string value : {"0", "65", "-1", "99999999999999999999", "-99999999999999999999"}) {
    const std::string item = "search_rounds=" + value;
    const std::string e = error_of(item);
    EXPECT_TRUE(contains(e, "'" + item + "'")) << e;
    EXPECT_TRUE(contains(e, "out of range")) << e;
    EXPECT_TRUE(contains(e, "[1, 64] rounds")) << e;
  }
  const std::string e = error_of("migration_cost_ns=100000001");
  EXPECT_TRUE(contains(e, "[0, 100000000] ns")) << e;
}

TEST(TunablesErrors, FeatureWithValueAndTunableWithout) {
  std::string e = error_of("SIS_PROP=1");
  EXPECT_TRUE(contains(e, "'SIS_PROP' is a feature and takes no value")) << e;
  EXPECT_TRUE(contains(e, "SIS_PROP or NO_SIS_PROP")) << e;
  e = error_of("NO_SIS_PROP = 0");
  EXPECT_TRUE(contains(e, "is a feature and takes no value")) << e;
  e = error_of("search_rounds");
  EXPECT_TRUE(contains(e, "tunable 'search_rounds' needs a value")) << e;
  EXPECT_TRUE(contains(e, "[1, 64] rounds")) << e;
  e = error_of("=5");
  EXPECT_TRUE(contains(e, "unknown tunable ''")) << e;
}

TEST(TunablesErrors, AnErrorAfterGoodItemsStillThrows) {
  const std::string e = error_of("search_rounds=3, SIS_UTIL, search_rounds=999");
  EXPECT_TRUE(contains(e, "'search_rounds=999'")) << e;
}

TEST(TunablesDescribe, DefaultsListEveryRowUnmarked) {
  const std::string text = describe(settings{});
  const std::vector<std::string> lines = lines_of(text);
  // Two headings, two column-title lines, one line per row.
  EXPECT_EQ(lines.size(), 4 + kTunableNames.size() + kFeatureNames.size());
  EXPECT_EQ(lines.front().rfind("tunables", 0), 0u) << lines.front();
  int feature_headings = 0;
  for (const std::string& l : lines) {
    EXPECT_NE(l.rfind("*", 0), 0u) << "marked at defaults: " << l;
    feature_headings += l.rfind("features", 0) == 0 ? 1 : 0;
  }
  EXPECT_EQ(feature_headings, 1);
#define RT_TUNABLE(name, type, def, lo, hi, unit, origin, doc)                                 \
  {                                                                                            \
    const std::string line = line_for(text, #name);                                            \
    const std::vector<std::string> t = tokens_of(line);                                        \
    ASSERT_GE(t.size(), 3u) << line;                                                           \
    EXPECT_EQ(t[1], std::to_string(type{def})) << line;                                        \
    EXPECT_EQ(t[2], std::to_string(type{def})) << line;                                        \
    EXPECT_TRUE(contains(line, "[" + std::to_string(type{lo}) + ", " + std::to_string(type{hi}) + "]")) << line; \
    EXPECT_TRUE(contains(line, unit)) << line;                                                 \
    EXPECT_TRUE(contains(line, origin)) << line;                                               \
  }
#include "tunables/tunables.def"
#undef RT_TUNABLE
#define RT_FEATURE(NAME, def, origin, doc)                      \
  {                                                             \
    const std::string line = line_for(text, #NAME);             \
    const std::vector<std::string> t = tokens_of(line);         \
    ASSERT_GE(t.size(), 3u) << line;                            \
    EXPECT_EQ(t[1], (def) ? "on" : "off") << line;              \
    EXPECT_EQ(t[2], (def) ? "on" : "off") << line;              \
    EXPECT_TRUE(contains(line, origin)) << line;                \
  }
#include "tunables/features.def"
#undef RT_FEATURE
}

TEST(TunablesDescribe, MarksExactlyTheChangedRows) {
  settings s;
  s.t.search_rounds = 5;
  s.f.SIS_PROP = false;
  const std::string text = describe(s);
  int marked = 0;
  for (const std::string& l : lines_of(text)) marked += l.rfind("* ", 0) == 0 ? 1 : 0;
  EXPECT_EQ(marked, 2) << text;
  const std::string rounds = line_for(text, "search_rounds");
  EXPECT_EQ(rounds.rfind("* ", 0), 0u) << rounds;
  EXPECT_EQ(tokens_of(rounds), (std::vector<std::string>{"*", "search_rounds", "5", "2", "[1,", "64]", "rounds", "numart:",
                                                         "unmeasured", "starting", "value"}));
  const std::string prop = line_for(text, "SIS_PROP");
  EXPECT_EQ(prop.rfind("* ", 0), 0u) << prop;
  const std::vector<std::string> t = tokens_of(prop);
  ASSERT_GE(t.size(), 4u);
  EXPECT_EQ(t[2], "off");
  EXPECT_EQ(t[3], "on");
}

TEST(TunablesEncode, DefaultsEncodeToNothing) {
  EXPECT_EQ(encode(settings{}), "");
  settings s;
  s.t.search_rounds = 5;
  s.f.SIS_PROP = false;
  s.f.SIS_UTIL = true;
  EXPECT_EQ(encode(s), "search_rounds=5,NO_SIS_PROP,SIS_UTIL");
}

TEST(TunablesEncode, RoundTripOfRandomSettings) {
  std::mt19937_64 gen(77);
  for (int iter = 0; iter < 200; ++iter) {
    settings s;
#define RT_TUNABLE(name, type, def, lo, hi, unit, origin, doc) \
  s.t.name = std::uniform_int_distribution<type>(type{lo}, type{hi})(gen);
#include "tunables/tunables.def"
#undef RT_TUNABLE
#define RT_FEATURE(NAME, def, origin, doc) s.f.NAME = (gen() & 1u) != 0;
#include "tunables/features.def"
#undef RT_FEATURE
    const std::string text = encode(s);
    ASSERT_EQ(parse(text), s) << text;
    // Only rows that differ from their default are encoded: each item alone changes the defaults.
    std::istringstream items(text);
    for (std::string item; std::getline(items, item, ',');) EXPECT_NE(parse(item), settings{}) << item;
  }
}

}  // namespace
