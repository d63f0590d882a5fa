// A worker's load signal as the other workers see it (rt::stats::worker_util; the thieves'
// overload rule, I-STEAL-16, reads the same value): a worker that runs a task is seen busy,
// whatever way it came to run it; and its idle stretches feed avg_idle
// (rt::stats::worker_avg_idle_ns). Real threads; sync/fault.hpp stretches the park protocol's
// window between registration and re-check, so that the next spawn, right after the join of
// the one before, lands in it and the worker cancels its park (park_cancels) instead of
// sleeping. (Idle polling, which would find that spawn first, is off on virtual topologies.)
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "rt/rt.hpp"
#include "support/virtual_nodes.hpp"
#include "sync/fault.hpp"

namespace {

namespace fault = rt::sync::fault;

// Arms the fault plan for one test and disarms it at the end, an assertion included.
struct armed_faults {
  explicit armed_faults(const fault::plan& p) { fault::arm(p); }
  ~armed_faults() { fault::disarm(); }
  armed_faults(const armed_faults&) = delete;
  armed_faults& operator=(const armed_faults&) = delete;
};

// Each task holds the only worker for at least 100 ms from its stamp, about three pelt
// half-lives (32 ms each): a signal aged as busy over that stretch is about 1024 - 1024 / 8 =
// 896 or more whatever it started from, and one aged as idle about 1024 / 8 = 128 or less. The bar between
// them, 512, does not depend on how fast the machine is: the aging reads the clock, and the
// test waits at least that long. UTIL_EST is off: the estimate sampled at the park before
// (cpu_util() is the larger of the two) would otherwise hide an idle-aged signal.
constexpr auto kHold = std::chrono::milliseconds(100);
constexpr std::uint64_t kBusyBar = 512;

// The bug this catches: a park cancelled by its re-check left the worker stamped "about to
// park", so its signal decayed as idle for as long as the task it then ran, and a node whose
// workers held long tasks never looked overloaded (RefusedSteal.AnOverloadedNode... hung).
TEST(LoadSignal, AWorkerThatCancelledItsParkIsSeenBusyWhileItRuns) {
  fault::plan p;
  p.seed = 7;
  p.jitter_per_mille = 1000;
  p.max_spin = 100000;  // up to a few ms on most CPUs: the holder's spawn lands in the window
  armed_faults armed{p};
  rt::config c;
  c.topology = rt::topology_source::synthetic("pack:1 core:1 pu:1");
  c.workers = 1;
  c.tune = "NO_UTIL_EST";
  rt::runtime r{c};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int held = 0;
  std::uint64_t cancels = 0;
  // Until at least three holds began with cancelled parks (a liveness bound of 60 s).
  while (cancels < 3 && std::chrono::steady_clock::now() < deadline) {
    std::atomic<bool> started{false};
    std::atomic<bool> release{false};
    auto h = r.spawn([&] {
      started.store(true);
      while (!release.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
    });
    while (!started.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
    std::this_thread::sleep_for(kHold);
    const std::uint64_t seen = r.stats().worker_util.at(0);
    release.store(true);
    h.join();
    ++held;
    EXPECT_GE(seen, kBusyBar) << "hold " << held << ": the worker running it looked idle";
    cancels = r.stats().total("park_cancels");
  }
  EXPECT_GE(cancels, 3u) << "only " << cancels << " parks were cancelled in " << held << " holds";
}

// Two virtual nodes of one worker each: a joiner started on node 0 spins until its child
// started on node 1 (ungrouped tasks are never refused, so node 1's worker steals it), then
// joins it and blocks; the child holds node 1's worker until finish().
rt::config two_nodes(const std::string& tune) {
  return numart_test::synthetic_nodes("pack:2 [numa] core:1 pu:1", 2, tune);
}

class blocked_joiner {
 public:
  explicit blocked_joiner(rt::runtime& r)
      : joiner_(r.spawn_on(rt::node_id{0}, [this] {
          joiner_worker.store(rt::runtime::current_worker());
          auto child = rt::spawn([this] {
            child_worker.store(rt::runtime::current_worker());
            child_started_.store(true);
            while (!release_.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
          });
          while (!child_started_.load()) std::this_thread::yield();
          joining_.store(true);
          child.join();
        })) {
    // Until the joiner blocked (join_blocks is published as it blocks), within the deadline.
    while ((!joining_.load() || r.stats().total("join_blocks") == 0) && before_deadline())
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  ~blocked_joiner() { finish(); }
  blocked_joiner(const blocked_joiner&) = delete;
  blocked_joiner& operator=(const blocked_joiner&) = delete;

  // Lets the child end, which wakes the joiner, and waits for the joiner.
  void finish() {
    release_.store(true);
    if (joiner_.valid()) joiner_.join();
  }
  // A liveness bound of 60 s from the start: it only turns a hang into a failure.
  bool before_deadline() const { return std::chrono::steady_clock::now() < deadline_; }

  std::atomic<int> joiner_worker{-1};
  std::atomic<int> child_worker{-1};

 private:
  const std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::atomic<bool> child_started_{false};
  std::atomic<bool> joining_{false};
  std::atomic<bool> release_{false};
  rt::join_handle<void> joiner_;
};

// A worker blocked in a join runs nothing: its core is idle, as a CPU whose thread sleeps on a
// futex is, and its signal ages as idle while it blocks. The child holds node 1's worker until
// the joiner's worker looks idle (a liveness bound of 60 s: aged as busy it never would) and at
// least 100 ms passed since the joiner blocked, so that the child's worker has been busy that
// long.
TEST(LoadSignal, AWorkerBlockedInAJoinIsSeenIdle) {
  rt::runtime r{two_nodes("NO_UTIL_EST")};
  blocked_joiner b{r};
  std::this_thread::sleep_for(kHold);
  const auto util_of = [](const rt::stats& st, int w) { return st.worker_util.at(static_cast<std::size_t>(w)); };
  const int joiner = b.joiner_worker.load();
  ASSERT_GE(joiner, 0);
  rt::stats st = r.stats();
  while (util_of(st, joiner) >= kBusyBar && b.before_deadline()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    st = r.stats();
  }
  b.finish();
  ASSERT_NE(joiner, b.child_worker.load()) << "the child ran on its joiner's worker: nothing blocked";
  ASSERT_GE(st.total("join_blocks"), 1u) << "the joiner never blocked";
  EXPECT_LT(util_of(st, joiner), kBusyBar) << "the blocked joiner looked busy for 60 s";
  EXPECT_GE(util_of(st, b.child_worker.load()), kBusyBar) << "the child's worker looked idle";
}

// The same block is an idle stretch for avg_idle too (I-PARK-10: SIS_PROP's scan depth reads
// it): the joiner's worker takes the block as one sample when its child's end wakes it. While
// it is blocked nothing else can sample it, so its avg_idle after the join differs from the one
// read during the block unless the block fed nothing. migration_cost_ns at its maximum, 100 ms,
// puts the cap (twice that, and avg_idle's start) at 200 ms, far above the block (10 ms and
// what the machine adds): a sample under the cap always moves the average. (It could stay put
// only if the block lasted 200 ms or more while the average still sat at the cap.)
TEST(LoadSignal, AJoinBlockIsAnIdleSampleForAvgIdle) {
  rt::runtime r{two_nodes("migration_cost_ns=100000000")};
  blocked_joiner b{r};
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const int w = b.joiner_worker.load();
  ASSERT_GE(w, 0);
  const std::uint64_t during = r.stats().worker_avg_idle_ns.at(static_cast<std::size_t>(w));
  b.finish();
  const std::uint64_t after = r.stats().worker_avg_idle_ns.at(static_cast<std::size_t>(w));
  ASSERT_NE(w, b.child_worker.load()) << "the child ran on its joiner's worker: nothing blocked";
  ASSERT_GE(r.stats().total("join_blocks"), 1u) << "the joiner never blocked";
  EXPECT_NE(after, during) << "the join's block fed avg_idle nothing (" << during << " ns before and after)";
}

}  // namespace
