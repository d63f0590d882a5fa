// Tables of the NUMA balancer's policy (runtime/policy/numa_score.hpp,
// docs/design/numa-scoring.md). Expected values are worked by hand from the formulas and the
// nearby weights of each topology (weight = ((max - d) << 10) / (max - 10)); rows show the sums.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "policy/layout.hpp"
#include "policy/numa_score.hpp"
#include "topologies.hpp"

namespace rt::policy {
namespace {

using test::machine;
using u64v = std::vector<std::uint64_t>;
__extension__ using u128 = unsigned __int128;

struct score_row {
  const char* name;
  u64v faults;
  std::vector<std::pair<int, std::uint64_t>> raw;     // node, raw score
  std::vector<std::pair<int, std::uint64_t>> weight;  // node, weight in 1/1024
  int previous;
  int preferred;
};

std::uint64_t total_of(const u64v& f) {
  std::uint64_t t = 0;
  for (const auto x : f) t += x;
  return t;
}

void check_rows(const char* topology, const std::vector<score_row>& rows) {
  const numa_scorer sc(machine(topology));
  for (const score_row& r : rows) {
    SCOPED_TRACE(std::string(topology) + ": " + r.name);
    const std::uint64_t total = total_of(r.faults);
    u64v scattered;
    sc.raw_scores(r.faults, scattered);
    for (const auto& [n, v] : r.raw) {
      EXPECT_EQ(sc.raw_score(r.faults, n), v) << "raw score of node " << n;
      EXPECT_EQ(scattered[static_cast<std::size_t>(n)], v) << "scattered raw score of node " << n;
    }
    for (const auto& [n, v] : r.weight) EXPECT_EQ(sc.weight(r.faults, total, n), v) << "weight of node " << n;
    EXPECT_EQ(sc.preferred_node(r.faults, total, r.previous), r.preferred);
  }
}

// 64amd64-4p2n4ca2co (logical order): distances 10/16/22, every nearby weight (22-16)*1024/12
// = 512, so a neighbour adds half its faults. nearby: 0:{1,2,4,6} 1:{0,3,5,6} 2:{0,3,4,6}
// 3:{1,2,4,7} 4:{0,2,3,5,6,7} 5:{1,4,6,7} 6:{0,1,2,4,5,7} 7:{3,4,5,6}.
TEST(NumaScore, OpteronEightNodes) {
  check_rows("64amd64-4p2n4ca2co",
             {
                 // f0 1024, f2 512, f3 256; total 1792.
                 // n0 = 1024 + (0 + 512 + 0 + 0)/2 = 1280 -> 1280*1024/1792 = 731
                 // n2 = 512 + (1024 + 256 + 0 + 0)/2 = 1152 -> 658
                 // n4 = 0 + (1024 + 512 + 256)/2 = 896 -> 512;  n5 = 0;  n7 = 256/2 = 128 -> 73
                 {"node 0 heaviest",
                  {1024, 0, 512, 256, 0, 0, 0, 0},
                  {{0, 1280}, {2, 1152}, {4, 896}, {5, 0}, {7, 128}},
                  {{0, 731}, {2, 658}, {4, 512}, {5, 0}, {7, 73}},
                  -1,
                  0},
                 // f0 400, f2 400, f4 300, f5 700: the nearby bonus moves the choice off the node
                 // with most faults. n5 = 700 + (0 + 300 + 0 + 0)/2 = 850;
                 // n4 = 300 + (400 + 400 + 0 + 700 + 0 + 0)/2 = 1050; n0 = 400 + (400 + 300)/2 = 750.
                 {"nearby bonus wins",
                  {400, 0, 400, 0, 300, 700, 0, 0},
                  {{0, 750}, {2, 750}, {4, 1050}, {5, 850}},
                  {{4, 1050 * 1024 / 1800}, {5, 850 * 1024 / 1800}},
                  -1,
                  4},
                 // f1 = f2 = 100: n1 = 100 + 0 = 100, n2 = 100 + 0 = 100, n0 = (100+100)/2 = 100,
                 // n6 = (100 + 100)/2 = 100: a four-way tie. Without a previous node: index 0.
                 {"tie, no previous", {0, 100, 100, 0, 0, 0, 0, 0}, {{0, 100}, {1, 100}, {2, 100}, {6, 100}}, {}, -1, 0},
                 // The pull (002 patch 3-4): the previous preferred node wins the tie...
                 {"tie, previous 6", {0, 100, 100, 0, 0, 0, 0, 0}, {}, {}, 6, 6},
                 // ... and a previous node outside the tie pulls toward the tied node nearest to
                 // it: previous 5: d(5,1)=16, d(5,6)=16, d(5,0)=22, d(5,2)=22 -> 1 (lower of 1, 6).
                 {"tie, previous 5 pulls to a neighbour", {0, 100, 100, 0, 0, 0, 0, 0}, {}, {}, 5, 1},
                 // n3 = (100 + 100)/2 = 100 is in the tie too: previous 3 keeps 3.
                 {"tie, previous 3", {0, 100, 100, 0, 0, 0, 0, 0}, {{3, 100}}, {}, 3, 3},
                 // previous 7 (n7 = 0): d(7,3)=16, d(7,6)=16, d(7,0..2)=22 -> 3 (lower of 3, 6).
                 {"tie, previous 7", {0, 100, 100, 0, 0, 0, 0, 0}, {{7, 0}}, {}, 7, 3},
                 {"no samples", {0, 0, 0, 0, 0, 0, 0, 0}, {{0, 0}}, {{0, 0}}, 2, -1},
             });
}

// 192em64t-24n8c2t (SGI UV): distances 10/50/65/79, weights (79-50)*1024/69 = 430 and
// (79-65)*1024/69 = 207. Node 0: 1 at 50; 2..9, 12, 13, 16, 17 at 65. Nodes 2, 3: each other
// at 50, nodes 0 and 1 at 65.
TEST(NumaScore, SgiTwentyFourNodes) {
  check_rows("192em64t-24n8c2t",
             {
                 // f0 1000, f2 = f3 = 600. n0 = 1000 + 2 * (600*207 >> 10 = 121) = 1242;
                 // n1 = (1000*430 >> 10 = 419) + 121 + 121 = 661;
                 // n2 = 600 + (600*430 >> 10 = 251) + (1000*207 >> 10 = 202) = 1053 = n3.
                 {"node 0 heaviest",
                  u64v{1000, 0, 600, 600, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                  {{0, 1242}, {1, 661}, {2, 1053}, {3, 1053}, {23, 0}},
                  {{0, 1242 * 1024 / 2200}, {2, 1053 * 1024 / 2200}},
                  -1,
                  0},
                 // f0 700: n0 = 700 + 242 = 942; n2 = n3 = 600 + 251 + (700*207 >> 10 = 141) = 992.
                 {"the pair at 50 wins",
                  u64v{700, 0, 600, 600, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                  {{0, 942}, {2, 992}, {3, 992}},
                  {},
                  -1,
                  2},
                 {"the pair at 50 wins, previous 3",
                  u64v{700, 0, 600, 600, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                  {},
                  {},
                  3,
                  3},
             });
}

// 256ia64-64n2s2c: distances 10/22/26/30/34, weights (34-22)*1024/24 = 512, 8*1024/24 = 341,
// 4*1024/24 = 170. Node 0: 1-3 at 22, 4-11 at 26, 12-19 at 30.
TEST(NumaScore, ItaniumSixtyFourNodes) {
  u64v f(64, 0);
  f[0] = 1200;
  f[4] = 900;
  f[12] = 600;
  f[1] = 1000;
  // n0 = 1200 + (1000*512 >> 10 = 500) + (900*341 >> 10 = 299) + (600*170 >> 10 = 99) = 2098
  // n1 = 1000 + (1200*512 >> 10 = 600) + 299 + 99 = 1998 (node 1's tiers equal node 0's)
  // total 3700: weights 2098*1024/3700 = 580, 1998*1024/3700 = 552.
  check_rows("256ia64-64n2s2c", {{"four tiers", f, {{0, 2098}, {1, 1998}}, {{0, 580}, {1, 552}}, -1, 0}});
}

// A plain 2-socket (direct): no nearby score at all, the weight is the fault share.
TEST(NumaScore, TwoNodesDirect) {
  check_rows("32em64t-2n8c2t-pci-noio",
             {
                 // 300*1024/1000 = 307, 700*1024/1000 = 716
                 {"shares", {300, 700}, {{0, 300}, {1, 700}}, {{0, 307}, {1, 716}}, -1, 1},
                 {"tie, no previous", {500, 500}, {{0, 500}, {1, 500}}, {{0, 512}, {1, 512}}, -1, 0},
                 {"tie, previous 1", {500, 500}, {}, {}, 1, 1},
             });
}

// I-NUMA-12: the pull multiplies the preferred node and its nearby list by (max - LOCAL).
TEST(NumaScore, PullTowardThePreferredNode) {
  const numa_scorer opteron(machine("64amd64-4p2n4ca2co"));  // glueless mesh, max 22
  tun::settings s;
  std::vector<std::uint64_t> scores(8, 5);
  opteron.pull_toward(0, scores, s);  // node 0's nearby list: 1, 2, 4, 6 (distance 16)
  EXPECT_EQ(scores, (std::vector<std::uint64_t>{60, 60, 60, 5, 60, 5, 60, 5}));
  scores.assign(8, 5);
  opteron.pull_toward(-1, scores, s);
  EXPECT_EQ(scores, std::vector<std::uint64_t>(8, 5));
  s.f.NUMA_PULL = false;
  opteron.pull_toward(0, scores, s);
  EXPECT_EQ(scores, std::vector<std::uint64_t>(8, 5));
  s.f.NUMA_PULL = true;
  const numa_scorer direct(machine("32em64t-2n8c2t-pci-noio"));  // every remote node equally far
  std::vector<std::uint64_t> two{7, 9};
  direct.pull_toward(0, two, s);
  EXPECT_EQ(two, (std::vector<std::uint64_t>{7, 9}));
}

// One node (uma): everything is local.
TEST(NumaScore, Uma) {
  check_rows("Intel-Penryn-4xXeon-X7460", {{"one node", {42}, {{0, 42}}, {{0, 1024}}, -1, 0},
                                           {"no samples", {0}, {{0, 0}}, {{0, 0}}, -1, -1}});
}

// 256ppc-8n8s4t (backplane): islands of two at 20, all else 40. Nearby faults count in full
// (upstream's lim_dist); the preferred node descends into the island with most faults.
TEST(NumaScore, BackplaneIslands) {
  const auto& t = machine("256ppc-8n8s4t");
  ASSERT_EQ(t.klass, topo::topology_class::backplane);
  ASSERT_EQ(t.nearby[0].size(), 1u);
  const int mate = t.nearby[0][0].node;  // node 0's island partner
  u64v f(8, 0);
  f[0] = 100;
  f[static_cast<std::size_t>(mate)] = 100;
  int other = 0;  // a node of another island
  while (other == 0 || other == mate) ++other;
  f[static_cast<std::size_t>(other)] = 150;
  const numa_scorer sc(t);
  // raw(0) = 100 + 100 = 200; raw(other) = 150 + 0 = 150 (its partner has none).
  EXPECT_EQ(sc.raw_score(f, 0), 200u);
  EXPECT_EQ(sc.raw_score(f, other), 150u);
  // Level 40: island {0, mate} sums 200 > 150; level 20: singletons 100 = 100, first wins.
  EXPECT_EQ(sc.preferred_node(f, 350, -1), std::min(0, mate));
  EXPECT_EQ(sc.preferred_node(f, 350, std::max(0, mate)), std::max(0, mate));
  // The node with most faults alone would have won on a mesh: the island is what counts.
  EXPECT_NE(sc.preferred_node(f, 350, -1), other);
}

// raw_scores() scatters over the transposed lists; raw_score() gathers: same integers on every
// topology of the suite with random faults (the rounding is per term in both).
TEST(NumaScore, ScatterEqualsGather) {
  for (const char* name : {"64amd64-4p2n4ca2co", "192em64t-24n8c2t", "256ia64-64n2s2c", "256ppc-8n8s4t",
                           "128arm-2pa2n8cluster4co", "128ia64-17n4s2c", "32em64t-2n8c2t-pci-noio"}) {
    const numa_scorer sc(machine(name));
    core::rng r(7);
    for (int round = 0; round < 20; ++round) {
      u64v f(static_cast<std::size_t>(sc.node_count()));
      for (auto& x : f) x = r.next_below(4) == 0 ? r.next_below(100000) : 0;
      u64v s;
      sc.raw_scores(f, s);
      for (int n = 0; n < sc.node_count(); ++n) ASSERT_EQ(s[static_cast<std::size_t>(n)], sc.raw_score(f, n)) << name;
    }
  }
}

TEST(NumaScore, BadSizesAreRefused) {
  const numa_scorer sc(machine("64amd64-4p2n4ca2co"));
  u64v short_faults(3, 1);
  u64v out;
  try {
    sc.raw_scores(short_faults, out);
    FAIL() << "a 3-node fault vector was accepted on 8 nodes";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("has 3 nodes, expected 8"), std::string::npos) << e.what();
  }
  std::vector<std::uint32_t> caps(5, 1024);
  EXPECT_THROW(numa_scorer(machine("64amd64-4p2n4ca2co"), caps), std::invalid_argument);
  numa_faults a(8);
  numa_faults b(2);
  EXPECT_THROW(numa_add_faults(a, b), std::invalid_argument);
  EXPECT_THROW(numa_fold_period(a, b, tun::settings{}), std::invalid_argument);
}

// I-NUMA-1: x - (x >> shift) + new.
TEST(NumaFaults, FoldDecays) {
  tun::settings s;
  numa_faults st(2);
  numa_faults p(2);
  p.add_sample(0, 1, 100);
  p.add_sample(1, 1, 7);
  numa_fold_period(st, p, s);  // 0 - 0 + 100, 0 - 0 + 7; cpu: 0, 107
  EXPECT_EQ(st.mem, (u64v{100, 7}));
  EXPECT_EQ(st.cpu, (u64v{0, 107}));
  numa_fold_period(st, numa_faults(2), s);  // shift 1: 100 - 50 = 50, 7 - 3 = 4; 107 - 53 = 54
  EXPECT_EQ(st.mem, (u64v{50, 4}));
  EXPECT_EQ(st.cpu, (u64v{0, 54}));
  EXPECT_EQ(st.total_mem, 54u);
  EXPECT_EQ(st.total_cpu, 54u);
  s.t.numa_fault_decay_shift = 2;  // 50 - 12 + 100 = 138, 4 - 1 + 7 = 10
  numa_fold_period(st, p, s);
  EXPECT_EQ(st.mem, (u64v{138, 10}));
  s.t.numa_fault_decay_shift = 0;  // nothing survives: the period alone
  numa_fold_period(st, p, s);
  EXPECT_EQ(st.mem, (u64v{100, 7}));
}

// I-NUMA-6: cpu[n] * fraction > max, or cpu[n] == max.
TEST(NumaActive, Table) {
  const numa_scorer sc(machine("64amd64-4p2n4ca2co"));
  tun::settings s;  // fraction 3
  struct row {
    const char* name;
    u64v cpu;
    std::int64_t fraction;
    std::vector<int> active;
  };
  const std::vector<row> rows = {
      // max 900: 301*3 = 903 > 900 in; 300*3 = 900 not > 900 out.
      {"a third of the busiest", {900, 301, 300, 0, 0, 0, 0, 0}, 3, {0, 1}},
      {"no samples", {0, 0, 0, 0, 0, 0, 0, 0}, 3, {}},
      // fraction 1: only nodes equal to the busiest (f * 1 > max never holds).
      {"fraction 1 keeps the busiest", {5, 5, 4, 0, 0, 0, 0, 0}, 1, {0, 1}},
      // fraction 64: 15*64 = 960 > 900 in; 14*64 = 896 out.
      {"fraction 64", {900, 15, 14, 0, 0, 0, 0, 1}, 64, {0, 1}},
  };
  for (const row& r : rows) {
    SCOPED_TRACE(r.name);
    s.t.numa_active_node_fraction = r.fraction;
    const core::cpumask m = numa_active_nodes(sc, r.cpu, s);
    std::vector<int> got;
    m.for_each([&](std::size_t n) { got.push_back(static_cast<int>(n)); });
    EXPECT_EQ(got, r.active);
  }
  // A node without workers is never active, even with the most samples; the max is taken over
  // the nodes that run work: node 0 out, max 500 over the rest.
  std::vector<std::uint32_t> caps{0, 1024, 1024, 1024, 1024, 1024, 1024, 1024};
  const numa_scorer partial(machine("64amd64-4p2n4ca2co"), caps);
  s.t.numa_active_node_fraction = 3;
  const core::cpumask m = numa_active_nodes(partial, u64v{900, 500, 100, 0, 0, 0, 0, 0}, s);
  EXPECT_FALSE(m.test(0));
  EXPECT_TRUE(m.test(1));
  EXPECT_FALSE(m.test(2));  // 100 * 3 = 300 <= 500
}

// I-NUMA-7 on the Opteron (nearby neighbours add half).
TEST(NumaMember, Table) {
  const numa_scorer sc(machine("64amd64-4p2n4ca2co"));
  core::cpumask active(8);
  for (const int n : {0, 2, 4}) active.set(static_cast<std::size_t>(n));
  core::cpumask none(8);
  struct row {
    const char* name;
    u64v mem;
    const core::cpumask* active;
    int current;
    int parent;
    int node;
  };
  const std::vector<row> rows = {
      // f1 800, f2 300. Active only: n0 = (800 + 300)/2 = 550, n2 = 300, n4 = 300/2 = 150.
      // Node 1 (800) is not active.
      {"best active node", {0, 800, 300, 0, 0, 0, 0, 0}, &active, -1, 2, 0},
      // f0 = f2 = 100: n0 = 100 + 50 = 150 = n2, n4 = 100. Ties: current, parent, index.
      {"tie to current", {100, 0, 100, 0, 0, 0, 0, 0}, &active, 2, 0, 2},
      {"tie to parent", {100, 0, 100, 0, 0, 0, 0, 0}, &active, 5, 2, 2},
      {"tie to index", {100, 0, 100, 0, 0, 0, 0, 0}, &active, 5, 4, 0},
      {"no samples keeps its node", {0, 0, 0, 0, 0, 0, 0, 0}, &active, 5, 2, 5},
      {"no samples, no node: parent's", {0, 0, 0, 0, 0, 0, 0, 0}, &active, -1, 2, 2},
      // No active nodes: every node competes. f5 10: n5 = 10, its neighbours 5.
      {"no active set", {0, 0, 0, 0, 0, 10, 0, 0}, &none, -1, -1, 5},
  };
  for (const row& r : rows) {
    SCOPED_TRACE(r.name);
    EXPECT_EQ(numa_member_node(sc, r.mem, total_of(r.mem), *r.active, r.current, r.parent), r.node);
  }
}

// I-NUMA-8, the arithmetic.
TEST(NumaCapacity, Arithmetic) {
  tun::settings s;  // imbalance_pct_numa 125
  EXPECT_EQ(numa_move_adds({8192, 4, 0}), 2048u);
  EXPECT_EQ(numa_move_adds({8192, 4, 1024}), 1024u);
  EXPECT_EQ(numa_move_adds({8192, 4, 4096}), 0u);
  EXPECT_EQ(numa_move_adds({1000, 3, 0}), 334u);  // ceil(1000 / 3)
  EXPECT_EQ(numa_move_adds({1000, 0, 0}), 1000u);
  // 100 * (8192 + 2048) = 1024000 <= 125 * 8192 = 1024000: fits exactly; one more does not.
  EXPECT_TRUE(numa_move_fits(8192, 8192, 2048, s));
  EXPECT_FALSE(numa_move_fits(8192, 8192, 2049, s));
  EXPECT_FALSE(numa_move_fits(0, 0, 0, s));  // a node without workers
  s.t.imbalance_pct_numa = 100;
  EXPECT_TRUE(numa_move_fits(4096, 8192, 4096, s));
  EXPECT_FALSE(numa_move_fits(4096, 8192, 4097, s));
}

// I-NUMA-8 and I-NUMA-10 through balance_pass on the 2-socket (8 cores a node: capacity 8192,
// 125% -> a node takes up to 10240). Groups are decided in order.
TEST(NumaCapacity, PassTable) {
  const numa_scorer sc(machine("32em64t-2n8c2t-pci-noio"));
  ASSERT_EQ(sc.capacity(0), 8192u);
  tun::settings s;
  auto faults = [](u64v mem, u64v cpu) {
    numa_faults f(2);
    f.mem = mem;
    f.cpu = cpu;
    f.total_mem = total_of(mem);
    f.total_cpu = total_of(cpu);
    return f;
  };
  const numa_faults on1 = faults({1000, 0}, {0, 1000});    // memory on 0, runs on 1
  const numa_faults on0 = faults({1000, 0}, {1000, 0});    // memory on 0, runs on 0
  const numa_faults nocpu = faults({1000, 0}, {0, 0});     // no cpu samples: active set empty
  std::vector<numa_group_input> g(6);
  // A: best 0, adds 2048 (nothing of it on 0): 100*(7168+2048) = 921600 <= 1024000 -> move.
  g[0] = {&on1, {}, 1, -1, 2048, {10, 0, 0, 0}};
  // B: same; node 0 now 9216: 100*(9216+2048) = 1126400 > 1024000; next is its own node 1 -> kept.
  g[1] = {&on1, {}, 1, -1, 2048, {0, 10, 0, 0}};
  // C: same, no home: node 0 refused; node 1 holds all of it (here 2048): adds 0 -> next_best 1.
  g[2] = {&on1, {}, -1, -1, 2048, {}};
  // D: runs where its memory is: here(0) = 10240 = want, adds 0: 9216 fits -> move to 0.
  g[3] = {&on0, {}, -1, -1, 10240, {}};
  // E: no cpu samples: want 10000 on 0 (9216 + 10000) refused, on 1 (2048 + 10000) refused, no
  // home -> over_capacity on its best node 0, which takes its load: 9216 + 10000 = 19216.
  g[4] = {&nocpu, {}, -1, -1, 10000, {}};
  // F: no samples at all.
  g[5] = {nullptr, {}, 1, 0, 1024, {}};
  const u64v load{7168, 2048};
  const numa_pass_result r = balance_pass(sc, {g, load, 100}, s);
  ASSERT_EQ(r.groups.size(), 6u);
  const std::vector<std::pair<int, numa_placement>> want = {
      {0, numa_placement::move},      {1, numa_placement::kept},          {1, numa_placement::next_best},
      {0, numa_placement::move},      {0, numa_placement::over_capacity}, {-1, numa_placement::no_samples}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("group " + std::to_string(i));
    EXPECT_EQ(r.groups[i].preferred, want[i].first);
    EXPECT_EQ(r.groups[i].placement, want[i].second) << to_string(r.groups[i].placement);
  }
  EXPECT_EQ(r.groups[4].best, 0);
  EXPECT_EQ(r.node_load, (u64v{19216, 2048}));
  // Counts summed over groups: local 10, remote 10 -> lr 5 < 7: 100 - 2 * 10 = 80.
  EXPECT_EQ(r.scan_period_ms, 80);
}

// I-NUMA-15 through balance_pass (defaults: min 50, max 3000, 10 slots, threshold 7): every
// group with a period gets its next one from its own counts (numa_next_scan_period), a group
// without one gets none, and the pass's period is the shortest of them; the counts summed over
// all groups decide only when no group has a period (the previous table's 80).
TEST(NumaScanPeriod, PerGroupPassTable) {
  const numa_scorer sc(machine("32em64t-2n8c2t-pci-noio"));
  const tun::settings s;
  const u64v load{0, 0};
  struct row {
    const char* name;
    std::vector<std::pair<std::int64_t, numa_locality_counts>> groups;  // (its period, its counts)
    std::int64_t runtime_ms;                                               // the pass's current period
    std::vector<std::int64_t> next;                                        // per group
    std::int64_t pass_next;
  };
  const std::vector<row> rows = {
      {"a new group beside a settled one: the new group's pace",
       {{3000, {10, 0, 0, 0}}, {50, {}}},
       3000,
       {3000, 100},
       100},
      {"a group without a period takes no part, though its counts are all remote",
       {{0, {0, 10, 0, 0}}, {1600, {}}},
       1600,
       {0, 3000},
       3000},
      {"remote faults shorten one group's period; the others keep theirs",
       {{200, {1, 9, 0, 0}}, {400, {9, 1, 0, 0}}, {100, {}}},
       100,
       {80, 480, 200},
       80},
      {"no group has a period: the summed counts, as before I-NUMA-15",
       {{0, {10, 0, 0, 0}}, {0, {0, 10, 0, 0}}},
       100,
       {0, 0},
       80},
      {"no groups: the period doubles", {}, 1600, {}, 3000},
  };
  for (const row& r : rows) {
    SCOPED_TRACE(r.name);
    std::vector<numa_group_input> g;
    for (const auto& [period, counts] : r.groups) {
      numa_group_input in;
      in.period = counts;
      in.scan_period_ms = period;
      g.push_back(in);
    }
    const numa_pass_result res = balance_pass(sc, {g, load, r.runtime_ms}, s);
    ASSERT_EQ(res.groups.size(), r.next.size());
    for (std::size_t i = 0; i < r.next.size(); ++i) EXPECT_EQ(res.groups[i].scan_period_ms, r.next[i]) << "group " << i;
    EXPECT_EQ(res.scan_period_ms, r.pass_next);
  }
}

// I-NUMA-8 as written: the nodes after the best in ahead() order, sorted, walked until the
// current home or the first that fits. The pass finds the same node in one scan (the maximum
// under that strict total order of the nodes that are the home or fit); this reference checks
// it on multi-node topologies with random faults, loads and homes, groups in input order.
struct reference_decision {
  int best = -1;
  int preferred = -1;
  numa_placement placement = numa_placement::no_samples;
};
std::vector<reference_decision> reference_pass(const numa_scorer& sc, std::span<const numa_group_input> groups,
                                               u64v& node_load, const tun::settings& s) {
  std::vector<reference_decision> out;
  for (const numa_group_input& g : groups) {
    reference_decision d;
    const numa_faults& f = *g.faults;
    if (f.total_mem == 0) {
      out.push_back(d);
      continue;
    }
    u64v scores;
    sc.raw_scores(f.mem, scores);
    sc.pull_toward(g.preferred, scores, s);
    d.best = numa_sticky_best(sc, scores, sc.preferred_node(f.mem, scores, f.total_mem, g.preferred), g.preferred, s);
    const std::uint64_t spread = std::max<std::uint64_t>(numa_active_nodes(sc, f.cpu, s).count(), 1);
    auto adds_at = [&](int n) {
      const std::uint64_t here =
          f.total_cpu == 0 ? 0
                           : static_cast<std::uint64_t>(static_cast<u128>(g.load) * f.cpu[static_cast<std::size_t>(n)] /
                                                        f.total_cpu);
      return numa_move_adds({g.load, spread, here});
    };
    auto try_node = [&](int n) {
      const std::uint64_t adds = adds_at(n);
      if (!numa_move_fits(node_load[static_cast<std::size_t>(n)], sc.capacity(n), adds, s)) return false;
      node_load[static_cast<std::size_t>(n)] += adds;
      return true;
    };
    if (d.best == g.node) {
      d = {d.best, d.best, numa_placement::stay};
    } else if (try_node(d.best)) {
      d = {d.best, d.best, numa_placement::move};
    } else {
      std::vector<int> order;
      for (int n = 0; n < sc.node_count(); ++n) {
        if (n != d.best && sc.runs_work(n)) order.push_back(n);
      }
      std::sort(order.begin(), order.end(), [&](int a, int b) {
        return sc.ahead(scores[static_cast<std::size_t>(a)], a, scores[static_cast<std::size_t>(b)], b, g.preferred);
      });
      for (const int n : order) {
        if (n == g.node) {
          d = {d.best, n, numa_placement::kept};
          break;
        }
        if (try_node(n)) {
          d = {d.best, n, numa_placement::next_best};
          break;
        }
      }
      if (d.preferred < 0 && g.node >= 0) {
        d = {d.best, g.node, numa_placement::kept};
      } else if (d.preferred < 0) {
        d = {d.best, d.best, numa_placement::over_capacity};
        node_load[static_cast<std::size_t>(d.best)] += adds_at(d.best);
      }
    }
    out.push_back(d);
  }
  return out;
}

TEST(NumaCapacity, OneScanEqualsTheSortedWalk) {
  int refused = 0;
  for (const char* name : {"64amd64-4p2n4ca2co", "192em64t-24n8c2t", "256ia64-64n2s2c", "256ppc-8n8s4t",
                           "128ia64-17n4s2c", "128arm-2pa2n8cluster4co"}) {
    const numa_scorer sc(machine(name));
    const int nodes = sc.node_count();
    const tun::settings s;
    core::rng r(11);
    for (int round = 0; round < 30; ++round) {
      std::vector<numa_faults> faults(40, numa_faults(nodes));
      std::vector<numa_group_input> groups;
      for (numa_faults& f : faults) {
        // Few nodes, small counts: ties between nodes are common, so the tie-break order matters.
        for (int k = 0; k < 3; ++k) {
          const int a = static_cast<int>(r.next_below(static_cast<std::uint64_t>(nodes)));
          f.add_sample(a, r.next_below(2) == 0 ? a : static_cast<int>(r.next_below(static_cast<std::uint64_t>(nodes))),
                       1 + r.next_below(3));
        }
        const int home = static_cast<int>(r.next_below(static_cast<std::uint64_t>(nodes) + 1)) - 1;
        const int previous = static_cast<int>(r.next_below(static_cast<std::uint64_t>(nodes) + 1)) - 1;
        groups.push_back({&f, {}, home, previous, kCapacityScale * (1 + r.next_below(12)), {}});
      }
      u64v load(static_cast<std::size_t>(nodes));
      for (int n = 0; n < nodes; ++n) load[static_cast<std::size_t>(n)] = r.next_below(sc.capacity(n) * 11 / 10 + 1);
      u64v ref_load = load;
      const std::vector<reference_decision> want = reference_pass(sc, groups, ref_load, s);
      const numa_pass_result got = balance_pass(sc, {groups, load, 100}, s);
      ASSERT_EQ(got.groups.size(), want.size());
      for (std::size_t i = 0; i < want.size(); ++i) {
        SCOPED_TRACE(std::string(name) + " round " + std::to_string(round) + " group " + std::to_string(i));
        ASSERT_EQ(got.groups[i].best, want[i].best);
        ASSERT_EQ(got.groups[i].preferred, want[i].preferred);
        ASSERT_EQ(got.groups[i].placement, want[i].placement) << to_string(got.groups[i].placement);
        if (want[i].placement == numa_placement::next_best || want[i].placement == numa_placement::kept) ++refused;
      }
      ASSERT_EQ(got.node_load, ref_load) << name;
    }
  }
  EXPECT_GT(refused, 100);  // the walk after a refused best node was exercised
}

// I-NUMA-11: the candidates' island edge, precomputed per node, against its definition: the
// nodes that run work and are p or within the nearest remote distance of p.
TEST(NumaMember, IslandEdgeIsTheNearestRemoteRing) {
  for (const char* name : {"64amd64-4p2n4ca2co", "192em64t-24n8c2t", "256ia64-64n2s2c", "128ia64-17n4s2c",
                           "32em64t-2n8c2t-pci-noio"}) {
    const topo::topology& t = machine(name);
    const int nodes = t.node_count();
    std::vector<std::uint32_t> caps(static_cast<std::size_t>(nodes), kCapacityScale);
    caps[1] = 0;  // a node without workers is never a candidate and never sets the distance
    const numa_scorer sc(t, caps);
    const core::cpumask none(static_cast<std::size_t>(nodes));
    for (int p = 0; p < nodes; ++p) {
      int nearest = 0;
      for (int n = 0; n < nodes; ++n) {
        if (n != p && sc.runs_work(n) && (nearest == 0 || sc.distance(p, n) < nearest)) nearest = sc.distance(p, n);
      }
      std::vector<int> want;
      for (int n = 0; n < nodes; ++n) {
        if (sc.runs_work(n) && (n == p || sc.distance(p, n) <= nearest)) want.push_back(n);
      }
      std::vector<int> got;
      numa_member_candidates(sc, none, p).for_each([&](std::size_t n) { got.push_back(static_cast<int>(n)); });
      EXPECT_EQ(got, want) << name << " node " << p;
    }
  }
}

// Members add into the parent (I-NUMA-2) and choose within its active set (I-NUMA-7).
TEST(NumaPass, MembersAddUp) {
  const numa_scorer sc(machine("64amd64-4p2n4ca2co"));
  tun::settings s;
  numa_faults m1(8);
  numa_faults m2(8);
  numa_faults m3(8);
  m1.add_sample(0, 0, 600);  // member 1: memory and cpu on 0
  m2.add_sample(2, 2, 500);  // member 2: on 2
  m3.add_sample(1, 1, 100);  // member 3: on 1, a small one (100*3 = 300 <= 600: not active)
  const std::vector<numa_member_input> members{{&m1, 0}, {&m2, 2}, {&m3, 1}, {nullptr, 7}};
  std::vector<numa_group_input> g{{nullptr, members, 0, 0, 0, {}}};
  const u64v load(8, 0);
  const numa_pass_result r = balance_pass(sc, {g, load, 100}, s);
  // Group mem {600, 100, 500, 0...}: n0 = 600 + (100 + 500)/2 = 900; n2 = 500 + 600/2 = 800.
  EXPECT_EQ(r.groups[0].best, 0);
  EXPECT_EQ(r.groups[0].placement, numa_placement::stay);
  EXPECT_TRUE(r.groups[0].active.test(0));
  EXPECT_TRUE(r.groups[0].active.test(2));
  EXPECT_FALSE(r.groups[0].active.test(1));
  ASSERT_EQ(r.member_nodes.size(), 4u);
  // Member 3's own best is node 1 (100, vs 50 on 0): 1 is not active but within the nearest
  // distance (16) of the parent's preferred node 0, the island's edge (I-NUMA-11).
  EXPECT_EQ(r.member_nodes, (std::vector<int>{0, 2, 1, 7}));
  // No samples anywhere in the counts: the period doubles.
  EXPECT_EQ(r.scan_period_ms, 200);
}

// I-NUMA-13 with the default 30 permille: a new best replaces the previous preferred node only
// when previous * 1000 < best * 970.
TEST(NumaStickyBest, HysteresisTable) {
  const numa_scorer sc(machine("64amd64-4p2n4ca2co"));
  tun::settings s;
  ASSERT_EQ(s.t.numa_preferred_hysteresis_permille, 30);
  struct row {
    const char* name;
    std::uint64_t prev_score;
    std::uint64_t best_score;
    int previous;
    int expect;  // 6 = the best, else the previous
  };
  const std::vector<row> rows = {
      {"3 % better: 1030 * 970 = 999,100 <= 1,000,000, kept", 1000, 1030, 0, 0},
      {"3.2 % better: 1032 * 970 = 1,001,040 > 1,000,000, moves", 1000, 1032, 0, 6},
      {"twice as good, moves", 500, 1000, 0, 6},
      {"no previous", 1000, 1030, -1, 6},
      {"previous out of range", 1000, 1030, 8, 6},
      {"the best is the previous", 1000, 1000, 6, 6},
      {"previous scored 0, best 1", 0, 1, 0, 6},
  };
  for (const row& r : rows) {
    SCOPED_TRACE(r.name);
    std::vector<std::uint64_t> scores(8, 0);
    if (r.previous >= 0 && r.previous < 8) scores[static_cast<std::size_t>(r.previous)] = r.prev_score;
    scores[6] = r.best_score;
    EXPECT_EQ(numa_sticky_best(sc, scores, 6, r.previous, s), r.expect);
  }
  EXPECT_EQ(numa_sticky_best(sc, std::vector<std::uint64_t>(8, 0), -1, 0, s), -1);  // no best: none
  s.t.numa_preferred_hysteresis_permille = 0;  // off: any strictly better score moves
  std::vector<std::uint64_t> scores(8, 0);
  scores[0] = 1000;
  scores[6] = 1001;
  EXPECT_EQ(numa_sticky_best(sc, scores, 6, 0, s), 6);
  scores[6] = 1000;
  EXPECT_EQ(numa_sticky_best(sc, scores, 6, 0, s), 0);
}

TEST(NumaStickyBest, APreviousNodeWithoutWorkersIsNotKept) {
  const numa_scorer sc(machine("64intel64-fakeKNL-SNC4-hybrid"));
  int memory_only = -1;
  int worker_node = -1;
  for (int n = 0; n < sc.node_count(); ++n) {
    if (!sc.runs_work(n) && memory_only < 0) memory_only = n;
    if (sc.runs_work(n) && worker_node < 0) worker_node = n;
  }
  ASSERT_GE(memory_only, 0) << "the KNL topology has memory-only (MCDRAM) nodes";
  ASSERT_GE(worker_node, 0);
  std::vector<std::uint64_t> scores(static_cast<std::size_t>(sc.node_count()), 0);
  scores[static_cast<std::size_t>(memory_only)] = 1000;
  scores[static_cast<std::size_t>(worker_node)] = 1;
  EXPECT_EQ(numa_sticky_best(sc, scores, worker_node, memory_only, tun::settings{}), worker_node);
}

// I-NUMA-9 with the defaults: min 50, max 3000, slots 10, threshold 7.
TEST(NumaScanPeriod, Table) {
  tun::settings s;
  struct row {
    const char* name;
    std::int64_t cur;
    numa_locality_counts c;
    std::int64_t next;
  };
  const std::vector<row> rows = {
      {"no samples doubles", 100, {}, 200},
      {"no samples, capped", 1600, {}, 3000},
      {"lr 9: +2 slots of 10", 100, {9, 1, 0, 0}, 120},
      {"lr 7: +1 slot", 100, {7, 3, 0, 0}, 110},
      {"lr 6 (690/100): -1 slot", 100, {69, 31, 0, 0}, 90},
      {"lr 0: -7 slots, floored", 100, {0, 10, 0, 0}, 50},
      {"lr 10 at the max", 3000, {10, 0, 0, 0}, 3000},
      {"lr 10 below the max: +3 slots of 280, capped", 2800, {10, 0, 0, 0}, 3000},
      {"slot rounds up: ceil(95/10) = 10", 95, {8, 2, 0, 0}, 105},
      {"shared dominates: sp 8 -> +1 slot", 100, {1, 9, 8, 2}, 110},
      {"private remote: lr 1 -> -6 slots of 20", 200, {1, 9, 2, 8}, 80},
      {"below the min: starts from 50, slot 5", 10, {9, 1, 0, 0}, 60},
  };
  for (const row& r : rows) {
    SCOPED_TRACE(r.name);
    EXPECT_EQ(numa_next_scan_period(r.cur, r.c, s), r.next);
  }
}


// I-BAL-4: the group test of should_numa_migrate_memory(), for a page of the group whose
// faults are given, moving from src to dst.
TEST(NumaMigrate, MemoryFollowsTheGroupsCpuUseWithHysteresis) {
  const tun::settings s{};
  ASSERT_EQ(s.t.numa_active_node_fraction, 3);
  struct row {
    const char* name;
    std::uint64_t cpu_src, cpu_dst, mem_src, mem_dst;
    bool migrate;
  };
  const row rows[] = {
      {"no faults yet", 0, 0, 0, 0, false},
      {"the group runs on dst only", 0, 10, 10, 0, true},
      {"the group never runs on dst (another group's touch)", 10, 0, 10, 0, false},
      {"dst busier than 3x src", 10, 31, 0, 1000, true},
      {"dst exactly 3x src: the ratio decides", 10, 30, 10, 10, true},
      {"equal cpu, memory already even: 3/4 hysteresis keeps it", 10, 10, 10, 10, false},
      {"equal cpu, memory mostly on src", 10, 10, 40, 10, true},
      {"equal cpu, src holds just 4/3 of dst", 10, 10, 40, 30, false},
      {"equal cpu, src holds a little more than 4/3", 10, 10, 41, 30, true},
  };
  for (const row& r : rows) {
    SCOPED_TRACE(r.name);
    numa_faults f(4);
    f.cpu[1] = r.cpu_src;
    f.cpu[2] = r.cpu_dst;
    f.mem[1] = r.mem_src;
    f.mem[2] = r.mem_dst;
    EXPECT_EQ(numa_should_migrate(f, 1, 2, s), r.migrate);
  }
  numa_faults f(4);
  f.cpu[2] = 10;
  EXPECT_FALSE(numa_should_migrate(f, -1, 2, s));
  EXPECT_FALSE(numa_should_migrate(f, 1, 4, s));
}

// Members of a group active on node 0 of the Opteron, with all their faults there.
struct opteron_members {
  const numa_scorer sc{machine("64amd64-4p2n4ca2co")};
  const tun::settings s{};
  numa_faults on0 = [] {
    numa_faults f(8);
    f.add_sample(0, 0, 100);
    return f;
  }();
  const core::cpumask candidates = [this] {
    core::cpumask active(8);
    active.set(0);
    return numa_member_candidates(sc, active, 0);
  }();
  std::vector<std::uint64_t> member_load = std::vector<std::uint64_t>(8, 0);
  int place() { return numa_place_member(sc, {&on0, -1, kCapacityScale}, candidates, 0, member_load, s); }
};

// I-NUMA-11: members fill a node up to imbalance_pct_numa of its capacity, then spill onto the
// island's edge. Opteron nodes hold 8 workers (8192); 125% of that is 10 one-worker members.
TEST(NumaPass, MembersSpillOntoTheIslandEdgeWhenANodeIsFull) {
  opteron_members o;
  auto& [sc, s, on0, candidates, member_load] = o;
  std::vector<int> nodes;
  EXPECT_EQ(candidates.count(), 5u);  // node 0 and its four neighbours at 16
  for (int i = 0; i < 12; ++i) nodes.push_back(o.place());
  EXPECT_EQ(nodes, (std::vector<int>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(member_load[0], 10u * kCapacityScale);
  EXPECT_EQ(member_load[1], 2u * kCapacityScale);
  // A member without samples keeps its node and still counts there.
  EXPECT_EQ(numa_place_member(sc, {nullptr, 5, kCapacityScale}, candidates, 0, member_load, s), 5);
  EXPECT_EQ(member_load[5], kCapacityScale);
}

// I-NUMA-11: when the island is full too, a member takes the best node with room anywhere
// (task_numa_migrate() searches every node); over capacity, at its unconstrained best, only
// when no node has room.
TEST(NumaPass, AMemberLeavesAFullIslandForANodeWithRoom) {
  opteron_members o;
  auto& member_load = o.member_load;
  for (int n : {0, 1, 2, 4, 6}) member_load[static_cast<std::size_t>(n)] = 10u * kCapacityScale;
  EXPECT_EQ(o.place(), 3);
  EXPECT_EQ(member_load[3], kCapacityScale);
  member_load[5] = 9u * kCapacityScale;  // room for one more
  member_load[3] = 10u * kCapacityScale;
  member_load[7] = 10u * kCapacityScale;
  EXPECT_EQ(o.place(), 5);
  EXPECT_EQ(o.place(), 0);
  EXPECT_EQ(member_load[0], 11u * kCapacityScale);
}

// I-NUMA-11: a member not placed yet in the pass still counts where it runs. Group B comes
// first and its member on node 1 has its data on 0; group A's two members fill node 0 (2
// workers a node: room for 2 one-worker members within 125 %). B's member finds no room on 0
// and stays on 1 (the nearest ring's tie goes to its node); A's members keep node 0. Counting
// only the members placed so far, B's member took node 0 and pushed one of A's off it, and the
// next pass could undo that: examples/jbb's warehouses traded nodes pass after pass.
TEST(NumaPass, MembersNotYetPlacedCountWhereTheyRun) {
  const std::vector<std::uint32_t> caps(8, 2 * kCapacityScale);
  const numa_scorer sc(machine("64amd64-4p2n4ca2co"), caps);
  std::vector<numa_faults> faults(3, numa_faults(8));
  faults[0].add_sample(0, 1, 100);  // B's member: data on 0, runs on 1
  faults[1].add_sample(0, 0, 100);  // A's members: data on 0, run on 0
  faults[2].add_sample(0, 0, 100);
  const std::vector<numa_member_input> members{{&faults[0], 1, kCapacityScale},
                                               {&faults[1], 0, kCapacityScale},
                                               {&faults[2], 0, kCapacityScale}};
  const std::span<const numa_member_input> all(members);
  const std::vector<numa_group_input> g{{nullptr, all.subspan(0, 1), 1, 0, kCapacityScale, {}},
                                        {nullptr, all.subspan(1, 2), 0, 0, 2 * kCapacityScale, {}}};
  const u64v load{2 * kCapacityScale, kCapacityScale, 0, 0, 0, 0, 0, 0};
  const numa_pass_result r = balance_pass(sc, {g, load, 100}, tun::settings{});
  EXPECT_EQ(r.member_nodes, (std::vector<int>{1, 0, 0}));
}

// I-NUMA-14: examples/jbb's trap on the virtual Opteron (2 workers a node, two instances of 8
// one-worker members). Instance A keeps its data on {0,2,4,6} around 0, instance B on
// {1,3,5,7} around 7: B's members on node 1 are 22 from 7, outside its island {3,4,5,6,7}, and
// no A member's own data pulls it away from 4 or 6. Per node (F = 200 samples, 2 members):
// A raw 0,2,4,6 = 200 + 600/2 = 500, raw 1 = (200 + 200)/2 = 200; the pull toward 0 (x12 on
// 0 and {1,2,4,6}): 6000 and 2400, weights (x1024 / 800) 7680 and 3072. B raw 1 = 200 +
// 400/2 = 400 (not pulled), weight 512; raw 4 = raw 6 = 600/2 = 300, pulled 3600, weight 4608.
// Swapping B's member on 1 with A's on 4: 4608 - 512 + 3072 - 7680 = -512 (on 6 the same),
// but both end inside their islands, which outranks the weights: A {0,1,2,6}, B {3,4,5,7}.
TEST(NumaPass, MembersOutsideTheirIslandSwapIntoIt) {
  const topo::topology& t = machine("64amd64-4p2n4ca2co");
  const std::vector<std::uint32_t> caps(8, 2 * kCapacityScale);
  const numa_scorer sc(t, caps);
  std::vector<numa_faults> faults(16, numa_faults(8));
  std::vector<numa_member_input> members;
  const int data[16] = {0, 0, 2, 2, 4, 4, 6, 6, 1, 1, 3, 3, 5, 5, 7, 7};
  for (int i = 0; i < 16; ++i) {
    faults[static_cast<std::size_t>(i)].add_sample(data[i], data[i], 100);
    members.push_back({&faults[static_cast<std::size_t>(i)], data[i], kCapacityScale});
  }
  const std::span<const numa_member_input> all(members);
  const std::vector<numa_group_input> g{{nullptr, all.subspan(0, 8), 0, 0, 8 * kCapacityScale, {}},
                                        {nullptr, all.subspan(8, 8), 7, 7, 8 * kCapacityScale, {}}};
  const u64v load(8, 2 * kCapacityScale);
  tun::settings s;
  const numa_pass_result r = balance_pass(sc, {g, load, 100}, s);
  EXPECT_EQ(r.groups[0].best, 0);
  EXPECT_EQ(r.groups[1].best, 7);
  EXPECT_EQ(r.member_nodes, (std::vector<int>{0, 0, 2, 2, 1, 1, 6, 6, 4, 4, 3, 3, 5, 5, 7, 7}));
  EXPECT_EQ(r.member_swaps, 2u);
  s.f.NUMA_SWAP = false;
  const numa_pass_result off = balance_pass(sc, {g, load, 100}, s);
  EXPECT_EQ(off.member_nodes, (std::vector<int>(std::begin(data), std::end(data))));
  EXPECT_EQ(off.member_swaps, 0u);
}

// I-NUMA-14 by a plain restatement: per-node lists instead of the pass's CSR, each group's
// weights recomputed from its members' summed faults with the pull. `swaps_by_in[k]` counts
// the swaps that brought k members in net.
std::vector<int> reference_swaps(const numa_scorer& sc, const std::vector<numa_group_input>& groups,
                                 const numa_pass_result& placed, const tun::settings& s, std::size_t (&swaps_by_in)[3]) {
  const auto nodes = static_cast<std::size_t>(sc.node_count());
  std::vector<int> node_of = placed.member_nodes;
  std::vector<int> group_of;
  std::vector<bool> takes_part;
  std::vector<u64v> w(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    numa_faults sum(sc.node_count());
    for (const numa_member_input& m : groups[g].members) {
      if (m.faults != nullptr) numa_add_faults(sum, *m.faults);
    }
    u64v scores;
    sc.raw_scores(sum.mem, scores);
    sc.pull_toward(groups[g].preferred, scores, s);
    for (std::size_t n = 0; n < nodes; ++n)
      w[g].push_back(sum.total_mem == 0 ? 0 : static_cast<std::uint64_t>(static_cast<u128>(scores[n]) * kNumaScoreScale / sum.total_mem));
    for (const numa_member_input& m : groups[g].members) {
      group_of.push_back(static_cast<int>(g));
      takes_part.push_back(sum.total_mem != 0 && m.faults != nullptr && m.faults->total_mem != 0 && m.load != 0);
    }
  }
  std::vector<const numa_member_input*> member;
  for (const numa_group_input& g : groups)
    for (const numa_member_input& m : g.members) member.push_back(&m);
  std::vector<std::vector<std::size_t>> on(nodes);
  for (std::size_t i = 0; i < node_of.size(); ++i) {
    if (takes_part[i] && node_of[i] >= 0) on[static_cast<std::size_t>(node_of[i])].push_back(i);
  }
  const auto inside = [&](std::size_t g, int n) {
    return sc.island_edge(placed.groups[g].best).test(static_cast<std::size_t>(n)) ? 1 : 0;
  };
  const auto smallimp = static_cast<std::int64_t>(kNumaScoreScale * s.t.numa_preferred_hysteresis_permille / 1000);
  for (std::size_t i = 0; i < node_of.size(); ++i) {
    if (!takes_part[i] || node_of[i] < 0) continue;
    const auto a = static_cast<std::size_t>(group_of[i]);
    const int x = node_of[i];
    if (inside(a, x) == 1) continue;
    int best_in = 0;
    std::int64_t best_gain = smallimp;
    std::size_t best = 0;
    std::size_t best_pos = 0;
    bool found = false;
    for (std::size_t y = 0; y < nodes; ++y) {
      if (inside(a, static_cast<int>(y)) == 0) continue;
      const std::size_t looked = 2 * std::max<std::size_t>(1, sc.capacity(static_cast<int>(y)) / kCapacityScale);
      for (std::size_t k = 0; k < std::min(looked, on[y].size()); ++k) {
        const std::size_t j = on[y][k];
        const auto b = static_cast<std::size_t>(group_of[j]);
        if (b == a || member[j]->load != member[i]->load) continue;
        const int ny = static_cast<int>(y);
        const int in = 1 + inside(b, x) - inside(b, ny);
        const auto wa = [&](int n) { return static_cast<std::int64_t>(w[a][static_cast<std::size_t>(n)]); };
        const auto wb = [&](int n) { return static_cast<std::int64_t>(w[b][static_cast<std::size_t>(n)]); };
        const std::int64_t gain = wa(ny) - wa(x) + wb(x) - wb(ny);
        if (in > best_in || (in == best_in && gain > best_gain)) {
          best_in = in;
          best_gain = gain;
          best = j;
          best_pos = k;
          found = true;
        }
      }
    }
    if (!found) continue;
    const auto y = static_cast<std::size_t>(node_of[best]);
    auto& from = on[static_cast<std::size_t>(x)];
    *std::find(from.begin(), from.end(), i) = best;
    on[y][best_pos] = i;
    node_of[best] = x;
    node_of[i] = static_cast<int>(y);
    ++swaps_by_in[best_in];
  }
  return node_of;
}

// I-NUMA-14 over random passes: the pass's swaps are the reference's, node loads stay as the
// placement left them, members without samples or load never move, and the sweep never
// leaves more members outside their islands than the placement alone.
TEST(NumaPass, SwapsMatchAPlainRestatement) {
  std::size_t by_in[3] = {0, 0, 0};
  for (const char* name : {"64amd64-4p2n4ca2co", "192em64t-24n8c2t", "128ia64-17n4s2c"}) {
    const topo::topology& t = machine(name);
    const int nodes = t.node_count();
    const std::vector<std::uint32_t> caps(static_cast<std::size_t>(nodes), 2 * kCapacityScale);
    const numa_scorer sc(t, caps);
    core::rng r(5);
    for (int round = 0; round < 60; ++round) {
      const int n_groups = 2 + static_cast<int>(r.next_below(3));
      const int per_group = nodes * 2 / n_groups;
      std::vector<numa_faults> faults(static_cast<std::size_t>(n_groups * per_group), numa_faults(nodes));
      std::vector<numa_member_input> members;
      for (numa_faults& f : faults) {
        const auto home = static_cast<int>(r.next_below(static_cast<std::uint64_t>(nodes)));
        if (r.next_below(8) != 0) {  // one in eight members has no samples
          f.add_sample(home, home, 50 + r.next_below(100));
          const auto other = static_cast<int>(r.next_below(static_cast<std::uint64_t>(nodes)));
          f.add_sample(other, home, r.next_below(40));
        }
        members.push_back({&f, home, r.next_below(4) == 0 ? 0 : kCapacityScale});
      }
      std::vector<numa_group_input> groups;
      const std::span<const numa_member_input> all(members);
      for (int k = 0; k < n_groups; ++k) {
        const auto previous = static_cast<int>(r.next_below(static_cast<std::uint64_t>(nodes)));
        groups.push_back({nullptr, all.subspan(static_cast<std::size_t>(k * per_group), static_cast<std::size_t>(per_group)),
                          previous, previous, static_cast<std::uint64_t>(per_group) * kCapacityScale, {}});
      }
      const u64v load(static_cast<std::size_t>(nodes), 0);
      tun::settings s;
      const numa_pass_result on = balance_pass(sc, {groups, load, 100}, s);
      s.f.NUMA_SWAP = false;
      const numa_pass_result off = balance_pass(sc, {groups, load, 100}, s);
      SCOPED_TRACE(std::string(name) + " round " + std::to_string(round));
      ASSERT_EQ(on.member_nodes.size(), off.member_nodes.size());
      std::size_t round_by_in[3] = {0, 0, 0};
      EXPECT_EQ(on.member_nodes, reference_swaps(sc, groups, off, tun::settings{}, round_by_in));
      EXPECT_EQ(on.member_swaps, round_by_in[0] + round_by_in[1] + round_by_in[2]);
      for (int k = 0; k < 3; ++k) by_in[k] += round_by_in[k];
      const auto outside = [&](const numa_pass_result& res) {
        int count = 0;
        for (std::size_t k = 0; k < res.groups.size(); ++k) {
          for (int m = 0; m < per_group; ++m) {
            const int node = res.member_nodes[res.groups[k].members_begin + static_cast<std::size_t>(m)];
            if (res.groups[k].best >= 0 && node >= 0 && !sc.island_edge(res.groups[k].best).test(static_cast<std::size_t>(node)))
              ++count;
          }
        }
        return count;
      };
      EXPECT_LE(outside(on), outside(off));
      u64v load_on(static_cast<std::size_t>(nodes), 0), load_off(static_cast<std::size_t>(nodes), 0);
      for (std::size_t i = 0; i < members.size(); ++i) {
        if (on.member_nodes[i] >= 0) load_on[static_cast<std::size_t>(on.member_nodes[i])] += members[i].load;
        if (off.member_nodes[i] >= 0) load_off[static_cast<std::size_t>(off.member_nodes[i])] += members[i].load;
        if (on.member_nodes[i] != off.member_nodes[i]) {
          EXPECT_NE(members[i].load, 0u) << "member " << i << " has no load and was swapped";
          EXPECT_NE(members[i].faults->total_mem, 0u) << "member " << i << " has no samples and was swapped";
        }
      }
      EXPECT_EQ(load_on, load_off);
    }
  }
  // Every rank was chosen somewhere: swaps that took the partner out (net 0, by weight), kept it
  // in (net 1) and brought it in too (net 2).
  EXPECT_GT(by_in[0], 0u);
  EXPECT_GT(by_in[1], 0u);
  EXPECT_GT(by_in[2], 0u);
}

}  // namespace
}  // namespace rt::policy
