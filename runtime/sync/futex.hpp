// Futex wait/wake on a 32-bit atomic (Linux). The parker and the task-completion wait use it.
#pragma once

#include <atomic>
#include <cstdint>

namespace rt::sync {

struct native_futex {
  // Sleeps while *word == expected; returns on wake, signal or spuriously (callers re-check).
  static void wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept;
  // As wait(), but gives up after `timeout_ns`.
  static void wait_for(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::uint64_t timeout_ns) noexcept;
  static void wake_one(std::atomic<std::uint32_t>& word) noexcept;
  static void wake_all(std::atomic<std::uint32_t>& word) noexcept;
};

}  // namespace rt::sync
