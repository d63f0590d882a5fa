// A small JSON emitter for the numart tool: builds one document in memory (so that an error
// half-way leaves no partial output), with commas placed by a nesting stack and strings escaped
// per RFC 8259 (control characters as \u00XX; invalid UTF-8 bytes as U+FFFD).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rt::cli {

class json_writer {
 public:
  json_writer& begin_object();
  json_writer& end_object();
  json_writer& begin_array();
  json_writer& end_array();
  json_writer& key(std::string_view k);  // inside an object, before each value
  json_writer& value(std::string_view s);
  json_writer& value(const char* s) { return value(std::string_view(s)); }
  json_writer& value(std::int64_t v);
  json_writer& value(int v) { return value(static_cast<std::int64_t>(v)); }
  json_writer& value(unsigned v) { return value(static_cast<std::int64_t>(v)); }
  json_writer& value(bool b);

  // The document; complete once every begin_* has its end_*.
  const std::string& str() const { return out_; }

 private:
  struct level {
    bool object = false;
    bool empty = true;
  };
  void before_value();
  void append_string(std::string_view s);

  std::string out_;
  std::vector<level> stack_;
  bool after_key_ = false;
};

}  // namespace rt::cli
