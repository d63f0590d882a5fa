// select_worker(): where a spawned task runs and which worker, if any, to wake — the analog of
// the kernel's select_task_rq_fair() (docs/design/wake-path.md; DESIGN.md §4 step 2).
//
//   spawn from a worker (`self`, the kernel's this_cpu), with `home` (the worker that last ran
//   the task's group, else the spawner; the kernel's prev_cpu):
//     self == home          -> select_idle_sibling(home, home)       (000 patch 6: pick_cpu)
//     else wake_affine():
//       share an LLC          -> affine at once, no load arithmetic  (000 patch 6, WA_SHARE_CACHE)
//       else numa_wake_affine -> node loads weighted by node capacity (000 patch 7, NUMA_WAKE_AFFINE)
//     target = affine ? self : home; select_idle_sibling(home, target)
//   spawn from an outside thread, or a continuation replacing the running task (exec):
//     find_idlest()                                              (003; find_idlest_group())
//
// Every function is pure and O(scan length) on the spawn path (find_idlest is O(workers) and
// only for the slow path); the per-worker state comes through a view (wake_view below).
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>

#include "core/assert.hpp"
#include "policy/domains.hpp"
#include "policy/idle_scan.hpp"
#include "policy/layout.hpp"
#include "policy/load.hpp"
#include "tunables/tunables.hpp"

namespace rt::policy {

// ---------------------------------------------------------------------------------------------
// The view select_worker() reads: everything idle_view and load_view ask for, plus
//   std::uint64_t node_load(int n)  the load on logical node n, on the kCapacityScale scale per
//                                   worker (the sum of cpu_util() of its workers, or of the
//                                   load of the work queued there): the kernel's numa_stats.load
template <class V>
concept wake_view = idle_view<V> && load_view<V> && requires(const V& v, int n) {
  { v.node_load(n) } -> std::convertible_to<std::uint64_t>;
};

// ---------------------------------------------------------------------------------------------
// numa_wake_affine (000 patch 7)

struct node_stats {
  std::uint64_t load = 0;      // numa_stats.load
  std::uint64_t capacity = 0;  // numa_stats.compute_capacity: layout::node_capacity
};

enum class numa_affine : std::uint8_t {
  node_idle,   // affine: this node's load is 0 (after the sync discount); an idle node is no imbalance
  balanced,    // affine: the capacity-weighted loads are within imbalance_pct / 2
  unbalanced,  // not affine: moving the task to this node would unbalance the two nodes
};

const char* to_string(numa_affine a);

// "Can a task be moved from prev's node to this node without causing a load imbalance that
// would trigger the load balancer?" With sync (the spawner is about to join), the spawner's own
// load leaves this node first (saturating). If this node's load is then 0: node_idle. Else
//   this_eff = 100 * prev.capacity * (this.load + task_load)
//   prev_eff = (100 + (imbalance_pct - 100) / 2) * this.capacity * (prev.load - task_load)
// and balanced iff this_eff <= prev_eff. Where the seed subtracts task_load from prev_load in
// unsigned arithmetic, this saturates at 0: a task heavier than its home node's whole load
// means that node is nearly idle, so prev_eff = 0 and the task stays (the seed wrapped around
// to a huge prev load and moved it). Products saturate instead of wrapping.
numa_affine numa_wake_affine(node_stats prev, node_stats this_node, std::uint64_t imbalance_pct, bool sync,
                             std::uint64_t task_load, std::uint64_t current_load);

// ---------------------------------------------------------------------------------------------
// wake_affine (000 patch 6 + 7)

enum class affine_outcome : std::uint8_t {
  not_attempted,    // self == home, or no spawning worker: nothing to decide
  share_cache,      // affine: self and home share an LLC (WA_SHARE_CACHE)
  node_idle,        // affine: numa_wake_affine, this node idle after the sync discount
  node_balanced,    // affine: numa_wake_affine, loads within the margin
  node_unbalanced,  // not affine: numa_wake_affine refused; the task goes near its home
  numa_preferred,   // not affine: the task's group prefers home's node and self is elsewhere
  unchecked,        // affine: NUMA_WAKE_AFFINE off (the seed's !CONFIG_NUMA_BALANCING stub)
};

const char* to_string(affine_outcome a);

// True for the outcomes that pick the spawner's side (the kernel's ttwu_move_affine).
constexpr bool is_affine(affine_outcome a) noexcept {
  return a == affine_outcome::share_cache || a == affine_outcome::node_idle || a == affine_outcome::node_balanced ||
         a == affine_outcome::unchecked;
}

// The kernel's wake_affine() for self != home. The shortcut needs no load: when both share an
// LLC, select_idle_sibling() searches that LLC whatever is decided ("will do its thing
// regardless of what we return"). Otherwise the nodes of home and self are compared with the
// imbalance_pct of the smallest domain spanning both workers (domains.hpp).
template <wake_view V>
affine_outcome wake_affine(const layout& l, const V& v, int self, int home, bool sync, std::uint64_t task_load,
                           std::uint64_t current_load, const tun::settings& s) {
  if (s.f.WA_SHARE_CACHE && l.share_llc(home, self)) return affine_outcome::share_cache;
  if (!s.f.NUMA_WAKE_AFFINE) return affine_outcome::unchecked;
  const int prev_node = l.node_of(home);
  const int this_node = l.node_of(self);
  const node_stats prev{static_cast<std::uint64_t>(v.node_load(prev_node)),
                        l.node_capacity[static_cast<std::size_t>(prev_node)]};
  const node_stats here{static_cast<std::uint64_t>(v.node_load(this_node)),
                        l.node_capacity[static_cast<std::size_t>(this_node)]};
  switch (numa_wake_affine(prev, here, imbalance_pct_between(l, home, self, s), sync, task_load, current_load)) {
    case numa_affine::node_idle:
      return affine_outcome::node_idle;
    case numa_affine::balanced:
      return affine_outcome::node_balanced;
    case numa_affine::unbalanced:
      break;
  }
  return affine_outcome::node_unbalanced;
}

// ---------------------------------------------------------------------------------------------
// select_worker

struct spawn_request {
  // The spawning worker (`this`); empty for a spawn from a thread that is not a worker.
  std::optional<int> self;
  // The worker that last ran the task's group, else the spawner (`prev`). For a spawn from an
  // outside thread: where find_idlest() starts and breaks ties (the group's home, or a hint
  // the caller rotates so that ties spread over the machine).
  int home = 0;
  // The spawner is about to join the task (a sync wakeup): its own load is discounted.
  bool sync = false;
  // The task continues the spawner's running task, which ends (the execl case): placement
  // takes find_idlest() from `self` with `task` (presence running on self) discounted.
  bool exec = false;
  std::uint64_t task_load = 0;     // the new task's expected load (task_h_load(p))
  std::uint64_t current_load = 0;  // the spawner's running task's load (task_h_load(current))
  task_ref task;                   // p as the load signals see it (find_idlest)
  // The logical node the task's group prefers (set by the NUMA balancer or by hand), -1 none.
  // When home is on it and self is not, the spawn is not affine: the balancer moved the group
  // there for its memory, and wake_affine's pull toward the spawner would undo that on every
  // spawn (the kernel undoes it later with task_numa_migrate; a user-space runtime can place
  // the task right at once). I-WAKE-8.
  int preferred_node = -1;
  // For a spawn from an outside thread: the worker bound to the core that thread runs on (the
  // kernel's this_cpu), -1 when none is (virtual-topology mode, an unbound core). When it is
  // idle and the task has no placed group, it takes the task: the kernel's sync wake-up
  // (wake_affine_idle: the waker is about to sleep, so this_cpu), the shape of
  // spawn(f).join(). I-WAKE-9.
  int waker = -1;
};

enum class wake_reason : std::uint8_t {
  target_idle,  // select_idle_sibling: the target itself is idle
  prev_idle,    // select_idle_sibling: the home shares the target's LLC and is idle
  idle_scan,    // select_idle_cpu found an idle worker
  busy_target,  // nothing idle found: the target (busy) gets the task
  idlest,       // find_idlest (outside spawn or exec)
};

const char* to_string(wake_reason r);

struct wake_decision {
  int target = 0;
  wake_reason reason = wake_reason::busy_target;
  affine_outcome affine = affine_outcome::not_attempted;
  scan_outcome scan = scan_outcome::not_run;
  int scanned = 0;          // workers the idle scan examined
  bool idle_found = false;  // the target is idle: mail the task there and wake that worker alone
  bool cross_node = false;  // the target is on another node than the spawning worker (never for outside spawns)

  // The issue-4 counters: affine attempts and moves, idle scans, scans cut short by nr.
  bool affine_attempted() const noexcept { return affine != affine_outcome::not_attempted; }
  bool affine_moved() const noexcept { return is_affine(affine); }
  bool scan_ran() const noexcept { return scan != scan_outcome::not_run; }
  bool scan_cut_short() const noexcept { return scan == scan_outcome::cut_short; }
};

// I-WAKE-2: O(1) + O(scanned) without allocation unless the request takes find_idlest.
template <wake_view V>
wake_decision select_worker(const layout& l, const V& v, const spawn_request& r, const tun::settings& s) {
  RT_DEBUG_ASSERT(r.home >= 0 && r.home < l.worker_count(), "I-WAKE-1", "select_worker: home is not a worker");
  wake_decision d;
  if (!r.self.has_value() && !r.exec && r.preferred_node >= 0 && l.node_of(r.home) == r.preferred_node) {
    // I-WAKE-8 for an outside spawn: an idle worker of the group's node, searched from home
    // with wrap (the slow path: O(workers of the node)), else home itself.
    d.target = r.home;
    d.reason = wake_reason::busy_target;
    core::for_each_cpu_wrap(l.node_workers[static_cast<std::size_t>(r.preferred_node)], static_cast<std::size_t>(r.home),
                            [&](std::size_t w) {
                              ++d.scanned;
                              if (!v.idle(static_cast<int>(w))) return true;
                              d.target = static_cast<int>(w);
                              d.reason = static_cast<int>(w) == r.home ? wake_reason::target_idle : wake_reason::idle_scan;
                              d.idle_found = true;
                              return false;
                            });
    return d;
  }
  if (!r.self.has_value() && !r.exec && r.preferred_node < 0 && r.waker >= 0 && v.idle(r.waker)) {
    d.target = r.waker;  // I-WAKE-9
    d.reason = wake_reason::target_idle;
    d.idle_found = true;
    return d;
  }
  if (!r.self.has_value() || r.exec) {
    const int start = r.self.has_value() ? *r.self : r.home;
    const idlest_result i = find_idlest(l, v, start, r.task, s);
    d.target = i.worker;
    d.reason = wake_reason::idlest;
    d.idle_found = i.idle;
    d.cross_node = r.self.has_value() && l.node_of(i.worker) != l.node_of(*r.self);
    return d;
  }

  const int self = *r.self;
  RT_DEBUG_ASSERT(self >= 0 && self < l.worker_count(), "I-WAKE-1", "select_worker: self is not a worker");
  int target = r.home;
  if (self != r.home) {
    if (r.preferred_node >= 0 && l.node_of(r.home) == r.preferred_node && l.node_of(self) != r.preferred_node)
      d.affine = affine_outcome::numa_preferred;  // I-WAKE-8
    else
      d.affine = wake_affine(l, v, self, r.home, r.sync, r.task_load, r.current_load, s);
    if (is_affine(d.affine)) target = self;
  }

  const sibling_result sib = select_idle_sibling(l, v, r.home, target, self, s);
  d.target = sib.worker;
  d.scan = sib.scan.outcome;
  d.scanned = sib.scan.scanned;
  switch (sib.reason) {
    case sibling_reason::target_idle:
      d.reason = wake_reason::target_idle;
      break;
    case sibling_reason::prev_idle:
      d.reason = wake_reason::prev_idle;
      break;
    case sibling_reason::scan_found:
      d.reason = wake_reason::idle_scan;
      break;
    case sibling_reason::none_idle:
      d.reason = wake_reason::busy_target;
      break;
  }
  d.idle_found = sib.reason != sibling_reason::none_idle;
  d.cross_node = l.node_of(d.target) != l.node_of(self);
  return d;
}

}  // namespace rt::policy
