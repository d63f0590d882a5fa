#include "sync/rwlock.hpp"

#include "core/assert.hpp"
#include "sync/futex.hpp"

namespace rt::sync {

bool rwlock::try_lock_shared() noexcept {
  std::uint32_t s = word_.load(native::relaxed);
  for (;;) {
    // Refused while a writer holds or waits: the writer-preference rule (I-SAMPLE-1).
    if ((s & (kWriter | kWaiterMask)) != 0 || (s & kReaderMask) == kReaderMask) return false;
    if (word_.compare_exchange_weak(s, s + 1, native::acquire, native::relaxed)) return true;
  }
}

void rwlock::lock_shared() noexcept {
  std::uint32_t s = word_.load(native::relaxed);
  for (;;) {
    if ((s & (kWriter | kWaiterMask)) == 0 && (s & kReaderMask) != kReaderMask) {
      if (word_.compare_exchange_weak(s, s + 1, native::acquire, native::relaxed)) return;
      continue;
    }
    sleep_on(s);
    s = word_.load(native::relaxed);
  }
}

void rwlock::unlock_shared() noexcept {
  const std::uint32_t prev = word_.fetch_sub(1, native::release);
  RT_DEBUG_ASSERT((prev & kReaderMask) != 0, "I-SAMPLE-1", "rwlock::unlock_shared without a reader");
  // The last reader out lets a waiting writer in.
  if ((prev & kReaderMask) == 1 && (prev & kSleeping) != 0) wake_sleepers(prev - 1);
}

bool rwlock::try_lock() noexcept {
  std::uint32_t s = word_.load(native::relaxed);
  for (;;) {
    if ((s & (kWriter | kReaderMask)) != 0) return false;
    if (word_.compare_exchange_weak(s, s | kWriter, native::acquire, native::relaxed)) return true;
  }
}

void rwlock::lock() noexcept {
  if (try_lock()) return;
  // Announce the waiting writer first: from now on new readers are refused (I-SAMPLE-1).
  std::uint32_t s = word_.fetch_add(kWaiterUnit, native::relaxed) + kWaiterUnit;
  RT_ASSERT((s & kWaiterMask) != 0, "I-SAMPLE-1", "rwlock: too many waiting writers");
  for (;;) {
    if ((s & (kWriter | kReaderMask)) == 0) {
      if (word_.compare_exchange_weak(s, (s - kWaiterUnit) | kWriter, native::acquire, native::relaxed)) return;
      continue;
    }
    sleep_on(s);
    s = word_.load(native::relaxed);
  }
}

void rwlock::unlock() noexcept {
  const std::uint32_t prev = word_.fetch_and(~kWriter, native::release);
  RT_DEBUG_ASSERT((prev & kWriter) != 0, "I-SAMPLE-1", "rwlock::unlock without the writer");
  if ((prev & kSleeping) != 0) wake_sleepers(prev & ~kWriter);
}

void rwlock::sleep_on(std::uint32_t seen) noexcept {
  if ((seen & kSleeping) == 0 &&
      !word_.compare_exchange_strong(seen, seen | kSleeping, native::relaxed, native::relaxed))
    return;  // the word moved: the caller re-reads it
  // The futex sleeps only while the word still equals seen | kSleeping: any unlock after the
  // bit was set changes the word (and wakes), so a wake-up cannot be lost.
  native_futex::wait(word_, seen | kSleeping);
}

void rwlock::wake_sleepers(std::uint32_t after) noexcept {
  // Clear the bit before waking: a sleeper that wakes and must sleep again sets it anew.
  if ((after & kSleeping) != 0) word_.fetch_and(~kSleeping, native::relaxed);
  native_futex::wake_all(word_);
}

}  // namespace rt::sync
