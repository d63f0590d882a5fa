// Load tracking and the slow placement path (docs/design/wake-path.md §2).
//
// * PELT (per-entity load tracking): a worker's utilisation is the geometric series of its
//   busy time per period, a period's weight halving every pelt_halflife_us, normalised to
//   kCapacityScale (1024 = busy all the time). pelt_signal is the accumulator; it takes the
//   time as an argument (no clocks in policy/).
// * util_est: the estimated utilisation of the work queued on and running at a worker, the
//   sum of its tasks' estimates (the mechanism keeps it with util_est_enqueue/_dequeue).
// * cpu_util_without() / capacity_spare_without(): a worker's utilisation and spare capacity
//   without the contribution of the task being placed, in the shape of seed 003 (the execl
//   fix and lsub_positive()).
// * find_idlest(): the kernel's find_idlest_group()/find_idlest_group_cpu() for spawns from
//   outside threads and for continuations (exec): the node, then the worker, with the most
//   spare capacity.
// Pure: integer arithmetic, no threads, atomics or clocks.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>

#include "core/assert.hpp"
#include "core/cpumask.hpp"
#include "core/satmath.hpp"
#include "policy/domains.hpp"
#include "policy/layout.hpp"
#include "tunables/tunables.hpp"

namespace rt::policy {

// ---------------------------------------------------------------------------------------------
// The per-worker state the load functions read. The mechanism implements it over its atomics
// (relaxed loads are enough: every value is a hint), tests over tables. Worker ids are layout
// ids. Units: util and util_est on the kCapacityScale scale.
//
//   bool          idle(int w)      w is parked or about to park with nothing queued
//   std::uint32_t util(int w)      w's PELT utilisation (pelt_signal::util_avg())
//   std::uint32_t util_est(int w)  sum of the util_est of the tasks queued on or running at w
template <class V>
concept load_view = requires(const V& v, int w) {
  { v.idle(w) } -> std::convertible_to<bool>;
  { v.util(w) } -> std::convertible_to<std::uint32_t>;
  { v.util_est(w) } -> std::convertible_to<std::uint32_t>;
};

// Where the task being placed (the kernel's p) stands in the load signals.
enum class task_presence : std::uint8_t {
  none,      // new, or no history: it contributes to no worker's signals
  sleeping,  // blocked after running on `worker`: only its decaying util remains there
  queued,    // queued on `worker`: its util_est is inside util_est(worker)
  running,   // the current task of `worker` (the execl case: it places its own continuation)
};

const char* to_string(task_presence p);

struct task_ref {
  int worker = 0;                  // task_cpu(p): where it last ran; ignored when presence == none
  std::uint32_t util = 0;          // task_util(p)
  std::uint32_t util_est = 0;      // _task_util_est(p)
  task_presence presence = task_presence::none;
  // presence == running only: p is its worker's only work (nothing on its deque, in its
  // mailbox or its slot), so that worker is idle once p returns: idle_cpu_without(worker, p).
  bool alone = false;
};

// cpu_util(): max(util, util_est) with UTIL_EST (util alone without), capped at the worker's
// capacity — estimated utilisation can exceed it when work piles up.
std::uint32_t cpu_util(std::uint32_t util, std::uint32_t util_est, const tun::settings& s);

// cpu_util_without(w, p) from w's util and util_est, 003 patch 1 in full:
//   - p has no contribution on w (new, or last ran elsewhere): cpu_util(w);
//   - else util -= task_util(p), saturating (lsub_positive, 003 patch 3); covers
//     (a) p the only task sleeping on w: util == task_util, util_est == 0 -> 0;
//     (b) other tasks sleeping on w, which leaves idle: util - task_util;
//     (c) other tasks runnable on w, util_est > util: util_est wins the max below;
//   - with UTIL_EST, estimated = util_est(w), minus _task_util_est(p) when p is queued on w or
//     is its current task (the execl fix: without it the spawner's own estimate made its
//     worker look busier than it is and the continuation migrated; 10-15% on execl
//     throughput in the patch), then util = max(util, estimated);
//   - capped at the capacity.
// UTIL_WITHOUT off discounts nothing (cpu_util(w)), for measuring what the fix buys.
std::uint32_t cpu_util_without(int w, std::uint32_t util, std::uint32_t util_est, const task_ref& p,
                               const tun::settings& s);

// capacity_spare_without(w, p) = max(capacity - cpu_util_without(w, p), 0); every worker has
// kCapacityScale.
std::uint32_t capacity_spare_without(int w, std::uint32_t util, std::uint32_t util_est,
                                     const task_ref& p, const tun::settings& s);

template <load_view V>
std::uint32_t cpu_util_without(const V& v, int w, const task_ref& p, const tun::settings& s) {
  return cpu_util_without(w, static_cast<std::uint32_t>(v.util(w)), static_cast<std::uint32_t>(v.util_est(w)),
                          p, s);
}

template <load_view V>
std::uint32_t capacity_spare_without(const V& v, int w, const task_ref& p, const tun::settings& s) {
  return capacity_spare_without(w, static_cast<std::uint32_t>(v.util(w)),
                                static_cast<std::uint32_t>(v.util_est(w)), p, s);
}

// util_est bookkeeping of a worker: a task's estimate is added when it is queued on (or starts
// running at) the worker and removed when it leaves; removal saturates at 0 (lsub_positive) so
// a stale estimate can never wrap the sum into "fully busy".
constexpr std::uint32_t util_est_enqueue(std::uint32_t worker_est, std::uint32_t task_est) noexcept {
  return core::sat_add(worker_est, task_est);
}
constexpr std::uint32_t util_est_dequeue(std::uint32_t worker_est, std::uint32_t task_est) noexcept {
  return core::sub_positive(worker_est, task_est);
}

// ---------------------------------------------------------------------------------------------
// PELT. Constants derived once from the tunables (make_pelt_params), then shared by every
// worker's signal. Sums are kept in microseconds times kCapacityScale, like the kernel's
// `contrib << SCHED_CAPACITY_SHIFT`, so that the rounding of each decay step (one unit) stays
// small against a period's contribution even for short periods.
struct pelt_params {
  std::uint64_t period_us = 1;         // P = pelt_period_us, at least 1
  std::uint64_t halflife_periods = 1;  // H = pelt_halflife_us / P rounded to nearest, at least 1
  std::uint64_t y_q32 = 0;             // y = 2^(-1/H) in Q0.32: the smallest y with y^H >= 1/2
  // The kernel's LOAD_AVG_MAX in scaled units: the value a signal busy in every period
  // converges to, i.e. the smallest fixed point of s = floor(s * y) + P * kCapacityScale.
  std::uint64_t max_sum = 0;
};

pelt_params make_pelt_params(const tun::settings& s);

// v * y^periods: whole halflives are shifts (exact), the rest one Q0.32 multiply, like the
// kernel's decay_load(); 0 beyond 63 halflives (a u64 halved 64 times).
std::uint64_t pelt_decay(std::uint64_t v, std::uint64_t periods, const pelt_params& p);

// A util_avg as it would read dt_us after it was computed, had its worker stayed busy
// (`running`) or idle all that time: what the kernel's tick would have made of it for a reader
// on another CPU. Whole periods only: util * y^n, plus kCapacityScale * (1 - y^n) when running.
std::uint32_t pelt_util_after(std::uint32_t util, std::uint64_t dt_us, bool running, const pelt_params& p);

// A node's exported demand (I-STEAL-17): the busy time of tasks that prefer the node but ran
// on other nodes, as a decayed sum in microseconds (the util_sum of a signal that several
// workers feed, without the kCapacityScale factor, so that a sum for many workers fits the
// mechanism's 24 bits). Adding a run of busy_us that ended now, `periods` whole periods after
// the sum was stamped: the old sum decays like a util_sum, and the run adds about what a
// worker's signal would have gained over it, each of its periods decayed by its age: its
// whole periods, counted back from its end (the newest undecayed, as the kernel's d3), add
// (max_sum - decay(max_sum, n)) / kCapacityScale, and its oldest partial period is decayed n
// periods. A run shorter than a period adds busy_us; a run of many halflives adds at most
// max_sum / kCapacityScale, one worker busy for ever. A run counts only when it ends.
std::uint64_t demand_sum_add(std::uint64_t sum_us, std::uint64_t periods, std::uint64_t busy_us, const pelt_params& p);
// The sum `periods` periods after its stamp as a util_avg in kCapacityScale units (one fully
// busy worker adds kCapacityScale, several add up: not capped), the scale cpu_util() sums use.
std::uint64_t demand_util(std::uint64_t sum_us, std::uint64_t periods, const pelt_params& p);

// One worker's utilisation signal (the kernel's sched_avg, util part only).
class pelt_signal {
 public:
  explicit pelt_signal(const pelt_params& p, std::uint64_t now_us = 0) : p_(p), last_update_us_(now_us) {}

  // Accounts [last update, now_us) as busy (`running`) or idle. Time is split like the
  // kernel's accumulate_sum(): d1 completes the period that was open (decayed with it), the
  // full periods in between add P * (y + ... + y^(n-1)), d3 opens the new period undecayed.
  // util_avg() is refreshed only when a period boundary was crossed; returns whether it was.
  // A clock that goes backwards resets the reference point and accounts nothing.
  bool update(std::uint64_t now_us, bool running);

  std::uint32_t util_avg() const noexcept { return util_avg_; }
  std::uint64_t util_sum() const noexcept { return util_sum_; }
  std::uint64_t period_contrib_us() const noexcept { return period_contrib_us_; }
  std::uint64_t last_update_us() const noexcept { return last_update_us_; }

 private:
  pelt_params p_;
  std::uint64_t last_update_us_ = 0;
  std::uint64_t period_contrib_us_ = 0;  // time already spent in the open period
  std::uint64_t util_sum_ = 0;           // scaled: us * kCapacityScale
  std::uint32_t util_avg_ = 0;
};

// ---------------------------------------------------------------------------------------------
// find_idlest: placement for spawns from outside threads and for continuations (exec).
//
// Node phase: every node's spare capacity is the sum of capacity_spare_without() over its
// workers — nodes are compared by what they can still absorb, the node-level view 000 patch 7
// argues for ("comparing loads between individual CPU cores makes no real sense" across
// sockets), and a root task fans out inside its node. The most spare node wins, ties going to
// the first in wrap order from the start's node. Like find_idlest_group(), the start's node is
// kept when it still has room for the task (spare > task_util / 2) and
// half_imbalance_scale(imbalance_pct_numa) * its spare > 100 * the best node's spare.
// Worker phase: in the chosen node an idle worker first, then the most spare capacity (the
// kernel's find_idlest_group_cpu() prefers idle CPUs, then the least loaded), ties going to the
// first in wrap order from `start`. With IDLE_WITHOUT, p's own worker counts as idle when p
// runs there alone (the kernel's idle_cpu_without(), by which find_idlest_group() keeps an exec
// on its idle-but-for-p CPU against another idle one, whatever their loads) and wins against
// every other idle worker.
// O(workers); only the slow path uses it. `start` is the continuation's own worker (exec), the
// group's home (outside spawn of a group task) or a rotating hint (so ties spread).
struct idlest_result {
  int worker = 0;
  int node = 0;
  bool idle = false;        // view.idle(worker) when it was chosen (never p's own worker)
  bool kept_local = false;  // the start's node won by the imbalance margin, not by most spare
};

template <load_view V>
idlest_result find_idlest(const layout& l, const V& v, int start, const task_ref& p, const tun::settings& s) {
  RT_DEBUG_ASSERT(start >= 0 && start < l.worker_count(), "I-WAKE-1", "find_idlest: start is not a worker");
  const int nodes = l.node_count();
  const int start_node = l.node_of(start);

  // Each term is at most kCapacityScale (I-WAKE-3 inside capacity_spare_without()): no overflow.
  auto node_spare = [&](int n) {
    std::uint64_t spare = 0;
    l.node_workers[static_cast<std::size_t>(n)].for_each(
        [&](std::size_t w) { spare += capacity_spare_without(v, static_cast<int>(w), p, s); });
    return spare;
  };

  idlest_result r;
  int best = -1;
  std::uint64_t best_spare = 0;
  std::uint64_t local_spare = 0;
  for (int i = 0; i < nodes; ++i) {
    const int n = (start_node + i) % nodes;
    if (l.node_workers[static_cast<std::size_t>(n)].empty()) continue;
    const std::uint64_t spare = node_spare(n);
    if (n == start_node) local_spare = spare;
    if (best < 0 || spare > best_spare) {
      best = n;
      best_spare = spare;
    }
  }
  RT_ASSERT(best >= 0, "I-WAKE-1", "find_idlest: the layout has no worker");
  if (best != start_node && local_spare > p.util / 2 &&
      half_imbalance_scale(imbalance_pct(domain_level::numa, s)) * local_spare > kPercentScale * best_spare) {
    best = start_node;
    r.kept_local = true;
  }
  r.node = best;

  bool found = false;
  bool best_idle = false;
  bool best_own = false;
  std::uint32_t best_cap = 0;
  core::for_each_cpu_wrap(l.node_workers[static_cast<std::size_t>(best)], static_cast<std::size_t>(start),
                          [&](std::size_t bit) {
                            const int w = static_cast<int>(bit);
                            const bool own = s.f.IDLE_WITHOUT && p.presence == task_presence::running &&
                                             p.alone && w == p.worker;
                            const bool idle = own || static_cast<bool>(v.idle(w));
                            const std::uint32_t spare = capacity_spare_without(v, w, p, s);
                            if (!found || own || (idle && !best_idle) ||
                                (idle == best_idle && !best_own && spare > best_cap)) {
                              found = true;
                              r.worker = w;
                              best_idle = idle;
                              best_own = own;
                              best_cap = spare;
                            }
                          });
  r.idle = best_idle && !best_own;  // p's own worker is no idle worker found
  return r;
}

}  // namespace rt::policy
