// The mechanism's one clock: the wake path's EWMAs and load signals (DESIGN.md §4 step 4) and
// the trace's timestamps. CLOCK_MONOTONIC through the vDSO, no system call (18-46 ns on this
// VM's kvm-clock). Policy never reads it (DESIGN.md §3).
#pragma once

#include <time.h>

#include <cstdint>

namespace rt::sync {

inline std::uint64_t now_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace rt::sync
