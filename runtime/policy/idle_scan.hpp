// select_idle_sibling() / select_idle_cpu(): find an idle worker near the wake target
// (docs/design/wake-path.md §2; seed 000 patches 2-3, upstream SIS_UTIL).
//
// The scan walks the target's LLC with for_each_cpu_wrap() from the target, so that spawners
// aiming at one LLC do not all find the same idle worker first, and it is bounded: a full walk
// of a big LLC on every spawn is what made hackbench suffer (000 patch 3), and stopping the scan
// outright (the old SIS_AVG_CPU cliff) loses idle workers that were cheap to find.
//   SIS_PROP (000 patch 3): nr = span * avg_idle / avg_cost, floor sis_min_scan, where
//     avg_idle = this worker's avg_idle / sis_avg_idle_divisor and avg_cost = avg_scan_cost + 1
//     of this worker's LLC: a worker that is rarely idle long cannot afford a long scan.
//   SIS_UTIL (upstream 5.19, which removed SIS_PROP in 6.7): nr from the target LLC's
//     utilisation, zero when it is overloaded (sis_util_nr_scan below; the mechanism refreshes
//     the per-LLC hint from llc_nr_idle_scan() periodically, as upstream does in load balance).
//   SIS_AVG_CPU (default off, as in the seed): skip the scan when avg_idle < avg_cost.
// Both SIS_PROP and SIS_UTIL on: SIS_UTIL's nr wins (upstream evaluates it second).
// The loop is the seed's: `if (!--nr) return -1;` before each worker, so a budget nr examines at
// most nr - 1 workers (the target itself, already known busy, is the first); SIS_UTIL adds 1 to
// its depth for that reason, as upstream does.
// Pure: the mechanism passes the per-worker state through a view (below).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "core/assert.hpp"
#include "core/cpumask.hpp"
#include "policy/layout.hpp"
#include "policy/load.hpp"
#include "tunables/tunables.hpp"

namespace rt::policy {

// ---------------------------------------------------------------------------------------------
// The per-worker and per-LLC state the idle scan reads (relaxed loads of the mechanism's
// atomics are enough: every value is a hint, a stale one costs a wasted or a missed wake).
//
//   bool          idle(int w)              w is parked (or parking) with nothing queued
//   std::uint64_t avg_idle_ns(int w)       w's avg_idle EWMA (update_avg_idle)
//   std::uint64_t avg_scan_cost_ns(int c)  LLC c's avg_scan_cost EWMA (update_scan_cost)
//   int           nr_idle_scan(int c)      LLC c's SIS_UTIL depth hint (llc_nr_idle_scan)
template <class V>
concept idle_view = requires(const V& v, int w, int llc) {
  { v.idle(w) } -> std::convertible_to<bool>;
  { v.avg_idle_ns(w) } -> std::convertible_to<std::uint64_t>;
  { v.avg_scan_cost_ns(llc) } -> std::convertible_to<std::uint64_t>;
  { v.nr_idle_scan(llc) } -> std::convertible_to<int>;
};

// ---------------------------------------------------------------------------------------------
// The EWMAs the scan budget is made of.

// A worker's avg_idle before its first idle period: twice the migration cost, the cap below
// (the kernel's sched_init()).
std::uint64_t initial_avg_idle(const tun::settings& s);

// After an idle period of idle_ns (park to wake-up): avg += (sample - avg) >> avg_idle_ewma_shift,
// the shift rounding toward minus infinity like the kernel's update_avg() on an s64, then capped
// at twice migration_cost_ns (ttwu_do_wakeup()): one very long sleep must not buy a worker
// unbounded scans for the next thousand spawns.
std::uint64_t update_avg_idle(std::uint64_t avg_ns, std::uint64_t idle_ns, const tun::settings& s);

// After a scan that took scan_ns: avg += (sample - avg) / 2^avg_scan_cost_ewma_shift, the
// division truncating toward zero like the seed's `(s64)(time - cost) / 8`. The mechanism times
// the select_worker() call that ran the scan and feeds the spawner's LLC (the seed's this_sd).
std::uint64_t update_scan_cost(std::uint64_t avg_ns, std::uint64_t scan_ns, const tun::settings& s);

// ---------------------------------------------------------------------------------------------
// Scan budgets.

// The seed's nr = INT_MAX: no bound (neither SIS_PROP nor SIS_UTIL).
inline constexpr int kScanUnbounded = std::numeric_limits<int>::max();

// SIS_AVG_CPU (the seed's cliff, default off): skip the scan when avg_idle_ns /
// sis_avg_idle_divisor < avg_scan_cost_ns + 1 ("due to large variance we need a large fuzz
// factor; hackbench in particular is sensitive here").
bool sis_avg_cpu_skips(std::uint64_t avg_idle_ns, std::uint64_t avg_scan_cost_ns, const tun::settings& s);

// SIS_PROP (000 patch 3): avg_idle = avg_idle_ns / sis_avg_idle_divisor, avg_cost =
// avg_scan_cost_ns + 1, span_avg = span_weight * avg_idle;
// nr = span_avg > sis_min_scan * avg_cost ? span_avg / avg_cost : sis_min_scan (at most
// kScanUnbounded). Products saturate instead of wrapping.
int sis_prop_nr(std::uint64_t avg_idle_ns, std::uint64_t avg_scan_cost_ns, int span_weight,
                const tun::settings& s);

// SIS_UTIL (upstream update_idle_cpu_scan()): with C = kCapacityScale and pct the LLC's
// imbalance_pct, x = sum_util / llc_weight, y = C - min(C, x^2 * pct^2 / (100^2 * C)),
// nr_scan = y * llc_weight / C. The depth falls with the square of the LLC's utilisation and
// reaches 0 when x >= C * 100 / pct (85% for 117): an LLC that busy has no idle worker worth
// the scan. 0 for an LLC without workers.
int sis_util_nr_scan(std::uint64_t sum_util, int llc_weight, const tun::settings& s);

// The SIS_UTIL hint of one LLC from the view: sum of cpu_util() over its workers (the kernel's
// group_util), then sis_util_nr_scan(). O(workers of the LLC): for the mechanism's periodic
// refresh, not for the spawn path.
template <load_view V>
int llc_nr_idle_scan(const layout& l, const V& v, int llc, const tun::settings& s) {
  const core::cpumask& span = l.llc_workers[static_cast<std::size_t>(llc)];
  std::uint64_t sum = 0;
  span.for_each([&](std::size_t w) {
    const int wi = static_cast<int>(w);
    sum += cpu_util(static_cast<std::uint32_t>(v.util(wi)), static_cast<std::uint32_t>(v.util_est(wi)), s);
  });
  return sis_util_nr_scan(sum, static_cast<int>(span.count()), s);
}

// ---------------------------------------------------------------------------------------------
// select_idle_cpu

enum class scan_outcome : std::uint8_t {
  not_run,             // no scan: the target or the home was idle, or the spawn took find_idlest
  found,               // an idle worker within the budget
  exhausted,           // the whole LLC examined, none idle
  cut_short,           // the budget ran out before the LLC did (SIS_PROP / SIS_UTIL)
  skipped_avg_cpu,     // SIS_AVG_CPU: avg_idle / divisor < avg_scan_cost + 1; nothing examined
  skipped_overloaded,  // SIS_UTIL: the target LLC's depth is 0; nothing examined
};

const char* to_string(scan_outcome o);

struct idle_scan_result {
  scan_outcome outcome = scan_outcome::not_run;
  int worker = 0;   // the idle worker; meaningful only when outcome == found
  int scanned = 0;  // workers whose idle state was read
  int budget = 0;   // nr when the walk started (kScanUnbounded without a bound; 0 when skipped)
};

// Scans the LLC of `target` for an idle worker, for a spawn by `self` (the seed's this_cpu:
// its avg_idle and its LLC's avg_scan_cost size the SIS_PROP budget). O(scanned).
template <idle_view V>
idle_scan_result select_idle_cpu(const layout& l, const V& v, int target, int self, const tun::settings& s) {
  RT_DEBUG_ASSERT(target >= 0 && target < l.worker_count() && self >= 0 && self < l.worker_count(), "I-WAKE-1",
                  "select_idle_cpu: target or self is not a worker");
  idle_scan_result r;
  const int llc = l.workers[static_cast<std::size_t>(target)].llc;
  const core::cpumask& span = l.llc_workers[static_cast<std::size_t>(llc)];
  const auto avg_idle_ns = static_cast<std::uint64_t>(v.avg_idle_ns(self));
  const auto avg_scan_cost_ns =
      static_cast<std::uint64_t>(v.avg_scan_cost_ns(l.workers[static_cast<std::size_t>(self)].llc));

  if (s.f.SIS_AVG_CPU && sis_avg_cpu_skips(avg_idle_ns, avg_scan_cost_ns, s)) {
    r.outcome = scan_outcome::skipped_avg_cpu;
    return r;
  }
  int nr = kScanUnbounded;
  if (s.f.SIS_PROP) nr = sis_prop_nr(avg_idle_ns, avg_scan_cost_ns, static_cast<int>(span.count()), s);
  if (s.f.SIS_UTIL) {
    const int depth = static_cast<int>(v.nr_idle_scan(llc));
    if (depth <= 0) {
      r.outcome = scan_outcome::skipped_overloaded;
      return r;
    }
    nr = depth < kScanUnbounded ? depth + 1 : kScanUnbounded;
  }
  r.budget = nr;

  // I-WAKE-4: only the target's LLC, each worker once, in wrap order, at most nr - 1 of them.
  for (const std::size_t bit : core::wrap(span, static_cast<std::size_t>(target))) {
    if (--nr == 0) {
      r.outcome = scan_outcome::cut_short;
      return r;
    }
    const int w = static_cast<int>(bit);
    ++r.scanned;
    if (static_cast<bool>(v.idle(w))) {
      r.outcome = scan_outcome::found;
      r.worker = w;
      return r;
    }
  }
  r.outcome = scan_outcome::exhausted;
  return r;
}

// ---------------------------------------------------------------------------------------------
// select_idle_sibling

enum class sibling_reason : std::uint8_t {
  target_idle,  // the target itself is idle
  prev_idle,    // the previous worker (the home) shares the target's LLC and is idle
  scan_found,   // select_idle_cpu() found one
  none_idle,    // nothing idle found: the target, busy
};

const char* to_string(sibling_reason r);

struct sibling_result {
  int worker = 0;
  sibling_reason reason = sibling_reason::none_idle;
  idle_scan_result scan;  // outcome not_run unless the scan ran
};

// The seed's select_idle_sibling() without the SMT steps (a worker owns a whole core, so an
// idle core and an idle worker are the same thing): the target if idle; else `prev` if it is
// not the target, shares its LLC ("if the previous CPU is cache affine and idle, don't be
// stupid") and is idle; else select_idle_cpu(); else the target.
template <idle_view V>
sibling_result select_idle_sibling(const layout& l, const V& v, int prev, int target, int self,
                                   const tun::settings& s) {
  sibling_result r;
  if (static_cast<bool>(v.idle(target))) {
    r.worker = target;
    r.reason = sibling_reason::target_idle;
    return r;
  }
  if (prev != target && l.share_llc(prev, target) && static_cast<bool>(v.idle(prev))) {
    r.worker = prev;
    r.reason = sibling_reason::prev_idle;
    return r;
  }
  r.scan = select_idle_cpu(l, v, target, self, s);
  if (r.scan.outcome == scan_outcome::found) {
    r.worker = r.scan.worker;
    r.reason = sibling_reason::scan_found;
  } else {
    r.worker = target;
    r.reason = sibling_reason::none_idle;
  }
  return r;
}

}  // namespace rt::policy
