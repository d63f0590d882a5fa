// The trace's event kinds: their fields, builders (ev::*, pure, for tests and replays) and the
// emit functions the scheduler calls (one per kind: read the clock, build, push).
//
// Field layout per kind (event in ring.hpp; unused fields are 0):
//
//   kind             a                b          c                d          g             e               f
//   task_start       task id          group id   group node (-1)  -          -             -               -
//   task_end         task id          group id   -                -          -             -               -
//   spawn            task id          group id   target worker    scan len   home (-1)     wake_affine     wake_path
//   steal            task id          -          victim           -          -             steal_tier      -
//   park             -                -          -                -          -             park_reason     -
//   unpark           wake sent (0)    -          woken by (-1)    -          -             unpark_reason   -
//   mailbox_handoff  task id          -          to worker        -          -             -               -
//   balancer_move    score (int64)    group id   old home node    new home   -             -               -
//   page_migration   pages            group id   from node        to node    -             -               -
//
// Ids are opaque 64-bit values chosen by the scheduler: a task id must be unique among the
// tasks alive at one time (a frame address qualifies: a frame is reused only after its task
// ended); group id 0 means "no group". "group node" is the node the group prefers when the task
// starts (its preferred node, else its home worker's node; -1 when it has neither): the
// locality summary counts a start as local when the worker's node equals it.
#pragma once


#include <cstdint>

#include "sync/clock.hpp"
#include "trace/ring.hpp"

namespace rt::trace {

// How the wake path decided between the spawner's side and the task's home (wake_affine()).
enum class wake_affine : std::uint8_t {
  none,        // no decision: self == home, an outside spawn, or no wake path ran
  affine,      // the spawner's side (share_cache, node_idle, node_balanced, unchecked)
  not_affine,  // near the home (numa_wake_affine refused)
};

// Where select_worker() sent the task, and why.
enum class wake_path : std::uint8_t {
  local,        // no placement: pushed on the spawner's own deque
  target_idle,  // select_idle_sibling: the target itself was idle
  prev_idle,    // select_idle_sibling: the home shares the target's LLC and was idle
  idle_scan,    // select_idle_cpu found an idle worker
  busy_target,  // nothing idle: the (busy) target gets the task
  idlest,       // find_idlest (outside spawn or exec)
};

enum class steal_tier : std::uint8_t {
  llc,        // a victim in the thief's LLC
  node,       // another LLC of the thief's node
  remote,     // a victim on another node
  injection,  // a node injection queue; the victim field is the node
};

enum class park_reason : std::uint8_t {
  idle,  // the work-search ladder found nothing
  join,  // a joiner blocked on its task or task_group after helping found nothing
};

enum class unpark_reason : std::uint8_t {
  woken,      // a notifier picked this worker (new work, or a searcher handing over)
  task_done,  // the awaited task or task_group finished
  shutdown,   // the runtime stops
  spurious,   // the futex returned with nobody having woken the worker
  timeout,    // a timed park after refused steals ran out (I-PARK-8)
};

const char* to_string(wake_affine a) noexcept;
const char* to_string(wake_path p) noexcept;
const char* to_string(steal_tier t) noexcept;
const char* to_string(park_reason r) noexcept;
const char* to_string(unpark_reason r) noexcept;
const char* to_string(kind k) noexcept;

// Event timestamps: the mechanism's clock (sync/clock.hpp).
using sync::now_ns;

// Builders: an event of each kind at time `ts`.
namespace ev {

inline event task_start(std::uint64_t ts, std::uint64_t task, std::uint64_t group, int group_node) noexcept {
  event e;
  e.ts = ts;
  e.what = kind::task_start;
  e.a = task;
  e.b = group;
  e.c = group_node;
  return e;
}
inline event task_end(std::uint64_t ts, std::uint64_t task, std::uint64_t group) noexcept {
  event e;
  e.ts = ts;
  e.what = kind::task_end;
  e.a = task;
  e.b = group;
  return e;
}
inline event spawn(std::uint64_t ts, std::uint64_t task, std::uint64_t group, int home, int target, wake_affine affine,
                   wake_path path, int scan_len) noexcept {
  event e;
  e.ts = ts;
  e.what = kind::spawn;
  e.a = task;
  e.b = group;
  e.c = target;
  e.d = scan_len;
  e.g = home;
  e.e = static_cast<std::uint8_t>(affine);
  e.f = static_cast<std::uint16_t>(path);
  return e;
}
inline event steal(std::uint64_t ts, std::uint64_t task, int victim, steal_tier tier) noexcept {
  event e;
  e.ts = ts;
  e.what = kind::steal;
  e.a = task;
  e.c = victim;
  e.e = static_cast<std::uint8_t>(tier);
  return e;
}
inline event park(std::uint64_t ts, park_reason reason) noexcept {
  event e;
  e.ts = ts;
  e.what = kind::park;
  e.e = static_cast<std::uint8_t>(reason);
  return e;
}
// `wake_sent`: when the waker unparked the worker (its clock), 0 when unknown (a timeout, or a
// wake that no waker stamped); from then until `ts` the worker was runnable, not parked.
inline event unpark(std::uint64_t ts, unpark_reason reason, int by, std::uint64_t wake_sent = 0) noexcept {
  event e;
  e.ts = ts;
  e.what = kind::unpark;
  e.a = wake_sent;
  e.c = by;
  e.e = static_cast<std::uint8_t>(reason);
  return e;
}
inline event mailbox_handoff(std::uint64_t ts, std::uint64_t task, int to) noexcept {
  event e;
  e.ts = ts;
  e.what = kind::mailbox_handoff;
  e.a = task;
  e.c = to;
  return e;
}
inline event balancer_move(std::uint64_t ts, std::uint64_t group, int old_home, int new_home, std::int64_t score) noexcept {
  event e;
  e.ts = ts;
  e.what = kind::balancer_move;
  e.a = static_cast<std::uint64_t>(score);
  e.b = group;
  e.c = old_home;
  e.d = new_home;
  return e;
}
inline event page_migration(std::uint64_t ts, std::uint64_t group, int from_node, int to_node, std::uint64_t pages) noexcept {
  event e;
  e.ts = ts;
  e.what = kind::page_migration;
  e.a = pages;
  e.b = group;
  e.c = from_node;
  e.d = to_node;
  return e;
}

}  // namespace ev

// Emit functions: the producer of `r` only (docs/observability.md, "Call sites").
inline void task_start(ring& r, std::uint64_t task, std::uint64_t group, int group_node) noexcept {
  r.push(ev::task_start(now_ns(), task, group, group_node));
}
inline void task_end(ring& r, std::uint64_t task, std::uint64_t group) noexcept {
  r.push(ev::task_end(now_ns(), task, group));
}
inline void spawn(ring& r, std::uint64_t task, std::uint64_t group, int home, int target, wake_affine affine, wake_path path,
                  int scan_len) noexcept {
  r.push(ev::spawn(now_ns(), task, group, home, target, affine, path, scan_len));
}
// A spawn whose time `ts` was read before the task was published (I-TRACE-8): recorded after
// a hand-off, the event still precedes the task's start on the worker that took it.
inline void spawn_at(ring& r, std::uint64_t ts, std::uint64_t task, std::uint64_t group, int home, int target,
                     wake_affine affine, wake_path path, int scan_len) noexcept {
  r.push(ev::spawn(ts, task, group, home, target, affine, path, scan_len));
}
inline void steal(ring& r, std::uint64_t task, int victim, steal_tier tier) noexcept {
  r.push(ev::steal(now_ns(), task, victim, tier));
}
inline void park(ring& r, park_reason reason) noexcept { r.push(ev::park(now_ns(), reason)); }
inline void unpark(ring& r, unpark_reason reason, int by, std::uint64_t wake_sent = 0) noexcept {
  r.push(ev::unpark(now_ns(), reason, by, wake_sent));
}
inline void mailbox_handoff(ring& r, std::uint64_t task, int to) noexcept { r.push(ev::mailbox_handoff(now_ns(), task, to)); }
inline void balancer_move(ring& r, std::uint64_t group, int old_home, int new_home, std::int64_t score) noexcept {
  r.push(ev::balancer_move(now_ns(), group, old_home, new_home, score));
}
inline void page_migration(ring& r, std::uint64_t group, int from_node, int to_node, std::uint64_t pages) noexcept {
  r.push(ev::page_migration(now_ns(), group, from_node, to_node, pages));
}

}  // namespace rt::trace
