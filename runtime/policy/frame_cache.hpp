// How many free task frames a worker's pool keeps: jemalloc's thread-cache garbage collection
// (tcache_event_hard()/tcache_bin_flush_small(): a bin's low-water mark is the fewest objects
// it held since the last collection, and the collection flushes three quarters of it; a
// collection follows an amount of allocation, opt_tcache_gc_incr_bytes). docs/design/core.md,
// I-POOL-4.
//
// A worker that runs out of local work after taking frame_pool_gc_takes frames since the last
// collection collects: frames it did not touch since then (the low-water mark) were not needed
// by that busy period, and three quarters of them go back to the arena. Frames it did use stay:
// a worker whose bursts spawn 2000 tasks before running any (hackbench-like,
// bench/wake_workloads.hpp) would otherwise allocate the same 2000 frames from the arena, cold,
// at every burst. Three bounds:
//   - frame_pool_size, the floor: a pool keeps up to that many frames however idle it was
//     (the fixed size the pool had before the collection existed);
//   - frame_pool_gc_batch, the most one collection frees: the frees run where a busy period
//     ends, often just before the next one, so a large pool shrinks over several collections,
//     as jemalloc's incremental collection does;
//   - frame_pool_max, the cap, applied when the worker parks: a sleeping worker's local list
//     holds no more, whatever its last burst was (jemalloc bounds a bin likewise, ncached_max).
//     A busy worker is not capped: one whose task spawns a million tasks at a time
//     (numart_bench_core's empty_spawn_1M) reuses them from burst to burst, as it did when the
//     pool was trimmed only at parks. The cap wins over the floor.
// Pure: integer arithmetic on the values passed in.
#pragma once

#include <algorithm>
#include <cstddef>

#include "tunables/tunables.hpp"

namespace rt::policy {

// Whether a worker that runs dry collects its pool: when it took at least frame_pool_gc_takes
// frames since the last collection (jemalloc collects a thread cache after an amount of
// allocation, opt_tcache_gc_incr_bytes, not after an amount of time). A worker that only ran
// tasks others spawned (a thief) keeps its pool for when it spawns again.
inline bool frame_collection_due(std::size_t takes, const tun::settings& s) {
  return takes >= static_cast<std::size_t>(s.t.frame_pool_gc_takes);
}

// The frames to keep, when the worker runs dry, of `count` free frames of which `low_water`
// (<= count) stayed unused since the previous collection. The result is at most `count`.
// Inline: every run-dry of every worker asks, and a pool within its floor keeps all it has.
inline std::size_t frames_to_keep(std::size_t count, std::size_t low_water, const tun::settings& s) {
  const std::size_t unused = std::min(low_water, count);
  // Rounded up, as jemalloc's `low_water - (low_water >> 2)` is for 75.
  const std::size_t pct = static_cast<std::size_t>(s.t.frame_pool_gc_pct);
  const std::size_t collected = std::min({(unused * pct + 99) / 100, unused,
                                          static_cast<std::size_t>(s.t.frame_pool_gc_batch)});
  const std::size_t floor = std::min(count, static_cast<std::size_t>(s.t.frame_pool_size));
  return std::max(count - collected, floor);
}

// The frames a worker about to park keeps of `count`: at most frame_pool_max.
inline std::size_t frames_to_keep_parked(std::size_t count, const tun::settings& s) {
  return std::min(count, static_cast<std::size_t>(s.t.frame_pool_max));
}

}  // namespace rt::policy
