// Synthetic topologies, with and without a user distance matrix: the tree-derived parts of the
// model (cores, LLC domains, packages, node membership) on shapes chosen to hit each rule.
// Expected values are read off the description by hand (hwloc numbers synthetic PUs in order).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace rt::topo {
namespace {

topology load(const std::string& spec) { return topology::load(source::parse(spec)); }

TEST(synthetic, two_packages_without_distances) {
  const topology t = load("synthetic:pack:2 [numa] core:2 pu:1");
  EXPECT_FALSE(t.is_host);
  EXPECT_EQ(t.source_desc, "synthetic:pack:2 [numa] core:2 pu:1");
  EXPECT_EQ(t.packages, 2);
  EXPECT_EQ(t.pus, 4);
  ASSERT_EQ(t.node_count(), 2);
  EXPECT_EQ(t.nodes[0].pus, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(t.nodes[1].pus, (std::vector<unsigned>{2, 3}));
  EXPECT_EQ(t.nodes[1].cores, (std::vector<int>{2, 3}));
  EXPECT_FALSE(t.has_distance_matrix);
  EXPECT_EQ(t.distance, (std::vector<std::vector<int>>{{10, 20}, {20, 10}}));
  EXPECT_EQ(t.distance_levels, (std::vector<int>{10, 20}));
  EXPECT_EQ(t.max_distance, 20);
  EXPECT_EQ(t.klass, topology_class::direct);
  ASSERT_EQ(t.core_count(), 4);
  EXPECT_EQ(t.cores[3].package, 1);
  EXPECT_EQ(t.cores[3].node, 1);
  EXPECT_EQ(t.cores[3].pus, (std::vector<unsigned>{3}));
  // No cache in the description: one LLC domain per package.
  ASSERT_EQ(t.llcs.size(), 2u);
  EXPECT_EQ(t.llcs[1].cores, (std::vector<int>{2, 3}));
  EXPECT_EQ(t.llcs[1].node, 1);
  EXPECT_EQ(t.allowed_pus, (std::vector<unsigned>{0, 1, 2, 3}));
  EXPECT_FALSE(t.bind_current_thread(0));  // virtual-topology mode binds nothing
}

// The seeds' 8-node machine (64amd64-4p2n4ca2co's matrix in logical order, see xml_bars_test):
// the user's matrix goes through hwloc and comes back in logical order.
TEST(synthetic, eight_nodes_with_the_seed_matrix) {
  const std::vector<std::vector<int>> m = {
      {10, 16, 16, 22, 16, 22, 16, 22}, {16, 10, 22, 16, 22, 16, 16, 22}, {16, 22, 10, 16, 16, 22, 16, 22},
      {22, 16, 16, 10, 16, 22, 22, 16}, {16, 22, 16, 16, 10, 16, 16, 16}, {22, 16, 22, 22, 16, 10, 16, 16},
      {16, 16, 16, 22, 16, 16, 10, 16}, {22, 22, 22, 16, 16, 16, 16, 10}};
  std::string spec = "synthetic:pack:4 group:2 [numa] l3:1 core:2 pu:1;distances:";
  for (std::size_t i = 0; i < m.size(); ++i) {
    for (std::size_t j = 0; j < m.size(); ++j) spec += (i + j == 0 ? "" : ",") + std::to_string(m[i][j]);
  }
  const topology t = load(spec);
  EXPECT_EQ(t.source_desc, spec);
  EXPECT_EQ(t.node_count(), 8);
  EXPECT_EQ(t.packages, 4);
  EXPECT_EQ(t.llcs.size(), 8u);
  EXPECT_TRUE(t.has_distance_matrix);
  EXPECT_EQ(t.distance, m);
  EXPECT_EQ(t.distance_levels, (std::vector<int>{10, 16, 22}));
  EXPECT_EQ(t.max_distance, 22);
  EXPECT_EQ(t.klass, topology_class::glueless_mesh);  // 0-3 at 22, both 16 from node 1
  EXPECT_EQ(t.hops[0], (std::vector<int>{0, 1, 1, 2, 1, 2, 1, 2}));
  // Row 4: everyone but itself and node 1 (22) at 16, by index; ((22 - 16) << 10) / 12 = 512.
  ASSERT_EQ(t.nearby[4].size(), 6u);
  EXPECT_EQ(t.nearby[4][0].node, 0);
  EXPECT_EQ(t.nearby[4][1].node, 2);
  EXPECT_EQ(t.nearby[4][5].node, 7);
  EXPECT_EQ(t.nearby[4][3].weight, 512u);
  ASSERT_EQ(t.nearby[7].size(), 4u);
  EXPECT_EQ(t.nearby[7][0].node, 3);
}

TEST(synthetic, cluster_on_die_backplane) {
  const topology t = load("synthetic:pack:2 group:2 [numa] core:1 pu:1;distances:10,21,31,31,21,10,31,31,31,31,10,21,31,31,21,10");
  EXPECT_EQ(t.klass, topology_class::backplane);
  EXPECT_EQ(t.distance_levels, (std::vector<int>{10, 21, 31}));
  ASSERT_EQ(t.nearby[2].size(), 1u);
  EXPECT_EQ(t.nearby[2][0].node, 3);
  EXPECT_EQ(t.nearby[2][0].weight, 487u);  // ((31 - 21) << 10) / (31 - 10) = 10240 / 21 = 487.6
}

TEST(synthetic, one_node_with_a_one_entry_matrix) {
  const topology t = load("synthetic:pack:1 [numa] core:2 pu:2;distances:10");
  EXPECT_EQ(t.distance, (std::vector<std::vector<int>>{{10}}));
  EXPECT_EQ(t.klass, topology_class::uma);
  EXPECT_EQ(t.core_count(), 2);
  EXPECT_EQ(t.cores[1].pus, (std::vector<unsigned>{2, 3}));
}

TEST(synthetic, pus_without_cores_are_cores) {
  const topology t = load("synthetic:pack:2 pu:2");
  EXPECT_EQ(t.node_count(), 1);
  ASSERT_EQ(t.core_count(), 4);
  for (int c = 0; c < 4; ++c) EXPECT_EQ(t.cores[static_cast<std::size_t>(c)].pus, (std::vector<unsigned>{static_cast<unsigned>(c)}));
  EXPECT_EQ(t.cores[2].package, 1);
  EXPECT_EQ(t.llcs.size(), 2u);  // per package
}

TEST(synthetic, llc_is_the_highest_cache_level) {
  const topology l3 = load("synthetic:pack:2 [numa] l3:2 core:2 pu:2");
  ASSERT_EQ(l3.llcs.size(), 4u);
  EXPECT_EQ(l3.llcs[3].cores, (std::vector<int>{6, 7}));
  EXPECT_EQ(l3.llcs[3].node, 1);
  EXPECT_EQ(l3.cores[5].llc, 2);
  const topology l2 = load("synthetic:pack:2 [numa] l2:2 l1:1 core:1 pu:1");
  EXPECT_EQ(l2.llcs.size(), 4u);  // one L2 per core, the L1s below them do not count
}

// I-TOPO-3: an L3 shared by two nodes (SNC-like) is two LLC domains.
TEST(synthetic, an_llc_spanning_nodes_is_split_per_node) {
  const topology t = load("synthetic:pack:2 l3:1 group:2 [numa] core:2 pu:1");
  ASSERT_EQ(t.node_count(), 4);
  ASSERT_EQ(t.llcs.size(), 4u);
  for (int l = 0; l < 4; ++l) {
    EXPECT_EQ(t.llcs[static_cast<std::size_t>(l)].node, l);
    EXPECT_EQ(t.llcs[static_cast<std::size_t>(l)].cores, (std::vector<int>{2 * l, 2 * l + 1}));
  }
}

// I-TOPO-2: memory attached above the packages covers every PU; the cores go to the most
// local node and the machine-wide one is memory-only.
TEST(synthetic, machine_wide_memory_is_memory_only) {
  const topology t = load("synthetic:[numa] pack:2 [numa] core:1 pu:1");
  ASSERT_EQ(t.node_count(), 3);
  int memory_only = 0;
  for (const numa_node& n : t.nodes) {
    if (n.cpuless) {
      ++memory_only;
      EXPECT_TRUE(n.pus.empty());
      EXPECT_TRUE(n.cores.empty());
    } else {
      EXPECT_EQ(n.pus.size(), 1u);
    }
  }
  EXPECT_EQ(memory_only, 1);
  EXPECT_NE(t.cores[0].node, t.cores[1].node);
  EXPECT_EQ(t.klass, topology_class::direct);  // two CPU nodes, default 10/20
}

}  // namespace
}  // namespace rt::topo
