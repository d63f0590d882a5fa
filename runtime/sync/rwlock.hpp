// A reader-writer lock with try-locks that never wait (docs/design/sampling.md I-SAMPLE-1,
// DESIGN.md §6 step 1; seed 000 patch 4: task_numa_work() takes mmap_sem with
// down_read_trylock and skips the scan when a writer holds or waits for it, so no convoy of
// scanners forms behind a writer).
//
// One 32-bit futex word:
//   bits  0..15  readers holding the lock
//   bits 16..29  writers waiting in lock()
//   bit  30      someone sleeps on the futex (unlockers must wake)
//   bit  31      a writer holds the lock
// Writer preference: while a writer waits, new readers are refused (try_lock_shared fails,
// lock_shared sleeps), so the readers drain and the writer gets in: a writer never starves.
// Readers may wait behind a stream of writers; the registry's writers are registrations,
// rare next to the balancer's periods.
//
// The word is written by every locker and unlocker (RMWs only), and by a fork child's
// reset_after_fork (a relaxed store, with no other thread in the child), and read by all of them.
// Acquisitions are acquire RMWs, releases are release RMWs: what a holder wrote before
// unlocking is visible to the next holder (reader or writer) after its acquiring RMW.
#pragma once

#include <cstdint>

#include "sync/atomics.hpp"

namespace rt::sync {

class rwlock {
 public:
  rwlock() = default;
  rwlock(const rwlock&) = delete;
  rwlock& operator=(const rwlock&) = delete;

  // Shared. try_lock_shared() never waits: false when a writer holds or waits for the lock
  // (or the reader count is at its maximum). It may retry its CAS when other readers race it,
  // which is lock-free, never blocking.
  bool try_lock_shared() noexcept;
  void lock_shared() noexcept;
  void unlock_shared() noexcept;

  // Exclusive. try_lock() never waits: false unless the lock is free.
  bool try_lock() noexcept;
  void lock() noexcept;
  void unlock() noexcept;

  // Fork child only, while it has no other thread: frees the lock whatever the parent's
  // threads held at the fork (they do not exist in the child, so they never unlock it). A
  // relaxed store: no other thread exists to order against.
  void reset_after_fork() noexcept { word_.store(0, native::relaxed); }

  static constexpr std::uint32_t kReaderMask = 0xffffu;
  static constexpr std::uint32_t kWaiterUnit = 1u << 16;
  static constexpr std::uint32_t kWaiterMask = 0x3fffu << 16;
  static constexpr std::uint32_t kSleeping = 1u << 30;
  static constexpr std::uint32_t kWriter = 1u << 31;

 private:
  // Sets kSleeping in `seen` (the last value read) and sleeps while the word still holds it.
  void sleep_on(std::uint32_t seen) noexcept;
  // Clears kSleeping if set in the value an unlock left behind, and wakes every sleeper.
  void wake_sleepers(std::uint32_t after) noexcept;

  native::atomic<std::uint32_t> word_{0};
};

// RAII guards for the registry code.
class shared_guard {
 public:
  explicit shared_guard(rwlock& l) noexcept : l_(l) { l_.lock_shared(); }
  ~shared_guard() { l_.unlock_shared(); }
  shared_guard(const shared_guard&) = delete;
  shared_guard& operator=(const shared_guard&) = delete;

 private:
  rwlock& l_;
};

class exclusive_guard {
 public:
  explicit exclusive_guard(rwlock& l) noexcept : l_(l) { l_.lock(); }
  ~exclusive_guard() { l_.unlock(); }
  exclusive_guard(const exclusive_guard&) = delete;
  exclusive_guard& operator=(const exclusive_guard&) = delete;

 private:
  rwlock& l_;
};

}  // namespace rt::sync
