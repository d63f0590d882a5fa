// The guest haltpoll governor's window (idle_poll.hpp).
#include "policy/idle_poll.hpp"

#include <algorithm>

namespace rt::policy {

std::int64_t idle_poll_next(std::int64_t window_ns, std::int64_t block_ns, const tun::settings& s) {
  const std::int64_t max_ns = s.t.idle_poll_max_ns;
  if (block_ns > window_ns && block_ns <= max_ns) {
    const std::int64_t grown = std::max(window_ns * s.t.idle_poll_grow, s.t.idle_poll_grow_start_ns);
    return std::min(grown, max_ns);
  }
  if (block_ns > max_ns) return s.t.idle_poll_shrink == 0 ? 0 : window_ns / s.t.idle_poll_shrink;
  return window_ns;
}

bool idle_poll_allowed(const layout& lay, bool host, const tun::settings& s) {
  if (!s.f.IDLE_POLL || s.t.idle_poll_max_ns == 0 || !host) return false;
  std::vector<int> cores;
  cores.reserve(lay.workers.size());
  for (const worker_place& p : lay.workers) cores.push_back(p.core);
  std::sort(cores.begin(), cores.end());
  return std::adjacent_find(cores.begin(), cores.end()) == cores.end();
}

}  // namespace rt::policy
