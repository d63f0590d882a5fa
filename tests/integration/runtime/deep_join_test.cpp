// I-PARK-12. A joiner past its help floor (I-HELP-1: help_stack_reserve_pct of its stack in use)
// takes no task of another worker, its mailbox's included. Such tasks must not keep it from
// blocking (I-PARK-2's re-check): before, its block saw them every time and it went back to
// spinning, a block attempt per search, for as long as the join lasted. Blocked, it is a
// sleeper that cannot search, and a wake-up for new work must never pick it (else two such
// joiners could pass the searcher's role between themselves while a worker that could take the
// work sleeps on). Real threads on a virtual two-core topology (idle polling off there, so
// nothing but that re-check keeps it awake), and the idle set itself.
#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>

#include "rt/rt.hpp"
#include "sync/idle.hpp"

namespace {

constexpr std::size_t kFrameBytes = 64 * 1024;

// Runs f below `levels` frames of kFrameBytes each, every frame touched so that it is really
// on the stack.
template <class F>
void below(int levels, const F& f) {
  volatile char pad[kFrameBytes];
  pad[0] = 1;
  pad[kFrameBytes - 1] = 1;
  if (levels == 0)
    f();
  else
    below(levels - 1, f);
  pad[kFrameBytes / 2] = pad[0];
}

// Frames of kFrameBytes that put more than 15 % of the calling thread's stack in use.
int levels_for_15_percent() {
  pthread_attr_t attr;
  std::size_t size = 8u << 20;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* base = nullptr;
    static_cast<void>(pthread_attr_getstack(&attr, &base, &size));
    pthread_attr_destroy(&attr);
  }
  return static_cast<int>(size * 15 / 100 / kFrameBytes) + 1;
}

TEST(DeepJoin, AJoinerPastItsHelpFloorBlocksWhileWorkItMayNotTakeWaits) {
  rt::config c;
  c.topology = rt::topology_source::synthetic("pack:1 l3:1 core:2 pu:1");
  c.tune = "help_stack_reserve_pct=90";  // the floor: 10 % of the stack in use
  rt::runtime r{c};
  std::atomic<bool> held{false}, deep{false}, queued{false}, release{false};
  std::atomic<int> holder_worker{-1}, joiner_worker{-1};
  std::atomic<std::uint64_t> blocks_at_join{0};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto wait_for = [&](const std::atomic<bool>& flag) {
    while (!flag.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    return flag.load();
  };
  // The holder occupies one worker and, once the joiner is deep, queues a task on its deque.
  auto holder = r.spawn([&] {
    holder_worker.store(rt::runtime::current_worker());
    held.store(true);
    if (wait_for(deep)) static_cast<void>(rt::spawn([] {}));
    queued.store(true);
    wait_for(release);
  });
  EXPECT_TRUE(wait_for(held));
  auto joiner = r.spawn([&] {
    joiner_worker.store(rt::runtime::current_worker());
    below(levels_for_15_percent(), [&] {
      blocks_at_join.store(r.stats().total("join_blocks"));
      deep.store(true);
      holder.join();
    });
  });
  EXPECT_TRUE(wait_for(queued));
  // Until the joiner has tried to block (join_blocks is published as it does), within the
  // deadline; then 100 ms more of the join (the failures above fall through to the release).
  while (r.stats().total("join_blocks") == blocks_at_join.load() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  const std::uint64_t first = r.stats().total("join_blocks");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::uint64_t more = r.stats().total("join_blocks") - first;
  release.store(true);
  joiner.join();
  EXPECT_NE(holder_worker.load(), joiner_worker.load()) << "the joiner ran on the holder's worker";
  EXPECT_GT(first, blocks_at_join.load()) << "the deep joiner never tried to block";
  // A blocked joiner tries again only after a wake-up (a spawn's or a spurious futex return):
  // a spinning one tried once per search round (thousands in 100 ms).
  EXPECT_LE(more, 2u) << "the deep joiner kept re-trying its block while the holder's task waited";
}

// End to end: two workers block as joiners past their help floor, each joining a task that
// another worker holds, while a fifth worker sleeps. Work arriving then, spawned by a holder
// (to its deque, or handed to the sleeper) and from an outside thread (placed through
// find_idlest), must reach the sleeper: the joiners take none of it, and a wake-up or hand-off
// that chose one of them would leave it waiting for the holders' release, which comes only
// after every such task has run (or the deadline has passed). No assertion returns early:
// the tasks use this frame's locals until the release and the joins at the end.
TEST(DeepJoin, WorkArrivingWhileTwoJoinersAreBlockedRunsOnTheWorkerThatCanSearch) {
  constexpr int kWorkers = 5;
  rt::config c;
  c.topology = rt::topology_source::synthetic("pack:1 l3:1 core:5 pu:1");
  c.tune = "help_stack_reserve_pct=90";  // the floor: 10 % of the stack in use
  rt::runtime r{c};
  constexpr int kTasks = 64;  // from each source
  std::atomic<bool> release{false}, spawn_now{false};
  std::atomic<int> held{0}, deep{0}, ran{0};
  std::atomic<int> holder_worker[2] = {-1, -1};
  std::atomic<int> joiner_worker[2] = {-1, -1};
  std::atomic<int> ran_on[kWorkers] = {};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto wait_until = [&](auto pred) {
    while (!pred() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    return pred();
  };
  auto work = [&] {
    const int w = rt::runtime::current_worker();
    if (w >= 0 && w < kWorkers) ran_on[w].fetch_add(1);
    ran.fetch_add(1);
  };
  auto holder = [&](int k) {
    return r.spawn([&, k] {
      holder_worker[k].store(rt::runtime::current_worker());
      held.fetch_add(1);
      if (k == 0 && wait_until([&] { return spawn_now.load(); }))
        for (int i = 0; i < kTasks; ++i) static_cast<void>(rt::spawn(work));
      wait_until([&] { return release.load(); });
    });
  };
  rt::join_handle<void> holders[2] = {holder(0), holder(1)};
  EXPECT_TRUE(wait_until([&] { return held.load() == 2; })) << "the holders never started";
  std::atomic<bool> go_deep{false};
  auto joiner = [&](int k) {
    return r.spawn([&, k] {
      joiner_worker[k].store(rt::runtime::current_worker());
      wait_until([&] { return go_deep.load(); });
      below(levels_for_15_percent(), [&] {
        deep.fetch_add(1);
        holders[k].join();
      });
    });
  };
  rt::join_handle<void> joiners[2] = {joiner(0), joiner(1)};
  // The fifth worker parks before the joiners block, so that they are the newest sleepers: a
  // notifier that took the newest sleeper able to search, were they registered so, would pick
  // one of them.
  EXPECT_TRUE(wait_until([&] { return joiner_worker[0].load() >= 0 && joiner_worker[1].load() >= 0; }))
      << "the joiners never started";
  int sleeper = -1;
  for (int w = 0; w < kWorkers; ++w)
    if (w != holder_worker[0].load() && w != holder_worker[1].load() && w != joiner_worker[0].load() &&
        w != joiner_worker[1].load())
      sleeper = w;
  // Holders and joiners spin in their own code, so they hold four distinct workers.
  EXPECT_GE(sleeper, 0) << "holders " << holder_worker[0].load() << ", " << holder_worker[1].load() << ", joiners "
                        << joiner_worker[0].load() << ", " << joiner_worker[1].load();
  // Nothing spawns from here until go_deep: once parked it stays parked; the pause only makes
  // it likely that it has (the test's verdict does not depend on it).
  EXPECT_TRUE(sleeper >= 0 && wait_until([&] { return r.stats().worker(sleeper, "parks") > 0; }))
      << "worker " << sleeper << " never parked";
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  go_deep.store(true);
  // Both joiners deep and blocked: each joiner's worker counts a block (join_blocks is
  // published as a joiner blocks; they ran nothing before that could have blocked).
  auto blocks_of = [&](const rt::stats& st, int k) {
    const int w = joiner_worker[k].load();
    return w >= 0 ? st.worker(w, "join_blocks") : 0;
  };
  const bool blocked = wait_until([&] {
    const rt::stats st = r.stats();
    return deep.load() == 2 && blocks_of(st, 0) > 0 && blocks_of(st, 1) > 0;
  });
  EXPECT_TRUE(blocked) << "the two joiners never blocked";
  // First the holder's tasks alone (a notifier or a hand-off must reach the sleeper), then an
  // outside thread's (find_idlest must not hand one to a blocked joiner).
  spawn_now.store(true);
  const bool holders_ran = wait_until([&] { return ran.load() == kTasks; });
  for (int i = 0; i < kTasks; ++i) static_cast<void>(r.spawn(work));
  const bool all_ran = holders_ran && wait_until([&] { return ran.load() == 2 * kTasks; });
  release.store(true);
  for (auto& j : joiners) j.join();
  EXPECT_TRUE(holders_ran) << ran.load() << " of the holder's " << kTasks << " tasks ran while the joiners were blocked";
  EXPECT_TRUE(all_ran) << ran.load() << " of " << 2 * kTasks << " tasks ran while the joiners were blocked";
  if (sleeper >= 0) {
    EXPECT_EQ(ran_on[sleeper].load(), 2 * kTasks) << "worker " << sleeper << " did not run all the work";
  }
  for (const auto& j : joiner_worker) {
    if (j.load() >= 0) {
      EXPECT_EQ(ran_on[j.load()].load(), 0) << "blocked joiner " << j.load() << " ran work it may not take";
    }
  }
}

// Worker 0 parks first, then workers 1 and 2 block as joiners that cannot search: the wake-up
// for new work takes worker 0, and none is left for a second one. With only them asleep, a
// notifier has nobody to wake and a spawn's fast path (I-WAKE-7) holds.
TEST(DeepJoin, TheIdleSetNeverWakesASleeperThatCannotSearch) {
  rt::sync::idle_set<rt::sync::native> set(3, 3);
  static_cast<void>(set.prepare_park(0, false));
  static_cast<void>(set.prepare_park(1, false, true, false));
  static_cast<void>(set.prepare_park(2, false, true, false));
  EXPECT_TRUE(set.should_wake());
  EXPECT_EQ(set.take_sleeper_to_search(), 0);
  EXPECT_EQ(set.after_wake(0), rt::sync::idle_set<rt::sync::native>::wake_kind::as_searcher);
  EXPECT_TRUE(set.stop_searching());
  EXPECT_FALSE(set.should_wake()) << "only joiners that cannot search sleep, yet a notifier would look for one";
  EXPECT_FALSE(set.anyone_parked());
  EXPECT_EQ(set.take_sleeper_to_search(), -1) << "a joiner that cannot search was woken to search";
  EXPECT_EQ(set.quiescent_epoch(), 0u) << "blocked joiners left the runtime looking quiescent";
  // They still leave their registration as before: their cancel, or a directed wake.
  EXPECT_EQ(set.cancel_park(1, true), rt::sync::idle_set<rt::sync::native>::cancel_result::cancelled);
  EXPECT_TRUE(set.take_sleeper(2));
  EXPECT_FALSE(set.take_sleeper(2)) << "a directed wake took a joiner that had already left";
  EXPECT_EQ(set.joiner_count(), 1u);  // worker 2's block ends with its own cancel_park
  EXPECT_EQ(set.cancel_park(2, true), rt::sync::idle_set<rt::sync::native>::cancel_result::already_woken);
  // A searchable registration of the same worker later is picked again, and counts as asleep.
  static_cast<void>(set.prepare_park(2, false));
  EXPECT_TRUE(set.anyone_parked());
  EXPECT_EQ(set.take_sleeper_to_search(), 2);
  EXPECT_FALSE(set.anyone_parked());
}

}  // namespace
