// JSON for the trace and stats files: a streaming writer and a strict RFC 8259 reader.
//
// The writer streams to an std::ostream through a 64 KiB buffer (a trace is tens of MB), places
// commas with a nesting stack and escapes strings (control characters as \u00XX, invalid UTF-8
// bytes as U+FFFD). The reader is strict: no comments, no trailing commas, no duplicate keys,
// at most kMaxDepth nested containers, nothing after the document. Every error is a
// format_error whose message is one line: "truncated JSON: ..." when the text ends early (a file
// cut short while it was written), "invalid JSON at byte N: ..." otherwise.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace rt::trace {

// Bad input (a file, a document): the message is one line naming the reason.
class format_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------------------------------------
// Writer

class json_out {
 public:
  explicit json_out(std::ostream& os) : os_(os) {}
  json_out(const json_out&) = delete;
  json_out& operator=(const json_out&) = delete;

  json_out& begin_object();
  json_out& end_object();
  json_out& begin_array();
  json_out& end_array();
  json_out& key(std::string_view k);  // inside an object, before each value
  json_out& value(std::string_view s);
  json_out& value(const char* s) { return value(std::string_view(s)); }
  json_out& value(bool b);
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  json_out& value(T v) {
    before_value();
    if constexpr (std::is_signed_v<T>) {
      append_signed(static_cast<std::int64_t>(v));
    } else {
      append_unsigned(static_cast<std::uint64_t>(v));
    }
    return *this;
  }
  // `ns` nanoseconds written as microseconds with three decimals (the Chrome trace's unit):
  // 1234567 -> 1234.567.
  json_out& micros(std::uint64_t ns);
  // A line break before the next value or key, after its comma (whitespace, for line-oriented
  // tools such as grep).
  json_out& newline();
  // Checks that every begin_* has its end_* and flushes. Throws format_error when the stream
  // failed (the disk is full, the file was closed).
  void finish();

 private:
  struct level {
    bool object = false;
    bool empty = true;
  };
  void before_value();
  void append_string(std::string_view s);
  void append_signed(std::int64_t v);
  void append_unsigned(std::uint64_t v);
  void flush_if_full();
  void take_newline();

  std::ostream& os_;
  std::string buf_;
  std::vector<level> stack_;
  bool after_key_ = false;
  bool wrote_top_ = false;
  bool newline_pending_ = false;
};

// ---------------------------------------------------------------------------------------------
// Reader

struct json_member;

struct json_value {
  enum class type { null, boolean, number, string, array, object };
  type t = type::null;
  bool b = false;
  std::string text;                  // a string's contents, or a number's literal text
  std::vector<json_value> items;     // array
  std::vector<json_member> members;  // object, in document order

  bool is_object() const { return t == type::object; }
  bool is_array() const { return t == type::array; }
  bool is_string() const { return t == type::string; }
  bool is_number() const { return t == type::number; }
  // The member named `key`, or nullptr (also when this is not an object).
  const json_value* find(std::string_view key) const;
  // A number without fraction or exponent that fits; nullopt otherwise.
  std::optional<std::int64_t> as_int() const;
  std::optional<std::uint64_t> as_uint() const;
  // A non-negative number of microseconds (the Chrome trace's unit) in nanoseconds, exact for
  // up to three decimals (digits beyond are truncated); nullopt for anything else.
  std::optional<std::uint64_t> micros_as_ns() const;
};

struct json_member {
  std::string key;
  json_value value;
};

class json_reader {
 public:
  static constexpr int kMaxDepth = 64;

  explicit json_reader(std::string_view text) : t_(text) {}

  // One whole value.
  json_value parse_value();
  // Streams an object: for each member, calls on_member(key) with the reader positioned at the
  // member's value; the callback consumes exactly that value (parse_value, for_each_element or
  // for_each_member).
  void for_each_member(const std::function<void(const std::string&)>& on_member);
  // Streams an array: on_element() consumes one element per call.
  void for_each_element(const std::function<void()>& on_element);
  // What the next value is, without consuming it (a character that starts no value is an
  // error).
  json_value::type peek_type();
  // Only whitespace may follow the document.
  void finish();

 private:
  [[noreturn]] void fail(const std::string& what) const;
  [[noreturn]] void truncated() const;
  void skip_ws();
  char peek_char();
  void expect(char c);
  json_value parse_value_at(int depth);
  std::string parse_string();
  std::string parse_number();
  void parse_literal(std::string_view word);

  std::string_view t_;
  std::size_t p_ = 0;
  int depth_ = 0;  // containers open through for_each_member / for_each_element
};

// The whole document, checked to be a single value.
json_value parse_json(std::string_view text);

// Reads a regular file. Throws format_error: "cannot open the file: <reason>", "cannot read the
// file: it is a directory" / "not a regular file", "the file is empty".
std::string read_text_file(const std::string& path);

}  // namespace rt::trace
