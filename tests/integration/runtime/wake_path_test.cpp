// The wake path wired into spawn (issue 4, docs/design/wake-path.md §6): a spawn that finds an
// idle worker mails the task to it and wakes that worker alone; a continuation is placed like
// an exec'd task. Real threads on a virtual one-LLC, two-core topology, so that the outcome
// does not depend on this machine's cores.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "rt/rt.hpp"

namespace {

rt::config one_llc_two_cores(const std::string& tune = "") {
  rt::config c;
  c.topology = rt::topology_source::synthetic("pack:1 l3:1 core:2 pu:1");
  c.tune = tune;
  return c;
}

// Polls until every worker has parked at least `n` times (it then sleeps until woken: only
// spawns wake it in these tests). Gives up after 30 s, which fails the calling test.
bool all_parked(rt::runtime& r, std::uint64_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    rt::stats s = r.stats();
    bool all = true;
    for (int w = 0; w < r.workers(); ++w) all = all && s.worker(w, "parks") >= n;
    if (all) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

TEST(WakePath, SpawnFindsTheParkedWorkerAndHandsTheTaskToItsMailbox) {
  rt::runtime r{one_llc_two_cores()};
  ASSERT_EQ(r.workers(), 2);
  ASSERT_TRUE(all_parked(r, 1));
  int outer = -1;
  int inner = -1;
  r.spawn([&] {
     outer = rt::runtime::current_worker();
     // The other worker is still parked: the outside hand-off woke only this one.
     inner = rt::spawn([] { return rt::runtime::current_worker(); }).join();
   }).join();
  ASSERT_GE(outer, 0);
  EXPECT_EQ(inner, 1 - outer) << "the inner spawn should have gone to the idle worker";
  rt::stats s = r.stats();
  // The outside spawn (find_idlest) and the inner one (select_idle_cpu) both found an idle
  // worker and mailed it the task; each woke exactly the worker it chose.
  EXPECT_EQ(s.total("mailbox_handoffs"), 2u);
  EXPECT_EQ(s.total("wakeups_sent"), 2u);
  EXPECT_EQ(s.worker(outer, "mailbox_handoffs"), 1u);
  EXPECT_GE(s.worker(outer, "idle_scans"), 1u);
  EXPECT_EQ(s.worker(outer, "idle_found"), 1u);
  EXPECT_EQ(s.worker(inner, "mailbox_taken"), 1u);
  EXPECT_EQ(s.worker(outer, "mailbox_taken"), 1u);
}

TEST(WakePath, NoIdleWorkerMeansTheTaskStaysOnTheSpawnersDeque) {
  rt::runtime r{one_llc_two_cores()};
  ASSERT_TRUE(all_parked(r, 1));
  std::atomic<bool> release{false};
  std::atomic<int> blocker_started{0};
  // Occupy both workers: neither is idle, so the spawn below has nowhere to hand off.
  auto b0 = r.spawn([&] {
    blocker_started.fetch_add(1);
    while (!release.load()) std::this_thread::yield();
  });
  auto b1 = r.spawn([&] {
    blocker_started.fetch_add(1);
    while (!release.load()) std::this_thread::yield();
  });
  while (blocker_started.load() < 2) std::this_thread::yield();
  const std::uint64_t handoffs_before = r.stats().total("mailbox_handoffs");
  auto h = r.spawn([] { return 0; });  // from outside, both workers busy
  release.store(true);
  b0.join();
  b1.join();
  h.join();
  EXPECT_EQ(r.stats().total("mailbox_handoffs"), handoffs_before)
      << "an outside spawn with every worker busy must queue, not hand off";
}

// I-WAKE-7 beyond the LLC: with nobody parked, a spawn into a group whose home is busy in
// another LLC of the spawner's node stays on the spawner's deque without select_worker (no
// idle scan): nothing is idle to hand it to, and a busy target on this node means the local
// push. Two LLCs of one core each; both workers busy while 100 group tasks are spawned.
TEST(WakePath, WithNobodyParkedAGroupSpawnHomedInAnotherLlcStaysLocal) {
  rt::config c;
  c.topology = rt::topology_source::synthetic("pack:1 l3:2 core:1 pu:1");
  rt::runtime r{c};
  ASSERT_EQ(r.workers(), 2);
  rt::group g{r, "elsewhere"};
  const int home = r.spawn(g, [] { return rt::runtime::current_worker(); }).join();  // the group's home
  ASSERT_GE(home, 0);
  const std::uint64_t scans_before = r.stats().total("idle_scans");
  std::atomic<int> started{0};
  std::atomic<bool> release{false};
  std::vector<std::atomic<int>> ran(100);
  for (auto& x : ran) x.store(-1);
  std::atomic<int> spawner{-1};
  auto body = [&] {
    const int me = rt::runtime::current_worker();
    started.fetch_add(1);
    while (started.load() < 2) std::this_thread::yield();  // both busy: nobody parked
    if (me == home) {
      while (!release.load()) std::this_thread::yield();
      return;
    }
    spawner.store(me);
    std::vector<rt::join_handle<void>> hs;
    for (int i = 0; i < 100; ++i) hs.push_back(rt::spawn(g, [&ran, i] { ran[i].store(rt::runtime::current_worker()); }));
    for (auto& h : hs) h.join();
    release.store(true);
  };
  auto a = r.spawn(body);
  auto b = r.spawn(body);
  a.join();
  b.join();
  ASSERT_GE(spawner.load(), 0);
  ASSERT_NE(spawner.load(), home);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(ran[i].load(), spawner.load()) << "task " << i;
  EXPECT_EQ(r.stats().total("idle_scans"), scans_before) << "no spawn should have scanned for an idle worker";
}

TEST(WakePath, ContinuationSpawnsRunToTheEnd) {
  rt::runtime r{one_llc_two_cores()};
  std::atomic<int> steps{0};
  struct chain {
    static void step(std::atomic<int>& n, int left) {
      n.fetch_add(1);
      if (left > 0) static_cast<void>(rt::spawn_continuation([&n, left] { step(n, left - 1); }));
    }
  };
  r.spawn([&] { chain::step(steps, 999); }).join();
  r.shutdown();  // drains the detached continuations
  EXPECT_EQ(steps.load(), 1000);
  EXPECT_EQ(r.stats().total("tasks_run"), 1000u);
}

// I-WAKE-10: a continuation the wake path keeps on its worker waits in the worker's slot, not
// on its deque, so no thief can take it between the spawn and its spawner's return, and the
// push wakes nobody to try. Before the slot, every continuation pushed while the other worker
// was parked woke it, and it stole the step (numart_bench_wake's execl: 0.016-0.03 migrations a
// step). Only the chain's first step comes from outside (a mailbox or node queue, not a steal).
// IDLE_WITHOUT: the chain runs alone on its worker, which find_idlest then counts as idle, so
// no step moves at all. Without it the other idle worker won find_idlest's worker phase and
// the chain hopped by hand-offs (10,700-14,200 of 20,000 steps in 7 of 9 runs): steps then
// move by the wake path's choice, never by a steal.
TEST(WakePath, ContinuationsKeptOnTheirWorkerAreNeverStolen) {
  for (const char* tune : {"", "NO_IDLE_WITHOUT"}) {
    rt::runtime r{one_llc_two_cores(tune)};
    constexpr int kSteps = 20000;
    std::atomic<int> steps{0};
    std::atomic<int> moves{0};
    struct chain {
      static void step(std::atomic<int>& n, std::atomic<int>& moved, int prev, int left) {
        const int me = rt::runtime::current_worker();
        n.fetch_add(1);
        if (prev >= 0 && me != prev) moved.fetch_add(1);
        if (left > 0)
          static_cast<void>(rt::spawn_continuation([&n, &moved, me, left] { step(n, moved, me, left - 1); }));
      }
    };
    static_cast<void>(r.spawn([&] { chain::step(steps, moves, -1, kSteps - 1); }));
    r.shutdown();  // drains the detached continuations
    const rt::stats st = r.stats();
    EXPECT_EQ(steps.load(), kSteps) << "tune '" << tune << "'";
    EXPECT_EQ(st.total("steals"), 0u) << "tune '" << tune << "': " << moves.load() << " of " << kSteps << " steps moved";
    if (*tune == '\0')
      EXPECT_EQ(moves.load(), 0) << "a step left the worker its chain ran alone on";
    else
      EXPECT_LE(static_cast<std::uint64_t>(moves.load()), st.total("mailbox_handoffs"));
  }
}

// I-WAKE-10: a join that ends gives its worker's slot back to the deque. The other worker is
// held by a spinning task while the joiner spawns its child (so the child stays on the
// joiner's deque: nobody is idle) and runs it inline (I-TASK-3); the child's last act is a
// continuation, which the wake path keeps in the joiner's slot. The joining task then releases
// the other worker and spins until the continuation has run: only the other worker can run it,
// from the deque. (A 60 s liveness bound turns the hang this would be into a failure.)
TEST(WakePath, AContinuationLeftInTheSlotByAJoinReachesTheOtherWorker) {
  rt::runtime r{one_llc_two_cores()};
  std::atomic<bool> held{false};
  std::atomic<bool> go{false};
  std::atomic<bool> ran{false};
  std::atomic<bool> seen{false};
  std::atomic<int> joiner{-1};
  std::atomic<int> child{-1};
  r.spawn([&] {
     joiner.store(rt::runtime::current_worker());
     auto holder = rt::spawn([&] {
       held.store(true);
       while (!go.load()) std::this_thread::yield();
     });
     const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
     while (!held.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
     rt::spawn([&] {
       child.store(rt::runtime::current_worker());
       static_cast<void>(rt::spawn_continuation([&] { ran.store(true); }));
     }).join();
     go.store(true);
     while (!ran.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
     seen.store(ran.load());
     holder.join();
   }).join();
  r.shutdown();
  ASSERT_EQ(child.load(), joiner.load()) << "the child did not run inline on its joiner's worker";
  EXPECT_TRUE(seen.load()) << "the continuation waited in the slot of a worker that went on with its joiner";
  EXPECT_TRUE(ran.load());
}

// I-WAKE-9 on this machine's real cores: an outside thread pinned to a worker's core spawns
// into a parked pool; the task must start on the spawner's own core, whichever core that is
// and whatever the rotating hint or the workers' spare capacity say. Needs two allowed cores
// (skipped otherwise, e.g. under a one-CPU taskset).
TEST(WakePath, OutsideSpawnStartsOnTheSpawnersOwnCore) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  rt::config c;
  c.workers = 2;
  rt::runtime r{c};
  if (cpus.size() < 2 || r.workers() < 2) GTEST_SKIP() << "needs two allowed cores";
  ASSERT_TRUE(all_parked(r, 1));
  // The spawner pins itself to the first two allowed CPUs in turn (the workers' cores).
  std::thread spawner([&] {
    for (int round = 0; round < 8; ++round) {
      const std::uint64_t parks = r.stats().total("parks");
      const int mine = cpus[static_cast<std::size_t>(round) % 2];
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(mine, &one);
      ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof one, &one), 0);
      const int ran_on = r.spawn([] { return sched_getcpu(); }).join();
      EXPECT_EQ(ran_on, mine) << "round " << round << ": the task started on another core than the spawner's";
      // Wait until the pool is parked again: the worker that ran the task parks once more.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (r.stats().total("parks") <= parks && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ASSERT_GT(r.stats().total("parks"), parks) << "the pool did not park again";
    }
  });
  spawner.join();
}

}  // namespace
