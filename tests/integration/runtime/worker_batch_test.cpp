// WORKER_BATCH (docs/adr/0022-worker-batch.md): with the feature on, every worker that inherited
// SCHED_OTHER runs as SCHED_BATCH, so a worker woken by a spawn does not preempt the spawning
// thread; a worker that inherited another policy keeps it, and the runtime says so once. Off
// (the default), workers keep the policy of the thread that built the runtime. Real threads.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "rt/rt.hpp"

namespace {

using by_node = std::map<int, std::set<int>>;

// The scheduling policies seen from inside tasks, by the node of the worker that ran them, until
// each of the two nodes' single worker ran one (spawn_on is a start, not a binding: a thief may
// run a task elsewhere, so the test spawns again; a liveness bound of 60 s).
by_node policies_by_node(const std::string& tune) {
  rt::config c;
  c.name = "batch";
  c.topology = rt::topology_source::synthetic("pack:2 [numa] core:1 pu:1");
  c.workers = 2;
  c.tune = tune;
  rt::runtime r{c};
  by_node seen;
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

by_node both_nodes(int policy) { return {{0, {policy}}, {1, {policy}}}; }

TEST(WorkerBatch, WithTheFeatureEveryWorkerRunsAsSchedBatch) {
  if (sched_getscheduler(0) != SCHED_OTHER) GTEST_SKIP() << "the test process does not run as SCHED_OTHER";
  testing::internal::CaptureStderr();
  const by_node seen = policies_by_node("WORKER_BATCH");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(seen, both_nodes(SCHED_BATCH));
}

TEST(WorkerBatch, WithoutItWorkersKeepTheBuildersPolicy) {
  EXPECT_EQ(policies_by_node(""), both_nodes(sched_getscheduler(0)));
}

// A runtime built by a thread that is not SCHED_OTHER (SCHED_BATCH here: SCHED_IDLE workers could
// starve behind a loaded machine's other tests): its workers inherit the builder's policy, and
// WORKER_BATCH keeps it, with one line on stderr for the runtime, not one per worker.
TEST(WorkerBatch, AWorkerThatInheritedAnotherPolicyKeepsIt) {
  by_node seen;
  std::string err;
  int set = -1;
  std::thread builder([&] {
    sched_param sp{};
    set = pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
    if (set != 0) return;
    testing::internal::CaptureStderr();
    seen = policies_by_node("WORKER_BATCH");
    err = testing::internal::GetCapturedStderr();
  });
  builder.join();
  if (set != 0) GTEST_SKIP() << "SCHED_BATCH refused here: " << set;
  EXPECT_EQ(seen, both_nodes(SCHED_BATCH));
  EXPECT_EQ(err, "numart: WORKER_BATCH: runtime 'batch': its workers keep the policy they inherited (SCHED_BATCH, not SCHED_OTHER)\n");
}

}  // namespace
