// jbb::chunk_cost over the real 8-node Opteron matrix (10 / 16 / 22) and a two-node machine
// (10 / 20): the cost every touched chunk pays on a virtual topology (docs/jbb.md "Locality and
// the emulated memory cost", ADR 0024).
#include <gtest/gtest.h>

#include <string>

#include "topology/topology.hpp"
#include "workload.hpp"

namespace {

using namespace rt;

jbb::machine machine_of(const std::string& source, int local_cost, int remote_cost, bool emulate = true) {
  const topo::topology t = topo::topology::load(topo::source::parse(source));
  jbb::machine m;
  m.nodes = t.node_count();
  for (int a = 0; a < m.nodes; ++a)
    for (int b = 0; b < m.nodes; ++b) m.distance.push_back(t.node_distance(a, b));
  m.emulate = emulate;
  m.local_cost = local_cost;
  m.remote_cost = remote_cost;
  return m;
}

const std::string kOpteron = "xml:" + std::string(NUMART_TOPOLOGY_DIR) + "/64amd64-4p2n4ca2co.xml";

struct row {
  int thread, data, distance;
  unsigned long long cost;
};

TEST(ChunkCost, DefaultsFollowTheSlitRatioOnTheOpteron) {
  const jbb::machine m = machine_of(kOpteron, jbb::kDefaultLocalCost, jbb::kDefaultRemoteCost);
  ASSERT_EQ(m.nodes, 8);
  ASSERT_EQ(jbb::kDefaultLocalCost, 64);
  ASSERT_EQ(jbb::kDefaultRemoteCost, 64);
  // local 64; distance 16: 64 + 6 x 64 / 10 = 102 (1.6 x local); distance 22: 64 + 12 x 64 / 10 = 140.
  const row rows[] = {{0, 0, 10, 64}, {5, 5, 10, 64}, {0, 1, 16, 102}, {4, 7, 16, 102},
                      {0, 3, 22, 140}, {7, 0, 22, 140}, {1, 2, 22, 140}};
  for (const row& r : rows) {
    SCOPED_TRACE("thread node " + std::to_string(r.thread) + ", data node " + std::to_string(r.data));
    EXPECT_EQ(m.dist(r.thread, r.data), r.distance);
    EXPECT_EQ(jbb::chunk_cost(m, r.thread, r.data), r.cost);
  }
}

TEST(ChunkCost, TheFormerCalibrationChargesRemoteChunksOnly) {
  const jbb::machine m = machine_of(kOpteron, 0, 12);
  EXPECT_EQ(jbb::chunk_cost(m, 2, 2), 0u);
  EXPECT_EQ(jbb::chunk_cost(m, 0, 1), 7u);   // 6 x 12 / 10, rounded down
  EXPECT_EQ(jbb::chunk_cost(m, 0, 3), 14u);  // 12 x 12 / 10
}

TEST(ChunkCost, RemoteCostIsPerSlitUnitAboveLocal) {
  const jbb::machine m = machine_of("synthetic:pack:2 [numa] core:1 pu:1;distances:10,20,20,10", 5, 30);
  ASSERT_EQ(m.nodes, 2);
  EXPECT_EQ(jbb::chunk_cost(m, 0, 0), 5u);
  EXPECT_EQ(jbb::chunk_cost(m, 1, 1), 5u);
  EXPECT_EQ(jbb::chunk_cost(m, 0, 1), 35u);  // remote_cost is the extra at distance 20
  EXPECT_EQ(jbb::chunk_cost(m, 1, 0), 35u);
}

TEST(ChunkCost, NothingIsChargedWithoutEmulation) {
  const jbb::machine m = machine_of(kOpteron, 64, 64, false);
  EXPECT_EQ(jbb::chunk_cost(m, 0, 0), 0u);
  EXPECT_EQ(jbb::chunk_cost(m, 0, 3), 0u);
}

}  // namespace
