// A strict RFC 8259 reader for the tests (independent of the tool's writer): integers only for
// numbers (the tool prints no fractions), objects keep their key order, any syntax error or
// trailing garbage throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace json_test {

struct value {
  enum class kind { null, boolean, number, string, array, object };
  kind what = kind::null;
  bool b = false;
  std::int64_t n = 0;
  std::string s;
  std::vector<value> items;                           // array
  std::vector<std::string> member_keys;  // object, in document order
  std::vector<value> member_values;      // (two vectors: a pair would need value complete)

  const value& operator[](std::string_view key) const {
    if (what != kind::object) throw std::runtime_error("not an object");
    for (std::size_t i = 0; i < member_keys.size(); ++i) {
      if (member_keys[i] == key) return member_values[i];
    }
    throw std::runtime_error("no key " + std::string(key));
  }
  const value& operator[](std::size_t i) const {
    if (what != kind::array || i >= items.size()) throw std::runtime_error("bad index");
    return items[i];
  }
  const std::vector<std::string>& keys() const { return member_keys; }
  std::vector<std::int64_t> ints() const {
    std::vector<std::int64_t> out;
    for (const value& v : items) {
      if (v.what != kind::number) throw std::runtime_error("not a number");
      out.push_back(v.n);
    }
    return out;
  }
};

class reader {
 public:
  explicit reader(std::string_view text) : t_(text) {}

  value document() {
    value v = parse_value();
    skip_ws();
    if (p_ != t_.size()) fail("trailing characters");
    return v;
  }

 private:
  std::string_view t_;
  std::size_t p_ = 0;

  [[noreturn]] void fail(const std::string& what) const { throw std::runtime_error("json: " + what + " at offset " + std::to_string(p_)); }
  void skip_ws() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n' || t_[p_] == '\r')) ++p_;
  }
  char peek() {
    skip_ws();
    if (p_ >= t_.size()) fail("unexpected end");
    return t_[p_];
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++p_;
  }
  bool literal(std::string_view word) {
    if (t_.substr(p_, word.size()) != word) return false;
    p_ += word.size();
    return true;
  }

  value parse_value() {
    value v;
    const char c = peek();
    if (c == '{') {
      v.what = value::kind::object;
      ++p_;
      if (peek() == '}') {
        ++p_;
        return v;
      }
      while (true) {
        if (peek() != '"') fail("expected a key");
        std::string k = parse_string();
        for (const std::string& seen : v.member_keys) {
          if (seen == k) fail("duplicate key " + k);
        }
        expect(':');
        v.member_keys.push_back(std::move(k));
        v.member_values.push_back(parse_value());
        if (peek() == ',') {
          ++p_;
          continue;
        }
        expect('}');
        return v;
      }
    }
    if (c == '[') {
      v.what = value::kind::array;
      ++p_;
      if (peek() == ']') {
        ++p_;
        return v;
      }
      while (true) {
        v.items.push_back(parse_value());
        if (peek() == ',') {
          ++p_;
          continue;
        }
        expect(']');
        return v;
      }
    }
    if (c == '"') {
      v.what = value::kind::string;
      v.s = parse_string();
      return v;
    }
    if (literal("true")) {
      v.what = value::kind::boolean;
      v.b = true;
      return v;
    }
    if (literal("false")) {
      v.what = value::kind::boolean;
      return v;
    }
    if (literal("null")) return v;
    if (c == '-' || (c >= '0' && c <= '9')) {
      v.what = value::kind::number;
      const bool negative = c == '-';
      if (negative) ++p_;
      if (p_ >= t_.size() || t_[p_] < '0' || t_[p_] > '9') fail("bad number");
      if (t_[p_] == '0' && p_ + 1 < t_.size() && t_[p_ + 1] >= '0' && t_[p_ + 1] <= '9') fail("leading zero");
      while (p_ < t_.size() && t_[p_] >= '0' && t_[p_] <= '9') v.n = v.n * 10 + (t_[p_++] - '0');
      if (p_ < t_.size() && (t_[p_] == '.' || t_[p_] == 'e' || t_[p_] == 'E')) fail("fractions are not expected");
      if (negative) v.n = -v.n;
      return v;
    }
    fail("unexpected character");
  }

  std::string parse_string() {
    expect('"');
    std::string out;
    while (true) {
      if (p_ >= t_.size()) fail("unterminated string");
      const auto c = static_cast<unsigned char>(t_[p_++]);
      if (c == '"') return out;
      if (c < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += static_cast<char>(c);
        continue;
      }
      if (p_ >= t_.size()) fail("unterminated escape");
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
          if (p_ + 4 > t_.size()) fail("short \\u escape");
          unsigned code = 0;
          for (int i = 0; i < 4; ++i) {
            const char h = t_[p_++];
            code <<= 4;
            if (h >= '0' && h <= '9') code |= static_cast<unsigned>(h - '0');
            else if (h >= 'a' && h <= 'f') code |= static_cast<unsigned>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') code |= static_cast<unsigned>(h - 'A' + 10);
            else fail("bad \\u escape");
          }
          if (code < 0x80) {
            out += static_cast<char>(code);
          } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
          }
          break;
        }
        default:
          fail("bad escape");
      }
    }
  }
};

inline value parse(std::string_view text) { return reader(text).document(); }

}  // namespace json_test
