// WORKER_BATCH (docs/adr/0022-worker-batch.md): with the feature on, every worker thread runs
// as SCHED_BATCH, so a worker woken by a spawn does not preempt the spawning thread; off (the
// default), workers keep the policy of the thread that built the runtime. Real threads.
#include <gtest/gtest.h>
#include <sched.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "rt/rt.hpp"

namespace {

// The scheduling policies seen from inside tasks, by the node of the worker that ran them, until
// each of the two nodes' single worker ran one (spawn_on is a start, not a binding: a thief may
// run a task elsewhere, so the test spawns again; a liveness bound of 60 s).
std::map<int, std::set<int>> policies_by_node(const std::string& tune) {
  rt::config c;
  c.topology = rt::topology_source::synthetic("pack:2 [numa] core:1 pu:1");
  c.workers = 2;
  c.tune = tune;
  rt::runtime r{c};
  std::map<int, std::set<int>> seen;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (seen.size() < 2 && std::chrono::steady_clock::now() < deadline) {
    for (int n = 0; n < r.nodes(); ++n) {
      const auto [node, policy] = r.spawn_on(rt::node_id{n}, [] {
                                     return std::pair<int, int>{rt::current_node().value, sched_getscheduler(0)};
                                   }).join();
      seen[node].insert(policy);
    }
  }
  return seen;
}

TEST(WorkerBatch, WithTheFeatureEveryWorkerRunsAsSchedBatch) {
  const auto seen = policies_by_node("WORKER_BATCH");
  const std::map<int, std::set<int>> want{{0, {SCHED_BATCH}}, {1, {SCHED_BATCH}}};
  EXPECT_EQ(seen, want);
}

TEST(WorkerBatch, WithoutItWorkersKeepTheBuildersPolicy) {
  ASSERT_EQ(sched_getscheduler(0), SCHED_OTHER) << "the test runs under another policy";
  const auto seen = policies_by_node("");
  const std::map<int, std::set<int>> want{{0, {SCHED_OTHER}}, {1, {SCHED_OTHER}}};
  EXPECT_EQ(seen, want);
}

}  // namespace
