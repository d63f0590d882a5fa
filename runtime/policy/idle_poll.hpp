// Idle polling before a worker parks: the guest haltpoll governor (drivers/cpuidle/governors/
// haltpoll.c, Documentation/virt/guest-halt-polling.rst; docs/design/parking.md, "Idle polling").
//
// A KVM guest's vCPU with nothing to run polls for a while before it halts, because a halt
// and the IPI that ends it cost a VM exit each (tens of microseconds on this kind of machine).
// A numart worker that found nothing is in the same place: parking costs a futex wait, and the
// spawn that ends it a futex wake and a cross-vCPU wake-up (50-80 us measured, issue 4). So a
// searching worker keeps polling the queues for a per-worker window before it parks, and the
// window adapts after every park the way haltpoll's adjust_poll_limit() does:
//   - the park ended within guest_halt_poll_ns (idle_poll_max_ns) but after the window: a
//     longer window would have caught that wake-up, so it grows (x idle_poll_grow, at least
//     idle_poll_grow_start_ns, at most idle_poll_max_ns);
//   - the park lasted longer than idle_poll_max_ns: polling was wasted, so it shrinks
//     (/ idle_poll_shrink; 0 would turn it off until the next grow);
//   - otherwise (the wake-up came within the window, which cannot happen to a worker that
//     parked, or between window and max with the window already at max) it stays.
// Haltpoll's own downside is polling while other tasks could use the CPU; a worker polls only
// when it has a core to itself (idle_poll_allowed).
// Pure: integer arithmetic on the values passed in, no clocks.
#pragma once

#include <cstdint>
#include <vector>

#include "policy/layout.hpp"
#include "tunables/tunables.hpp"

namespace rt::policy {

// The window after a park of `block_ns` that started with window `window_ns` (haltpoll's
// adjust_poll_limit()). `window_ns` and the result lie in [0, idle_poll_max_ns].
std::int64_t idle_poll_next(std::int64_t window_ns, std::int64_t block_ns, const tun::settings& s);

// Whether the workers of `lay` may poll at all: IDLE_POLL on, idle_poll_max_ns > 0, the
// topology is this machine's (`host`), and no two workers share a core (a poller would take
// CPU time from the worker beside it, haltpoll's host-side downside).
bool idle_poll_allowed(const layout& lay, bool host, const tun::settings& s);

}  // namespace rt::policy
