// PELT: the decay, the derived constants and the accumulator. Expected values by hand:
// with pelt_halflife_us == pelt_period_us == 1000 the decay per period is exactly 1/2, so
//   y = 2^31 (Q0.32), decay(v, n) = v >> n,
//   max_sum = smallest s with floor(s / 2) + 1000 * 1024 = s  ->  2 * 1,024,000 - 1 = 2,047,999,
//   contributions: d1 * 1024 decayed by the periods crossed, full periods
//   max_sum - decay(max_sum, n) - 1,024,000, d3 * 1024 undecayed,
//   util_avg = util_sum * 1024 / (max_sum - 1,024,000 + period_contrib * 1024).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "policy/load.hpp"

namespace rt::policy::test {
namespace {

tun::settings halving_each_period() {
  tun::settings s;
  s.t.pelt_halflife_us = 1000;
  s.t.pelt_period_us = 1000;
  return s;
}

TEST(PeltParams, HalvingEachPeriod) {
  const pelt_params p = make_pelt_params(halving_each_period());
  EXPECT_EQ(p.period_us, 1000u);
  EXPECT_EQ(p.halflife_periods, 1u);
  EXPECT_EQ(p.y_q32, std::uint64_t{1} << 31);
  EXPECT_EQ(p.max_sum, 2047999u);
}

TEST(PeltParams, Defaults) {
  const pelt_params p = make_pelt_params(tun::settings{});
  EXPECT_EQ(p.period_us, 1024u);
  EXPECT_EQ(p.halflife_periods, 31u);  // 32000 / 1024 = 31.25, to nearest
  // 2^32 * 2^(-1/31) = 4,199,999,282.69; flooring in y^31 may push the smallest y a few units up.
  EXPECT_GE(p.y_q32, 4199999283u);
  EXPECT_LE(p.y_q32, 4199999283u + 64u);
  // max_sum ~ (C - 1) / (1 - y) with C = 1024 * 1024: 1,048,575 / (1 - 2^(-1/31)) = 47,421,xxx.
  const double y = std::pow(2.0, -1.0 / 31.0);
  const double expect = 1048575.0 / (1.0 - y);
  EXPECT_NEAR(static_cast<double>(p.max_sum), expect, expect * 1e-6);
}

TEST(PeltDecay, WholeHalflivesAreShifts) {
  const pelt_params h = make_pelt_params(halving_each_period());
  EXPECT_EQ(pelt_decay(1000, 0, h), 1000u);
  EXPECT_EQ(pelt_decay(1000, 1, h), 500u);
  EXPECT_EQ(pelt_decay(1000, 3, h), 125u);
  EXPECT_EQ(pelt_decay(1, 1, h), 0u);
  EXPECT_EQ(pelt_decay(UINT64_MAX, 63, h), 1u);
  EXPECT_EQ(pelt_decay(UINT64_MAX, 64, h), 0u);  // beyond 63 halflives

  const pelt_params d = make_pelt_params(tun::settings{});
  EXPECT_EQ(pelt_decay(1u << 20, 31, d), 1u << 19);
  EXPECT_EQ(pelt_decay(1u << 20, 62, d), 1u << 18);
  EXPECT_EQ(pelt_decay(UINT64_MAX, 31 * 64, d), 0u);
  // Part of a halflife decays by less than half and more than nothing.
  EXPECT_LT(pelt_decay(1u << 20, 15, d), 1u << 20);
  EXPECT_GT(pelt_decay(1u << 20, 15, d), 1u << 19);
}

// I-STEAL-16's reading of another worker's util: with halving periods, n whole periods after
// the util was stored, util >> n idle, and util >> n plus 1024 - (1024 >> n) busy; part of a
// period counts nothing; the result never exceeds the capacity.
TEST(PeltUtilAfter, HalvingPeriodsTable) {
  const pelt_params h = make_pelt_params(halving_each_period());
  struct row {
    std::uint32_t util;
    std::uint64_t dt_us;
    bool running;
    std::uint32_t expect;
  };
  const row rows[] = {
      {512, 0, true, 512},      {512, 999, true, 512},    {512, 999, false, 512},
      {512, 1000, true, 768},   {512, 1000, false, 256},  {512, 2500, true, 896},
      {512, 2500, false, 128},  {0, 3000, true, 896},     {1024, 1000, true, 1024},
      {1024, 5000, false, 32},  {0, 64000, true, 1024},   {700, 64000, false, 0},
  };
  for (const row& r : rows)
    EXPECT_EQ(pelt_util_after(r.util, r.dt_us, r.running, h), r.expect) << r.util << " after " << r.dt_us << " us";
}

TEST(PeltUtilAfter, DefaultsHalveInAHalflifeAndApproachCapacity) {
  const pelt_params d = make_pelt_params(tun::settings{});
  const std::uint64_t halflife_us = 31 * 1024;
  EXPECT_EQ(pelt_util_after(800, halflife_us, false, d), 400u);
  EXPECT_EQ(pelt_util_after(0, halflife_us, true, d), 512u);
  EXPECT_EQ(pelt_util_after(400, halflife_us, true, d), 712u);  // 200 kept + 512 gained
  EXPECT_GE(pelt_util_after(0, 10 * halflife_us, true, d), 1023u);
}

struct step {
  std::uint64_t now_us;
  bool running;
  bool crossed;
  std::uint64_t util_sum;
  std::uint32_t util_avg;
  std::uint64_t period_contrib;
};

TEST(PeltSignal, StepByStepWithHalvingPeriods) {
  const pelt_params p = make_pelt_params(halving_each_period());
  pelt_signal sig(p, 0);
  const step steps[] = {
      // d1 = 1000 us decayed once: 1,024,000 / 2; util 512,000 * 1024 / 1,023,999 = 512
      {1000, true, true, 512000, 512, 0},
      {2000, true, true, 768000, 768, 0},   // 256,000 + 512,000
      {3000, true, true, 896000, 896, 0},   // 384,000 + 512,000
      {4000, false, true, 448000, 448, 0},  // idle: halves
      {4500, true, false, 960000, 448, 500},  // inside the open period: + 500 * 1024, no refresh
      // boundary: 960,000 / 2 = 480,000 (the busy half period decayed with the rest)
      {5000, false, true, 480000, 480, 0},
      // 3 periods: 480,000 >> 3 = 60,000; d1 1,024,000 >> 3 = 128,000; full periods
      // 2,047,999 - 255,999 - 1,024,000 = 768,000 -> 956,000; 978,944,000 / 1,023,999 = 956
      {8000, true, true, 956000, 956, 0},
      {8250, true, false, 1212000, 956, 250},
      // 1,212,000 / 2 = 606,000; d1 = 750 us: 768,000 / 2 = 384,000; d3 = 100 us: 102,400;
      // sum 1,092,400; divider 1,023,999 + 102,400 = 1,126,399; 1,118,617,600 / 1,126,399 = 993
      {9100, true, true, 1092400, 993, 100},
  };
  for (const step& st : steps) {
    EXPECT_EQ(sig.update(st.now_us, st.running), st.crossed) << "t=" << st.now_us;
    EXPECT_EQ(sig.util_sum(), st.util_sum) << "t=" << st.now_us;
    EXPECT_EQ(sig.util_avg(), st.util_avg) << "t=" << st.now_us;
    EXPECT_EQ(sig.period_contrib_us(), st.period_contrib) << "t=" << st.now_us;
    EXPECT_EQ(sig.last_update_us(), st.now_us);
  }
  // A clock going backwards moves the reference point and accounts nothing.
  EXPECT_FALSE(sig.update(9000, true));
  EXPECT_EQ(sig.last_update_us(), 9000u);
  EXPECT_EQ(sig.util_sum(), 1092400u);
  EXPECT_EQ(sig.util_avg(), 993u);
  EXPECT_FALSE(sig.update(9000, true));  // no time passed
}

TEST(PeltSignal, SplitOrWholeGivesTheSameSum) {
  // 500 us + 500 us of running equals one update over the whole period.
  const pelt_params p = make_pelt_params(halving_each_period());
  pelt_signal split(p, 0);
  split.update(500, true);
  split.update(1000, true);
  pelt_signal whole(p, 0);
  whole.update(1000, true);
  EXPECT_EQ(split.util_sum(), 512000u);
  EXPECT_EQ(whole.util_sum(), 512000u);
  EXPECT_EQ(split.util_avg(), 512u);
  // Three periods at once equal three steps (896,000: 128,000 + 768,000).
  pelt_signal jump(p, 0);
  jump.update(3000, true);
  EXPECT_EQ(jump.util_sum(), 896000u);
}

TEST(PeltSignal, AlwaysBusyReachesFullCapacityAndDecaysByHalflives) {
  const pelt_params p = make_pelt_params(tun::settings{});
  pelt_signal sig(p, 0);
  // Busy for 10,000 periods in one update: the sum is max_sum - C (the closed periods of an
  // always-busy signal) and the divider is the same: exactly 1024.
  EXPECT_TRUE(sig.update(1024 * 10000, true));
  EXPECT_EQ(sig.util_sum(), p.max_sum - 1024u * 1024u);
  EXPECT_EQ(sig.util_avg(), 1024u);
  // One halflife (31 periods) idle, aligned on periods: the sum halves exactly.
  const std::uint64_t before = sig.util_sum();
  EXPECT_TRUE(sig.update(1024 * 10031, false));
  EXPECT_EQ(sig.util_sum(), before >> 1);
  // (before >> 1) * 1024 / before: 512, or 511 when `before` is odd.
  EXPECT_GE(sig.util_avg(), 511u);
  EXPECT_LE(sig.util_avg(), 512u);
  // 64 halflives later nothing is left.
  EXPECT_TRUE(sig.update(1024 * (10031 + 31 * 64), false));
  EXPECT_EQ(sig.util_sum(), 0u);
  EXPECT_EQ(sig.util_avg(), 0u);
}

TEST(PeltSignal, BusyPeriodByPeriodApproachesFullCapacity) {
  const pelt_params p = make_pelt_params(tun::settings{});
  pelt_signal sig(p, 0);
  std::uint32_t last = 0;
  for (std::uint64_t k = 1; k <= 31; ++k) {
    sig.update(1024 * k, true);
    EXPECT_GT(sig.util_avg(), last) << "period " << k;  // strictly rising while busy
    last = sig.util_avg();
  }
  // After one halflife of being busy: about half (1 - 2^-1 of the series), within rounding.
  EXPECT_GE(last, 500u);
  EXPECT_LE(last, 524u);
  for (std::uint64_t k = 32; k <= 31 * 20; ++k) sig.update(1024 * k, true);
  EXPECT_GE(sig.util_avg(), 1020u);
  EXPECT_LE(sig.util_avg(), 1024u);
}

// A node's exported demand (I-STEAL-17) with halving periods: the sum decays like a util_sum
// (v >> n) before the run adds; a run adds its whole periods as 1999 - (1999 >> n) (1999 =
// max_sum / 1024, a worker busy for ever) and its older rest halved n times; as util,
// sum * 1024 * 1024 / max_sum with max_sum = 2,047,999, so 2000 us reads 1024.
TEST(ExportedDemand, HalvingPeriodsTable) {
  const pelt_params p = make_pelt_params(halving_each_period());
  struct row {
    std::uint64_t sum, periods, busy, after;
  };
  const row adds[] = {
      {0, 5, 1000, 1000}, {1000, 0, 250, 1250}, {1000, 1, 500, 1000}, {4000, 2, 0, 1000}, {4000, 64, 7, 7},
      {0, 0, 1500, 1250},   // one period (1999 - 999) and 500 us one period older (250)
      {0, 0, 10000, 1998},  // ten periods: 1999 - (1999 >> 10), not 10,000
      {100, 1, 20000, 2049},
  };
  for (const row& r : adds) EXPECT_EQ(demand_sum_add(r.sum, r.periods, r.busy, p), r.after) << r.sum << " " << r.periods;
  struct util_row {
    std::uint64_t sum, periods, util;
  };
  const util_row utils[] = {
      {2000, 0, 1024},  // 2,097,152,000 / 2,047,999 = 1024.0005
      {1000, 0, 512},   {4000, 1, 1024}, {4000, 0, 2048},  // two workers' worth: not capped
      {1, 0, 0},        {3, 0, 1},       {2000, 64, 0},
  };
  for (const util_row& r : utils) EXPECT_EQ(demand_util(r.sum, r.periods, p), r.util) << r.sum << " " << r.periods;
}

// One worker busy for the node in every period, added period by period with the defaults,
// reads what that worker's own signal reads: full capacity, within rounding.
TEST(ExportedDemand, BusyEveryPeriodReadsLikeABusyWorker) {
  const pelt_params p = make_pelt_params(tun::settings{});
  pelt_signal sig(p, 0);
  std::uint64_t sum = 0;
  for (std::uint64_t k = 1; k <= 31 * 20; ++k) {
    sig.update(1024 * k, true);
    sum = demand_sum_add(sum, 1, 1024, p);
  }
  EXPECT_NEAR(static_cast<double>(demand_util(sum, 0, p)), static_cast<double>(sig.util_avg()), 2.0);
  // One halflife later, idle: half.
  EXPECT_NEAR(static_cast<double>(demand_util(sum, 31, p)), 512.0, 2.0);
}

// One run added when it ends reads as the same run added period by period: each step's decay
// truncates by less than a unit, and those losses decay too, so they sum to less than
// 1 / (1 - y) = max_sum / (1024 * P) units (and less than one per period). A task of ten
// halflives counts as one worker busy that long, not as ten workers.
TEST(ExportedDemand, ALongRunAddsWhatItsPeriodsWouldHave) {
  const pelt_params p = make_pelt_params(tun::settings{});
  for (const std::uint64_t periods : {1u, 5u, 31u, 100u, 310u}) {
    std::uint64_t by_period = 0;
    for (std::uint64_t k = 0; k < periods; ++k) by_period = demand_sum_add(by_period, 1, p.period_us, p);
    const std::uint64_t whole = demand_sum_add(0, 0, periods * p.period_us, p);
    const double truncations = std::min(static_cast<double>(periods), static_cast<double>(p.max_sum) / (1024.0 * static_cast<double>(p.period_us)));
    EXPECT_NEAR(static_cast<double>(whole), static_cast<double>(by_period), 1.0 + truncations)
        << periods << " periods";
    EXPECT_LE(demand_util(whole, 0, p), 1024u) << periods << " periods";
  }
}

}  // namespace
}  // namespace rt::policy::test
