// Periodic balance of the node injection queues (runtime/policy/node_balance.hpp,
// docs/design/stealing.md §3). Expected values are worked by hand from the formulas in the
// header, with kCapacityScale = 1024 (one worker); each row shows its arithmetic.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "policy/node_balance.hpp"

namespace rt::policy {
namespace {

using out = node_balance_outcome;

struct balance_row {
  const char* name;
  std::vector<std::uint64_t> queued;
  std::vector<std::uint64_t> running;
  std::vector<std::uint32_t> capacity;
  std::int64_t pct;
  out outcome;
  int busiest;
  int idlest;
  std::uint64_t tasks;
};

const std::vector<balance_row> kRows = {
    // Nothing queued anywhere: nothing the balancer could move.
    {"nothing queued", {0, 0}, {4096, 0}, {4096, 4096}, 125, out::nothing_queued, -1, -1, 0},
    // L0 = 2048 + 1 * 1024 = 3072 <= C0 = 4096: node 0's workers will run it.
    {"busiest within its capacity", {1, 0}, {2048, 0}, {4096, 4096}, 125, out::not_overloaded, 0, -1, 0},
    // L0 = 4096 + 2048 = 6144 > 4096; node 1: 4096 - 3500 = 596 < 1024 idle: no whole worker.
    {"no whole idle worker elsewhere", {2, 0}, {4096, 3500}, {4096, 4096}, 125, out::no_idle_capacity, 0, -1, 0},
    // Node 0: 16 workers, L0 = 16384 + 1024 = 17408; node 1: 8 workers, L1 = 7168 (1024 idle).
    // 100 * 17408 * 8192 = 14260633600 <= 125 * 7168 * 16384 = 14680064000.
    {"within imbalance_pct 125", {1, 0}, {16384, 7168}, {16384, 8192}, 125, out::within_imbalance_pct, 0, 1, 0},
    // Same loads, pct 100: 14260633600 > 100 * 7168 * 16384 = 11744051200.
    // Equalise (17408 * 8192 - 7168 * 16384) / (16384 + 8192) = 25165824 / 24576 = 1024 -> 1
    // task; queued 1; idle (8192 - 7168) / 1024 = 1.  -> 1.
    {"same loads with imbalance_pct 100", {1, 0}, {16384, 7168}, {16384, 8192}, 100, out::move, 0, 1, 1},
    // L0 = 3073 + 1024 = 4097 > 4096; L1 = 3072 (1024 idle). 100 * 4097 = 409700 > 125 * 3072
    // = 384000. Equalise (4097 - 3072) / 2 = 512 < 1024: moving one task overshoots.
    {"half the imbalance below one task", {1, 0}, {3073, 3072}, {4096, 4096}, 125, out::below_one_task, 0, 1, 0},
    // L0 = 4096 + 8 * 1024 = 12288; L1 = 0. Equalise 12288 / 2 = 6144 -> 6; queued 8;
    // idle 4096 / 1024 = 4.  -> 4: the idle node is filled, not overfilled.
    {"idle capacity caps the move", {8, 0}, {4096, 0}, {4096, 4096}, 125, out::move, 0, 1, 4},
    // L0 = 1024 + 4 * 1024 = 5120; L1 = 0. Equalise 5120 / 2 = 2560 -> 2; queued 4; idle 4.
    {"half the imbalance caps the move", {4, 0}, {1024, 0}, {4096, 4096}, 125, out::move, 0, 1, 2},
    // L0 = 4096 + 1024 = 5120; L1 = 0. Equalise 2560 -> 2; queued 1 -> 1.
    {"queued tasks cap the move", {1, 0}, {4096, 0}, {4096, 4096}, 125, out::move, 0, 1, 1},
    // Node 0 has no workers and 6 queued: L0 = 6144, infinitely loaded per capacity.
    // L1 = 1024, idle 3. Equalise (6144 * 4096 - 1024 * 0) / (0 + 4096) = 6144 -> 6; queued
    // 6; idle 3.  -> 3.
    {"node without workers", {6, 0}, {0, 1024}, {0, 4096}, 125, out::move, 0, 1, 3},
    // Per capacity: node 0 = (8192 + 4096) / 8192 = 1.5, node 1 = (2048 + 2048) / 2048 = 2.0:
    // node 1 is busiest although node 0 carries more load. Node 2 idle (L 0, C 4096).
    // Equalise (4096 * 4096 - 0) / (2048 + 4096) = 16777216 / 6144 = 2730 -> 2; queued 2.
    {"busiest per capacity, not per load", {4, 2, 0}, {8192, 2048, 0}, {8192, 2048, 4096}, 125, out::move, 1, 2, 2},
    // Node 0 = (2048 + 1024) / 2048 = 1.5 and node 1 = (4096 + 2048) / 4096 = 1.5: a tie, the
    // higher load (node 1, 6144) is busiest. Equalise 6144 * 4096 / 8192 = 3072 -> 3; queued 2.
    {"busiest tie goes to the higher load", {1, 2, 0}, {2048, 4096, 0}, {2048, 4096, 4096}, 125, out::move, 1, 2, 2},
    // Nodes 1 and 2 both idle: the lower index. Equalise 8192 / 2 = 4096 -> 4; queued 4; idle 4.
    {"idlest tie goes to the lower index", {4, 0, 0}, {4096, 0, 0}, {4096, 4096, 4096}, 125, out::move, 0, 1, 4},
    // Node 1 (1 worker, 100 busy: 924 idle) is the least loaded per capacity but has no whole
    // idle worker; node 2 (8 workers, 1024 busy) is chosen. L0 = 4096 + 4096 = 8192.
    // 100 * 8192 * 8192 > 125 * 1024 * 4096. Equalise (8192 * 8192 - 1024 * 4096) / (4096 +
    // 8192) = 62914560 / 12288 = 5120 -> 5; queued 4 -> 4; idle 7.
    {"idlest needs a whole idle worker", {4, 0, 0}, {4096, 100, 1024}, {4096, 1024, 8192}, 125, out::move, 0, 2, 4},
    // Only a node with queued tasks can be the busiest: node 1 runs hotter (4096 of 4096) but
    // has nothing queued; node 0 (L = 1024 + 1024 = 2048 of 4096) is chosen and is within
    // its capacity.
    {"busiest must have queued tasks", {1, 0, 0}, {1024, 4096, 0}, {4096, 4096, 4096}, 125, out::not_overloaded, 0,
     -1, 0},
};

TEST(NodeBalance, ExpectedValueTable) {
  for (const balance_row& r : kRows) {
    SCOPED_TRACE(r.name);
    const node_balance_decision d = decide_node_balance(r.queued, r.running, r.capacity, r.pct);
    EXPECT_STREQ(to_string(d.outcome), to_string(r.outcome));
    EXPECT_EQ(d.busiest, r.busiest);
    EXPECT_EQ(d.idlest, r.idlest);
    EXPECT_EQ(d.tasks, r.tasks);
  }
}

TEST(NodeBalance, HugeQueuesDoNotOverflow) {
  // 2^60 queued tasks: L0 = 2^70 in kCapacityScale units. Equalise (L0 * 4096) / 8192 =
  // 2^69 -> 2^59 tasks; idle capacity 4096 / 1024 = 4 caps it.
  const std::uint64_t huge = std::uint64_t{1} << 60;
  const node_balance_decision d = decide_node_balance(std::vector<std::uint64_t>{huge, 0},
                                                      std::vector<std::uint64_t>{4096, 0},
                                                      std::vector<std::uint32_t>{4096, 4096}, 125);
  EXPECT_EQ(d.outcome, out::move);
  EXPECT_EQ(d.tasks, 4u);
}

// I-STEAL-12 on random snapshots: a move never takes more than is queued, never overfills the
// idlest node, never leaves the busiest less loaded per capacity than the idlest (no
// ping-pong), and only happens above imbalance_pct.
TEST(NodeBalance, MovesNeverOvershootOnRandomSnapshots) {
  core::rng r(7);
  int moves = 0;
  for (int round = 0; round < 20000; ++round) {
    const std::size_t nodes = 2 + r.next_below(6);
    std::vector<std::uint64_t> queued(nodes), running(nodes);
    std::vector<std::uint32_t> cap(nodes);
    for (std::size_t n = 0; n < nodes; ++n) {
      const std::uint32_t workers = static_cast<std::uint32_t>(r.next_below(9));  // 0..8
      cap[n] = workers * 1024;
      running[n] = cap[n] == 0 ? 0 : r.next_below(cap[n] + 1);
      queued[n] = r.next_below(3) == 0 ? 0 : r.next_below(20);
    }
    const std::int64_t pct = 100 + static_cast<std::int64_t>(r.next_below(101));
    const node_balance_decision d = decide_node_balance(queued, running, cap, pct);
    if (d.outcome != out::move) {
      EXPECT_EQ(d.tasks, 0u);
      continue;
    }
    ++moves;
    const auto b = static_cast<std::size_t>(d.busiest);
    const auto i = static_cast<std::size_t>(d.idlest);
    ASSERT_NE(b, i);
    ASSERT_GT(d.tasks, 0u);
    ASSERT_LE(d.tasks, queued[b]);
    const std::uint64_t lb = running[b] + 1024 * queued[b];
    const std::uint64_t li = running[i] + 1024 * queued[i];
    // Above imbalance_pct before the move (values are small: 64-bit is exact here).
    ASSERT_GT(100 * lb * cap[i], static_cast<std::uint64_t>(pct) * li * cap[b]);
    const std::uint64_t lb_after = lb - 1024 * d.tasks;
    const std::uint64_t li_after = li + 1024 * d.tasks;
    ASSERT_LE(li_after, cap[i]);
    if (cap[b] > 0) {
      ASSERT_GE(lb_after * cap[i], li_after * cap[b]);
    }
  }
  EXPECT_GT(moves, 1000);  // the property was exercised, not vacuously true
}

}  // namespace
}  // namespace rt::policy
