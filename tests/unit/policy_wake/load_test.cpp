// cpu_util_without / capacity_spare_without in the shape of seed 003, util_est bookkeeping and
// find_idlest. Expected values by hand from the formulas quoted per table.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "fixtures.hpp"
#include "policy/load.hpp"

namespace rt::policy::test {
namespace {

struct without_row {
  const char* what;
  std::uint32_t util;      // util_avg of worker 5
  std::uint32_t util_est;  // util_est.enqueued of worker 5
  task_ref p;
  std::uint32_t expect;
};

TEST(CpuUtilWithout, TheCommentsCasesAndTheExeclCase) {
  // util' = util - task_util (saturating); with UTIL_EST, est' = util_est minus p's estimate
  // when p is queued or running on the worker; result = min(max(util', est'), 1024).
  const tun::settings s;
  const without_row rows[] = {
      {"(a) p the only task sleeping here", 200, 0, {5, 200, 0, task_presence::sleeping}, 0},
      {"(a) p's util above the worker's: saturates", 200, 0, {5, 250, 0, task_presence::sleeping}, 0},
      {"(b) others sleeping, worker leaves idle", 500, 0, {5, 200, 150, task_presence::sleeping}, 300},
      {"(c) others runnable, util_est above util", 300, 600, {5, 100, 150, task_presence::sleeping}, 600},
      {"execl: p is the current task", 300, 600, {5, 100, 250, task_presence::running}, 350},
      {"execl: p is queued here", 300, 600, {5, 100, 250, task_presence::queued}, 350},
      {"p's estimate above the worker's", 300, 100, {5, 100, 250, task_presence::running}, 200},
      {"p last ran elsewhere", 300, 600, {6, 100, 250, task_presence::running}, 600},
      {"p is new", 300, 600, {5, 100, 250, task_presence::none}, 600},
      {"capped at capacity, p elsewhere", 1500, 0, {6, 100, 0, task_presence::sleeping}, 1024},
      {"capped at capacity after the discount", 1500, 0, {5, 200, 0, task_presence::sleeping}, 1024},
      {"estimate capped at capacity", 100, 3000, {5, 50, 500, task_presence::queued}, 1024},
  };
  for (const without_row& r : rows) {
    EXPECT_EQ(cpu_util_without(5, r.util, r.util_est, r.p, s), r.expect) << r.what;
  }
}

TEST(CpuUtilWithout, FeatureSwitches) {
  const task_ref running{5, 100, 250, task_presence::running};
  const task_ref sleeping{5, 100, 150, task_presence::sleeping};
  tun::settings no_est;
  no_est.f.UTIL_EST = false;
  EXPECT_EQ(cpu_util_without(5, 300, 600, running, no_est), 200u);   // util - task_util only
  EXPECT_EQ(cpu_util_without(5, 300, 600, sleeping, no_est), 200u);  // case (c) without util_est
  EXPECT_EQ(cpu_util(300, 600, no_est), 300u);

  tun::settings no_without;
  no_without.f.UTIL_WITHOUT = false;  // the pre-003 behaviour: nothing discounted
  EXPECT_EQ(cpu_util_without(5, 300, 600, running, no_without), 600u);
  EXPECT_EQ(cpu_util_without(5, 200, 0, sleeping, no_without), 200u);
}

TEST(CapacitySpareWithout, CapacityMinusUtilNeverNegative) {
  const tun::settings s;
  EXPECT_EQ(capacity_spare_without(5, 300, 600, {5, 100, 250, task_presence::running}, s), 674u);  // 1024 - 350
  EXPECT_EQ(capacity_spare_without(5, 300, 600, {5, 100, 150, task_presence::sleeping}, s), 424u);  // 1024 - 600
  EXPECT_EQ(capacity_spare_without(5, 200, 0, {5, 200, 0, task_presence::sleeping}, s), 1024u);
  EXPECT_EQ(capacity_spare_without(5, 1500, 0, {6, 100, 0, task_presence::sleeping}, s), 0u);
  EXPECT_EQ(capacity_spare_without(5, 1024, 0, {}, s), 0u);
}

TEST(UtilEst, EnqueueAddsDequeueSaturates) {
  EXPECT_EQ(util_est_enqueue(300, 200), 500u);
  EXPECT_EQ(util_est_enqueue(UINT32_MAX - 1, 5), UINT32_MAX);
  EXPECT_EQ(util_est_dequeue(500, 200), 300u);
  EXPECT_EQ(util_est_dequeue(100, 200), 0u);
}

// ---- find_idlest ----------------------------------------------------------------------------
// Layout: cores 0-3, 8-11, 16-19 of the Opteron: workers 0-3 on node 0, 4-7 on node 1, 8-11 on
// node 2 (nodes 3-7 without workers). Node spare = sum of (1024 - cpu_util_without).

layout three_nodes() { return make_layout(opteron(), {0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19}); }

void set_utils(table_view& v, std::vector<std::uint32_t> utils) {
  for (std::size_t i = 0; i < utils.size(); ++i) v.utils[i] = utils[i];
}

TEST(FindIdlest, MostSpareNodeThenWorker) {
  const layout l = three_nodes();
  const tun::settings s;
  table_view v(l);
  // node 0: 4 * 224 = 896; node 1: 4 * 924 = 3696; node 2: 524 + 1024 + 1024 + 0 = 2572.
  set_utils(v, {800, 800, 800, 800, 100, 100, 100, 100, 500, 0, 0, 1024});
  // Start on node 0: 112 * 896 > 100 * 3696 fails, node 1 wins; all its workers tie, the first in
  // wrap order from worker 0 is 4.
  idlest_result r = find_idlest(l, v, 0, {}, s);
  EXPECT_EQ(r.node, 1);
  EXPECT_EQ(r.worker, 4);
  EXPECT_FALSE(r.idle);
  EXPECT_FALSE(r.kept_local);
  // Start on worker 6: ties go to 6, then 7, 4, 5.
  r = find_idlest(l, v, 6, {}, s);
  EXPECT_EQ(r.node, 1);
  EXPECT_EQ(r.worker, 6);
  // Most spare inside the node: worker 5 at util 0 (1024 spare).
  v.utils[5] = 0;
  r = find_idlest(l, v, 6, {}, s);
  EXPECT_EQ(r.worker, 5);
}

TEST(FindIdlest, AnIdleWorkerBeatsMoreSpareCapacity) {
  const layout l = three_nodes();
  const tun::settings s;
  table_view v(l);
  set_utils(v, {800, 800, 800, 800, 100, 300, 100, 100, 1024, 1024, 1024, 1024});
  v.set_idle({5});  // idle, its util still decaying
  const idlest_result r = find_idlest(l, v, 0, {}, s);
  EXPECT_EQ(r.node, 1);
  EXPECT_EQ(r.worker, 5);
  EXPECT_TRUE(r.idle);
}

TEST(FindIdlest, StartNodeKeptWithinTheImbalanceMargin) {
  const layout l = three_nodes();
  const tun::settings s;  // imbalance_pct_numa 125: scale 112
  table_view v(l);
  // node 0: 4 * 424 = 1696; node 1: 4 * 524 = 2096; node 2: 0. 112 * 1696 = 189,952 <= 209,600: move.
  set_utils(v, {600, 600, 600, 600, 500, 500, 500, 500, 1024, 1024, 1024, 1024});
  idlest_result r = find_idlest(l, v, 0, {}, s);
  EXPECT_EQ(r.node, 1);
  EXPECT_FALSE(r.kept_local);
  // node 0: 4 * 474 = 1896; 112 * 1896 = 212,352 > 209,600: stay.
  set_utils(v, {550, 550, 550, 550, 500, 500, 500, 500, 1024, 1024, 1024, 1024});
  r = find_idlest(l, v, 0, {}, s);
  EXPECT_EQ(r.node, 0);
  EXPECT_EQ(r.worker, 0);
  EXPECT_TRUE(r.kept_local);
  // A task that needs more than the start node's room (1896 <= 4000 / 2 = 2000) goes to node 1.
  r = find_idlest(l, v, 0, {0, 4000, 0, task_presence::none}, s);
  EXPECT_EQ(r.node, 1);
  EXPECT_FALSE(r.kept_local);
}

TEST(FindIdlest, ExeclContinuationStaysLocalOnlyWithTheDiscount) {
  const layout l = three_nodes();
  table_view v(l);
  // Worker 2 runs p (util 400, util_est 400) and spawns p's continuation.
  set_utils(v, {500, 500, 900, 500, 450, 450, 450, 450, 1024, 1024, 1024, 1024});
  v.util_ests[2] = 900;
  const task_ref p{2, 400, 400, task_presence::running};
  // With the discount worker 2 counts max(900 - 400, 900 - 400) = 500: node 0 spare 4 * 524 =
  // 2096; node 1 4 * 574 = 2296; 112 * 2096 = 234,752 > 229,600: node 0 kept, worker 2 itself
  // (all tie at 524, wrap from 2).
  const tun::settings s;
  idlest_result r = find_idlest(l, v, 2, p, s);
  EXPECT_EQ(r.node, 0);
  EXPECT_EQ(r.worker, 2);
  EXPECT_TRUE(r.kept_local);
  // Without it worker 2 counts 900: node 0 spare 3 * 524 + 124 = 1696; 112 * 1696 = 189,952 <=
  // 229,600: the continuation leaves for node 1.
  tun::settings pre003;
  pre003.f.UTIL_WITHOUT = false;
  r = find_idlest(l, v, 2, p, pre003);
  EXPECT_EQ(r.node, 1);
  EXPECT_EQ(r.worker, 4);
}

// IDLE_WITHOUT: worker 2 runs p (util 300, all its signal) and spawns p's continuation while
// workers 0, 1 and 3 of its node are idle (util 0) and nodes 1 and 2 are full. Every node-0
// worker has 1024 spare without p, so the worker phase decides: the first idle one in wrap
// order from 2.
TEST(FindIdlest, ExecAloneOnItsWorkerStaysThereAgainstAnotherIdleWorker) {
  const layout l = three_nodes();
  table_view v(l);
  set_utils(v, {0, 0, 300, 0, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024});
  v.util_ests[2] = 300;
  v.idle_flags[0] = v.idle_flags[1] = v.idle_flags[3] = true;
  const tun::settings s;
  tun::settings off;
  off.f.IDLE_WITHOUT = false;
  // Without the util discount worker 2 keeps its 300 (724 spare against the others' 1024): it
  // still wins, as the kernel's local group does on a tie of idle CPUs whatever the loads.
  tun::settings no_discount;
  no_discount.f.UTIL_WITHOUT = false;
  struct row {
    const char* name;
    bool alone;
    const tun::settings* st;
    int worker;
    bool idle_found;  // p's own worker is not an idle worker found
  };
  const row rows[] = {
      {"p alone: worker 2 idle without p, first in wrap order", true, &s, 2, false},
      {"p with queued work: worker 3, the next idle one", false, &s, 3, true},
      {"IDLE_WITHOUT off: worker 3", true, &off, 3, true},
      {"UTIL_WITHOUT off: worker 2 still, against more spare elsewhere", true, &no_discount, 2, false},
  };
  for (const row& r : rows) {
    const task_ref p{2, 300, 300, task_presence::running, r.alone};
    const idlest_result got = find_idlest(l, v, 2, p, *r.st);
    EXPECT_EQ(got.node, 0) << r.name;
    EXPECT_EQ(got.worker, r.worker) << r.name;
    EXPECT_EQ(got.idle, r.idle_found) << r.name;
  }
  // p's presence must be `running` on the start worker: a sleeping p leaves worker 2 busy.
  const idlest_result sleeping = find_idlest(l, v, 2, {2, 300, 300, task_presence::sleeping, true}, s);
  EXPECT_EQ(sleeping.worker, 3);
}

TEST(FindIdlest, NodesWithoutWorkersAreSkipped) {
  // Partial Opteron pool of 4 (cores 0, 8, 16, 24): nodes 4-7 have no worker.
  const layout l = make_layout(opteron(), default_worker_cores(opteron(), 4));
  const tun::settings s;
  table_view v(l);
  set_utils(v, {1024, 1024, 1024, 1000});
  // Start on worker 1 (node 1): nodes 1, 2, 3, (4-7 skipped), 0; node 3's 24 spare wins
  // (112 * 0 > 100 * 24 fails).
  const idlest_result r = find_idlest(l, v, 1, {}, s);
  EXPECT_EQ(r.node, 3);
  EXPECT_EQ(r.worker, 3);
}

}  // namespace
}  // namespace rt::policy::test
