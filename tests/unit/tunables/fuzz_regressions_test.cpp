// Defects the RT_TUNE fuzz harness found (tests/fuzz/tunables_fuzz.cpp; the inputs are replayed
// from tests/fuzz/regressions/tunables by the test fuzz.tunables.replay).
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "rt/error.hpp"
#include "tunables/tunables.hpp"

namespace {

std::string error_of(std::string_view text) {
  try {
    rt::tun::parse(text);
  } catch (const rt::config_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "parse accepted the input";
  return {};
}

bool has_control_character(const std::string& s) {
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return true;
  }
  return false;
}

// An item with a newline inside ("a<LF>b") was quoted raw: a two-line message (rt/error.hpp
// promises one line). Control characters are now escaped where the item is quoted.
TEST(fuzz_regressions, newline_inside_an_item_is_escaped_in_the_one_line_message) {
  const std::string what = error_of("a\nb");
  EXPECT_FALSE(has_control_character(what)) << what;
  EXPECT_EQ(what.rfind("RT_TUNE item 'a\\nb': unknown name 'a\\nb'", 0), 0u) << what;
}

// The fuzzer's first crash: an out-of-range value followed by raw bytes 01 00 00 00, all quoted
// twice (the item, then the value); every one of them is now written as \xNN.
TEST(fuzz_regressions, control_bytes_and_nul_inside_a_value_are_escaped) {
  const std::string input("pelt_period_us=9999999999999999999\x01\0\0\0" "9999", 42);
  const std::string what = error_of(input);
  EXPECT_FALSE(has_control_character(what)) << what;
  EXPECT_NE(what.find("'9999999999999999999\\x01\\x00\\x00\\x009999' is not a decimal integer"), std::string::npos) << what;
}

// Whitespace around items is still trimmed, not escaped: only what remains is quoted.
TEST(fuzz_regressions, escaping_leaves_trimmed_whitespace_alone) {
  const std::string what = error_of("\tsearch_rounds=65\n");
  EXPECT_EQ(what.rfind("RT_TUNE item 'search_rounds=65': value 65 out of range", 0), 0u) << what;
}

}  // namespace
