#include "trace/json.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>

namespace rt::trace {
namespace {

constexpr std::size_t kFlushBytes = std::size_t{1} << 16;

// Length of the valid UTF-8 sequence at s[i], or 0 when s[i] does not start one (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF).
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = at(i);
  std::size_t len = 0;
  unsigned char second_lo = 0x80;
  unsigned char second_hi = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3;
    second_lo = lead == 0xE0 ? 0xA0 : 0x80;
    second_hi = lead == 0xED ? 0x9F : 0xBF;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4;
    second_lo = lead == 0xF0 ? 0x90 : 0x80;
    second_hi = lead == 0xF4 ? 0x8F : 0xBF;
  } else {
    return 0;
  }
  if (i + len > s.size() || at(i + 1) < second_lo || at(i + 1) > second_hi) return 0;
  for (std::size_t k = 2; k < len; ++k) {
    if (at(i + k) < 0x80 || at(i + k) > 0xBF) return 0;
  }
  return len;
}

void append_utf8(std::string& out, unsigned code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

// ---------------------------------------------------------------------------------------------
// json_out

void json_out::before_value() {
  if (stack_.empty()) {
    if (wrote_top_) throw std::logic_error("json_out: a second top-level value");
    wrote_top_ = true;
    return;
  }
  level& top = stack_.back();
  if (top.object) {
    if (!after_key_) throw std::logic_error("json_out: an object member without a key");
    after_key_ = false;
    return;
  }
  if (!top.empty) buf_ += ',';
  top.empty = false;
  take_newline();
}

void json_out::take_newline() {
  if (newline_pending_) buf_ += '\n';
  newline_pending_ = false;
}

json_out& json_out::begin_object() {
  before_value();
  buf_ += '{';
  stack_.push_back({true, true});
  return *this;
}

json_out& json_out::end_object() {
  if (stack_.empty() || !stack_.back().object || after_key_) throw std::logic_error("json_out: unbalanced end_object");
  stack_.pop_back();
  buf_ += '}';
  flush_if_full();
  return *this;
}

json_out& json_out::begin_array() {
  before_value();
  buf_ += '[';
  stack_.push_back({false, true});
  return *this;
}

json_out& json_out::end_array() {
  if (stack_.empty() || stack_.back().object) throw std::logic_error("json_out: unbalanced end_array");
  stack_.pop_back();
  buf_ += ']';
  flush_if_full();
  return *this;
}

json_out& json_out::key(std::string_view k) {
  if (stack_.empty() || !stack_.back().object || after_key_) throw std::logic_error("json_out: a key outside an object");
  if (!stack_.back().empty) buf_ += ',';
  stack_.back().empty = false;
  take_newline();
  append_string(k);
  buf_ += ':';
  after_key_ = true;
  return *this;
}

json_out& json_out::value(std::string_view s) {
  before_value();
  append_string(s);
  return *this;
}

json_out& json_out::value(bool b) {
  before_value();
  buf_ += b ? "true" : "false";
  return *this;
}

json_out& json_out::micros(std::uint64_t ns) {
  before_value();
  append_unsigned(ns / 1000);
  const auto frac = static_cast<unsigned>(ns % 1000);
  buf_ += '.';
  buf_ += static_cast<char>('0' + frac / 100);
  buf_ += static_cast<char>('0' + frac / 10 % 10);
  buf_ += static_cast<char>('0' + frac % 10);
  return *this;
}

json_out& json_out::newline() {
  newline_pending_ = true;
  return *this;
}

void json_out::finish() {
  if (!stack_.empty() || after_key_ || !wrote_top_) throw std::logic_error("json_out: unfinished document");
  newline_pending_ = false;
  buf_ += '\n';
  os_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
  buf_.clear();
  os_.flush();
  if (!os_) throw format_error("cannot write the output (the device is full or the stream was closed)");
}

void json_out::flush_if_full() {
  if (buf_.size() < kFlushBytes) return;
  os_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
  buf_.clear();
}

void json_out::append_signed(std::int64_t v) {
  char tmp[24];
  const auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
  buf_.append(tmp, r.ptr);
}

void json_out::append_unsigned(std::uint64_t v) {
  char tmp[24];
  const auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
  buf_.append(tmp, r.ptr);
}

void json_out::append_string(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  buf_ += '"';
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      buf_ += '\\';
      buf_ += static_cast<char>(c);
      ++i;
    } else if (c == '\n') {
      buf_ += "\\n";
      ++i;
    } else if (c == '\t') {
      buf_ += "\\t";
      ++i;
    } else if (c < 0x20 || c == 0x7F) {
      buf_ += "\\u00";
      buf_ += kHex[c >> 4];
      buf_ += kHex[c & 0xF];
      ++i;
    } else if (c < 0x80) {
      buf_ += static_cast<char>(c);
      ++i;
    } else if (const std::size_t len = utf8_sequence(s, i); len != 0) {
      buf_.append(s.substr(i, len));
      i += len;
    } else {
      buf_ += "\\ufffd";
      ++i;
    }
  }
  buf_ += '"';
}

// ---------------------------------------------------------------------------------------------
// json_value

const json_value* json_value::find(std::string_view key) const {
  if (t != type::object) return nullptr;
  for (const json_member& m : members) {
    if (m.key == key) return &m.value;
  }
  return nullptr;
}

std::optional<std::int64_t> json_value::as_int() const {
  if (t != type::number) return std::nullopt;
  std::int64_t v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc{} || r.ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> json_value::as_uint() const {
  if (t != type::number || text.empty() || text[0] == '-') return std::nullopt;
  std::uint64_t v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc{} || r.ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> json_value::micros_as_ns() const {
  if (t != type::number || text.empty() || text[0] == '-') return std::nullopt;
  const std::size_t dot = text.find('.');
  const std::string_view whole = std::string_view(text).substr(0, dot);
  if (whole.find_first_of("eE") != std::string_view::npos) return std::nullopt;
  std::uint64_t us = 0;
  const auto r = std::from_chars(whole.data(), whole.data() + whole.size(), us);
  if (r.ec != std::errc{} || r.ptr != whole.data() + whole.size()) return std::nullopt;
  std::uint64_t frac = 0;
  if (dot != std::string::npos) {
    const std::string_view digits = std::string_view(text).substr(dot + 1);
    int taken = 0;
    for (const char c : digits) {
      if (!is_digit(c)) return std::nullopt;
      if (taken < 3) {
        frac = frac * 10 + static_cast<std::uint64_t>(c - '0');
        ++taken;
      }
    }
    for (; taken < 3; ++taken) frac *= 10;
  }
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  if (us > (kMax - frac) / 1000) return std::nullopt;
  return us * 1000 + frac;
}

// ---------------------------------------------------------------------------------------------
// json_reader

void json_reader::fail(const std::string& what) const {
  throw format_error("invalid JSON at byte " + std::to_string(p_) + ": " + what);
}

void json_reader::truncated() const {
  throw format_error("truncated JSON: the text ends at byte " + std::to_string(t_.size()) + " before the document does");
}

void json_reader::skip_ws() {
  while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n' || t_[p_] == '\r')) ++p_;
}

char json_reader::peek_char() {
  skip_ws();
  if (p_ >= t_.size()) truncated();
  return t_[p_];
}

void json_reader::expect(char c) {
  if (peek_char() != c) fail(std::string("expected '") + c + "'");
  ++p_;
}

json_value::type json_reader::peek_type() {
  switch (peek_char()) {
    case '{':
      return json_value::type::object;
    case '[':
      return json_value::type::array;
    case '"':
      return json_value::type::string;
    case 't':
    case 'f':
      return json_value::type::boolean;
    case 'n':
      return json_value::type::null;
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
      return json_value::type::number;
    default:
      fail("unexpected character");
  }
}

void json_reader::parse_literal(std::string_view word) {
  for (const char c : word) {
    if (p_ >= t_.size()) truncated();
    if (t_[p_] != c) fail("unexpected character");
    ++p_;
  }
}

json_value json_reader::parse_value() { return parse_value_at(depth_); }

json_value json_reader::parse_value_at(int depth) {
  json_value v;
  const char c = peek_char();
  if (c == '{' || c == '[') {
    if (depth >= kMaxDepth) fail("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    ++p_;
    const bool object = c == '{';
    v.t = object ? json_value::type::object : json_value::type::array;
    const char close = object ? '}' : ']';
    if (peek_char() == close) {
      ++p_;
      return v;
    }
    while (true) {
      if (object) {
        if (peek_char() != '"') fail("expected a member name");
        std::string k = parse_string();
        if (v.find(k) != nullptr) fail("duplicate member '" + k + "'");
        expect(':');
        json_value member_value = parse_value_at(depth + 1);
        v.members.push_back(json_member{std::move(k), std::move(member_value)});
      } else {
        v.items.push_back(parse_value_at(depth + 1));
      }
      const char next = peek_char();
      ++p_;
      if (next == ',') continue;
      if (next == close) return v;
      --p_;
      fail(object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
  }
  if (c == '"') {
    v.t = json_value::type::string;
    v.text = parse_string();
    return v;
  }
  if (c == 't') {
    parse_literal("true");
    v.t = json_value::type::boolean;
    v.b = true;
    return v;
  }
  if (c == 'f') {
    parse_literal("false");
    v.t = json_value::type::boolean;
    return v;
  }
  if (c == 'n') {
    parse_literal("null");
    return v;
  }
  if (c == '-' || is_digit(c)) {
    v.t = json_value::type::number;
    v.text = parse_number();
    return v;
  }
  fail("unexpected character");
}

std::string json_reader::parse_number() {
  const std::size_t start = p_;
  const auto digits = [&] {
    const std::size_t from = p_;
    while (p_ < t_.size() && is_digit(t_[p_])) ++p_;
    if (p_ == from) {
      if (p_ >= t_.size()) truncated();
      fail("expected a digit");
    }
  };
  if (t_[p_] == '-') ++p_;
  if (p_ < t_.size() && t_[p_] == '0') {
    ++p_;
  } else {
    digits();
  }
  if (p_ < t_.size() && t_[p_] == '.') {
    ++p_;
    digits();
  }
  if (p_ < t_.size() && (t_[p_] == 'e' || t_[p_] == 'E')) {
    ++p_;
    if (p_ < t_.size() && (t_[p_] == '+' || t_[p_] == '-')) ++p_;
    digits();
  }
  return std::string(t_.substr(start, p_ - start));
}

std::string json_reader::parse_string() {
  expect('"');
  std::string out;
  while (true) {
    if (p_ >= t_.size()) truncated();
    const auto c = static_cast<unsigned char>(t_[p_]);
    if (c == '"') {
      ++p_;
      return out;
    }
    if (c < 0x20) fail("a control character inside a string");
    ++p_;
    if (c != '\\') {
      out += static_cast<char>(c);
      continue;
    }
    if (p_ >= t_.size()) truncated();
    const char e = t_[p_++];
    switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        const auto hex4 = [&] {
          unsigned code = 0;
          for (int i = 0; i < 4; ++i) {
            if (p_ >= t_.size()) truncated();
            const char h = t_[p_++];
            code <<= 4;
            if (is_digit(h)) {
              code |= static_cast<unsigned>(h - '0');
            } else if (h >= 'a' && h <= 'f') {
              code |= static_cast<unsigned>(h - 'a' + 10);
            } else if (h >= 'A' && h <= 'F') {
              code |= static_cast<unsigned>(h - 'A' + 10);
            } else {
              --p_;
              fail("a bad \\u escape");
            }
          }
          return code;
        };
        unsigned code = hex4();
        if (code >= 0xD800 && code <= 0xDBFF && p_ + 1 < t_.size() && t_[p_] == '\\' && t_[p_ + 1] == 'u') {
          p_ += 2;
          const unsigned low = hex4();
          code = low >= 0xDC00 && low <= 0xDFFF ? 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00) : 0xFFFD;
        } else if (code >= 0xD800 && code <= 0xDFFF) {
          code = 0xFFFD;
        }
        append_utf8(out, code);
        break;
      }
      default:
        --p_;
        fail("a bad escape");
    }
  }
}

void json_reader::for_each_member(const std::function<void(const std::string&)>& on_member) {
  if (depth_ >= kMaxDepth) fail("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
  expect('{');
  ++depth_;
  std::vector<std::string> seen;
  if (peek_char() == '}') {
    ++p_;
    --depth_;
    return;
  }
  while (true) {
    if (peek_char() != '"') fail("expected a member name");
    std::string k = parse_string();
    for (const std::string& s : seen) {
      if (s == k) fail("duplicate member '" + k + "'");
    }
    expect(':');
    on_member(k);
    seen.push_back(std::move(k));
    const char next = peek_char();
    ++p_;
    if (next == ',') continue;
    if (next == '}') break;
    --p_;
    fail("expected ',' or '}'");
  }
  --depth_;
}

void json_reader::for_each_element(const std::function<void()>& on_element) {
  if (depth_ >= kMaxDepth) fail("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
  expect('[');
  ++depth_;
  if (peek_char() == ']') {
    ++p_;
    --depth_;
    return;
  }
  while (true) {
    on_element();
    const char next = peek_char();
    ++p_;
    if (next == ',') continue;
    if (next == ']') break;
    --p_;
    fail("expected ',' or ']'");
  }
  --depth_;
}

void json_reader::finish() {
  skip_ws();
  if (p_ != t_.size()) fail("text after the end of the document");
}

json_value parse_json(std::string_view text) {
  json_reader r(text);
  json_value v = r.parse_value();
  r.finish();
  return v;
}

std::string read_text_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO without a writer must not hang; it is refused below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw format_error("cannot open the file: " + std::string(std::strerror(errno)));
  struct closer {
    int fd;
    ~closer() { ::close(fd); }
  } close_on_exit{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw format_error("cannot stat the file: " + std::string(std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) throw format_error("cannot read the file: it is a directory");
  if (!S_ISREG(st.st_mode)) throw format_error("cannot read the file: not a regular file");
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw format_error("cannot read the file: " + std::string(std::strerror(errno)));
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  text.resize(done);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw format_error("the file is empty");
  return text;
}

}  // namespace rt::trace
