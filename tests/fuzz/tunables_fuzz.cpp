// Fuzz harness: RT_TUNE parsing (runtime/tunables, docs/design/tunables.md). For any bytes:
//  * parse() returns settings or throws rt::config_error, never another exception, and the
//    message is one line that starts with "RT_TUNE item '";
//  * a refusal does not depend on the base settings (validation reads only the text);
//  * an accepted string round-trips: parse(encode(s)) == s, and encode() is canonical
//    (encode(parse(encode(s))) == encode(s));
//  * items are absolute assignments, so applying the string again changes nothing;
//  * describe() marks with '*' exactly the rows that encode() writes.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "rt/error.hpp"
#include "tunables/tunables.hpp"

namespace {

using numart_fuzz::require;
using rt::tun::settings;

constexpr std::string_view kErrorPrefix = "RT_TUNE item '";

// A base far from the defaults: every feature flipped, every tunable at its maximum.
settings flipped_base() {
  settings s;
#define RT_TUNABLE(name, type, def, lo, hi, unit, origin, doc) s.t.name = hi;
#include "tunables/tunables.def"
#undef RT_TUNABLE
#define RT_FEATURE(NAME, def, origin, doc) s.f.NAME = !(def);
#include "tunables/features.def"
#undef RT_FEATURE
  return s;
}

std::size_t items_in(const std::string& encoded) {
  if (encoded.empty()) return 0;
  std::size_t n = 1;
  for (const char c : encoded) n += c == ',' ? 1 : 0;
  return n;
}

// describe()'s first line is a heading, so every marked row follows a newline.
std::size_t marked_rows(const std::string& described) {
  std::size_t n = 0;
  for (std::size_t at = described.find("\n* "); at != std::string::npos; at = described.find("\n* ", at + 1)) ++n;
  return n;
}

// Parses `text` on `base`; false (after checking the message) when it is refused.
bool try_parse(std::string_view text, const settings& base, settings& out) {
  try {
    out = rt::tun::parse(text, base);
    return true;
  } catch (const rt::config_error& e) {
    numart_fuzz::require_one_line_message(e.what(), kErrorPrefix);
    return false;
  } catch (const std::exception& e) {
    numart_fuzz::property_failed("parse throws only rt::config_error", e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = numart_fuzz::as_string(data, size);
  settings s;
  settings on_other_base;
  const bool accepted = try_parse(text, settings{}, s);
  require(accepted == try_parse(text, flipped_base(), on_other_base), "acceptance does not depend on the base settings", text);
  if (!accepted) return 0;

  const std::string encoded = rt::tun::encode(s);
  settings again;
  require(try_parse(encoded, settings{}, again), "encode() writes a string parse() accepts", encoded);
  require(again == s, "parse(encode(s)) == s", encoded);
  require(rt::tun::encode(again) == encoded, "encode() is canonical", encoded);

  settings twice;
  require(try_parse(text, s, twice) && twice == s, "applying the string twice changes nothing", text);
  require(marked_rows(rt::tun::describe(s)) == items_in(encoded), "describe() marks exactly the rows encode() writes", encoded);
  return 0;
}
