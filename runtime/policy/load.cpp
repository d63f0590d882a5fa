#include "policy/load.hpp"

#include <algorithm>
#include <cstdint>

namespace rt::policy {

namespace {

constexpr std::uint64_t kQ32One = std::uint64_t{1} << 32;
constexpr std::uint64_t kQ32Half = std::uint64_t{1} << 31;
constexpr std::uint64_t kLow32 = kQ32One - 1;
// A u64 halved 64 times is 0: the kernel's decay_load() cutoff at LOAD_AVG_PERIOD * 63.
constexpr std::uint64_t kPeltMaxHalflives = 63;

// floor(v * y / 2^32) for any v and y <= 2^32, without a 128-bit type: the high and low halves
// of v are multiplied separately; the high half's product is exact, the low half's is floored.
std::uint64_t mul_q32(std::uint64_t v, std::uint64_t y) {
  return (v >> 32) * y + (((v & kLow32) * y) >> 32);
}

// y^n in Q0.32 by square-and-multiply, each step floored (monotone in y and in n).
std::uint64_t pow_q32(std::uint64_t y, std::uint64_t n) {
  std::uint64_t result = kQ32One;
  std::uint64_t base = y;
  while (n != 0) {
    if ((n & 1) != 0) result = mul_q32(result, base);
    base = mul_q32(base, base);
    n >>= 1;
  }
  return result;
}

}  // namespace

const char* to_string(task_presence p) {
  switch (p) {
    case task_presence::none:
      return "none";
    case task_presence::sleeping:
      return "sleeping";
    case task_presence::queued:
      return "queued";
    case task_presence::running:
      return "running";
  }
  return "?";
}

std::uint32_t cpu_util(std::uint32_t util, std::uint32_t util_est, const tun::settings& s) {
  if (s.f.UTIL_EST) util = std::max(util, util_est);
  return std::min(util, kCapacityScale);
}

std::uint32_t cpu_util_without(int w, std::uint32_t util, std::uint32_t util_est, const task_ref& p,
                               const tun::settings& s) {
  // Task has no contribution on w, or is new (003: "cpu != task_cpu(p) || !last_update_time").
  if (!s.f.UTIL_WITHOUT || p.presence == task_presence::none || p.worker != w) return cpu_util(util, util_est, s);

  // Discount the task's util from the worker's util: cases (a) and (b) of the header.
  core::lsub_positive(util, p.util);

  if (s.f.UTIL_EST) {
    std::uint32_t estimated = util_est;
    // The execl fix: a queued or running p is inside util_est(w) and must leave it too.
    if (p.presence == task_presence::queued || p.presence == task_presence::running) {
      core::lsub_positive(estimated, p.util_est);
    }
    // Case (c): other tasks runnable, their estimate above the decayed util.
    util = std::max(util, estimated);
  }
  return std::min(util, kCapacityScale);
}

std::uint32_t capacity_spare_without(int w, std::uint32_t util, std::uint32_t util_est, const task_ref& p,
                                     const tun::settings& s) {
  return core::sub_positive(kCapacityScale, cpu_util_without(w, util, util_est, p, s));
}

pelt_params make_pelt_params(const tun::settings& s) {
  pelt_params p;
  p.period_us = static_cast<std::uint64_t>(std::max<std::int64_t>(s.t.pelt_period_us, 1));
  const auto halflife_us = static_cast<std::uint64_t>(std::max<std::int64_t>(s.t.pelt_halflife_us, 1));
  p.halflife_periods = std::max<std::uint64_t>((halflife_us + p.period_us / 2) / p.period_us, 1);

  // Smallest y in [2^31, 2^32) with y^H >= 1/2: y^H is monotone in y, so bisect.
  std::uint64_t lo = kQ32Half;  // y^H <= 1/2 for y = 1/2 and H >= 1
  std::uint64_t hi = kLow32;    // y^H >= 1/2 for every H the tunables range allows
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (pow_q32(mid, p.halflife_periods) >= kQ32Half) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  p.y_q32 = lo;

  // Smallest fixed point of s = floor(s * y / 2^32) + C with C = P * kCapacityScale. s is a
  // fixed point iff s * (2^32 - y) lies in ((C - 1) * 2^32, C * 2^32]; iterating the map from
  // 0 (what a signal busy in every period does) rises monotonically to the smallest one.
  const std::uint64_t c = p.period_us * kCapacityScale;
  const std::uint64_t d = kQ32One - p.y_q32;
  p.max_sum = ((c - 1) << 32) / d + 1;
  return p;
}

std::uint64_t pelt_decay(std::uint64_t v, std::uint64_t periods, const pelt_params& p) {
  const std::uint64_t halflives = periods / p.halflife_periods;
  if (halflives > kPeltMaxHalflives) return 0;
  v >>= halflives;
  const std::uint64_t rest = periods % p.halflife_periods;
  if (rest == 0) return v;
  return mul_q32(v, pow_q32(p.y_q32, rest));
}

std::uint32_t pelt_util_after(std::uint32_t util, std::uint64_t dt_us, bool running, const pelt_params& p) {
  const std::uint64_t periods = dt_us / p.period_us;
  const std::uint64_t kept = pelt_decay(util, periods, p);
  if (!running) return static_cast<std::uint32_t>(kept);
  const std::uint64_t gained = kCapacityScale - pelt_decay(kCapacityScale, periods, p);
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(kCapacityScale, kept + gained));
}

std::uint64_t demand_sum_add(std::uint64_t sum_us, std::uint64_t periods, std::uint64_t busy_us, const pelt_params& p) {
  // The run's whole periods, newest first: P * (1 + y + ... + y^(n-1)) = S * (1 - y^n) with
  // S = max_sum / kCapacityScale; the rest of the run is older than all of them.
  const std::uint64_t full = busy_us / p.period_us;
  const std::uint64_t forever = p.max_sum / kCapacityScale;
  const std::uint64_t run = core::sub_positive(forever, pelt_decay(forever, full, p)) +
                            pelt_decay(busy_us - full * p.period_us, full, p);
  return pelt_decay(sum_us, periods, p) + std::min(run, busy_us);
}

std::uint64_t demand_util(std::uint64_t sum_us, std::uint64_t periods, const pelt_params& p) {
  // util_avg = util_sum * kCapacityScale / max_sum with util_sum = sum_us * kCapacityScale;
  // sum_us < 2^32 and kCapacityScale^2 = 2^20 keep the product in 64 bits.
  return pelt_decay(sum_us, periods, p) * kCapacityScale * kCapacityScale / p.max_sum;
}

bool pelt_signal::update(std::uint64_t now_us, bool running) {
  if (now_us < last_update_us_) {
    last_update_us_ = now_us;
    return false;
  }
  std::uint64_t delta = now_us - last_update_us_;
  if (delta == 0) return false;
  last_update_us_ = now_us;

  const std::uint64_t scale = kCapacityScale;
  const std::uint64_t periods = (delta + period_contrib_us_) / p_.period_us;
  if (periods == 0) {
    // No boundary crossed: all of delta lies in the open period.
    period_contrib_us_ += delta;
    if (running) util_sum_ += delta * scale;
    return false;
  }

  util_sum_ = pelt_decay(util_sum_, periods, p_);
  const std::uint64_t open = (delta + period_contrib_us_) % p_.period_us;
  if (running) {
    // d1: the rest of the period that was open, now `periods` old.
    const std::uint64_t c1 = pelt_decay((p_.period_us - period_contrib_us_) * scale, periods, p_);
    // The full periods between: C * (y + ... + y^(periods-1)).
    const std::uint64_t c2 = core::sub_positive(
        core::sub_positive(p_.max_sum, pelt_decay(p_.max_sum, periods, p_)), p_.period_us * scale);
    // d3: the part of the new, open period.
    const std::uint64_t c3 = open * scale;
    util_sum_ += c1 + c2 + c3;
  }
  period_contrib_us_ = open;

  // The kernel's get_pelt_divider(): the largest sum the closed periods plus the open one allow.
  const std::uint64_t divider = p_.max_sum - p_.period_us * scale + period_contrib_us_ * scale;
  util_avg_ = static_cast<std::uint32_t>(std::min<std::uint64_t>(util_sum_ * scale / divider, kCapacityScale));
  return true;
}

}  // namespace rt::policy
