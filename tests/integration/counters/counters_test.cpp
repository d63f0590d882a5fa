// docs/design/counters.md: the hot counters are batched per worker and published at the end
// of each top-level task (I-CTR-3), every injection_poll_interval tasks (I-CTR-4) and before a
// worker sleeps (I-CTR-4). The flush interval is set to its maximum here, so that only the
// published-at-the-right-moment rules can make these counts exact.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>

#include <rt/rt.hpp>

namespace {

rt::config two_workers() {
  rt::config c;
  c.topology = rt::topology_source::synthetic("pack:1 l3:1 core:2 pu:1");
  c.tune = "injection_poll_interval=1024";
  return c;
}

long fib(int n) {
  if (n < 2) return n;
  auto h = rt::spawn([n] { return fib(n - 1); });
  const long b = fib(n - 2);
  return h.join() + b;
}

// Spawns fib(n) makes: one per call with n >= 2.
std::uint64_t fib_spawns(int n) { return n < 2 ? 0 : 1 + fib_spawns(n - 1) + fib_spawns(n - 2); }

std::uint64_t worker_sum(const rt::stats& s, const char* name) {
  std::uint64_t sum = 0;
  for (int w = 0; w < s.workers(); ++w) sum += s.worker(w, name);
  return sum;
}

// I-CTR-5: a snapshot taken right after the join of a fork-join root (its workers still
// searching, not parked) sees every task of the tree, whichever worker ran it and although far
// fewer than injection_poll_interval tasks ended since the last flush.
TEST(Counters, ExactRightAfterTheRootIsJoined) {
  rt::runtime r{two_workers()};
  constexpr int kN = 12;
  const std::uint64_t per_root = fib_spawns(kN);
  for (std::uint64_t round = 1; round <= 20; ++round) {
    ASSERT_EQ(r.spawn([] { return fib(kN); }).join(), 144);
    const rt::stats s = r.stats();
    ASSERT_EQ(worker_sum(s, "tasks_spawned"), round * per_root) << "round " << round;
    ASSERT_EQ(s.total("tasks_spawned"), round * (per_root + 1)) << "plus the outside root, round " << round;
    ASSERT_EQ(s.total("tasks_run"), round * (per_root + 1)) << "round " << round;
    ASSERT_EQ(worker_sum(s, "frames_pooled") + worker_sum(s, "frames_allocated"), round * per_root)
        << "round " << round;
  }
}

// I-CTR-4: a worker that blocks in a join publishes its batch before it sleeps, although its
// top-level task has not ended. The worker's cold join_blocks count is a release store made
// after the flush (I-CTR-6): once a snapshot shows it, the next snapshot shows the batch.
TEST(Counters, AJoinerPublishesBeforeItBlocks) {
  rt::runtime r{two_workers()};
  std::atomic<int> joiner{-1};
  std::atomic<bool> child_started{false};
  std::atomic<bool> release{false};
  auto root = r.spawn([&] {
    joiner.store(rt::runtime::current_worker());
    auto child = rt::spawn([&] {
      child_started.store(true);
      while (!release.load()) std::this_thread::yield();
    });
    // The child must run on the other worker, so that this join blocks.
    while (!child_started.load()) std::this_thread::yield();
    child.join();
  });
  // Liveness waits, not timing bounds: each ends as soon as its condition holds.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (joiner.load() < 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  ASSERT_GE(joiner.load(), 0);
  const int w = joiner.load();
  while (r.stats().worker(w, "join_blocks") == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_GE(r.stats().worker(w, "join_blocks"), 1u) << "the root's join never blocked";
  const rt::stats s = r.stats();
  EXPECT_EQ(s.worker(w, "tasks_spawned"), 1u) << "the blocked joiner's spawn is still in its batch";
  EXPECT_EQ(s.worker(w, "join_waits"), 1u);
  EXPECT_EQ(s.worker(w, "frames_pooled") + s.worker(w, "frames_allocated"), 1u);
  release.store(true);
  root.join();
  const rt::stats after = r.stats();
  EXPECT_EQ(after.total("tasks_run"), 2u);
}

// A closure whose copy throws: rt::spawn of an lvalue copies it into the frame.
struct throws_when_copied {
  throws_when_copied() = default;
  throws_when_copied(const throws_when_copied&) { throw std::runtime_error("copy refused"); }
  void operator()() const {}
};

// I-CTR-7: a frame whose closure failed to construct is counted abandoned, not spawned, and the
// derived frames_pooled still accounts for every frame the worker took.
TEST(Counters, AnAbandonedFrameIsCountedAndTheFramesAddUp) {
  rt::runtime r{two_workers()};
  int w = -1;
  r.spawn([&] {
     w = rt::runtime::current_worker();
     const throws_when_copied bad;
     for (int i = 0; i < 3; ++i) EXPECT_THROW(rt::spawn(bad), std::runtime_error);
     rt::spawn([] {}).join();
   }).join();
  ASSERT_GE(w, 0);
  const rt::stats s = r.stats();
  EXPECT_EQ(s.worker(w, "frames_abandoned"), 3u);
  EXPECT_EQ(s.worker(w, "tasks_spawned"), 1u);
  EXPECT_EQ(s.worker(w, "frames_pooled") + s.worker(w, "frames_allocated"), 4u);
}

}  // namespace
