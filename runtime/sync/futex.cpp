#include "sync/futex.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>

namespace rt::sync {

namespace {
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t),
              "futex needs a plain 32-bit word behind std::atomic");

long futex(std::atomic<std::uint32_t>& word, int op, std::uint32_t val, const timespec* ts) noexcept {
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), op | FUTEX_PRIVATE_FLAG, val, ts,
                 nullptr, 0);
}
}  // namespace

void native_futex::wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept {
  futex(word, FUTEX_WAIT, expected, nullptr);
}

void native_futex::wait_for(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                            std::uint64_t timeout_ns) noexcept {
  timespec ts{static_cast<time_t>(timeout_ns / 1000000000ull), static_cast<long>(timeout_ns % 1000000000ull)};
  futex(word, FUTEX_WAIT, expected, &ts);
}

void native_futex::wake_one(std::atomic<std::uint32_t>& word) noexcept { futex(word, FUTEX_WAKE, 1, nullptr); }

void native_futex::wake_all(std::atomic<std::uint32_t>& word) noexcept {
  futex(word, FUTEX_WAKE, INT_MAX, nullptr);
}

}  // namespace rt::sync
