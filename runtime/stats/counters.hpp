// The per-worker counter block (counters.def). Owner-written, read by stats snapshots:
// each counter is an atomic that only its worker stores to (relaxed load + relaxed store, a
// plain add on x86), and that snapshots read relaxed. Values are monotonic; a snapshot taken
// while workers run sees each counter at some recent value (no cross-counter consistency).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "sync/atomics.hpp"

namespace rt::ctr {

enum class counter : std::size_t {
#define RT_COUNTER(name, unit, doc) name,
#include "stats/counters.def"
#undef RT_COUNTER
  count_
};

inline constexpr std::size_t kCounterCount = static_cast<std::size_t>(counter::count_);

struct counter_info {
  const char* name;
  const char* unit;
  const char* doc;
};

inline constexpr std::array<counter_info, kCounterCount> kCounterInfo{{
#define RT_COUNTER(name, unit, doc) counter_info{#name, unit, doc},
#include "stats/counters.def"
#undef RT_COUNTER
}};

// Compiled out with -DNUMART_COUNTERS=OFF (RT_COUNTERS=0): add() does nothing, snapshots read
// zeros. Only for measuring the counters' cost (scripts/counters_cost.sh).
#ifndef RT_COUNTERS
#define RT_COUNTERS 1
#endif
inline constexpr bool kCountersEnabled = RT_COUNTERS != 0;

class counter_block {
 public:
  // Owner only.
  void add(counter c, std::uint64_t n = 1) noexcept {
    if constexpr (!kCountersEnabled) return;
    auto& cell = cells_[static_cast<std::size_t>(c)];
    cell.store(cell.load(sync::native::relaxed) + n, sync::native::relaxed);
  }
  // Any thread. The shared counter row for outside threads uses add_shared().
  std::uint64_t read(counter c) const noexcept { return cells_[static_cast<std::size_t>(c)].load(sync::native::relaxed); }
  void add_shared(counter c, std::uint64_t n = 1) noexcept {
    if constexpr (!kCountersEnabled) return;
    cells_[static_cast<std::size_t>(c)].fetch_add(n, sync::native::relaxed);
  }

 private:
  std::array<sync::native::atomic<std::uint64_t>, kCounterCount> cells_{};
};

}  // namespace rt::ctr
