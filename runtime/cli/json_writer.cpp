#include "cli/json_writer.hpp"

#include <cstddef>
#include <stdexcept>

namespace rt::cli {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when s[i] does not start one
// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  std::size_t n = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

void json_writer::before_value() {
  if (stack_.empty()) {
    if (!out_.empty()) throw std::logic_error("json_writer: a second top-level value");
    return;
  }
  level& top = stack_.back();
  if (top.object) {
    if (!after_key_) throw std::logic_error("json_writer: object member without a key");
    after_key_ = false;
    return;
  }
  if (!top.empty) out_ += ',';
  top.empty = false;
}

json_writer& json_writer::begin_object() {
  before_value();
  out_ += '{';
  stack_.push_back({true, true});
  return *this;
}

json_writer& json_writer::end_object() {
  if (stack_.empty() || !stack_.back().object || after_key_) throw std::logic_error("json_writer: unbalanced end_object");
  stack_.pop_back();
  out_ += '}';
  return *this;
}

json_writer& json_writer::begin_array() {
  before_value();
  out_ += '[';
  stack_.push_back({false, true});
  return *this;
}

json_writer& json_writer::end_array() {
  if (stack_.empty() || stack_.back().object) throw std::logic_error("json_writer: unbalanced end_array");
  stack_.pop_back();
  out_ += ']';
  return *this;
}

json_writer& json_writer::key(std::string_view k) {
  if (stack_.empty() || !stack_.back().object || after_key_) throw std::logic_error("json_writer: key outside an object");
  if (!stack_.back().empty) out_ += ',';
  stack_.back().empty = false;
  append_string(k);
  out_ += ':';
  after_key_ = true;
  return *this;
}

json_writer& json_writer::value(std::string_view s) {
  before_value();
  append_string(s);
  return *this;
}

json_writer& json_writer::value(std::int64_t v) {
  before_value();
  out_ += std::to_string(v);
  return *this;
}

json_writer& json_writer::value(bool b) {
  before_value();
  out_ += b ? "true" : "false";
  return *this;
}

void json_writer::append_string(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out_ += '"';
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out_ += '\\';
      out_ += static_cast<char>(c);
      ++i;
    } else if (c == '\n') {
      out_ += "\\n";
      ++i;
    } else if (c == '\t') {
      out_ += "\\t";
      ++i;
    } else if (c < 0x20 || c == 0x7F) {
      out_ += "\\u00";
      out_ += kHex[c >> 4];
      out_ += kHex[c & 0xF];
      ++i;
    } else if (c < 0x80) {
      out_ += static_cast<char>(c);
      ++i;
    } else if (const std::size_t n = utf8_length(s, i); n != 0) {
      out_.append(s.substr(i, n));
      i += n;
    } else {
      out_ += "\\ufffd";
      ++i;
    }
  }
  out_ += '"';
}

}  // namespace rt::cli
