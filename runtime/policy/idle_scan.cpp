#include "policy/idle_scan.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/satmath.hpp"
#include "policy/domains.hpp"

namespace rt::policy {

namespace {

using core::sat_mul;

// avg_idle is capped at this many migration costs (ttwu_do_wakeup(): 2 * migration cost).
constexpr std::uint64_t kAvgIdleCapMigrationCosts = 2;

// A tunables shift as a usable shift count (the tunables range is 1..10; settings built in
// code may hold anything).
unsigned shift_of(std::int64_t v) { return static_cast<unsigned>(std::clamp<std::int64_t>(v, 0, 63)); }

std::uint64_t non_negative(std::int64_t v) { return static_cast<std::uint64_t>(std::max<std::int64_t>(v, 0)); }

int to_nr(std::uint64_t v) {
  return static_cast<int>(std::min<std::uint64_t>(v, static_cast<std::uint64_t>(kScanUnbounded)));
}

}  // namespace

const char* to_string(scan_outcome o) {
  switch (o) {
    case scan_outcome::not_run:
      return "not_run";
    case scan_outcome::found:
      return "found";
    case scan_outcome::exhausted:
      return "exhausted";
    case scan_outcome::cut_short:
      return "cut_short";
    case scan_outcome::skipped_avg_cpu:
      return "skipped_avg_cpu";
    case scan_outcome::skipped_overloaded:
      return "skipped_overloaded";
  }
  return "?";
}

const char* to_string(sibling_reason r) {
  switch (r) {
    case sibling_reason::target_idle:
      return "target_idle";
    case sibling_reason::prev_idle:
      return "prev_idle";
    case sibling_reason::scan_found:
      return "scan_found";
    case sibling_reason::none_idle:
      return "none_idle";
  }
  return "?";
}

std::uint64_t initial_avg_idle(const tun::settings& s) {
  return sat_mul(kAvgIdleCapMigrationCosts, non_negative(s.t.migration_cost_ns));
}

std::uint64_t update_avg_idle(std::uint64_t avg_ns, std::uint64_t idle_ns, const tun::settings& s) {
  const unsigned shift = shift_of(s.t.avg_idle_ewma_shift);
  if (idle_ns >= avg_ns) {
    avg_ns += (idle_ns - avg_ns) >> shift;
  } else {
    // (sample - avg) >> shift on a negative s64 rounds toward minus infinity: subtract the
    // ceiling of the magnitude.
    const std::uint64_t d = avg_ns - idle_ns;
    const std::uint64_t step = (d >> shift) + ((d & ((std::uint64_t{1} << shift) - 1)) != 0 ? 1 : 0);
    avg_ns -= step;
  }
  return std::min(avg_ns, initial_avg_idle(s));
}

std::uint64_t update_scan_cost(std::uint64_t avg_ns, std::uint64_t scan_ns, const tun::settings& s) {
  const unsigned shift = shift_of(s.t.avg_scan_cost_ewma_shift);
  if (scan_ns >= avg_ns) return avg_ns + ((scan_ns - avg_ns) >> shift);
  return avg_ns - ((avg_ns - scan_ns) >> shift);  // division truncates toward zero
}

bool sis_avg_cpu_skips(std::uint64_t avg_idle_ns, std::uint64_t avg_scan_cost_ns, const tun::settings& s) {
  const std::uint64_t avg_idle = avg_idle_ns / std::max<std::uint64_t>(non_negative(s.t.sis_avg_idle_divisor), 1);
  const std::uint64_t avg_cost = core::sat_add(avg_scan_cost_ns, std::uint64_t{1});
  return avg_idle < avg_cost;
}

int sis_prop_nr(std::uint64_t avg_idle_ns, std::uint64_t avg_scan_cost_ns, int span_weight,
                const tun::settings& s) {
  const std::uint64_t avg_idle = avg_idle_ns / std::max<std::uint64_t>(non_negative(s.t.sis_avg_idle_divisor), 1);
  const std::uint64_t avg_cost = core::sat_add(avg_scan_cost_ns, std::uint64_t{1});
  const std::uint64_t min_scan = non_negative(s.t.sis_min_scan);
  const std::uint64_t span_avg = sat_mul(static_cast<std::uint64_t>(std::max(span_weight, 0)), avg_idle);
  if (span_avg > sat_mul(min_scan, avg_cost)) return to_nr(span_avg / avg_cost);
  return to_nr(min_scan);
}

int sis_util_nr_scan(std::uint64_t sum_util, int llc_weight, const tun::settings& s) {
  if (llc_weight <= 0) return 0;
  const std::uint64_t weight = static_cast<std::uint64_t>(llc_weight);
  const std::uint64_t scale = kCapacityScale;
  const std::uint64_t pct = imbalance_pct(domain_level::llc, s);
  // x' = sum_util / llc_weight; beyond x' = C the depth is 0 for every pct >= 100, so the
  // products below only saturate where the min() with C makes saturation harmless.
  const std::uint64_t x = sum_util / weight;
  const std::uint64_t tmp = sat_mul(sat_mul(x, x), sat_mul(pct, pct)) / (kPercentScale * kPercentScale * scale);
  const std::uint64_t y = scale - std::min(tmp, scale);
  return to_nr(y * weight / scale);
}

}  // namespace rt::policy
