// Review: a worker woken as a *searcher* (idle_set::take_sleeper_to_search, after_wake ->
// as_searcher) that then finds its task through find_local() (own mailbox, own deque or its
// node's injection queue) returns from find_work() with w.searching still true. The idle set
// keeps counting it as a searcher for as long as that task runs, so
//   * should_wake() is false for every spawn (searching != 0): no sleeper is ever woken, and
//   * try_start_searching() refuses other free workers once searching_max_pct is reached: they
//     spin between find_work() and a cancelled park() and never steal.
// Work queued on a busy worker then waits for the holder's task to end (I-SEARCH-1, DESIGN.md
// §8 "never lose a wakeup", §1 "never leaves a core idle").
//
// Scenario (3 virtual nodes, one worker each, searching_max = max(1, 3*50/100) = 1):
//   B  occupies worker Wb until released.
//   R  runs on W0 and, once the third worker S sleeps, spawns A (push_local: wakes S as a
//      searcher) and at once spawn_on(node of S, Y): S is already off the sleeper list, so no
//      wake, and Y waits in S's node queue, where S's find_local() finds it first.
//      Y blocks until C ran, holding S's searching token.
//   R  releases B (Wb is now free) and spawns C, then waits (without helping) for C to run.
// A correct scheduler runs C on Wb. With the leak, Wb is refused as a searcher, C never runs and
// R gives up after 20 s. (If S happens to steal A before Y arrives, the round passes: the test
// repeats the round.)
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "rt/rt.hpp"

namespace {

using steady = std::chrono::steady_clock;

rt::config three_single_worker_nodes() {
  rt::config c;
  c.topology = rt::topology_source::synthetic("pack:3 [numa] core:1 pu:1");
  c.workers = 3;
  return c;
}

struct flags {
  std::atomic<int> b_worker{-1};
  std::atomic<bool> b_go{false};
  std::atomic<bool> c_ran{false};
  std::atomic<bool> abort{false};
};

// Returns true when C ran while R waited for it.
bool one_round() {
  rt::runtime r{three_single_worker_nodes()};
  const std::vector<int> node_of = r.stats().worker_node;
  flags f;
  auto hb = r.spawn([&f] {
    f.b_worker = rt::runtime::current_worker();
    while (!f.b_go.load() && !f.abort.load()) std::this_thread::yield();
  });
  while (f.b_worker.load() < 0) std::this_thread::yield();
  auto hr = r.spawn([&f, &node_of] {
    const int me = rt::runtime::current_worker();
    const int s = 3 - me - f.b_worker.load();
    // Setup only (not an assertion): let the third worker finish searching and park.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto ha = rt::spawn([] {});  // wakes S, the only sleeper, as a searcher
    auto hy = rt::spawn_on(rt::node_id{node_of[static_cast<std::size_t>(s)]}, [&f] {
      while (!f.c_ran.load() && !f.abort.load()) std::this_thread::yield();
    });
    f.b_go = true;  // Wb becomes free
    auto hc = rt::spawn([&f] { f.c_ran = true; });
    const auto deadline = steady::now() + std::chrono::seconds(20);
    bool ok = true;
    while (!f.c_ran.load()) {
      if (steady::now() > deadline) {
        ok = false;
        f.abort = true;  // unblock Y and B; the joins below run C and A inline
        break;
      }
      std::this_thread::yield();
    }
    ha.join();
    hc.join();
    hy.join();
    return ok;
  });
  const bool ok = hr.join();
  hb.join();
  return ok;
}

TEST(ReviewSearching, AWorkerThatFoundLocalWorkReleasesItsSearchingToken) {
  std::atomic<bool> finished{false};
  std::thread watchdog([&finished] {
    const auto until = steady::now() + std::chrono::seconds(100);
    while (!finished.load()) {
      if (steady::now() > until) {
        std::fprintf(stderr, "watchdog: scenario hung for 100 s\n");
        std::fflush(stderr);
        std::_Exit(1);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  bool all_ok = true;
  for (int round = 0; round < 10 && all_ok; ++round) {
    all_ok = one_round();
    EXPECT_TRUE(all_ok) << "round " << round
                        << ": C stayed queued on a busy worker for 20 s while another worker was free "
                           "(a worker running a task still held a searching slot)";
  }
  finished = true;
  watchdog.join();
}

}  // namespace
