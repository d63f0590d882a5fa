// One NUMA balancer pass (policy::balance_pass) over 1,000 groups, on real machine topologies
// (docs/design/numa-scoring.md §4). The bar: under 1 ms per pass on the 64-node
// Itanium. Plain main: prints the median and the spread of many passes per topology and how
// the time grows with the node count.
// Usage: numart_bench_balancer TOPOLOGY_DIR [passes [topology]]   (TOPOLOGY_DIR:
// tests/data/topologies; passes default 301; topology: run only that one, e.g. under callgrind).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "policy/layout.hpp"
#include "policy/numa_score.hpp"
#include "topology/topology.hpp"

namespace {

using rt::policy::numa_faults;
using rt::policy::numa_group_input;
using rt::policy::numa_member_input;

constexpr int kGroups = 1000;
constexpr int kMembersPerGroup = 4;      // every fifth group has members
constexpr int kGroupsWithMembersEvery = 5;

struct workload {
  std::vector<numa_faults> own;                   // one per group
  std::vector<numa_faults> member_faults;         // kMembersPerGroup per group with members
  std::vector<std::vector<numa_member_input>> members;
  std::vector<numa_group_input> groups;
  std::vector<std::uint64_t> node_load;
};

// A group lives around a random home: most samples there and on up to three of its nearby
// nodes, a few anywhere (shared libraries, stray accesses).
void fill(numa_faults& f, const rt::topo::topology& t, rt::core::rng& r, int home) {
  const auto& near = t.nearby[static_cast<std::size_t>(home)];
  f.add_sample(home, home, 1000 + r.next_below(9000));
  for (int k = 0; k < 3 && !near.empty(); ++k) {
    const int n = near[r.next_below(near.size())].node;
    f.add_sample(n, n, r.next_below(5000));
  }
  const int stray = static_cast<int>(r.next_below(static_cast<std::uint64_t>(t.node_count())));
  f.add_sample(stray, home, r.next_below(200));
}

workload make(const rt::topo::topology& t, std::uint64_t seed) {
  rt::core::rng r(seed);
  const int nodes = t.node_count();
  workload w;
  w.own.reserve(kGroups);
  w.member_faults.reserve(kGroups);
  w.members.resize(kGroups);
  for (int g = 0; g < kGroups; ++g) {
    const int home = static_cast<int>(r.next_below(static_cast<std::uint64_t>(nodes)));
    w.own.emplace_back(nodes);
    if (g % kGroupsWithMembersEvery == 0) {
      for (int m = 0; m < kMembersPerGroup; ++m) {
        w.member_faults.emplace_back(nodes);
        fill(w.member_faults.back(), t, r, home);
      }
    } else {
      fill(w.own.back(), t, r, home);
    }
  }
  std::size_t next_member = 0;
  for (int g = 0; g < kGroups; ++g) {
    if (g % kGroupsWithMembersEvery == 0) {
      for (int m = 0; m < kMembersPerGroup; ++m) w.members[static_cast<std::size_t>(g)].push_back(
            {&w.member_faults[next_member++], -1, rt::policy::kCapacityScale});  // one busy worker each, as the balancer gives
    }
    const int home = static_cast<int>(r.next_below(static_cast<std::uint64_t>(nodes)));
    w.groups.push_back({&w.own[static_cast<std::size_t>(g)], w.members[static_cast<std::size_t>(g)], home, home,
                        rt::policy::kCapacityScale * (1 + r.next_below(2)), {r.next_below(100), r.next_below(100), 0, 0}});
  }
  // Nodes between idle and 3/4 busy (capacity: kCapacityScale per core of the node).
  w.node_load.resize(static_cast<std::size_t>(nodes));
  for (int n = 0; n < nodes; ++n) {
    const std::uint64_t cap = rt::policy::kCapacityScale * t.nodes[static_cast<std::size_t>(n)].cores.size();
    w.node_load[static_cast<std::size_t>(n)] = r.next_below(cap * 3 / 4 + 1);
  }
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: numart_bench_balancer TOPOLOGY_DIR [passes [topology]]  (TOPOLOGY_DIR: tests/data/topologies)\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int passes = argc > 2 ? std::atoi(argv[2]) : 301;
  if (passes < 1) {
    std::fprintf(stderr, "numart_bench_balancer: passes must be a positive integer, got '%s'\n", argv[2]);
    return 2;
  }
  const std::string only = argc > 3 ? argv[3] : "";
  const char* tune = std::getenv("RT_TUNE");
  const rt::tun::settings s = rt::tun::parse(tune != nullptr ? tune : "");  // throws on a bad RT_TUNE
  std::printf("balance_pass over %d groups (every %dth with %d members), %d passes each\n", kGroups,
              kGroupsWithMembersEvery, kMembersPerGroup, passes);
  std::printf("%-28s %6s %10s %10s %10s %10s %12s\n", "topology", "nodes", "neighbours", "median_us", "p10_us",
              "p90_us", "us/node");
  const std::vector<std::string> names = {"32em64t-2n8c2t-pci-noio", "64amd64-4p2n4ca2co", "192em64t-24n8c2t",
                                          "256ia64-64n2s2c"};
  if (!only.empty() && std::find(names.begin(), names.end(), only) == names.end()) {
    std::fprintf(stderr, "numart_bench_balancer: unknown topology '%s' (one of the four it runs)\n", only.c_str());
    return 2;
  }
  for (const std::string& name : names) {
    if (!only.empty() && name != only) continue;
    const auto t = rt::topo::topology::load(rt::topo::source::parse("xml:" + dir + "/" + name + ".xml"));
    const rt::policy::numa_scorer sc(t);
    const workload w = make(t, 42);
    std::size_t neighbours = 0;
    for (const auto& l : t.nearby) neighbours += l.size();
    std::vector<double> us;
    std::uint64_t sink = 0;
    for (int p = 0; p < passes; ++p) {
      const auto t0 = std::chrono::steady_clock::now();
      const auto res = rt::policy::balance_pass(sc, {w.groups, w.node_load, 100}, s);
      const auto t1 = std::chrono::steady_clock::now();
      sink += static_cast<std::uint64_t>(res.groups.back().preferred + res.scan_period_ms);
      us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    std::sort(us.begin(), us.end());
    const double median = us[us.size() / 2];
    std::printf("%-28s %6d %10.1f %10.1f %10.1f %10.1f %12.2f\n", name.c_str(), t.node_count(),
                static_cast<double>(neighbours) / t.node_count(), median, us[us.size() / 10],
                us[us.size() * 9 / 10], median / t.node_count());
    if (sink == 0) std::printf("(no decisions)\n");
  }
  return 0;
}
