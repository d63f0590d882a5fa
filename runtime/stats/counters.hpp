// The per-worker counter block (counters.def) and the shared block of outside threads.
// Protocol: docs/design/counters.md (I-CTR-N).
//
// A worker counts the spawn/run/join hot path (kBatched) in plain owner-only fields and
// publishes them into the atomic cells snapshots read at the end of each top-level task, every
// injection_poll_interval task ends, and before it sleeps (I-CTR-2..4). Every other counter is
// added straight into its cell by the owner, a load and a release store (I-CTR-1). Values are
// monotonic; a snapshot sees each cell at some recent value (no cross-counter consistency), and
// exact totals once the tasks that counted have completed (I-CTR-5).
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

// The counters a worker adds on every spawn, task and join (docs/design/counters.md §1): they
// live in the batch. Only counters added inside a task body may be batched (I-CTR-3).
inline constexpr std::array<counter, 6> kBatched{counter::tasks_spawned, counter::tasks_run,   counter::tasks_inline,
                                                 counter::join_waits,    counter::frames_pooled, counter::frames_allocated};

namespace detail {
inline constexpr std::array<int, kCounterCount> batch_slots() {
  std::array<int, kCounterCount> slot{};
  for (int& s : slot) s = -1;
  for (std::size_t i = 0; i < kBatched.size(); ++i) slot[static_cast<std::size_t>(kBatched[i])] = static_cast<int>(i);
  return slot;
}
}  // namespace detail
inline constexpr std::array<int, kCounterCount> kBatchSlot = detail::batch_slots();

class counter_block {
 public:
  // Owner only. Inlined: at every call site `c` is a constant and the slot test folds away.
  [[gnu::always_inline]] void add(counter c, std::uint64_t n = 1) noexcept {
    if constexpr (!kCountersEnabled) return;
    const int slot = kBatchSlot[static_cast<std::size_t>(c)];
    if (slot >= 0) {
      batch_[static_cast<std::size_t>(slot)] += n;  // I-CTR-2: owner-only, published by flush()
      return;
    }
    auto& cell = cells_[static_cast<std::size_t>(c)];  // I-CTR-1
    cell.store(cell.load(sync::native::relaxed) + n, sync::native::release);
  }
  // Owner only, after each task body (I-CTR-4): true when `interval` tasks have ended since
  // the last flush, and the batch is due for publication.
  [[gnu::always_inline]] bool tick() noexcept {
    if constexpr (!kCountersEnabled) return false;
    return --until_flush_ == 0;
  }
  // Owner only: publishes the batch (release stores of the running totals, I-CTR-2) and
  // restarts the flush interval at `interval` (>= 1) tasks.
  // Out of line: the hot path keeps no registers for it (measured: docs/design/counters.md §1).
  [[gnu::noinline, gnu::cold]] void flush(std::int64_t interval) noexcept {
    if constexpr (!kCountersEnabled) return;
    for (std::size_t i = 0; i < kBatched.size(); ++i)
      cells_[static_cast<std::size_t>(kBatched[i])].store(batch_[i], sync::native::release);
    until_flush_ = static_cast<std::uint32_t>(interval);
  }
  // Any thread: the published value (I-CTR-5, I-CTR-6).
  std::uint64_t read(counter c) const noexcept { return cells_[static_cast<std::size_t>(c)].load(sync::native::acquire); }

 private:
  // Owner only, its own line: running totals of kBatched, and the tasks left until the next
  // flush.
  alignas(sync::kCacheLine) std::array<std::uint64_t, kBatched.size()> batch_{};
  std::uint32_t until_flush_ = 1;
  // Written by the owner only (cold adds and flush(): release stores, a plain store on x86),
  // read by snapshots (acquire loads, I-CTR-6); a flush is ordered before a snapshot by the
  // completion of the task that flushed (I-CTR-5). Own lines: snapshots never touch the batch.
  alignas(sync::kCacheLine) std::array<sync::native::atomic<std::uint64_t>, kCounterCount> cells_{};
};

// The outside row: spawns from threads that are not workers and the balancer thread count
// here, concurrently, so every add is an RMW. Writers: any thread (relaxed fetch_add); readers:
// snapshots (relaxed loads). A snapshot that happens after an add sees it.
class shared_counter_block {
 public:
  void add_shared(counter c, std::uint64_t n = 1) noexcept {
    if constexpr (!kCountersEnabled) return;
    cells_[static_cast<std::size_t>(c)].fetch_add(n, sync::native::relaxed);
  }
  std::uint64_t read(counter c) const noexcept { return cells_[static_cast<std::size_t>(c)].load(sync::native::relaxed); }

 private:
  std::array<sync::native::atomic<std::uint64_t>, kCounterCount> cells_{};
};

}  // namespace rt::ctr
