// How many free task frames a worker's pool keeps when the worker runs out of local work (the
// end of a busy period, before it searches and so before every park): jemalloc's thread-cache
// garbage collection (tcache_event_hard()/tcache_bin_flush_small(): a bin's low-water mark is
// the fewest objects it held since the last collection, and the collection flushes three
// quarters of it). docs/design/core.md, I-POOL-4.
//
// Frames the worker did not touch since the last collection (the low-water mark) were not
// needed by its last busy period; most of them go back to the arena. Frames it did use stay: a
// worker whose bursts spawn 2000 tasks before running any (hackbench-like,
// bench/wake_workloads.hpp) would otherwise allocate the same 2000 frames from the arena, cold,
// at every burst. Two bounds:
//   - frame_pool_size, the floor: a pool keeps up to that many frames however idle it was
//     (the fixed size the pool had before the collection existed);
//   - frame_pool_max, the cap: a pool's local list never keeps more past a collection, whatever
//     its last burst was (jemalloc bounds a bin likewise, ncached_max). The cap wins when the
//     two cross.
// Pure: integer arithmetic on the values passed in.
#pragma once

#include <algorithm>
#include <cstddef>

#include "tunables/tunables.hpp"

namespace rt::policy {

// The frames to keep of `count` free frames, of which `low_water` (<= count) stayed unused since
// the previous collection. The result is at most `count`. Inline: every run-dry of every worker
// asks, and a pool within its floor keeps all it has.
inline std::size_t frames_to_keep(std::size_t count, std::size_t low_water, const tun::settings& s) {
  const std::size_t unused = std::min(low_water, count);
  // Rounded up, as jemalloc's `low_water - (low_water >> 2)` is for 75.
  const std::size_t pct = static_cast<std::size_t>(s.t.frame_pool_gc_pct);
  const std::size_t collected = std::min((unused * pct + 99) / 100, unused);
  const std::size_t floor = std::min(count, static_cast<std::size_t>(s.t.frame_pool_size));
  const std::size_t cap = static_cast<std::size_t>(s.t.frame_pool_max);
  return std::min(std::max(count - collected, floor), cap);
}

}  // namespace rt::policy
