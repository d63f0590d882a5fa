// select_idle_cpu / select_idle_sibling and their budgets (000 patches 2-3, upstream SIS_UTIL).
// Expected values by hand from the formulas quoted in each table; the scan orders from
// lstopo-no-graphics -i 64amd64-4p2n4ca2co.xml (LLC n = cores 8n..8n+7 = workers 8n..8n+7).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "fixtures.hpp"
#include "policy/idle_scan.hpp"

namespace rt::policy::test {
namespace {

layout opteron_full() { return make_layout(opteron(), default_worker_cores(opteron(), 0)); }

// ---- EWMAs --------------------------------------------------------------------------------

struct ewma_row {
  std::uint64_t avg;
  std::uint64_t sample;
  std::uint64_t expect;
};

TEST(AvgIdle, EwmaOneEighthRoundingDownAndCappedAtTwiceMigrationCost) {
  const tun::settings s;  // shift 3, migration cost 500,000 ns -> cap 1,000,000
  EXPECT_EQ(initial_avg_idle(s), 1000000u);
  const ewma_row rows[] = {
      {0, 800, 100},            // +800 >> 3
      {100, 0, 87},             // -100 >> 3 = -13 (floor of -12.5)
      {800, 0, 700},            // -800 >> 3 = -100
      {1000, 1007, 1000},       // +7 >> 3 = 0
      {1000, 993, 999},         // -7 >> 3 = -1
      {900000, 10000000, 1000000},  // 900,000 + 1,137,500, capped
      {1000000, 1000000, 1000000},
      {5000000, 0, 1000000},    // an avg above the cap (cap lowered since) comes back under it
  };
  for (const ewma_row& r : rows) {
    EXPECT_EQ(update_avg_idle(r.avg, r.sample, s), r.expect) << r.avg << " <- " << r.sample;
  }
  tun::settings half;
  half.t.avg_idle_ewma_shift = 1;
  half.t.migration_cost_ns = 100;
  EXPECT_EQ(initial_avg_idle(half), 200u);
  EXPECT_EQ(update_avg_idle(100, 0, half), 50u);    // -100 >> 1
  EXPECT_EQ(update_avg_idle(101, 0, half), 50u);    // -101 >> 1 = -51
  EXPECT_EQ(update_avg_idle(150, 400, half), 200u); // 150 + 125 = 275, capped at 200
}

TEST(AvgScanCost, EwmaOneEighthTruncatingTowardZero) {
  const tun::settings s;
  const ewma_row rows[] = {
      {100, 0, 88},        // -100 / 8 = -12
      {0, 800, 100},
      {1000, 993, 1000},   // -7 / 8 = 0
      {1000, 1007, 1000},  // 7 / 8 = 0
      {5000, 13000, 6000},
      {5000, 0, 4375},     // -5000 / 8 = -625
  };
  for (const ewma_row& r : rows) {
    EXPECT_EQ(update_scan_cost(r.avg, r.sample, s), r.expect) << r.avg << " <- " << r.sample;
  }
  tun::settings half;
  half.t.avg_scan_cost_ewma_shift = 1;
  EXPECT_EQ(update_scan_cost(101, 0, half), 51u);  // -101 / 2 = -50
}

// ---- Budgets ------------------------------------------------------------------------------

struct prop_row {
  std::uint64_t avg_idle_ns;
  std::uint64_t avg_scan_cost_ns;
  int span;
  int expect;
};

TEST(SisProp, NrTable) {
  // avg_idle = ns / 512, avg_cost = cost + 1, span_avg = span * avg_idle;
  // nr = span_avg > 4 * avg_cost ? span_avg / avg_cost : 4.
  const tun::settings s;
  const prop_row rows[] = {
      {1000000, 999, 8, 15},     // 1953 * 8 = 15624 > 4000; 15624 / 1000
      {1000000, 4999, 8, 4},     // 15624 <= 20000: the floor
      {1000000, 3905, 8, 4},     // 15624 == 4 * 3906: not greater, the floor
      {1000000, 3904, 8, 4},     // 15624 > 15620; 15624 / 3905 = 4 by division
      {1000000, 2999, 8, 5},     // 15624 / 3000
      {0, 0, 8, 4},              // never idle: the floor
      {511, 0, 64, 4},           // 511 / 512 = 0
      {512, 0, 64, 64},          // 64 * 1 > 4 * 1; 64 / 1
      {1000000, 0, 64, 124992},  // 64 * 1953
      {500000, 99, 16, 156},     // 976 * 16 = 15616; / 100
      {1000000, 99, 1, 19},      // 1953 / 100
      {1000000, 999, 0, 4},      // empty span: the floor
  };
  for (const prop_row& r : rows) {
    EXPECT_EQ(sis_prop_nr(r.avg_idle_ns, r.avg_scan_cost_ns, r.span, s), r.expect)
        << r.avg_idle_ns << "/" << r.avg_scan_cost_ns << "/" << r.span;
  }
  tun::settings other;
  other.t.sis_avg_idle_divisor = 1024;
  other.t.sis_min_scan = 2;
  EXPECT_EQ(sis_prop_nr(1000000, 999, 8, other), 7);   // 976 * 8 = 7808 > 2000; / 1000
  EXPECT_EQ(sis_prop_nr(1000000, 9999, 8, other), 2);  // 7808 <= 20000
  // Saturation: the product cannot wrap into a small budget.
  EXPECT_EQ(sis_prop_nr(UINT64_MAX, 0, 1 << 30, s), kScanUnbounded);
}

TEST(SisAvgCpu, SkipsWhenAvgIdleIsBelowTheScanCost) {
  const tun::settings s;
  EXPECT_FALSE(sis_avg_cpu_skips(1000000, 1952, s));  // 1953 < 1953: no
  EXPECT_TRUE(sis_avg_cpu_skips(1000000, 1953, s));   // 1953 < 1954
  EXPECT_TRUE(sis_avg_cpu_skips(0, 0, s));            // 0 < 1
}

struct util_row {
  std::uint64_t sum_util;
  int weight;
  int expect;
};

TEST(SisUtil, NrScanTable) {
  // x = sum / w; tmp = x^2 * 117^2 / (10000 * 1024) = x^2 * 13689 / 10,240,000;
  // y = 1024 - min(tmp, 1024); nr = y * w / 1024.
  const tun::settings s;
  const util_row rows[] = {
      {0, 8, 8},       // y = 1024
      {2048, 8, 7},    // x 256: tmp 87, y 937, 7496 / 1024
      {4096, 8, 5},    // x 512: tmp 350, y 674, 5392 / 1024
      {6144, 8, 1},    // x 768: tmp 788, y 236, 1888 / 1024
      {7168, 8, 0},    // x 896: tmp 1073 -> 1024, y 0
      {7000, 8, 0},    // x 875: tmp 1023, y 1, 8 / 1024
      {4096, 16, 14},  // x 256: y 937, 14992 / 1024
      {8192, 16, 10},  // x 512: y 674, 10784 / 1024
      {1000, 0, 0},    // no workers
      {std::uint64_t{1} << 40, 8, 0},  // far past overload: saturates to 0, never wraps
  };
  for (const util_row& r : rows) {
    EXPECT_EQ(sis_util_nr_scan(r.sum_util, r.weight, s), r.expect) << r.sum_util << "/" << r.weight;
  }
  tun::settings wide;
  wide.t.imbalance_pct_llc = 125;
  // x 512: 262144 * 15625 / 10,240,000 = 400, y 624, 4992 / 1024
  EXPECT_EQ(sis_util_nr_scan(4096, 8, wide), 4);
}

TEST(SisUtil, LlcHintSumsCappedCpuUtilOfTheLlc) {
  const layout l = opteron_full();
  const tun::settings s;
  table_view v(l);
  // LLC 1 = workers 8..15: cpu_util = min(max(util, util_est), 1024).
  const std::uint32_t util[8] = {256, 256, 0, 512, 1024, 2000, 0, 0};
  const std::uint32_t est[8] = {0, 512, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < 8; ++i) {
    v.utils[static_cast<std::size_t>(8 + i)] = util[i];
    v.util_ests[static_cast<std::size_t>(8 + i)] = est[i];
  }
  // 256 + 512 + 0 + 512 + 1024 + 1024 + 0 + 0 = 3328: x 416, tmp 416^2 * 13689 / 10,240,000 =
  // 2,368,963,584 / 10,240,000 = 231, y 793, nr 6344 / 1024 = 6.
  EXPECT_EQ(llc_nr_idle_scan(l, v, 1, s), 6);
  EXPECT_EQ(llc_nr_idle_scan(l, v, 0, s), 8);  // an idle LLC: scan it all
}

// ---- select_idle_cpu ----------------------------------------------------------------------

struct order_row {
  int target;
  std::vector<int> order;
};

TEST(SelectIdleCpu, ScanOrderWrapsFromTheTargetOnOpteron) {
  const layout l = opteron_full();
  tun::settings s;
  s.f.SIS_PROP = false;  // unbounded: the whole LLC, all busy
  const order_row rows[] = {
      {13, {13, 14, 15, 8, 9, 10, 11, 12}},
      {8, {8, 9, 10, 11, 12, 13, 14, 15}},
      {15, {15, 8, 9, 10, 11, 12, 13, 14}},
      {63, {63, 56, 57, 58, 59, 60, 61, 62}},
      {0, {0, 1, 2, 3, 4, 5, 6, 7}},
      {36, {36, 37, 38, 39, 32, 33, 34, 35}},
  };
  for (const order_row& r : rows) {
    table_view v(l);
    const idle_scan_result res = select_idle_cpu(l, v, r.target, 40, s);
    EXPECT_EQ(v.idle_reads, r.order) << "target " << r.target;
    EXPECT_EQ(res.outcome, scan_outcome::exhausted) << "target " << r.target;
    EXPECT_EQ(res.scanned, 8) << "target " << r.target;
    EXPECT_EQ(res.budget, kScanUnbounded);
  }
}

TEST(SelectIdleCpu, FindsTheFirstIdleWorkerInWrapOrder) {
  const layout l = opteron_full();
  tun::settings s;
  s.f.SIS_PROP = false;
  table_view v(l);
  v.set_idle({9, 11, 20});
  const idle_scan_result res = select_idle_cpu(l, v, 13, 40, s);
  EXPECT_EQ(res.outcome, scan_outcome::found);
  EXPECT_EQ(res.worker, 9);
  EXPECT_EQ(res.scanned, 5);
  EXPECT_EQ(v.idle_reads, (std::vector<int>{13, 14, 15, 8, 9}));
}

TEST(SelectIdleCpu, SisPropBudgetOfFourExaminesThree) {
  // The seed's `if (!--nr) return -1;` before each worker: nr 4 reads 3 workers.
  const layout l = opteron_full();
  const tun::settings s;  // SIS_PROP on; avg_idle 0 everywhere -> nr = 4
  table_view v(l);
  v.set_idle({9});
  const idle_scan_result res = select_idle_cpu(l, v, 13, 40, s);
  EXPECT_EQ(res.outcome, scan_outcome::cut_short);
  EXPECT_EQ(res.budget, 4);
  EXPECT_EQ(res.scanned, 3);
  EXPECT_EQ(v.idle_reads, (std::vector<int>{13, 14, 15}));

  table_view near(l);
  near.set_idle({15});
  const idle_scan_result found = select_idle_cpu(l, near, 13, 40, s);
  EXPECT_EQ(found.outcome, scan_outcome::found);
  EXPECT_EQ(found.worker, 15);
  EXPECT_EQ(found.scanned, 3);
}

TEST(SelectIdleCpu, BudgetComesFromTheSpawnerNotTheTarget) {
  // Spawner 40 (LLC 5) has avg_idle 1,000,000 and its LLC a scan cost of 0: nr = 8 * 1953
  // (span of the target's LLC), the whole LLC. The target's LLC would give nr = 4.
  const layout l = opteron_full();
  const tun::settings s;
  table_view v(l);
  v.avg_idle[40] = 1000000;
  v.scan_cost[1] = 1000000;
  v.set_idle({12});
  const idle_scan_result res = select_idle_cpu(l, v, 13, 40, s);
  EXPECT_EQ(res.budget, 15624);
  EXPECT_EQ(res.outcome, scan_outcome::found);
  EXPECT_EQ(res.worker, 12);
  EXPECT_EQ(res.scanned, 8);
}

TEST(SelectIdleCpu, BudgetEqualToTheLlcPlusOneIsNotCutShort) {
  // SIS_UTIL depth 8 on an LLC of 8: nr 9, all eight examined and the walk ends on its own.
  const layout l = opteron_full();
  tun::settings u;
  u.f.SIS_UTIL = true;
  table_view v(l);
  v.nr_scan[1] = 8;
  const idle_scan_result res = select_idle_cpu(l, v, 13, 40, u);
  EXPECT_EQ(res.budget, 9);
  EXPECT_EQ(res.outcome, scan_outcome::exhausted);
  EXPECT_EQ(res.scanned, 8);

  table_view w(l);
  w.nr_scan[1] = 7;  // nr 8: seven examined, then cut before the eighth
  const idle_scan_result cut = select_idle_cpu(l, w, 13, 40, u);
  EXPECT_EQ(cut.outcome, scan_outcome::cut_short);
  EXPECT_EQ(cut.scanned, 7);
  EXPECT_EQ(w.idle_reads, (std::vector<int>{13, 14, 15, 8, 9, 10, 11}));
}

TEST(SelectIdleCpu, SisUtilOverridesSisPropAndStopsWhenOverloaded) {
  const layout l = opteron_full();
  tun::settings s;
  s.f.SIS_UTIL = true;  // SIS_PROP stays on: SIS_UTIL's depth wins
  table_view v(l);
  v.avg_idle[40] = 1000000;  // SIS_PROP alone would allow 15624
  v.nr_scan[1] = 2;          // nr 3: two examined
  const idle_scan_result res = select_idle_cpu(l, v, 13, 40, s);
  EXPECT_EQ(res.budget, 3);
  EXPECT_EQ(res.outcome, scan_outcome::cut_short);
  EXPECT_EQ(v.idle_reads, (std::vector<int>{13, 14}));

  table_view over(l);
  over.set_idle({14});
  over.nr_scan[1] = 0;
  const idle_scan_result skipped = select_idle_cpu(l, over, 13, 40, s);
  EXPECT_EQ(skipped.outcome, scan_outcome::skipped_overloaded);
  EXPECT_EQ(skipped.scanned, 0);
  EXPECT_TRUE(over.idle_reads.empty());
}

TEST(SelectIdleCpu, SisAvgCpuSkipsTheScan) {
  const layout l = opteron_full();
  tun::settings s;
  s.f.SIS_AVG_CPU = true;
  table_view v(l);
  v.set_idle({14});
  v.avg_idle[40] = 1000000;  // 1953
  v.scan_cost[5] = 1953;     // avg_cost 1954
  const idle_scan_result res = select_idle_cpu(l, v, 13, 40, s);
  EXPECT_EQ(res.outcome, scan_outcome::skipped_avg_cpu);
  EXPECT_TRUE(v.idle_reads.empty());

  v.scan_cost[5] = 1952;  // 1953 < 1953 is false: scan
  const idle_scan_result ran = select_idle_cpu(l, v, 13, 40, s);
  EXPECT_EQ(ran.outcome, scan_outcome::found);
  EXPECT_EQ(ran.worker, 14);
}

TEST(SelectIdleCpu, PartialPoolScansOnlyItsOwnWorkers) {
  // 10 workers on cores 0, 1, 8, 9, 16, 24, 32, 40, 48, 56: LLC 0 = workers {0, 1}.
  const layout l = make_layout(opteron(), default_worker_cores(opteron(), 10));
  tun::settings s;
  s.f.SIS_PROP = false;
  table_view v(l);
  select_idle_cpu(l, v, 1, 4, s);
  EXPECT_EQ(v.idle_reads, (std::vector<int>{1, 0}));
  table_view single(l);
  select_idle_cpu(l, single, 4, 4, s);  // LLC 2 holds worker 4 alone
  EXPECT_EQ(single.idle_reads, (std::vector<int>{4}));
}

// ---- select_idle_sibling ------------------------------------------------------------------

struct sibling_row {
  const char* what;
  int prev;
  int target;
  std::vector<int> idle;
  int expect_worker;
  sibling_reason expect_reason;
  scan_outcome expect_scan;
};

TEST(SelectIdleSibling, TargetThenCacheAffinePrevThenScan) {
  const layout l = opteron_full();
  tun::settings s;
  s.f.SIS_PROP = false;
  const sibling_row rows[] = {
      {"target idle", 10, 13, {13, 10}, 13, sibling_reason::target_idle, scan_outcome::not_run},
      {"prev idle, same LLC", 10, 13, {10, 14}, 10, sibling_reason::prev_idle, scan_outcome::not_run},
      {"prev idle, other LLC", 20, 13, {20}, 13, sibling_reason::none_idle, scan_outcome::exhausted},
      {"prev idle, other LLC, scan finds", 20, 13, {20, 11}, 11, sibling_reason::scan_found, scan_outcome::found},
      {"prev is the target", 13, 13, {12}, 12, sibling_reason::scan_found, scan_outcome::found},
      {"nothing idle", 10, 13, {}, 13, sibling_reason::none_idle, scan_outcome::exhausted},
  };
  for (const sibling_row& r : rows) {
    table_view v(l);
    for (const int w : r.idle) v.idle_flags[static_cast<std::size_t>(w)] = true;
    const sibling_result res = select_idle_sibling(l, v, r.prev, r.target, 40, s);
    EXPECT_EQ(res.worker, r.expect_worker) << r.what;
    EXPECT_EQ(res.reason, r.expect_reason) << r.what;
    EXPECT_EQ(res.scan.outcome, r.expect_scan) << r.what;
  }
}

TEST(SelectIdleSibling, NamesOfOutcomes) {
  EXPECT_STREQ(to_string(scan_outcome::cut_short), "cut_short");
  EXPECT_STREQ(to_string(scan_outcome::skipped_overloaded), "skipped_overloaded");
  EXPECT_STREQ(to_string(sibling_reason::prev_idle), "prev_idle");
}

}  // namespace
}  // namespace rt::policy::test
