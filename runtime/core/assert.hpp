// Invariant checks (DESIGN.md §10: no release-mode assumptions).
//
//   RT_ASSERT(cond, "I-XXX-N", "message")        checked in every build type
//   RT_DEBUG_ASSERT(cond, "I-XXX-N", "message")  checked unless NDEBUG (hot paths only)
//
// On failure both print one line to stderr and abort:
//   numart: invariant I-XXX-N broken: message (file:line)
// The id names an invariant written down in docs/design/ (or in the header that owns it), so
// a crash report points at the rule that was broken, not only at the line that noticed.
//
// The failure path writes with write(2) from a stack buffer and calls std::abort(): it takes
// no lock and allocates nothing, so it is usable inside the SIGSEGV sampling handler (numa/)
// and while a worker holds a lock.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdlib>

namespace rt::core::detail {

// Appends the NUL-terminated `s` to buf[len..cap), truncating silently; returns the new length.
inline std::size_t assert_append(char* buf, std::size_t len, std::size_t cap, const char* s) noexcept {
  for (; s != nullptr && *s != '\0' && len < cap; ++s) buf[len++] = *s;
  return len;
}

[[noreturn]] [[gnu::cold]] [[gnu::noinline]] inline void assert_fail(const char* id, const char* msg,
                                                                     const char* file, long line) noexcept {
  constexpr std::size_t kCap = 1024;
  char buf[kCap];
  std::size_t n = 0;
  n = assert_append(buf, n, kCap, "numart: invariant ");
  n = assert_append(buf, n, kCap, id);
  n = assert_append(buf, n, kCap, " broken: ");
  n = assert_append(buf, n, kCap, msg);
  n = assert_append(buf, n, kCap, " (");
  n = assert_append(buf, n, kCap, file);
  n = assert_append(buf, n, kCap, ":");
  char digits[24];
  std::size_t d = 0;
  unsigned long v = line < 0 ? 0UL : static_cast<unsigned long>(line);
  do {
    digits[d++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0 && d < sizeof digits);
  while (d > 0 && n < kCap) buf[n++] = digits[--d];
  n = assert_append(buf, n, kCap, ")\n");
  std::size_t off = 0;
  while (off < n) {
    const ssize_t w = ::write(STDERR_FILENO, buf + off, n - off);
    if (w <= 0) break;
    off += static_cast<std::size_t>(w);
  }
  std::abort();
}

}  // namespace rt::core::detail

#define RT_ASSERT(cond, id, msg)                                                              \
  ((cond) ? static_cast<void>(0) : ::rt::core::detail::assert_fail((id), (msg), __FILE__, __LINE__))

#if defined(NDEBUG)
// Not evaluated: `cond` must have no side effects (it is still type-checked via sizeof).
#define RT_DEBUG_ASSERT(cond, id, msg) static_cast<void>(sizeof(static_cast<bool>(cond)))
#else
#define RT_DEBUG_ASSERT(cond, id, msg) RT_ASSERT(cond, id, msg)
#endif
