// I-STEAL-19 (feature DELEGATE_REMOTE_WORK, docs/design/stealing.md): the workers of a node
// that some group prefers stay free for that group's tasks. A wake-up for work any worker may
// run goes to a sleeper of a node no group prefers, and a searcher of the preferred node that
// finds work on another node wakes such a sleeper for it instead of taking it. Real threads on a
// virtual topology of three nodes with one worker each; a group prefers node 0.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "rt/rt.hpp"
#include "support/virtual_nodes.hpp"

namespace {

rt::config three_nodes(const std::string& tune) {
  return numart_test::synthetic_nodes("pack:3 [numa] core:1 pu:1", 3, tune);
}

using numart_test::eventually;

std::uint64_t counter_of(const rt::stats& s, int worker, const std::string& name) {
  for (std::size_t i = 0; i < s.counter_names.size(); ++i)
    if (s.counter_names[i] == name) return s.per_worker[static_cast<std::size_t>(worker)][i];
  ADD_FAILURE() << "no counter " << name;
  return 0;
}

int worker_on(const rt::stats& s, int node) {
  for (std::size_t w = 0; w < s.worker_node.size(); ++w)
    if (s.worker_node[w] == node) return static_cast<int>(w);
  return -1;
}

// spawn_on is a start, not a binding: an idle worker of another node may steal the task first.
// Spawns `body` onto `node` until one run starts there (the others return at once) and returns
// its handle once it has started.
template <class F>
rt::join_handle<void> start_on(rt::runtime& r, int node, F body) {
  for (;;) {
    auto started = std::make_shared<std::atomic<int>>(-1);
    auto h = r.spawn_on(rt::node_id{node}, [started, node, body] {
      started->store(rt::current_node().value);
      if (rt::current_node().value == node) body();
    });
    if (!eventually([&] { return started->load() >= 0; })) {
      ADD_FAILURE() << "a task spawned on node " << node << " never started";
      return h;
    }
    if (started->load() == node) return h;
    h.join();
  }
}

// Node 1's worker is held by a task that, on request, spawns an ungrouped task onto its own node
// (spawn_on from a worker of that node: onto its deque, waking a sleeper when nobody searches).
// Every worker parked before the holder's spawn, which wakes node 1's (a sleeper of its node),
// so node 2's worker stays parked from the start; node 0's worker then runs a task and parks
// again, so it is the newest sleeper and node 2's the oldest. Returns the node the ungrouped
// task ran on.
int node_of_the_woken_worker(rt::runtime& r) {
  const rt::stats at_start = r.stats();
  const int w0 = worker_on(at_start, 0);
  EXPECT_TRUE(eventually([&] {
    const rt::stats s = r.stats();
    for (std::size_t w = 0; w < s.worker_node.size(); ++w)
      if (counter_of(s, static_cast<int>(w), "parks") == 0) return false;
    return true;
  })) << "a worker never parked";
  std::atomic<bool> push{false};
  std::atomic<bool> release{false};
  std::atomic<int> ran_on{-1};
  auto holder = start_on(r, 1, [&] {
    while (!push.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
    rt::spawn_on(rt::node_id{1}, [&] { ran_on.store(rt::current_node().value); }).detach();
    while (!release.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
  });
  const std::uint64_t parks0 = counter_of(r.stats(), w0, "parks");
  start_on(r, 0, [] {}).join();
  EXPECT_TRUE(eventually([&] { return counter_of(r.stats(), w0, "parks") > parks0; }))
      << "node 0's worker did not park again";
  push.store(true);
  EXPECT_TRUE(eventually([&] { return ran_on.load() >= 0; })) << "the ungrouped task never ran";
  release.store(true);
  holder.join();
  return ran_on.load();
}

// With the group preferring node 0 and the feature set by `tune`.
int node_of_the_woken_worker(const std::string& tune) {
  rt::runtime r{three_nodes(tune)};
  rt::group g{r, "node0"};
  g.set_preferred_node(rt::node_id{0});
  return node_of_the_woken_worker(r);
}

TEST(DelegateRemoteWork, AWakeUpForUngroupedWorkGoesToASleeperOfANodeNoGroupPrefers) {
  EXPECT_EQ(node_of_the_woken_worker(""), 2);
}

// Without the rule the newest sleeper is woken: node 0's worker, whose node the group prefers.
TEST(DelegateRemoteWork, WithoutTheRuleTheNewestSleeperIsWokenWhateverItsNode) {
  EXPECT_EQ(node_of_the_woken_worker("NO_DELEGATE_REMOTE_WORK"), 0);
}

// Node 0's worker runs a stream of the group's short tasks, so it often searches between them;
// node 1's worker is held by a task that pushes ungrouped tasks onto its own node. A push seen
// by no sleeper's wake-up (node 0's worker is searching) is found by that searcher, which wakes
// node 2's sleeper for it (steals_delegated) instead of running it.
TEST(DelegateRemoteWork, ASearcherOfThePreferredNodeWakesAnotherNodesSleeperForRemoteWork) {
  rt::runtime r{three_nodes("")};
  rt::group g{r, "node0"};
  g.set_preferred_node(rt::node_id{0});
  std::atomic<bool> stop{false};
  std::atomic<int> pushed{0};
  std::atomic<int> ran{0};
  auto holder = start_on(r, 1, [&] {
    while (!stop.load()) {
      rt::spawn_on(rt::node_id{1}, [&] { ran.fetch_add(1); }).detach();
      pushed.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  std::thread feeder([&] {
    while (!stop.load()) {
      std::vector<rt::join_handle<void>> hs;
      for (int i = 0; i < 64; ++i) hs.push_back(r.spawn(g, [] {}));
      for (auto& h : hs) h.join();
    }
  });
  const bool delegated = eventually([&] { return r.stats().total("steals_delegated") > 0; });
  stop.store(true);
  feeder.join();
  holder.join();
  EXPECT_TRUE(delegated) << "no searcher of node 0 left remote work to node 2's worker";
  EXPECT_TRUE(eventually([&] { return ran.load() == pushed.load(); })) << "an ungrouped task never ran";
}

// A group that is gone no longer keeps its node's workers off other nodes' work: with the
// group's rt::group destroyed (after moving between nodes), a wake-up goes to the newest
// sleeper again.
TEST(DelegateRemoteWork, ADestroyedGroupNoLongerCountsForItsNode) {
  rt::runtime r{three_nodes("")};
  {
    rt::group g{r, "gone"};
    g.set_preferred_node(rt::node_id{0});
    g.set_preferred_node(rt::node_id{2});
    g.set_preferred_node(rt::node_id{0});
  }
  EXPECT_EQ(node_of_the_woken_worker(r), 0);
}

}  // namespace
