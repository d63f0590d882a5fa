// A per-worker parker with a wake-up token (docs/design/parking.md).
//   state: kEmpty (0), kParked (all ones), kNotified (1).
// park():   consumes a pending token and returns at once, else sleeps until unpark().
// unpark(): leaves a token; wakes the sleeper if it is parked.
// I-PARK-3: an unpark() before the park() is not lost: the token stays kNotified.
// I-PARK-4: spurious futex returns are absorbed: park() returns only after consuming a token.
#pragma once

#include <cstdint>

#include "sync/atomics.hpp"

namespace rt::sync {

template <class S, class Fx>
class parker {
 public:
  void park() noexcept {
    // acquire pairs with unpark()'s release: what the unparker wrote before unpark() is
    // visible after park() returns.
    if (state_.fetch_sub(1, S::acquire) == kNotified) return;  // token consumed: now kEmpty
    for (;;) {
      Fx::wait(state_, kParked);
      std::uint32_t expected = kNotified;
      if (state_.compare_exchange_strong(expected, kEmpty, S::acquire, S::relaxed)) return;
    }
  }

  // As park(), but returns after about timeout_ns if no unpark() came: true when a token was
  // consumed, false on timeout (or a spurious return), with the state back to kEmpty so that a
  // later unpark() leaves its token for the next park (I-PARK-3 holds across the timeout).
  bool park_for(std::uint64_t timeout_ns) noexcept {
    if (state_.fetch_sub(1, S::acquire) == kNotified) return true;
    Fx::wait_for(state_, kParked, timeout_ns);
    std::uint32_t expected = kParked;
    if (state_.compare_exchange_strong(expected, kEmpty, S::relaxed, S::relaxed)) return false;
    // Only unpark() moves the state off kParked, to kNotified: consume its token.
    state_.exchange(kEmpty, S::acquire);
    return true;
  }

  void unpark() noexcept {
    // release pairs with park()'s acquire.
    if (state_.exchange(kNotified, S::release) == kParked) Fx::wake_one(state_);
  }

 private:
  static constexpr std::uint32_t kEmpty = 0;
  static constexpr std::uint32_t kNotified = 1;
  static constexpr std::uint32_t kParked = ~std::uint32_t{0};
  // Written by park() (owner) and unpark() (any thread); read by both.
  alignas(kCacheLine) typename S::template atomic<std::uint32_t> state_{kEmpty};
};

}  // namespace rt::sync
