// The pure derivations over a distance matrix (I-TOPO-4 .. I-TOPO-7), on hand-made matrices.
// Expected values are worked out by hand in the comments.
#include <gtest/gtest.h>

#include <vector>

#include "topology/distances.hpp"

namespace rt::topo {
namespace {

// A ring of four nodes: neighbours at 20, the opposite node at 30 (reached through either
// neighbour): Linux's glueless mesh.
const distance_matrix kRing = {
    {10, 20, 30, 20},
    {20, 10, 20, 30},
    {30, 20, 10, 20},
    {20, 30, 20, 10},
};

// Two islands {0,1} and {2,3}: 20 inside, 30 across, no node in between: a backplane.
const distance_matrix kIslands = {
    {10, 20, 30, 30},
    {20, 10, 30, 30},
    {30, 30, 10, 20},
    {30, 30, 20, 10},
};

// kIslands plus node 4 at 15 from everyone (a memory pool on the backplane).
const distance_matrix kIslandsAndPool = {
    {10, 20, 30, 30, 15},
    {20, 10, 30, 30, 15},
    {30, 30, 10, 20, 15},
    {30, 30, 20, 10, 15},
    {15, 15, 15, 15, 10},
};

TEST(check_matrix, accepts_a_slit_like_matrix) {
  EXPECT_EQ(check_matrix(kRing).verdict, matrix_verdict::ok);
  EXPECT_EQ(check_matrix({{10}}).verdict, matrix_verdict::ok);
  EXPECT_EQ(check_matrix({{10, 255}, {11, 10}}).verdict, matrix_verdict::ok);  // asymmetric is fine
}

TEST(check_matrix, names_the_first_bad_entry) {
  const matrix_check ragged = check_matrix({{10, 20}, {20}});
  EXPECT_EQ(ragged.verdict, matrix_verdict::not_square);
  EXPECT_EQ(ragged.from, 1);

  const matrix_check diagonal = check_matrix({{10, 20}, {20, 11}});
  EXPECT_EQ(diagonal.verdict, matrix_verdict::bad_diagonal);
  EXPECT_EQ(diagonal.from, 1);
  EXPECT_EQ(diagonal.to, 1);
  EXPECT_EQ(diagonal.value, 11);
  EXPECT_EQ(diagonal.reason(), "distance[1][1] is 11, the local distance must be 10");

  const matrix_check local_remote = check_matrix({{10, 10}, {10, 10}});
  EXPECT_EQ(local_remote.verdict, matrix_verdict::bad_remote);
  EXPECT_EQ(local_remote.to, 1);
  EXPECT_EQ(local_remote.reason(), "distance[0][1] is 10, remote distances must be 11..255");

  const matrix_check too_far = check_matrix({{10, 20}, {256, 10}});
  EXPECT_EQ(too_far.verdict, matrix_verdict::bad_remote);
  EXPECT_EQ(too_far.from, 1);
  EXPECT_EQ(too_far.to, 0);
  EXPECT_EQ(too_far.value, 256);
}

TEST(default_matrix, is_ten_local_twenty_remote) {
  EXPECT_EQ(default_matrix(1), (distance_matrix{{10}}));
  EXPECT_EQ(default_matrix(3), (distance_matrix{{10, 20, 20}, {20, 10, 20}, {20, 20, 10}}));
}

TEST(distinct_levels, sorts_and_deduplicates) {
  EXPECT_EQ(distinct_levels(kRing), (std::vector<int>{10, 20, 30}));
  EXPECT_EQ(distinct_levels(kIslandsAndPool), (std::vector<int>{10, 15, 20, 30}));
  EXPECT_EQ(distinct_levels({{10}}), (std::vector<int>{10}));
}

TEST(hop_counts, rank_the_distance_among_the_levels) {
  const std::vector<int> levels = {10, 20, 30};
  EXPECT_EQ(hop_counts(kRing, levels), (std::vector<std::vector<int>>{{0, 1, 2, 1}, {1, 0, 1, 2}, {2, 1, 0, 1}, {1, 2, 1, 0}}));
  // The pool node at 15 is the nearest remote tier for everyone.
  const std::vector<int> with_pool = {10, 15, 20, 30};
  EXPECT_EQ(hop_counts(kIslandsAndPool, with_pool)[0], (std::vector<int>{0, 2, 3, 3, 1}));
  EXPECT_EQ(hop_counts(kIslandsAndPool, with_pool)[4], (std::vector<int>{1, 1, 1, 1, 0}));
}

TEST(classify, follows_init_numa_topology_type) {
  EXPECT_EQ(classify({{10}}, {true}), topology_class::uma);
  EXPECT_EQ(classify(default_matrix(2), {true, true}), topology_class::direct);
  EXPECT_EQ(classify(default_matrix(8), std::vector<bool>(8, true)), topology_class::direct);
  EXPECT_EQ(classify(kRing, {true, true, true, true}), topology_class::glueless_mesh);
  EXPECT_EQ(classify(kIslands, {true, true, true, true}), topology_class::backplane);
}

// The review of 002 patch 1: max == LOCAL is a "not NUMA" test, not a "fully connected" test.
// A fully connected machine with a single remote distance that is not 20 is still direct.
TEST(classify, a_single_remote_tier_is_direct_whatever_its_value) {
  const distance_matrix x3950 = {{10, 26, 26, 26}, {26, 10, 26, 26}, {26, 26, 10, 26}, {26, 26, 26, 10}};
  EXPECT_EQ(classify(x3950, {true, true, true, true}), topology_class::direct);
}

// Only nodes with CPUs count, for the levels and as intermediaries (for_each_cpu_node_but).
TEST(classify, memory_only_nodes_are_neither_levels_nor_intermediaries) {
  EXPECT_EQ(classify(kIslandsAndPool, {true, true, true, true, false}), topology_class::backplane);
  EXPECT_EQ(classify(kIslandsAndPool, {true, true, true, true, true}), topology_class::glueless_mesh);
  // Three CPU nodes at 20 and a memory node at 15: two levels among the CPU nodes.
  const distance_matrix three_and_pool = {{10, 20, 20, 15}, {20, 10, 20, 15}, {20, 20, 10, 15}, {15, 15, 15, 10}};
  EXPECT_EQ(classify(three_and_pool, {true, true, true, false}), topology_class::direct);
  // A node with CPUs and a memory-only one (KNL flat mode): one level among CPU nodes.
  EXPECT_EQ(classify(default_matrix(2), {true, false}), topology_class::direct);
}

// weight = ((max - d) << 10) / (max - 10), by hand.
TEST(nearby_lists, two_node_islands_of_the_002_cover_letter) {
  // Four islands of two nodes: 20 inside an island, 40 elsewhere (256ppc-8n8s4t's shape).
  distance_matrix d(8, std::vector<int>(8, 40));
  for (int i = 0; i < 8; ++i) {
    d[static_cast<std::size_t>(i)][static_cast<std::size_t>(i)] = 10;
    d[static_cast<std::size_t>(i)][static_cast<std::size_t>(i ^ 1)] = 20;
  }
  const auto lists = nearby_lists(d, 40);
  ASSERT_EQ(lists.size(), 8u);
  for (int n = 0; n < 8; ++n) {
    const auto& l = lists[static_cast<std::size_t>(n)];
    ASSERT_EQ(l.size(), 1u) << n;
    EXPECT_EQ(l[0].node, n ^ 1);
    EXPECT_EQ(l[0].distance, 20);
    EXPECT_EQ(l[0].weight, 682u);  // (20 << 10) / 30 = 20480 / 30
  }
}

TEST(nearby_lists, four_node_islands_nearest_first_then_by_index) {
  // Two islands of four: 16 inside, 22 across; node 0 also has node 5 at 13 (hand-made).
  distance_matrix d(8, std::vector<int>(8, 22));
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      if (i == j) d[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = 10;
      else if (i / 4 == j / 4) d[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = 16;
    }
  }
  d[0][5] = 13;
  const auto lists = nearby_lists(d, 22);
  ASSERT_EQ(lists[0].size(), 4u);
  EXPECT_EQ(lists[0][0].node, 5);
  EXPECT_EQ(lists[0][0].weight, 768u);  // (9 << 10) / 12 = 9216 / 12
  for (std::size_t k = 1; k < 4; ++k) {
    EXPECT_EQ(lists[0][k].node, static_cast<int>(k));
    EXPECT_EQ(lists[0][k].weight, 512u);  // (6 << 10) / 12
  }
  // Row 5 is unchanged (the matrix is read from the row's node, like score_nearby_nodes).
  ASSERT_EQ(lists[5].size(), 3u);
  EXPECT_EQ(lists[5][0].node, 4);
  EXPECT_EQ(lists[5][1].node, 6);
  EXPECT_EQ(lists[5][2].node, 7);
}

TEST(nearby_lists, kunpeng_five_levels) {
  // 128arm-2pa2n8cluster4co's matrix (lstopo): max 33, span 23.
  const distance_matrix d = {{10, 16, 32, 33}, {16, 10, 25, 32}, {32, 25, 10, 16}, {33, 32, 16, 10}};
  const auto lists = nearby_lists(d, 33);
  ASSERT_EQ(lists[0].size(), 2u);  // node 3 is at the maximum
  EXPECT_EQ(lists[0][0].node, 1);
  EXPECT_EQ(lists[0][0].weight, 756u);  // (17 << 10) / 23 = 17408 / 23 = 756.8
  EXPECT_EQ(lists[0][1].node, 2);
  EXPECT_EQ(lists[0][1].weight, 44u);  // (1 << 10) / 23 = 44.5
  ASSERT_EQ(lists[1].size(), 3u);
  EXPECT_EQ(lists[1][0].node, 0);
  EXPECT_EQ(lists[1][1].node, 2);
  EXPECT_EQ(lists[1][1].weight, 356u);  // (8 << 10) / 23 = 356.2
  EXPECT_EQ(lists[1][2].node, 3);
  EXPECT_EQ(lists[1][2].weight, 44u);
}

TEST(nearby_lists, empty_when_every_remote_node_is_at_the_maximum) {
  for (const auto& l : nearby_lists(default_matrix(4), 20)) EXPECT_TRUE(l.empty());
  for (const auto& l : nearby_lists({{10}}, 10)) EXPECT_TRUE(l.empty());
}

}  // namespace
}  // namespace rt::topo
