// The deterministic replay of seed 002's experiment, policy only (docs/design/numa-scoring.md
// §3 describes the model and its limits: it is a model of what happens between two balancer
// periods on a real host, not a measurement of one).
//
// 8-node Opteron (64amd64-4p2n4ca2co, 8 workers a node). Two groups of 32 tasks (four nodes'
// worth), whose pages start spread over 4 random nodes each. Every period:
//   1. each task takes kSamplesPerTask samples of random pages of its group: the fault is
//      recorded on (page's node, task's node); a page migrates to the accessing node once
//      numa_migrate_min_samples consecutive samples of it came from that node and that node is
//      one of the group's active nodes (the two-stage filter of should_numa_migrate_memory and
//      its active-node check, as numa/balancer.cpp's migrate_if_settled does, I-BAL-4);
//   2. the period is folded into the group's decayed faults, balance_pass() decides; as the
//      balancer applies it, the group's preferred node is the decision's best node (002 patch
//      3 stores max_group_nid) and its home the capacity-checked node;
//   3. the tasks are placed again, one at a time alternating between the groups, each on the
//      node with a free worker that its group ranks highest (the home first, then by the
//      group's raw score with the pull: the kernel's task_numa_migrate() looking for a better
//      node with room);
//   4. on the full machine a task can reach a node held by the other group only by a swap, as
//      task_numa_compare() does: a task of one group on node x and a task of the other on node
//      y change places when group_weight(a, y) - group_weight(a, x) + group_weight(b, x) -
//      group_weight(b, y) > 0 (weights: kNumaScoreScale * score / total, the pull included).
//      Each swap raises the summed weight, so this ends.
// Settled: both groups' active sets are islands around their preferred node (every active node
// within distance 16 of it), disjoint, and stay so to the end of the run. Four-node sets with
// every PAIR within 16 cannot be disjoint on this topology (its only such sets, {0,2,4,6} and
// {4,5,6,7}, share two nodes), so an island is measured from the group's preferred node, and
// the groups are four nodes wide (32 tasks), as in the seed's "2 4-node wide instances".
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "core/rng.hpp"
#include "policy/layout.hpp"
#include "policy/numa_score.hpp"
#include "topologies.hpp"

namespace rt::policy {
namespace {

constexpr int kGroups = 2;  // the seed's two instances; step 4 swaps between exactly two
constexpr int kTasks = 32;
constexpr int kPages = 256;
constexpr int kInitialNodes = 4;
constexpr int kSamplesPerTask = 8;
constexpr int kPeriods = 150;
constexpr int kIslandDistance = 16;

struct page {
  int node = 0;
  int last = -1;   // node of the last sample (the kernel's last_cpupid)
  int streak = 0;  // consecutive samples from `last`
};

struct group_state {
  std::vector<page> pages;
  std::vector<int> tasks;  // node of each task
  numa_faults faults;
  int home = -1;
  int preferred = -1;
  core::cpumask active;
};

bool is_island(const numa_scorer& sc, const core::cpumask& m, int home) {
  bool ok = !m.empty() && home >= 0;
  m.for_each([&](std::size_t a) {
    if (sc.distance(static_cast<int>(a), home) > kIslandDistance) ok = false;
  });
  return ok;
}

bool settled(const numa_scorer& sc, const std::vector<group_state>& g) {
  return is_island(sc, g[0].active, g[0].preferred) && is_island(sc, g[1].active, g[1].preferred) &&
         (g[0].active & g[1].active).empty();
}

// Places every task again (steps 3 and 4); `slots` counts free workers per node.
void place_tasks(const numa_scorer& sc, std::vector<group_state>& groups, int period, const tun::settings& s) {
  std::vector<int> slots(static_cast<std::size_t>(sc.node_count()));
  for (int n = 0; n < sc.node_count(); ++n) slots[static_cast<std::size_t>(n)] = static_cast<int>(sc.capacity(n) / kCapacityScale);
  std::vector<std::vector<int>> rank(groups.size());
  std::vector<std::vector<std::int64_t>> weight(groups.size());
  std::vector<std::uint64_t> scores;
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    group_state& g = groups[gi];
    sc.raw_scores(g.faults.mem, scores);
    sc.pull_toward(g.home, scores, s);  // the kernel ranks nodes by group_weight, pull included
    for (const std::uint64_t sn : scores)
      weight[gi].push_back(g.faults.total_mem == 0 ? 0 : static_cast<std::int64_t>(sn * kNumaScoreScale / g.faults.total_mem));
    for (int n = 0; n < sc.node_count(); ++n) rank[gi].push_back(n);
    std::sort(rank[gi].begin(), rank[gi].end(), [&](int a, int b) {
      if ((a == g.home) != (b == g.home)) return a == g.home;
      return sc.ahead(scores[static_cast<std::size_t>(a)], a, scores[static_cast<std::size_t>(b)], b, g.home);
    });
  }
  for (int t = 0; t < kTasks; ++t) {
    for (std::size_t k = 0; k < groups.size(); ++k) {
      const std::size_t gi = (k + static_cast<std::size_t>(period)) % groups.size();
      for (const int n : rank[gi]) {
        if (slots[static_cast<std::size_t>(n)] > 0) {
          --slots[static_cast<std::size_t>(n)];
          groups[gi].tasks[static_cast<std::size_t>(t)] = n;
          break;
        }
      }
    }
  }
  // Step 4: swaps between the two groups while one improves their summed weight.
  static_assert(kGroups == 2, "step 4 swaps tasks between two groups");
  for (bool swapped = true; swapped;) {
    swapped = false;
    for (int& a : groups[0].tasks) {
      for (int& b : groups[1].tasks) {
        const auto x = static_cast<std::size_t>(a);
        const auto y = static_cast<std::size_t>(b);
        if (x != y && weight[0][y] - weight[0][x] + weight[1][x] - weight[1][y] > 0) {
          std::swap(a, b);
          swapped = true;
        }
      }
    }
  }
}

// Returns the first period from which the groups stay settled to the end, or -1.
int replay(const numa_scorer& sc, std::uint64_t seed, const tun::settings& s, std::vector<group_state>& groups) {
  core::rng r(seed);
  const int nodes = sc.node_count();
  groups.assign(kGroups, group_state{});
  std::vector<int> slots(static_cast<std::size_t>(nodes), 8);
  for (group_state& g : groups) {
    std::vector<int> chosen;
    while (static_cast<int>(chosen.size()) < kInitialNodes) {
      const int n = static_cast<int>(r.next_below(static_cast<std::uint64_t>(nodes)));
      if (std::find(chosen.begin(), chosen.end(), n) == chosen.end()) chosen.push_back(n);
    }
    g.pages.resize(kPages);
    for (int p = 0; p < kPages; ++p) g.pages[static_cast<std::size_t>(p)].node = chosen[static_cast<std::size_t>(p % kInitialNodes)];
    // First touch: tasks start on the nodes their memory is on, overflow to any free node.
    g.tasks.resize(kTasks);
    for (int t = 0; t < kTasks; ++t) {
      int n = chosen[static_cast<std::size_t>(t % kInitialNodes)];
      while (slots[static_cast<std::size_t>(n)] == 0) n = (n + 1) % nodes;
      --slots[static_cast<std::size_t>(n)];
      g.tasks[static_cast<std::size_t>(t)] = n;
    }
    g.faults = numa_faults(nodes);
    g.active = core::cpumask(static_cast<std::size_t>(nodes));
  }

  int settled_since = -1;
  numa_faults period(nodes);
  std::int64_t scan_ms = s.t.numa_scan_period_min_ms;
  for (int p = 0; p < kPeriods; ++p) {
    std::vector<numa_group_input> in(groups.size());
    std::vector<std::uint64_t> load(static_cast<std::size_t>(nodes), 0);
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      group_state& g = groups[gi];
      period.clear();
      numa_locality_counts c;
      for (const int cpu : g.tasks) {
        load[static_cast<std::size_t>(cpu)] += kCapacityScale;
        for (int k = 0; k < kSamplesPerTask; ++k) {
          page& pg = g.pages[static_cast<std::size_t>(r.next_below(kPages))];
          period.add_sample(pg.node, cpu);
          (pg.node == cpu ? c.local : c.remote) += 1;
          pg.streak = pg.last == cpu ? pg.streak + 1 : 1;
          pg.last = cpu;
          if (pg.streak >= s.t.numa_migrate_min_samples && (g.active.empty() || g.active.test(static_cast<std::size_t>(cpu))))
            pg.node = cpu;
        }
      }
      numa_fold_period(g.faults, period, s);
      in[gi] = {&g.faults, {}, g.home, g.preferred, static_cast<std::uint64_t>(kTasks) * kCapacityScale, c};
    }
    const numa_pass_result res = balance_pass(sc, {in, load, scan_ms}, s);
    scan_ms = res.scan_period_ms;
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      groups[gi].home = res.groups[gi].preferred;
      groups[gi].preferred = res.groups[gi].best;
      groups[gi].active = res.groups[gi].active;
    }
    if (settled(sc, groups)) {
      if (settled_since < 0) settled_since = p;
    } else {
      settled_since = -1;
    }
    place_tasks(sc, groups, p, s);
  }
  return settled_since;
}

std::string nodes_of(const core::cpumask& m) {
  std::string out;
  m.for_each([&](std::size_t n) { out += (out.empty() ? "" : ",") + std::to_string(n); });
  return out;
}

int settled_seeds(const numa_scorer& sc, const tun::settings& s, bool print) {
  int ok = 0;
  std::vector<group_state> groups;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    const int since = replay(sc, seed, s, groups);
    if (print) {
      std::printf("seed %2llu: settled from period %3d: group 0 on {%s} around %d, group 1 on {%s} around %d\n",
                  static_cast<unsigned long long>(seed), since, nodes_of(groups[0].active).c_str(), groups[0].preferred,
                  nodes_of(groups[1].active).c_str(), groups[1].preferred);
    }
    if (since >= 0) ++ok;
  }
  return ok;
}

// Issue 6: both groups on islands of adjacent nodes for 50 of 50 seeds. The policy is
// deterministic, so the count is exact. The seed's series reached about 8 of 10 with patches
// 1-2 and 10 of 10 with 1-4 (numa-scoring.md section 3).
TEST(NumaReplay, TwoGroupsSettleOnSeparateIslands) {
  const numa_scorer sc(test::machine("64amd64-4p2n4ca2co"));
  const int ok = settled_seeds(sc, tun::settings{}, true);
  std::printf("settled: %d of 50 seeds\n", ok);
  EXPECT_EQ(ok, 50);
}

// I-NUMA-12: the pull is what untangles the last seeds. Without it (the seed's patches 1-2
// only, NO_NUMA_PULL) fewer settle: 32 of 50 in this model.
TEST(NumaReplay, WithoutThePullFewerSettle) {
  const numa_scorer sc(test::machine("64amd64-4p2n4ca2co"));
  const int ok = settled_seeds(sc, tun::parse("NO_NUMA_PULL"), false);
  std::printf("settled without the pull: %d of 50 seeds\n", ok);
  EXPECT_LT(ok, 50);
}

}  // namespace
}  // namespace rt::policy
