// Outside text (RT_TUNE, RT_TOPOLOGY, a path, bytes of an XML file) quoted in an error message.
// Control characters are written as escapes (\n, \t, \xNN) so that the message stays one
// printable line (rt/error.hpp) and the input cannot move the cursor or colour a terminal.
// Found by the fuzz harnesses (tests/fuzz): RT_TUNE="a<newline>b" gave a two-line message.
#pragma once

#include <string>
#include <string_view>

namespace rt::core {

inline std::string printable(std::string_view text) {
  constexpr std::string_view kHex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace rt::core
