// jemalloc's thread-cache collection applied to a worker's frame pool (frame_cache.hpp).
#include "policy/frame_cache.hpp"

#include <algorithm>

namespace rt::policy {

std::size_t frames_to_keep(std::size_t count, std::size_t low_water, const tun::settings& s) {
  const std::size_t unused = std::min(low_water, count);
  // Rounded up, as jemalloc's `low_water - (low_water >> 2)` is for 75.
  const std::size_t pct = static_cast<std::size_t>(s.t.frame_pool_gc_pct);
  const std::size_t collected = std::min((unused * pct + 99) / 100, unused);
  const std::size_t floor = std::min(count, static_cast<std::size_t>(s.t.frame_pool_size));
  const std::size_t cap = static_cast<std::size_t>(s.t.frame_pool_max);
  return std::min(std::max(count - collected, floor), cap);
}

}  // namespace rt::policy
