// The deterministic replay of seed 002's experiment, policy only (docs/design/numa-scoring.md
// §6 describes the model and its limits: it is a model of what happens between two balancer
// periods on a real host, not a measurement of one).
//
// 8-node Opteron (64amd64-4p2n4ca2co, 8 workers a node). Two groups of 32 tasks (four nodes'
// worth), whose pages start spread over 4 random nodes each. Every period:
//   1. each task takes kSamplesPerTask samples of random pages of its group: the fault is
//      recorded on (page's node, task's node); a page migrates to the accessing node once
//      numa_migrate_min_samples consecutive samples of it came from that node (the two-stage
//      filter of should_numa_migrate_memory);
//   2. the period is folded into the group's decayed faults, balance_pass() decides;
//   3. the tasks are placed again, one at a time alternating between the groups, each on the
//      node with a free worker that its group ranks highest (the decision's node first, then by
//      the group's raw score: the kernel's task_numa_migrate() looking for a better node with
//      room).
// Settled: both groups' active sets are islands around their preferred node (every active node
// within distance 16 of it), disjoint, and stay so to the end of the run. Four-node sets with
// every PAIR within 16 cannot be disjoint on this topology (its only such sets, {0,2,4,6} and
// {4,5,6,7}, share two nodes), so an island is measured from the group's preferred node, and
// the groups are four nodes wide (32 tasks), as in the seed's "2 4-node wide instances".
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "core/rng.hpp"
#include "policy/layout.hpp"
#include "policy/numa_score.hpp"
#include "topologies.hpp"

namespace rt::policy {
namespace {

constexpr int kGroups = 2;
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

// Places every task again; `slots` counts free workers per node.
void place_tasks(const numa_scorer& sc, std::vector<group_state>& groups, int period, const tun::settings& s) {
  std::vector<int> slots(static_cast<std::size_t>(sc.node_count()));
  for (int n = 0; n < sc.node_count(); ++n) slots[static_cast<std::size_t>(n)] = static_cast<int>(sc.capacity(n) / kCapacityScale);
  std::vector<std::vector<int>> rank(groups.size());
  std::vector<std::uint64_t> scores;
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    group_state& g = groups[gi];
    sc.raw_scores(g.faults.mem, scores);
    sc.pull_toward(g.home, scores, s);  // the kernel ranks nodes by group_weight, pull included
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
          if (pg.streak >= s.t.numa_migrate_min_samples) pg.node = cpu;
        }
      }
      numa_fold_period(g.faults, period, s);
      in[gi] = {&g.faults, {}, g.home, g.preferred, static_cast<std::uint64_t>(kTasks) * kCapacityScale, c};
    }
    const numa_pass_result res = balance_pass(sc, {in, load, scan_ms}, s);
    scan_ms = res.scan_period_ms;
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      groups[gi].home = res.groups[gi].preferred;
      groups[gi].preferred = res.groups[gi].preferred;
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

TEST(NumaReplay, TwoGroupsSettleOnSeparateIslands) {
  const numa_scorer sc(test::machine("64amd64-4p2n4ca2co"));
  const tun::settings s;
  int ok = 0;
  std::vector<group_state> groups;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    const int since = replay(sc, seed, s, groups);
    std::printf("seed %2llu: settled from period %3d: group 0 on {%s}, group 1 on {%s}\n",
                static_cast<unsigned long long>(seed), since, nodes_of(groups[0].active).c_str(),
                nodes_of(groups[1].active).c_str());
    if (since >= 0) ++ok;
  }
  std::printf("settled: %d of 50 seeds\n", ok);
  // The policy is deterministic, so the count is exact: 47 of 50 with the pull of 002 patch 4
  // (I-NUMA-12; 38 without it, NO_NUMA_PULL). The seed's series reached about 8 of 10 with
  // patches 1-2 and 10 of 10 with 1-4; issue 6 asks for 50 of 50, which this policy does not
  // reach: in the 3 others one group holds {0,2,4,6}, the only 4-node set of this matrix with
  // every pair at 16, and no island is left for the other (numa-scoring.md section 3). A change
  // that settles fewer seeds fails here; one that settles more raises this line.
  EXPECT_GE(ok, 47);
}

}  // namespace
}  // namespace rt::policy
