// The trace component's JSON writer and strict reader.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "trace/json.hpp"

namespace {

using rt::trace::format_error;
using rt::trace::json_out;
using rt::trace::json_value;
using rt::trace::parse_json;

std::string write(const std::function<void(json_out&)>& body) {
  std::ostringstream os;
  json_out j(os);
  body(j);
  j.finish();
  return os.str();
}

// The message of the format_error that parsing `text` throws ("" when it does not throw).
std::string error_of(const std::string& text) {
  try {
    parse_json(text);
  } catch (const format_error& e) {
    return e.what();
  }
  return "";
}

TEST(trace_json_out, places_commas_and_ends_with_a_newline) {
  const std::string s = write([](json_out& j) {
    j.begin_object().key("a").value(1).key("b").begin_array().value(true).value("x").value(-3).end_array().key("c").begin_object()
        .end_object().end_object();
  });
  EXPECT_EQ(s, "{\"a\":1,\"b\":[true,\"x\",-3],\"c\":{}}\n");
}

TEST(trace_json_out, writes_every_integer_width) {
  const std::string s = write([](json_out& j) {
    j.begin_array()
        .value(std::numeric_limits<std::uint64_t>::max())
        .value(std::numeric_limits<std::int64_t>::min())
        .value(static_cast<unsigned char>(7))
        .value(static_cast<short>(-2))
        .end_array();
  });
  EXPECT_EQ(s, "[18446744073709551615,-9223372036854775808,7,-2]\n");
}

TEST(trace_json_out, writes_nanoseconds_as_microseconds_with_three_decimals) {
  const std::string s = write([](json_out& j) { j.begin_array().micros(0).micros(7).micros(1234567).micros(1000).end_array(); });
  EXPECT_EQ(s, "[0.000,0.007,1234.567,1.000]\n");
}

TEST(trace_json_out, escapes_strings) {
  const std::string s = write([](json_out& j) { j.value(std::string("q\"b\\n\nt\tc\x01 \xC3\xA9 bad\xFF")); });
  EXPECT_EQ(s, "\"q\\\"b\\\\n\\nt\\tc\\u0001 \xC3\xA9 bad\\ufffd\"\n");
  EXPECT_EQ(parse_json(s).text, std::string("q\"b\\n\nt\tc\x01 \xC3\xA9 bad\xEF\xBF\xBD"));
}

TEST(trace_json_out, refuses_unbalanced_documents) {
  std::ostringstream os;
  json_out j(os);
  j.begin_object();
  EXPECT_THROW(j.value(1), std::logic_error);  // a member without a key
  EXPECT_THROW(j.end_array(), std::logic_error);
  EXPECT_THROW(j.finish(), std::logic_error);
}

TEST(trace_json_reader, reads_values_in_document_order) {
  const json_value v = parse_json(" {\"b\": [1, -2.5e3, \"s\\u00e9\\ud83d\\ude00\"], \"a\": null, \"t\": true, \"f\": false} ");
  ASSERT_TRUE(v.is_object());
  ASSERT_EQ(v.members.size(), 4u);
  EXPECT_EQ(v.members[0].key, "b");
  const json_value& b = *v.find("b");
  ASSERT_EQ(b.items.size(), 3u);
  EXPECT_EQ(b.items[0].as_int(), 1);
  EXPECT_EQ(b.items[1].text, "-2.5e3");
  EXPECT_FALSE(b.items[1].as_int().has_value());
  EXPECT_EQ(b.items[2].text, "s\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(v.find("a")->t, json_value::type::null);
  EXPECT_TRUE(v.find("t")->b);
  EXPECT_FALSE(v.find("f")->b);
  EXPECT_EQ(v.find("missing"), nullptr);
}

TEST(trace_json_reader, converts_microseconds_to_nanoseconds_exactly) {
  EXPECT_EQ(parse_json("1234.567").micros_as_ns(), 1234567u);
  EXPECT_EQ(parse_json("0.007").micros_as_ns(), 7u);
  EXPECT_EQ(parse_json("12").micros_as_ns(), 12000u);
  EXPECT_EQ(parse_json("1.5").micros_as_ns(), 1500u);
  EXPECT_EQ(parse_json("1.23456").micros_as_ns(), 1234u);
  EXPECT_FALSE(parse_json("-1.0").micros_as_ns().has_value());
  EXPECT_FALSE(parse_json("1e3").micros_as_ns().has_value());
  EXPECT_FALSE(parse_json("\"1\"").micros_as_ns().has_value());
  EXPECT_FALSE(parse_json("99999999999999999999").micros_as_ns().has_value());
}

TEST(trace_json_reader, unsigned_and_signed_ranges) {
  EXPECT_EQ(parse_json("18446744073709551615").as_uint(), std::numeric_limits<std::uint64_t>::max());
  EXPECT_FALSE(parse_json("18446744073709551616").as_uint().has_value());
  EXPECT_FALSE(parse_json("-1").as_uint().has_value());
  EXPECT_EQ(parse_json("-9223372036854775808").as_int(), std::numeric_limits<std::int64_t>::min());
  EXPECT_FALSE(parse_json("9223372036854775808").as_int().has_value());
}

TEST(trace_json_reader, reports_truncation_as_truncation) {
  const std::string doc = "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"task\"},{\"ph\":\"M\"}],\"otherData\":{\"v\":1.5}}";
  for (std::size_t cut = 1; cut < doc.size(); ++cut) {
    const std::string e = error_of(doc.substr(0, cut));
    EXPECT_EQ(e.rfind("truncated JSON: the text ends at byte " + std::to_string(cut), 0), 0u) << cut << ": " << e;
  }
}

TEST(trace_json_reader, reports_syntax_errors_with_the_offset) {
  EXPECT_EQ(error_of("{\"a\" 1}"), "invalid JSON at byte 5: expected ':'");
  EXPECT_EQ(error_of("[1,]"), "invalid JSON at byte 3: unexpected character");
  EXPECT_EQ(error_of("[1 2]"), "invalid JSON at byte 3: expected ',' or ']'");
  EXPECT_EQ(error_of("{\"a\":1,\"a\":2}"), "invalid JSON at byte 10: duplicate member 'a'");
  EXPECT_EQ(error_of("01"), "invalid JSON at byte 1: text after the end of the document");
  EXPECT_EQ(error_of("{} x"), "invalid JSON at byte 3: text after the end of the document");
  EXPECT_EQ(error_of("\"a\x01\""), "invalid JSON at byte 2: a control character inside a string");
  EXPECT_EQ(error_of("\"\\x\""), "invalid JSON at byte 2: a bad escape");
  EXPECT_EQ(error_of("nul!"), "invalid JSON at byte 3: unexpected character");
  EXPECT_EQ(error_of("-"), "truncated JSON: the text ends at byte 1 before the document does");
  EXPECT_EQ(error_of("1.x"), "invalid JSON at byte 2: expected a digit");
  EXPECT_EQ(error_of("// comment\n{}"), "invalid JSON at byte 0: unexpected character");
}

TEST(trace_json_reader, refuses_deep_nesting_without_recursing_further) {
  const std::string deep(100000, '[');
  const std::string e = error_of(deep);
  EXPECT_EQ(e, "invalid JSON at byte 64: nesting deeper than 64 levels");
  std::string ok(64, '[');
  ok += std::string(64, ']');
  EXPECT_EQ(error_of(ok), "");
}

TEST(trace_json_reader, streams_members_and_elements) {
  rt::trace::json_reader r("{\"x\": [1, 2, 3], \"y\": {\"z\": 4}}");
  std::vector<std::string> keys;
  std::int64_t sum = 0;
  r.for_each_member([&](const std::string& k) {
    keys.push_back(k);
    if (k == "x") {
      r.for_each_element([&] { sum += *r.parse_value().as_int(); });
    } else {
      EXPECT_EQ(r.peek_type(), json_value::type::object);
      EXPECT_EQ(r.parse_value().find("z")->as_int(), 4);
    }
  });
  r.finish();
  EXPECT_EQ(keys, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(sum, 6);
}

TEST(trace_json_files, refuses_missing_empty_and_special_files) {
  const auto error_reading = [](const std::string& path) -> std::string {
    try {
      rt::trace::read_text_file(path);
    } catch (const format_error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_reading("/nonexistent/numart/trace.json"), "cannot open the file: No such file or directory");
  EXPECT_EQ(error_reading("/"), "cannot read the file: it is a directory");
  EXPECT_EQ(error_reading("/dev/null"), "cannot read the file: not a regular file");
}

}  // namespace
