// select_worker end to end over the Opteron (64 workers, LLC n = node n = workers 8n..8n+7).
// Each row is derived by hand: the wake_affine branch (share cache, or numa_wake_affine with
// 100 * 8192 * (this + task) <= 112 * 8192 * (prev - task)), then select_idle_sibling from the
// chosen target with the wrap order of its LLC.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "fixtures.hpp"
#include "policy/wake.hpp"

namespace rt::policy::test {
namespace {

layout opteron_full() { return make_layout(opteron(), default_worker_cores(opteron(), 0)); }

struct spawn_row {
  const char* what;
  int self;
  int home;
  std::vector<int> idle;
  std::uint64_t node0_load;  // the spawner's node in every row (self on node 0)
  std::uint64_t node2_load;
  int target;
  wake_reason reason;
  affine_outcome affine;
  scan_outcome scan;
  int scanned;
  bool idle_found;
  bool cross_node;
};

TEST(SelectWorker, WakePathTable) {
  const layout l = opteron_full();
  const tun::settings s;  // SIS_PROP on
  const spawn_row rows[] = {
      // self == home: no affine decision; scan LLC 0 from 3: 3, 4, 5, 6.
      {"spawner is home", 3, 3, {6}, 0, 0, 6, wake_reason::idle_scan, affine_outcome::not_attempted,
       scan_outcome::found, 4, true, false},
      // Shortcut: target = 3 (busy); home 5 shares LLC 0 and is idle.
      {"home in the spawner's LLC, idle", 3, 5, {5}, 0, 0, 5, wake_reason::prev_idle, affine_outcome::share_cache,
       scan_outcome::not_run, 0, true, false},
      // Shortcut, home busy: scan from 3: 3, 4, ..., 7, 0, 1.
      {"home in the spawner's LLC, busy", 3, 5, {1}, 0, 0, 1, wake_reason::idle_scan, affine_outcome::share_cache,
       scan_outcome::found, 7, true, false},
      // Home 20 on node 2: 100*(1000+100) <= 112*(6000-100): affine, target 3; scan from 3 finds 1.
      {"lighter spawner node", 3, 20, {1, 21}, 1000, 6000, 1, wake_reason::idle_scan, affine_outcome::node_balanced,
       scan_outcome::found, 7, true, false},
      // 100*(6000+100) > 112*(1000-100): stays with home 20; 20 busy, prev == target, scan 20, 21.
      {"heavier spawner node", 3, 20, {1, 21}, 6000, 1000, 21, wake_reason::idle_scan,
       affine_outcome::node_unbalanced, scan_outcome::found, 2, true, true},
      // Unbalanced and the home idle: the home itself.
      {"heavier spawner node, home idle", 3, 20, {20}, 6000, 1000, 20, wake_reason::target_idle,
       affine_outcome::node_unbalanced, scan_outcome::not_run, 0, true, true},
      // Spawner node idle (load 0): affine without arithmetic on the loads' ratio.
      {"idle spawner node", 3, 20, {}, 0, 6000, 3, wake_reason::busy_target, affine_outcome::node_idle,
       scan_outcome::exhausted, 8, false, false},
  };
  for (const spawn_row& r : rows) {
    table_view v(l);
    for (const int w : r.idle) v.idle_flags[static_cast<std::size_t>(w)] = true;
    v.avg_idle[static_cast<std::size_t>(r.self)] = 1000000;  // SIS_PROP nr = 8 * 1953: the whole LLC
    v.node_loads[0] = r.node0_load;
    v.node_loads[2] = r.node2_load;
    spawn_request req;
    req.self = r.self;
    req.home = r.home;
    req.task_load = 100;
    const wake_decision d = select_worker(l, v, req, s);
    EXPECT_EQ(d.target, r.target) << r.what;
    EXPECT_EQ(d.reason, r.reason) << r.what;
    EXPECT_EQ(d.affine, r.affine) << r.what;
    EXPECT_EQ(d.scan, r.scan) << r.what;
    EXPECT_EQ(d.scanned, r.scanned) << r.what;
    EXPECT_EQ(d.idle_found, r.idle_found) << r.what;
    EXPECT_EQ(d.cross_node, r.cross_node) << r.what;
  }
}

TEST(SelectWorker, CountersFollowTheDecision) {
  const layout l = opteron_full();
  const tun::settings s;  // avg_idle 0: SIS_PROP nr 4, three workers examined
  table_view v(l);
  v.node_loads[0] = 1000;
  v.node_loads[2] = 6000;
  spawn_request req;
  req.self = 3;
  req.home = 20;
  req.task_load = 100;
  const wake_decision d = select_worker(l, v, req, s);
  EXPECT_TRUE(d.affine_attempted());
  EXPECT_TRUE(d.affine_moved());
  EXPECT_TRUE(d.scan_ran());
  EXPECT_TRUE(d.scan_cut_short());
  EXPECT_EQ(d.scanned, 3);
  EXPECT_EQ(v.idle_reads, (std::vector<int>{3, 3, 4, 5}));  // select_idle_sibling's target check, then the scan
  EXPECT_EQ(d.target, 3);
  EXPECT_EQ(d.reason, wake_reason::busy_target);
  EXPECT_FALSE(d.idle_found);

  table_view same(l);
  same.set_idle({3});
  spawn_request own;
  own.self = 3;
  own.home = 3;
  const wake_decision o = select_worker(l, same, own, s);
  EXPECT_FALSE(o.affine_attempted());
  EXPECT_FALSE(o.affine_moved());
  EXPECT_FALSE(o.scan_ran());
  EXPECT_FALSE(o.scan_cut_short());
}

TEST(SelectWorker, SyncSpawnDiscountsTheSpawner) {
  const layout l = opteron_full();
  const tun::settings s;
  table_view v(l);
  v.node_loads[0] = 2000;
  v.node_loads[2] = 1500;
  spawn_request req;
  req.self = 3;
  req.home = 20;
  req.task_load = 100;
  req.current_load = 800;
  // not sync: 100*2100 > 112*1400: home side; sync: 100*1300 <= 112*1400: spawner side.
  EXPECT_EQ(select_worker(l, v, req, s).affine, affine_outcome::node_unbalanced);
  EXPECT_EQ(select_worker(l, v, req, s).target, 20);
  req.sync = true;
  EXPECT_EQ(select_worker(l, v, req, s).affine, affine_outcome::node_balanced);
  EXPECT_EQ(select_worker(l, v, req, s).target, 3);
}

TEST(SelectWorker, PreferredNodeOutranksTheAffinePull) {
  const layout l = opteron_full();
  const tun::settings s;
  table_view v(l);
  v.node_loads[0] = 0;  // the spawner's node is idle: numa_wake_affine alone would pull
  spawn_request req;
  req.self = 3;    // node 0
  req.home = 20;   // node 2
  EXPECT_EQ(select_worker(l, v, req, s).affine, affine_outcome::node_idle);
  EXPECT_EQ(select_worker(l, v, req, s).target, 3);
  req.preferred_node = 2;  // I-WAKE-8: the group's home is on its preferred node
  const wake_decision d = select_worker(l, v, req, s);
  EXPECT_EQ(d.affine, affine_outcome::numa_preferred);
  EXPECT_FALSE(d.affine_moved());
  EXPECT_EQ(l.node_of(d.target), 2);
  EXPECT_TRUE(d.cross_node);
  req.preferred_node = 0;  // preferred is the spawner's node, home is not on it: wake_affine decides
  EXPECT_EQ(select_worker(l, v, req, s).affine, affine_outcome::node_idle);
  req.preferred_node = 2;
  req.self = 17;  // node 2 too: no cross-node question, the share-cache rule applies
  EXPECT_NE(select_worker(l, v, req, s).affine, affine_outcome::numa_preferred);
  EXPECT_STREQ(to_string(affine_outcome::numa_preferred), "numa_preferred");
}

TEST(SelectWorker, OutsideSpawnIntoAPlacedGroupStaysOnItsNode) {
  const layout l = opteron_full();
  const tun::settings s;
  table_view v(l);
  v.set_idle({20, 60});  // one idle worker on node 2 (home's) and one on node 7
  spawn_request req;
  req.home = 17;
  req.preferred_node = 2;
  const wake_decision d = select_worker(l, v, req, s);
  EXPECT_EQ(d.target, 20);
  EXPECT_TRUE(d.idle_found);
  EXPECT_EQ(d.reason, wake_reason::idle_scan);
  EXPECT_FALSE(d.cross_node);
  req.preferred_node = -1;  // no placement: the idlest of the machine, which may be elsewhere
  EXPECT_EQ(select_worker(l, v, req, s).reason, wake_reason::idlest);
}

TEST(SelectWorker, OutsideSpawnTakesFindIdlest) {
  const layout l = opteron_full();
  const tun::settings s;
  table_view v(l);
  for (std::size_t w = 0; w < 64; ++w) v.utils[w] = w < 56 ? 1024 : 0;  // only node 7 has room
  spawn_request req;
  req.home = 10;  // a hint: node 1, full
  const wake_decision d = select_worker(l, v, req, s);
  EXPECT_EQ(d.reason, wake_reason::idlest);
  EXPECT_EQ(d.target, 56);  // node 7's workers tie; wrap from 10 reaches 56 first
  EXPECT_EQ(d.affine, affine_outcome::not_attempted);
  EXPECT_EQ(d.scan, scan_outcome::not_run);
  EXPECT_FALSE(d.cross_node);
  EXPECT_FALSE(d.idle_found);
  EXPECT_EQ(v.node_load_reads, 0);
}

// I-WAKE-9: an outside spawner's own core takes the task when its worker is idle (a sync
// wake-up), before find_idlest would weigh spare capacity; not when it is busy, not for a
// placed group, never for a spawning worker.
TEST(SelectWorker, OutsideSpawnerWakesItsOwnCoreFirst) {
  const layout l = opteron_full();
  const tun::settings s;
  table_view v(l);
  for (std::size_t w = 0; w < 64; ++w) v.utils[w] = w < 56 ? 1024 : 0;  // only node 7 has room
  v.utils[3] = 900;
  v.set_idle({3, 56});
  spawn_request req;
  req.home = 10;
  EXPECT_EQ(select_worker(l, v, req, s).target, 56);  // no waker: find_idlest, node 7
  req.waker = 3;  // the spawner runs on worker 3's core, idle though less spare
  wake_decision d = select_worker(l, v, req, s);
  EXPECT_EQ(d.target, 3);
  EXPECT_EQ(d.reason, wake_reason::target_idle);
  EXPECT_TRUE(d.idle_found);
  EXPECT_FALSE(d.cross_node);
  v.idle_flags[3] = false;  // busy: find_idlest as before
  EXPECT_EQ(select_worker(l, v, req, s).target, 56);
  v.idle_flags[3] = true;
  req.preferred_node = 7;  // a placed group: I-WAKE-8's node search, not the waker
  req.home = 56;
  EXPECT_EQ(select_worker(l, v, req, s).target, 56);
  spawn_request exec;  // a continuation places from its own worker
  exec.self = 20;
  exec.home = 20;
  exec.exec = true;
  exec.waker = 3;
  EXPECT_EQ(select_worker(l, v, exec, s).reason, wake_reason::idlest);
}

TEST(SelectWorker, ExecContinuationTakesFindIdlestFromTheSpawner) {
  const layout l = opteron_full();
  const tun::settings s;
  table_view v(l);
  for (std::size_t w = 0; w < 64; ++w) v.utils[w] = 1024;
  for (std::size_t w = 40; w < 48; ++w) v.utils[w] = 0;  // node 5 empty
  spawn_request req;
  req.self = 3;
  req.home = 3;
  req.exec = true;
  req.task = {3, 1024, 0, task_presence::running};
  // Node 0: worker 3 without p counts 0 -> spare 1024; node 5: 8192. 112 * 1024 <= 100 * 8192:
  // the continuation goes to node 5, the first of its workers in wrap order from 3: 40.
  const wake_decision d = select_worker(l, v, req, s);
  EXPECT_EQ(d.reason, wake_reason::idlest);
  EXPECT_EQ(d.target, 40);
  EXPECT_TRUE(d.cross_node);
  EXPECT_EQ(d.affine, affine_outcome::not_attempted);
}

TEST(SelectWorker, NamesOfOutcomes) {
  EXPECT_STREQ(to_string(wake_reason::idle_scan), "idle_scan");
  EXPECT_STREQ(to_string(affine_outcome::node_unbalanced), "node_unbalanced");
  EXPECT_STREQ(to_string(numa_affine::node_idle), "node_idle");
  EXPECT_STREQ(to_string(task_presence::running), "running");
  EXPECT_STREQ(to_string(domain_level::llc), "llc");
}

}  // namespace
}  // namespace rt::policy::test
