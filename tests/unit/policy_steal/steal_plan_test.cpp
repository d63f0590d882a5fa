// The steal ladder's victim order (runtime/policy/steal.hpp, docs/design/stealing.md §1).
//
// Expected orders are written by hand: for the real machines from
// `lstopo-no-graphics -i FILE --distances` (logical node indexes) and `lstopo-no-graphics -i
// FILE -l` (which cores sit on which node), for the small machines from the matrix in the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "policy/layout.hpp"
#include "policy/steal.hpp"
#include "topology/topology.hpp"

namespace rt::policy {
namespace {

// ---------------------------------------------------------------------------------------------
// Small machines filled by hand (no hwloc): the layout is written directly.

struct worker_spec {
  int llc;
  int node;
};

struct machine {
  topo::topology topo;
  layout lay;
};

std::unique_ptr<machine> make_machine(std::vector<std::vector<int>> distance, int llcs,
                                      const std::vector<worker_spec>& workers) {
  auto m = std::make_unique<machine>();
  const int nodes = static_cast<int>(distance.size());
  m->topo.nodes.resize(static_cast<std::size_t>(nodes));
  for (int n = 0; n < nodes; ++n) m->topo.nodes[static_cast<std::size_t>(n)].logical = n;
  m->topo.distance = std::move(distance);
  m->lay.topo = &m->topo;
  const std::size_t w = workers.size();
  m->lay.llc_workers.assign(static_cast<std::size_t>(llcs), core::cpumask(w));
  m->lay.node_workers.assign(static_cast<std::size_t>(nodes), core::cpumask(w));
  m->lay.node_capacity.assign(static_cast<std::size_t>(nodes), 0);
  for (std::size_t i = 0; i < w; ++i) {
    worker_place p;
    p.core = static_cast<int>(i);
    p.llc = workers[i].llc;
    p.node = workers[i].node;
    m->lay.workers.push_back(p);
    m->lay.llc_workers[static_cast<std::size_t>(p.llc)].set(i);
    m->lay.node_workers[static_cast<std::size_t>(p.node)].set(i);
    m->lay.node_capacity[static_cast<std::size_t>(p.node)] += kCapacityScale;
  }
  return m;
}

// Node 0: LLC 0 = workers {0,1}, LLC 1 = workers {2,3}. Node 1: LLC 2 = workers {4,5}.
// Node 2: no workers (a memory-only node). Distances 0-1: 20, 1-2: 20, 0-2: 30.
std::unique_ptr<machine> three_node_machine() {
  return make_machine({{10, 20, 30}, {20, 10, 20}, {30, 20, 10}}, 3,
                      {{0, 0}, {0, 0}, {1, 0}, {1, 0}, {2, 1}, {2, 1}});
}

TEST(StealPlan, TiersOfAWorkerWithLlcNodeAndTwoRemoteDistances) {
  const auto m = three_node_machine();
  const steal_plan p = make_steal_plan(m->lay, 0);
  EXPECT_EQ(p.worker, 0);
  EXPECT_EQ(p.node, 0);
  ASSERT_EQ(p.tiers.size(), 3u);  // the tier at distance 30 (node 2) has no workers: omitted

  EXPECT_EQ(p.tiers[0].level, steal_level::llc);
  EXPECT_EQ(p.tiers[0].distance, 10);
  EXPECT_EQ(p.tiers[0].nodes, (std::vector<int>{0}));
  EXPECT_EQ(p.tiers[0].victims, (std::vector<int>{1}));

  EXPECT_EQ(p.tiers[1].level, steal_level::node);
  EXPECT_EQ(p.tiers[1].distance, 10);
  EXPECT_EQ(p.tiers[1].nodes, (std::vector<int>{0}));
  EXPECT_EQ(p.tiers[1].victims, (std::vector<int>{2, 3}));

  EXPECT_EQ(p.tiers[2].level, steal_level::remote);
  EXPECT_EQ(p.tiers[2].distance, 20);
  EXPECT_EQ(p.tiers[2].nodes, (std::vector<int>{1}));
  EXPECT_EQ(p.tiers[2].victims, (std::vector<int>{4, 5}));

  // The memory-only node 2 is still in the injection order: nobody local drains its queue.
  EXPECT_EQ(p.injection_order, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(p.victim_count(), 5u);
}

TEST(StealPlan, AWorkerWhoseNodeHasOneLlcHasNoNodeTier) {
  const auto m = three_node_machine();
  const steal_plan p = make_steal_plan(m->lay, 5);
  EXPECT_EQ(p.node, 1);
  ASSERT_EQ(p.tiers.size(), 2u);
  EXPECT_EQ(p.tiers[0].level, steal_level::llc);
  EXPECT_EQ(p.tiers[0].victims, (std::vector<int>{4}));
  EXPECT_EQ(p.tiers[1].level, steal_level::remote);
  EXPECT_EQ(p.tiers[1].distance, 20);
  EXPECT_EQ(p.tiers[1].nodes, (std::vector<int>{0}));  // node 2 is at 20 too but has no workers
  EXPECT_EQ(p.tiers[1].victims, (std::vector<int>{0, 1, 2, 3}));
  // Nodes 0 and 2 are both at 20 from node 1: ties by logical index.
  EXPECT_EQ(p.injection_order, (std::vector<int>{1, 0, 2}));
}

TEST(StealPlan, AWorkerAloneInItsLlcStartsWithTheNodeTier) {
  // Node 0: LLC 0 = {0}, LLC 1 = {1, 2}; node 1: LLC 2 = {3}.
  const auto m = make_machine({{10, 21}, {21, 10}}, 3, {{0, 0}, {1, 0}, {1, 0}, {2, 1}});
  const steal_plan p = make_steal_plan(m->lay, 0);
  ASSERT_EQ(p.tiers.size(), 2u);
  EXPECT_EQ(p.tiers[0].level, steal_level::node);
  EXPECT_EQ(p.tiers[0].victims, (std::vector<int>{1, 2}));
  EXPECT_EQ(p.tiers[1].level, steal_level::remote);
  EXPECT_EQ(p.tiers[1].distance, 21);
  EXPECT_EQ(p.tiers[1].victims, (std::vector<int>{3}));
}

TEST(StealPlan, AnLlcSpanningTwoNodesListsItsWorkersOnceInTheLlcTier) {
  // LLC 0 holds worker 0 (node 0) and worker 1 (node 1); worker 2 is alone on node 1 in LLC 1.
  const auto m = make_machine({{10, 20}, {20, 10}}, 2, {{0, 0}, {0, 1}, {1, 1}});
  const steal_plan p = make_steal_plan(m->lay, 0);
  ASSERT_EQ(p.tiers.size(), 2u);
  EXPECT_EQ(p.tiers[0].level, steal_level::llc);
  EXPECT_EQ(p.tiers[0].nodes, (std::vector<int>{1}));
  EXPECT_EQ(p.tiers[0].victims, (std::vector<int>{1}));
  EXPECT_EQ(p.tiers[1].level, steal_level::remote);
  EXPECT_EQ(p.tiers[1].victims, (std::vector<int>{2}));  // worker 1 is not listed again
}

TEST(StealPlan, RemoteTierVictimsAreSortedWhenWorkersInterleaveNodes) {
  // A round-robin placement: worker w on node w mod 3, one LLC per node, all remote at 20.
  const auto m = make_machine({{10, 20, 20}, {20, 10, 20}, {20, 20, 10}}, 3,
                              {{0, 0}, {1, 1}, {2, 2}, {0, 0}, {1, 1}, {2, 2}});
  const steal_plan p = make_steal_plan(m->lay, 0);
  ASSERT_EQ(p.tiers.size(), 2u);
  EXPECT_EQ(p.tiers[0].victims, (std::vector<int>{3}));
  EXPECT_EQ(p.tiers[1].nodes, (std::vector<int>{1, 2}));
  EXPECT_EQ(p.tiers[1].victims, (std::vector<int>{1, 2, 4, 5}));
}

TEST(StealPlan, AnotherNodeAtTheLocalDistanceStillComesAfterTheOwnNode) {
  // Nodes 0 and 1 report distance 10 to each other (two memories of one cluster, as on a
  // KNL in SNC mode); node 2 is at 20. Worker 0 on node 0, worker 1 on node 1, worker 2 on 2.
  const auto m = make_machine({{10, 10, 20}, {10, 10, 20}, {20, 20, 10}}, 3, {{0, 0}, {1, 1}, {2, 2}});
  const steal_plan p = make_steal_plan(m->lay, 1);
  EXPECT_EQ(p.injection_order, (std::vector<int>{1, 0, 2}));
  ASSERT_EQ(p.tiers.size(), 2u);
  EXPECT_EQ(p.tiers[0].level, steal_level::remote);  // another node, even at distance 10
  EXPECT_EQ(p.tiers[0].distance, 10);
  EXPECT_EQ(p.tiers[0].victims, (std::vector<int>{0}));
  EXPECT_EQ(p.tiers[1].distance, 20);
  EXPECT_EQ(p.tiers[1].victims, (std::vector<int>{2}));
}

TEST(StealPlan, ASingleWorkerHasNoVictims) {
  const auto m = make_machine({{10}}, 1, {{0, 0}});
  const steal_plan p = make_steal_plan(m->lay, 0);
  EXPECT_TRUE(p.tiers.empty());
  EXPECT_EQ(p.victim_count(), 0u);
  EXPECT_EQ(p.injection_order, (std::vector<int>{0}));
}

TEST(StealPlan, MakeStealPlansGivesOnePlanPerWorkerInIdOrder) {
  const auto m = three_node_machine();
  const std::vector<steal_plan> plans = make_steal_plans(m->lay);
  ASSERT_EQ(plans.size(), 6u);
  for (int w = 0; w < 6; ++w) EXPECT_EQ(plans[static_cast<std::size_t>(w)].worker, w);
  EXPECT_EQ(plans[3].tiers[0].victims, (std::vector<int>{2}));
  EXPECT_EQ(plans[3].tiers[1].victims, (std::vector<int>{0, 1}));
}

// ---------------------------------------------------------------------------------------------
// The wrap walk inside a tier (I-STEAL-3).

TEST(VictimAt, WalksFromTheStartAndWrapsOnce) {
  steal_tier t;
  t.victims = {3, 5, 9, 12};
  const std::vector<int> from2 = {victim_at(t, 2, 0), victim_at(t, 2, 1), victim_at(t, 2, 2), victim_at(t, 2, 3)};
  EXPECT_EQ(from2, (std::vector<int>{9, 12, 3, 5}));
  // A start beyond the size is reduced modulo the size (6 = 4 + 2).
  EXPECT_EQ(victim_at(t, 6, 0), 9);
  EXPECT_EQ(victim_at(t, 6, 3), 5);
  // The largest start does not overflow: 2^64 - 1 = 3 (mod 4).
  const std::uint64_t big = ~std::uint64_t{0};
  const std::vector<int> from_big = {victim_at(t, big, 0), victim_at(t, big, 1), victim_at(t, big, 2),
                                     victim_at(t, big, 3)};
  EXPECT_EQ(from_big, (std::vector<int>{12, 3, 5, 9}));
}

TEST(VictimAt, EveryStartVisitsEveryVictimExactlyOnce) {
  steal_tier t;
  for (int v = 0; v < 37; ++v) t.victims.push_back(3 * v + 1);
  core::rng r(2024);
  for (int round = 0; round < 200; ++round) {
    const std::uint64_t start = r.next_u64();
    std::multiset<int> seen;
    for (std::size_t i = 0; i < t.victims.size(); ++i) seen.insert(victim_at(t, start, i));
    EXPECT_EQ(seen, std::multiset<int>(t.victims.begin(), t.victims.end())) << "start " << start;
    // Consecutive steps are consecutive victims in wrap order.
    for (std::size_t i = 0; i + 1 < t.victims.size(); ++i) {
      const auto a = std::find(t.victims.begin(), t.victims.end(), victim_at(t, start, i)) - t.victims.begin();
      const auto b = std::find(t.victims.begin(), t.victims.end(), victim_at(t, start, i + 1)) - t.victims.begin();
      EXPECT_EQ((a + 1) % static_cast<long>(t.victims.size()), b);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Real machines.

struct loaded {
  topo::topology topo;
  layout lay;
};

// One worker per core, worker id = logical core index.
std::unique_ptr<loaded> load_machine(const std::string& file) {
  auto m = std::make_unique<loaded>();
  m->topo = topo::topology::load(topo::source::parse(std::string("xml:") + NUMART_TOPOLOGY_DIR + "/" + file));
  std::vector<int> cores(static_cast<std::size_t>(m->topo.core_count()));
  for (int c = 0; c < m->topo.core_count(); ++c) cores[static_cast<std::size_t>(c)] = c;
  m->lay = make_layout(m->topo, cores);
  return m;
}

// On both machines below, `lstopo-no-graphics -i FILE -l` lists Core L#8n .. L#8n+7 under
// NUMANode L#n, and one L3 per node: node n's workers are 8n .. 8n+7.
std::vector<int> workers_of(const std::vector<int>& nodes) {
  std::vector<int> w;
  for (const int n : nodes) {
    for (int c = 0; c < 8; ++c) w.push_back(8 * n + c);
  }
  std::sort(w.begin(), w.end());
  return w;
}

std::vector<int> all_but(int first, int count, int self) {
  std::vector<int> w;
  for (int i = first; i < first + count; ++i) {
    if (i != self) w.push_back(i);
  }
  return w;
}

struct remote_row {
  int node;
  std::vector<std::vector<int>> tiers;  // node sets, nearest distance first
  std::vector<int> injection_order;
};

void check_rows(const loaded& m, const std::vector<int>& distances, const std::vector<remote_row>& rows,
                int offset_in_node) {
  for (const remote_row& row : rows) {
    const int thief = 8 * row.node + offset_in_node;
    SCOPED_TRACE("thief worker " + std::to_string(thief) + " on node " + std::to_string(row.node));
    const steal_plan p = make_steal_plan(m.lay, thief);
    EXPECT_EQ(p.node, row.node);
    ASSERT_EQ(p.tiers.size(), 1 + row.tiers.size());
    EXPECT_EQ(p.tiers[0].level, steal_level::llc);
    EXPECT_EQ(p.tiers[0].distance, 10);
    EXPECT_EQ(p.tiers[0].victims, all_but(8 * row.node, 8, thief));
    for (std::size_t k = 0; k < row.tiers.size(); ++k) {
      const steal_tier& t = p.tiers[k + 1];
      EXPECT_EQ(t.level, steal_level::remote);
      EXPECT_EQ(t.distance, distances[k]);
      EXPECT_EQ(t.nodes, row.tiers[k]);
      EXPECT_EQ(t.victims, workers_of(row.tiers[k]));
    }
    EXPECT_EQ(p.injection_order, row.injection_order);
  }
}

// 4x Opteron 6272, 8 nodes, SLIT 10/16/22. lstopo prints the matrix in the order
// 0 1 4 5 6 7 2 3 (logical indexes); the rows below are re-sorted by logical index by hand.
// A loader that reads the matrix in its object order gives different sets (e.g. for node 2
// it would return node 4's row: 16 to all but node 1).
TEST(StealPlanOpteron, EveryNodesTiersAndInjectionOrder) {
  const auto m = load_machine("64amd64-4p2n4ca2co.xml");
  ASSERT_EQ(m->lay.worker_count(), 64);
  const std::vector<remote_row> rows = {
      {0, {{1, 2, 4, 6}, {3, 5, 7}}, {0, 1, 2, 4, 6, 3, 5, 7}},
      {1, {{0, 3, 5, 6}, {2, 4, 7}}, {1, 0, 3, 5, 6, 2, 4, 7}},
      {2, {{0, 3, 4, 6}, {1, 5, 7}}, {2, 0, 3, 4, 6, 1, 5, 7}},
      {3, {{1, 2, 4, 7}, {0, 5, 6}}, {3, 1, 2, 4, 7, 0, 5, 6}},
      {4, {{0, 2, 3, 5, 6, 7}, {1}}, {4, 0, 2, 3, 5, 6, 7, 1}},
      {5, {{1, 4, 6, 7}, {0, 2, 3}}, {5, 1, 4, 6, 7, 0, 2, 3}},
      {6, {{0, 1, 2, 4, 5, 7}, {3}}, {6, 0, 1, 2, 4, 5, 7, 3}},
      {7, {{3, 4, 5, 6}, {0, 1, 2}}, {7, 3, 4, 5, 6, 0, 1, 2}},
  };
  check_rows(*m, {16, 22}, rows, 0);
  check_rows(*m, {16, 22}, rows, 5);
}

TEST(StealPlanOpteron, WorkerZeroVictimOrderWithAWrapWalk) {
  const auto m = load_machine("64amd64-4p2n4ca2co.xml");
  const steal_plan p = make_steal_plan(m->lay, 0);
  ASSERT_EQ(p.tiers.size(), 3u);
  // Tier at 16: nodes 1, 2, 4, 6 = workers 8-15, 16-23, 32-39, 48-55 (32 victims).
  const steal_tier& near = p.tiers[1];
  ASSERT_EQ(near.victims.size(), 32u);
  EXPECT_EQ(victim_at(near, 13, 0), 21);   // position 13: the 6th worker of node 2
  EXPECT_EQ(victim_at(near, 13, 2), 23);
  EXPECT_EQ(victim_at(near, 13, 3), 32);   // node 2 done, node 4 next
  EXPECT_EQ(victim_at(near, 13, 18), 55);  // position 31, the last
  EXPECT_EQ(victim_at(near, 13, 19), 8);   // wrapped to position 0
  EXPECT_EQ(victim_at(near, 13, 31), 20);  // position 12, just before the start
  // Tier at 22: nodes 3, 5, 7 = workers 24-31, 40-47, 56-63.
  const steal_tier& far = p.tiers[2];
  EXPECT_EQ(far.distance, 22);
  EXPECT_EQ(far.victims.front(), 24);
  EXPECT_EQ(far.victims.back(), 63);
  EXPECT_EQ(far.victims.size(), 24u);
}

// SGI UV 2000, 24 nodes, one 8-core package per node, distances 10/50/65/79: three remote
// tiers. Rows copied by hand from the lstopo matrix for four thieves' nodes.
TEST(StealPlanSgiUv, ThreeRemoteTiersForFourNodes) {
  const auto m = load_machine("192em64t-24n8c2t.xml");
  ASSERT_EQ(m->lay.worker_count(), 192);
  const std::vector<remote_row> rows = {
      {0,
       {{1}, {2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 17}, {10, 11, 14, 15, 18, 19, 20, 21, 22, 23}},
       {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 17, 10, 11, 14, 15, 18, 19, 20, 21, 22, 23}},
      {9,
       {{8}, {0, 1, 4, 5, 10, 11, 12, 13, 14, 15, 16, 17}, {2, 3, 6, 7, 18, 19, 20, 21, 22, 23}},
       {9, 8, 0, 1, 4, 5, 10, 11, 12, 13, 14, 15, 16, 17, 2, 3, 6, 7, 18, 19, 20, 21, 22, 23}},
      {14,
       {{15}, {2, 3, 6, 7, 8, 9, 10, 11, 12, 13, 22, 23}, {0, 1, 4, 5, 16, 17, 18, 19, 20, 21}},
       {14, 15, 2, 3, 6, 7, 8, 9, 10, 11, 12, 13, 22, 23, 0, 1, 4, 5, 16, 17, 18, 19, 20, 21}},
      {22,
       {{23}, {6, 7, 14, 15, 16, 17, 18, 19, 20, 21}, {0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13}},
       {22, 23, 6, 7, 14, 15, 16, 17, 18, 19, 20, 21, 0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13}},
  };
  check_rows(*m, {50, 65, 79}, rows, 3);
}

// ---------------------------------------------------------------------------------------------
// I-STEAL-1 on every topology of the test suite: each other worker exactly once, tiers in
// ladder order, each victim at its tier's distance, the injection order a permutation sorted
// by distance. A property check, not an expected-value table.

TEST(StealPlanAllTopologies, EveryPlanSatisfiesTheLadderInvariants) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(NUMART_TOPOLOGY_DIR)) {
    if (e.path().extension() == ".xml") files.push_back(e.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 19u);
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    std::unique_ptr<loaded> m;
    try {
      m = load_machine(f);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "cannot load " << f << ": " << e.what();
      continue;
    }
    const topo::topology& t = m->topo;
    const int workers = m->lay.worker_count();
    for (int w = 0; w < workers; ++w) {
      const steal_plan p = make_steal_plan(m->lay, w);
      const worker_place& me = m->lay.workers[static_cast<std::size_t>(w)];
      std::vector<int> seen(static_cast<std::size_t>(workers), 0);
      int previous_remote = -1;
      int last_rank = -1;  // 0 llc, 1 node, 2 remote: llc and node at most once, in that order
      for (const steal_tier& tier : p.tiers) {
        SCOPED_TRACE("worker " + std::to_string(w) + ", " + to_string(tier.level) + " tier at " +
                     std::to_string(tier.distance));
        ASSERT_FALSE(tier.victims.empty());
        ASSERT_TRUE(std::is_sorted(tier.victims.begin(), tier.victims.end()));
        const int r = tier.level == steal_level::llc ? 0 : tier.level == steal_level::node ? 1 : 2;
        if (r < 2) {
          ASSERT_GT(r, last_rank);
          ASSERT_EQ(tier.distance, t.distance[static_cast<std::size_t>(me.node)][static_cast<std::size_t>(me.node)]);
        } else {
          ASSERT_GT(tier.distance, previous_remote);
          previous_remote = tier.distance;
        }
        last_rank = r;
        std::set<int> nodes;
        for (const int v : tier.victims) {
          ASSERT_NE(v, w);
          ++seen[static_cast<std::size_t>(v)];
          const worker_place& vp = m->lay.workers[static_cast<std::size_t>(v)];
          nodes.insert(vp.node);
          if (r == 0) {
            ASSERT_EQ(vp.llc, me.llc);
          }
          if (r == 1) {
            ASSERT_EQ(vp.node, me.node);
            ASSERT_NE(vp.llc, me.llc);
          }
          if (r == 2) {
            ASSERT_NE(vp.node, me.node);
            ASSERT_NE(vp.llc, me.llc);
            ASSERT_EQ(t.distance[static_cast<std::size_t>(me.node)][static_cast<std::size_t>(vp.node)],
                      tier.distance);
          }
        }
        ASSERT_EQ(std::vector<int>(nodes.begin(), nodes.end()), tier.nodes);
      }
      for (int v = 0; v < workers; ++v) {
        ASSERT_EQ(seen[static_cast<std::size_t>(v)], v == w ? 0 : 1) << v;
      }

      ASSERT_EQ(p.injection_order.size(), static_cast<std::size_t>(t.node_count()));
      ASSERT_EQ(p.injection_order.front(), me.node);
      std::vector<int> sorted = p.injection_order;
      std::sort(sorted.begin(), sorted.end());
      for (int n = 0; n < t.node_count(); ++n) ASSERT_EQ(sorted[static_cast<std::size_t>(n)], n);
      const auto& row = t.distance[static_cast<std::size_t>(me.node)];
      for (std::size_t k = 2; k < p.injection_order.size(); ++k) {
        const int a = p.injection_order[k - 1];
        const int b = p.injection_order[k];
        ASSERT_TRUE(row[static_cast<std::size_t>(a)] < row[static_cast<std::size_t>(b)] ||
                    (row[static_cast<std::size_t>(a)] == row[static_cast<std::size_t>(b)] && a < b));
      }
    }
  }
}


// ---------------------------------------------------------------------------------------------
// I-STEAL-19: which sleeper a searcher of a preferred node wakes for remote work
// (delegate_remote_work), on the Opteron (node n's workers are 8n .. 8n+7).

struct delegate_view {
  const layout* lay;
  std::set<int> parked;           // idle workers
  std::set<int> preferred_nodes;  // nodes some group prefers
  bool idle(int w) const { return parked.count(w) != 0; }
  int node_of(int w) const { return lay->node_of(w); }
  bool node_preferred(int n) const { return preferred_nodes.count(n) != 0; }
};

std::set<int> every_worker(const layout& lay) {
  std::set<int> all;
  for (int w = 0; w < lay.worker_count(); ++w) all.insert(w);
  return all;
}

// Runs the policy for `thief`; `accept`: the candidates whose wake succeeds. Returns the
// chosen worker and fills `tried` with every candidate offered, in order.
int delegate(const loaded& m, int thief, const delegate_view& v, const std::set<int>& accept, std::vector<int>& tried) {
  tried.clear();
  return delegate_remote_work(make_steal_plan(m.lay, thief), v, [&](int w) {
    tried.push_back(w);
    return accept.count(w) != 0;
  });
}

TEST(DelegateRemoteWork, ASearcherOfANodeNoGroupPrefersTakesTheWorkItself) {
  const auto m = load_machine("64amd64-4p2n4ca2co.xml");
  delegate_view v{&m->lay, every_worker(m->lay), {0, 1, 2}};
  std::vector<int> tried;
  EXPECT_EQ(delegate(*m, 24, v, every_worker(m->lay), tried), -1);  // worker 24: node 3
  EXPECT_TRUE(tried.empty());
}

// Node 3's tiers: {1, 2, 4, 7} at 16, then {0, 5, 6} at 22. The first idle worker of the
// nearest tier on a node no group prefers is offered first; its own node's idle workers never.
TEST(DelegateRemoteWork, TheNearestIdleWorkerOfAnUnpreferredNodeIsWokenFirst) {
  const auto m = load_machine("64amd64-4p2n4ca2co.xml");
  struct row {
    std::set<int> idle;
    std::set<int> preferred;
    std::set<int> accept;
    int chosen;
    std::vector<int> tried;
  };
  const std::vector<row> rows = {
      // Everyone idle, only node 3 preferred: node 1's first worker.
      {every_worker(m->lay), {3}, every_worker(m->lay), 8, {8}},
      // Nodes 1 and 2 preferred too: node 4's first worker, the next node of the near tier.
      {every_worker(m->lay), {1, 2, 3}, every_worker(m->lay), 32, {32}},
      // The whole near tier preferred: the far tier, node 0 first.
      {every_worker(m->lay), {1, 2, 3, 4, 7}, every_worker(m->lay), 0, {0}},
      // Idle: node 3's own workers, node 1's (preferred), one of node 4 and one of node 0; the
      // wake of node 4's fails (another waker took it): node 0's.
      {{25, 26, 9, 33, 5}, {1, 3}, {5}, 5, {33, 5}},
      // Every wake fails: nobody, after every idle candidate nearest first.
      {{9, 40, 57, 17}, {3}, {}, -1, {9, 17, 57, 40}},
      // Nobody idle outside node 3.
      {{24, 25, 31}, {3}, every_worker(m->lay), -1, {}},
      // Every other node preferred: nobody to leave the work to.
      {every_worker(m->lay), {0, 1, 2, 3, 4, 5, 6, 7}, every_worker(m->lay), -1, {}},
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i));
    const delegate_view v{&m->lay, rows[i].idle, rows[i].preferred};
    std::vector<int> tried;
    EXPECT_EQ(delegate(*m, 27, v, rows[i].accept, tried), rows[i].chosen);
    EXPECT_EQ(tried, rows[i].tried);
  }
}

// Every node preferred by a group, all others idle and free of groups: each node's searcher
// wakes the first worker of the first node of its nearest tier.
TEST(DelegateRemoteWork, EveryNodesFirstCandidateOnTheOpteron) {
  const auto m = load_machine("64amd64-4p2n4ca2co.xml");
  const int first_near_node[] = {1, 0, 0, 1, 0, 1, 0, 3};  // StealPlanOpteron's rows
  for (int node = 0; node < 8; ++node) {
    SCOPED_TRACE("node " + std::to_string(node));
    const delegate_view v{&m->lay, every_worker(m->lay), {node}};
    std::vector<int> tried;
    EXPECT_EQ(delegate(*m, 8 * node + 2, v, every_worker(m->lay), tried), 8 * first_near_node[node]);
  }
}
}  // namespace
}  // namespace rt::policy
