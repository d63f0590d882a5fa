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
// tasks_spawned's slot holds the spawns up to the last flush, count_spawn() counts the rest;
// tasks_run's slot counts the tasks execute() ran, and flush() adds the inline runs to it; it
// derives frames_pooled, which is never added (I-CTR-7).
inline constexpr std::array<counter, 5> kBatched{counter::tasks_spawned, counter::tasks_run, counter::tasks_inline,
                                                 counter::join_waits, counter::frames_allocated};

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
    const int batch_slot = kBatchSlot[static_cast<std::size_t>(c)];
    if (batch_slot >= 0) {
      batch_[static_cast<std::size_t>(batch_slot)] += n;  // I-CTR-2: owner-only, published by flush()
      return;
    }
    auto& published = cell(c);  // I-CTR-1
    published.store(published.load(sync::native::relaxed) + n, sync::native::release);
  }
  // Owner only, on each spawn: counts it in tasks_spawned (the countdown is the count, I-CTR-7)
  // and is true when `interval` spawns happened since the last flush (I-CTR-4).
  [[gnu::always_inline]] bool count_spawn() noexcept {
    if constexpr (!kCountersEnabled) return false;
    return --spawns_until_flush_ == 0;
  }
  // Owner only, after each task execute() ran: true when `interval` of them ended since the last
  // flush (I-CTR-4).
  [[gnu::always_inline]] bool tick() noexcept {
    if constexpr (!kCountersEnabled) return false;
    return --runs_until_flush_ == 0;
  }
  // Owner only: publishes the batch (release stores of the running totals and of the counts
  // derived from them, I-CTR-2, I-CTR-7) and restarts the flush interval at `interval` (>= 1).
  // Out of line: the hot path keeps no registers for it (measured: docs/design/counters.md §1).
  [[gnu::noinline, gnu::cold]] void flush(std::int64_t interval) noexcept {
    if constexpr (!kCountersEnabled) return;
    batch_[slot(counter::tasks_spawned)] += interval_ - spawns_until_flush_;
    // I-CTR-7: every frame this worker took was submitted or abandoned, and came from its pool
    // unless it was counted allocated. A frame taken but not yet submitted (its closure under
    // construction) makes the difference short, never long; the max keeps the cell monotonic.
    const std::uint64_t ended =
        batch_[slot(counter::tasks_spawned)] + cell(counter::frames_abandoned).load(sync::native::relaxed);
    const std::uint64_t allocated = batch_[slot(counter::frames_allocated)];
    const std::uint64_t derived = ended > allocated ? ended - allocated : 0;
    auto& pooled = cell(counter::frames_pooled);
    if (derived > pooled.load(sync::native::relaxed)) pooled.store(derived, sync::native::release);
    for (std::size_t i = 0; i < kBatched.size(); ++i) {
      const std::uint64_t inline_runs = kBatched[i] == counter::tasks_run ? batch_[slot(counter::tasks_inline)] : 0;
      cell(kBatched[i]).store(batch_[i] + inline_runs, sync::native::release);
    }
    interval_ = static_cast<std::uint32_t>(interval);
    spawns_until_flush_ = interval_;
    runs_until_flush_ = interval_;
  }
  // Any thread: the published value (I-CTR-5, I-CTR-6).
  std::uint64_t read(counter c) const noexcept { return cells_[static_cast<std::size_t>(c)].load(sync::native::acquire); }

 private:
  static constexpr std::size_t slot(counter c) noexcept {
    return static_cast<std::size_t>(kBatchSlot[static_cast<std::size_t>(c)]);
  }
  sync::native::atomic<std::uint64_t>& cell(counter c) noexcept { return cells_[static_cast<std::size_t>(c)]; }

  // Owner only, its own line: running totals of kBatched (tasks_spawned's as of the last flush),
  // the flush interval and the spawns and executed tasks left until the next flush.
  alignas(sync::kCacheLine) std::array<std::uint64_t, kBatched.size()> batch_{};
  std::uint32_t interval_ = 1;
  std::uint32_t spawns_until_flush_ = 1;
  std::uint32_t runs_until_flush_ = 1;
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
