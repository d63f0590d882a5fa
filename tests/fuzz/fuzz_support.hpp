// What every fuzz harness shares: reporting a broken property, and the promise about error
// messages that every parsing layer makes (rt/error.hpp: what() is one line naming the input).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

// libFuzzer's entry point, defined once per harness; replay_main.cpp calls it too.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace numart_fuzz {

// The file being replayed (set by replay_main.cpp; null under libFuzzer, which names the input
// itself when it saves the crash file).
extern const char* current_input;

// Prints "fuzz property violated: <property>: <detail>" (and the replayed file) on stderr, then
// aborts, so that libFuzzer saves the input and a replay test fails.
[[noreturn]] void property_failed(std::string_view property, std::string_view detail);

inline void require(bool ok, std::string_view property, std::string_view detail = {}) {
  if (!ok) property_failed(property, detail);
}

// The input bytes as a string (embedded NULs kept).
inline std::string as_string(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// The error-message promise: what() starts with `prefix`, says more than the prefix, and is one
// printable line (no control character: no newline, no terminal escape from the input).
void require_one_line_message(std::string_view what, std::string_view prefix);

}  // namespace numart_fuzz
