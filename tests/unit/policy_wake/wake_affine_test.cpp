// wake_affine: the share-cache shortcut (000 patch 6) and numa_wake_affine (000 patch 7).
// Expected values by hand from the seed's formula:
//   sync: this.load = max(this.load - current_load, 0); this.load == 0 -> node_idle;
//   this_eff = 100 * prev.cap * (this.load + task)
//   prev_eff = (100 + (pct - 100) / 2) * this.cap * max(prev.load - task, 0)   (112 for 125, 108 for 117)
//   balanced iff this_eff <= prev_eff.
#include <gtest/gtest.h>

#include <limits>

#include "fixtures.hpp"
#include "policy/wake.hpp"

namespace rt::policy::test {
namespace {

struct numa_row {
  const char* what;
  node_stats prev;
  node_stats here;
  std::uint64_t pct;
  bool sync;
  std::uint64_t task_load;
  std::uint64_t current_load;
  numa_affine expect;
};

TEST(NumaWakeAffine, TableOfLoadsCapacitiesAndPcts) {
  const numa_row rows[] = {
      // 100*8192*2560 = 2,097,152,000 <= 112*8192*3584 = 3,288,334,336
      {"lighter spawner node", {4096, 8192}, {2048, 8192}, 125, false, 512, 0, numa_affine::balanced},
      // 100*8192*3200 = 2,621,440,000 > 112*8192*2800 = 2,569,011,200
      {"equal loads, pct 125", {3000, 8192}, {3000, 8192}, 125, false, 200, 0, numa_affine::unbalanced},
      // 100*8192*3200 > 108*8192*2800 = 2,477,260,800
      {"equal loads, pct 117", {3000, 8192}, {3000, 8192}, 117, false, 200, 0, numa_affine::unbalanced},
      // 110,000 <= 112,000 (times 4096 on both sides)
      {"within the 125 margin", {1000, 4096}, {1100, 4096}, 125, false, 0, 0, numa_affine::balanced},
      // 110,000 > 108,000
      {"outside the 117 margin", {1000, 4096}, {1100, 4096}, 117, false, 0, 0, numa_affine::unbalanced},
      {"equality is balanced, 125", {1000, 4096}, {1120, 4096}, 125, false, 0, 0, numa_affine::balanced},
      {"one past the 125 margin", {1000, 4096}, {1121, 4096}, 125, false, 0, 0, numa_affine::unbalanced},
      {"equality is balanced, 117", {1000, 4096}, {1080, 4096}, 117, false, 0, 0, numa_affine::balanced},
      // 100*4096*2304 = 943,718,400 <= 112*8192*1792 = 1,644,167,168
      {"bigger spawner node", {2048, 4096}, {2048, 8192}, 125, false, 256, 0, numa_affine::balanced},
      // 100*8192*2304 = 1,887,436,800 > 112*4096*1792 = 822,083,584
      {"smaller spawner node", {2048, 8192}, {2048, 4096}, 125, false, 256, 0, numa_affine::unbalanced},
      // not sync: 100*4096*2100 = 860,160,000 > 112*4096*1400 = 642,252,800
      {"busy spawner, not sync", {1500, 4096}, {2000, 4096}, 125, false, 100, 800, numa_affine::unbalanced},
      // sync: this 1200 -> 100*4096*1300 = 532,480,000 <= 642,252,800
      {"busy spawner, sync", {1500, 4096}, {2000, 4096}, 125, true, 100, 800, numa_affine::balanced},
      {"sync empties the spawner node", {5000, 4096}, {600, 4096}, 125, true, 100, 600, numa_affine::node_idle},
      {"sync saturates, never wraps", {5000, 4096}, {300, 4096}, 125, true, 100, 500, numa_affine::node_idle},
      {"idle spawner node, not sync", {5000, 4096}, {0, 4096}, 125, false, 100, 0, numa_affine::node_idle},
      // task_load > prev_load: prev_eff = 112*4096*0 = 0 < 100*4096*350 (the seed wrapped here)
      {"task heavier than its home node", {100, 4096}, {50, 4096}, 125, false, 300, 0, numa_affine::unbalanced},
      {"task as heavy as its home node", {300, 4096}, {50, 4096}, 125, false, 300, 0, numa_affine::unbalanced},
      {"task heavier than home, pct 117", {100, 4096}, {50, 4096}, 117, false, 300, 0, numa_affine::unbalanced},
  };
  for (const numa_row& r : rows) {
    EXPECT_EQ(numa_wake_affine(r.prev, r.here, r.pct, r.sync, r.task_load, r.current_load), r.expect) << r.what;
  }
}

TEST(NumaWakeAffine, HugeLoadsSaturateInsteadOfWrapping) {
  const std::uint64_t big = std::numeric_limits<std::uint64_t>::max() / 2;
  // Both products saturate at the maximum: equal, hence balanced (not a wrapped small number).
  EXPECT_EQ(numa_wake_affine({big, big}, {big, big}, 125, false, 1, 0), numa_affine::balanced);
  // Only this_eff saturates: prev_eff = 112 * 4096 * 999 is smaller.
  EXPECT_EQ(numa_wake_affine({1000, big}, {big, 4096}, 125, false, 1, 0), numa_affine::unbalanced);
}

struct shortcut_row {
  const char* what;
  int self;
  int home;
  affine_outcome expect;
};

TEST(WakeAffine, ShareCacheShortcutNeedsNoLoads) {
  const layout l = make_layout(opteron(), default_worker_cores(opteron(), 0));
  const tun::settings s;
  table_view v(l);
  // Node 0 heavily loaded, node 1 nearly idle: numa_wake_affine would refuse to move a task
  // from node 1 to node 0 (100*8192*(6000+100) > 112*8192*(1000-100)).
  v.node_loads[0] = 6000;
  v.node_loads[1] = 1000;
  const shortcut_row rows[] = {
      {"same LLC 0", 3, 5, affine_outcome::share_cache},
      {"same LLC 0, reversed", 5, 3, affine_outcome::share_cache},
      {"same LLC 1", 8, 15, affine_outcome::share_cache},
      {"adjacent ids, LLC 0 and 1", 7, 8, affine_outcome::node_unbalanced},
  };
  for (const shortcut_row& r : rows) {
    v.node_load_reads = 0;
    EXPECT_EQ(wake_affine(l, v, r.self, r.home, false, 100, 0, s), r.expect) << r.what;
    if (r.expect == affine_outcome::share_cache) {
      EXPECT_EQ(v.node_load_reads, 0) << r.what << ": the shortcut read node loads";
    } else {
      EXPECT_EQ(v.node_load_reads, 2) << r.what;
    }
  }
}

TEST(WakeAffine, WithoutTheShortcutSameLlcUsesTheLlcPct) {
  const layout l = make_layout(opteron(), default_worker_cores(opteron(), 0));
  tun::settings s;
  s.f.WA_SHARE_CACHE = false;
  table_view v(l);
  v.node_loads[0] = 1000;
  v.node_loads[2] = 1000;
  // Same LLC (node 0 on both sides), pct 117: 100*8192*1040 = 851,968,000 > 108*8192*960 = 849,346,560.
  EXPECT_EQ(wake_affine(l, v, 3, 5, false, 40, 0, s), affine_outcome::node_unbalanced);
  // Across nodes 0 and 2, pct 125: 851,968,000 <= 112*8192*960 = 880,803,840.
  EXPECT_EQ(wake_affine(l, v, 3, 20, false, 40, 0, s), affine_outcome::node_balanced);
}

TEST(WakeAffine, NumaWakeAffineOffIsAffineUnchecked) {
  const layout l = make_layout(opteron(), default_worker_cores(opteron(), 0));
  tun::settings s;
  s.f.NUMA_WAKE_AFFINE = false;
  table_view v(l);
  v.node_loads[0] = 6000;
  v.node_loads[1] = 1000;
  EXPECT_EQ(wake_affine(l, v, 7, 8, false, 100, 0, s), affine_outcome::unchecked);
  EXPECT_EQ(v.node_load_reads, 0);
  EXPECT_EQ(wake_affine(l, v, 3, 5, false, 100, 0, s), affine_outcome::share_cache);
}

TEST(WakeAffine, SyncDiscountComesFromTheRequest) {
  const layout l = make_layout(opteron(), default_worker_cores(opteron(), 0));
  const tun::settings s;
  table_view v(l);
  v.node_loads[0] = 2000;  // the spawner's node (worker 3)
  v.node_loads[2] = 1500;  // the home's node (worker 20)
  // not sync: 100*8192*2100 > 112*8192*1400; sync: 100*8192*1300 <= 112*8192*1400.
  EXPECT_EQ(wake_affine(l, v, 3, 20, false, 100, 800, s), affine_outcome::node_unbalanced);
  EXPECT_EQ(wake_affine(l, v, 3, 20, true, 100, 800, s), affine_outcome::node_balanced);
  EXPECT_EQ(wake_affine(l, v, 3, 20, true, 100, 2000, s), affine_outcome::node_idle);
}

TEST(WakeAffine, OutcomesThatMoveTheTask) {
  EXPECT_FALSE(is_affine(affine_outcome::not_attempted));
  EXPECT_TRUE(is_affine(affine_outcome::share_cache));
  EXPECT_TRUE(is_affine(affine_outcome::node_idle));
  EXPECT_TRUE(is_affine(affine_outcome::node_balanced));
  EXPECT_FALSE(is_affine(affine_outcome::node_unbalanced));
  EXPECT_TRUE(is_affine(affine_outcome::unchecked));
}

}  // namespace
}  // namespace rt::policy::test
