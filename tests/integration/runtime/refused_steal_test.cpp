// Thieves that would give a task back to its group's preferred node (docs/design/stealing.md,
// I-STEAL-13, -15): a backlog of twice the node's workers makes idle thieves elsewhere keep the
// tasks. Real threads on a virtual 2-node topology (2 workers a node); numa_steal_refusals is
// set out of reach so that only the backlog rule can make a thief keep a task (with
// numa_overload_queued_pct out of reach too, the test fails after its 60 s bound).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "rt/rt.hpp"

namespace {

rt::config two_nodes(int workers, const std::string& tune) {
  rt::config c;
  c.topology = rt::topology_source::synthetic("pack:2 [numa] core:2 pu:1");
  c.workers = workers;
  c.tune = tune;
  return c;
}

constexpr const char* kNoRefusalLimit = "numa_steal_refusals=1000000";

// Polls `done` for up to 60 s (a liveness bound, not a timing expectation).
template <class F>
bool eventually(F done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return done();
}

// Node 0's two workers are held by two of the group's tasks; six more queue behind them, a
// backlog of 6 >= 200 % of 2 workers: node 1's idle workers keep some of them while node 0 is
// still held, instead of giving them back for ever.
TEST(RefusedSteal, ABackloggedNodeLosesItsQueuedTasksToIdleThieves) {
  rt::runtime r{two_nodes(4, kNoRefusalLimit)};
  ASSERT_TRUE(r.virtual_topology());
  ASSERT_EQ(r.nodes(), 2);
  rt::group g{r, "held"};
  g.set_preferred_node(rt::node_id{0});
  std::atomic<bool> release{false};
  std::atomic<int> holding{0};
  std::atomic<int> ran_on_1{0};
  std::atomic<int> finished{0};
  std::vector<rt::join_handle<void>> hs;
  for (int i = 0; i < 2; ++i) {
    hs.push_back(r.spawn(g, [&] {
      holding.fetch_add(1);
      while (!release.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }));
  }
  ASSERT_TRUE(eventually([&] { return holding.load() == 2; })) << "node 0's workers never took the holding tasks";
  for (int i = 0; i < 6; ++i) {
    hs.push_back(r.spawn(g, [&] {
      if (rt::current_node().value == 1) ran_on_1.fetch_add(1);
      finished.fetch_add(1);
    }));
  }
  const bool spilled = eventually([&] { return ran_on_1.load() > 0; });
  release.store(true);
  for (auto& h : hs) h.join();
  EXPECT_TRUE(spilled) << "no queued task ran on node 1 while node 0 was held";
  EXPECT_EQ(finished.load(), 6);
  EXPECT_GE(r.stats().total("steals_overridden"), 1u);
}

}  // namespace
