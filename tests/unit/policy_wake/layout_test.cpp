// make_layout / default_worker_cores over the Opteron topology and a hand-built one.
// Expected values from lstopo-no-graphics -i 64amd64-4p2n4ca2co.xml: core 8n+i is on node n
// and L3 n; and from the hand-built topology's definition (fixtures.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "fixtures.hpp"
#include "policy/layout.hpp"

namespace rt::policy::test {
namespace {

std::vector<int> bits(const core::cpumask& m) {
  std::vector<int> out;
  m.for_each([&](std::size_t b) { out.push_back(static_cast<int>(b)); });
  return out;
}

TEST(Layout, OpteronFullPoolHasEightWorkersPerNodeAndLlc) {
  const topo::topology& t = opteron();
  const std::vector<int> cores = default_worker_cores(t, 0);
  ASSERT_EQ(cores.size(), 64u);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(cores[static_cast<std::size_t>(i)], i);

  const layout l = make_layout(t, cores);
  EXPECT_EQ(l.topo, &t);
  EXPECT_EQ(l.worker_count(), 64);
  ASSERT_EQ(l.node_count(), 8);
  ASSERT_EQ(l.llc_workers.size(), 8u);
  for (int n = 0; n < 8; ++n) {
    const std::vector<int> expect = {8 * n, 8 * n + 1, 8 * n + 2, 8 * n + 3,
                                     8 * n + 4, 8 * n + 5, 8 * n + 6, 8 * n + 7};
    EXPECT_EQ(bits(l.node_workers[static_cast<std::size_t>(n)]), expect) << "node " << n;
    EXPECT_EQ(bits(l.llc_workers[static_cast<std::size_t>(n)]), expect) << "llc " << n;
    EXPECT_EQ(l.node_capacity[static_cast<std::size_t>(n)], 8u * 1024u) << "node " << n;
  }
  EXPECT_EQ(l.workers[13].core, 13);
  EXPECT_EQ(l.workers[13].node, 1);
  EXPECT_EQ(l.workers[13].llc, 1);
  EXPECT_EQ(l.workers[13].package, 0);
  EXPECT_EQ(l.workers[20].package, 1);
  EXPECT_EQ(l.workers[63].package, 3);
  EXPECT_TRUE(l.share_llc(8, 15));
  EXPECT_FALSE(l.share_llc(7, 8));
  EXPECT_EQ(l.node_of(63), 7);
}

TEST(Layout, OpteronPartialPoolSpreadsRoundRobinOverNodes) {
  const topo::topology& t = opteron();
  // Round 0 takes the first core of nodes 0, 1, 2, 3, ...
  EXPECT_EQ(default_worker_cores(t, 4), (std::vector<int>{0, 8, 16, 24}));
  // ... all eight nodes, then round 1 starts again at node 0; sorted by core.
  EXPECT_EQ(default_worker_cores(t, 10), (std::vector<int>{0, 1, 8, 9, 16, 24, 32, 40, 48, 56}));

  const layout l = make_layout(t, default_worker_cores(t, 4));
  ASSERT_EQ(l.worker_count(), 4);
  for (int n = 0; n < 8; ++n) {
    const std::vector<int> expect = n < 4 ? std::vector<int>{n} : std::vector<int>{};
    EXPECT_EQ(bits(l.node_workers[static_cast<std::size_t>(n)]), expect) << "node " << n;
    EXPECT_EQ(l.node_capacity[static_cast<std::size_t>(n)], n < 4 ? 1024u : 0u) << "node " << n;
  }
  EXPECT_EQ(l.workers[3].core, 24);
  EXPECT_EQ(l.workers[3].node, 3);
}

TEST(Layout, OversubscribedPoolWrapsAroundTheRoundRobin) {
  const topo::topology& t = opteron();
  const std::vector<int> cores = default_worker_cores(t, 66);
  ASSERT_EQ(cores.size(), 66u);
  EXPECT_TRUE(std::is_sorted(cores.begin(), cores.end()));
  // Workers 64 and 65 reuse the first two cores of the round-robin: 0 and 8.
  EXPECT_EQ(std::count(cores.begin(), cores.end(), 0), 2);
  EXPECT_EQ(std::count(cores.begin(), cores.end(), 8), 2);
  EXPECT_EQ(std::count(cores.begin(), cores.end(), 1), 1);

  const layout l = make_layout(t, cores);
  EXPECT_EQ(l.node_capacity[0], 9u * 1024u);
  EXPECT_EQ(l.node_capacity[1], 9u * 1024u);
  EXPECT_EQ(l.node_capacity[2], 8u * 1024u);
  EXPECT_EQ(l.node_workers[0].count(), 9u);
}

TEST(Layout, HandBuiltSkipsDisallowedCoresAndCpulessNodes) {
  const topo::topology& t = hand_built();
  EXPECT_EQ(default_worker_cores(t, 0), (std::vector<int>{0, 1, 2, 3, 4, 6, 7}));
  // Round 0: node 0 -> 0, node 1 -> 4 (node 2 has no core); round 1: 1, 6.
  EXPECT_EQ(default_worker_cores(t, 3), (std::vector<int>{0, 1, 4}));
  EXPECT_EQ(default_worker_cores(t, 4), (std::vector<int>{0, 1, 4, 6}));
  EXPECT_EQ(default_worker_cores(t, 7), default_worker_cores(t, 0));

  const layout l = make_layout(t, {0, 0, 1, 4, 6});
  ASSERT_EQ(l.node_count(), 3);
  EXPECT_EQ(bits(l.node_workers[0]), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(bits(l.node_workers[1]), (std::vector<int>{3, 4}));
  EXPECT_TRUE(l.node_workers[2].empty());
  EXPECT_EQ(bits(l.llc_workers[0]), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(bits(l.llc_workers[1]), (std::vector<int>{3}));
  EXPECT_EQ(bits(l.llc_workers[2]), (std::vector<int>{4}));
  EXPECT_EQ(l.node_capacity, (std::vector<std::uint32_t>{3072, 2048, 0}));
  EXPECT_EQ(l.workers[4].package, 1);
}

TEST(Layout, BadWorkerCountsAreConfigErrors) {
  EXPECT_THROW(default_worker_cores(hand_built(), -1), topo::topology_error);

  topo::topology none_allowed;
  none_allowed.source_desc = "none-allowed";
  none_allowed.nodes.resize(1);
  topo::core c;
  c.allowed = false;
  none_allowed.cores.push_back(c);
  none_allowed.llcs.resize(1);
  EXPECT_THROW(default_worker_cores(none_allowed, 0), topo::topology_error);
}

}  // namespace
}  // namespace rt::policy::test
