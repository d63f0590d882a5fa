// The registry lock (I-SAMPLE-1): a scan never waits behind a writer, and a writer is never
// starved by readers.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "numa/regions.hpp"
#include "sampling_support.hpp"
#include "sync/rwlock.hpp"

namespace {

using namespace rt::numa;
int key = 0;

TEST(TryLock, AScanSkipsWhileAWriterHoldsTheLockAndSucceedsLater) {
  sampling_test::mapping m(4);
  region_registry reg;
  reg.add(&key, m.data(), m.bytes(), 0);
  std::atomic<int> phase{0};
  std::thread writer([&] {
    reg.lock().lock();
    phase.store(1);
    while (phase.load() != 2) std::this_thread::yield();
    reg.lock().unlock();
  });
  while (phase.load() != 1) std::this_thread::yield();
  for (int period = 0; period < 5; ++period) {
    const scan_result r = reg.protect_next_window(4);
    EXPECT_EQ(r.outcome, scan_outcome::skipped);
    EXPECT_EQ(r.pages_protected, 0u);
  }
  EXPECT_EQ(reg.counters().periods_skipped, 5u);
  sampling_test::write_byte(m.data(), 1);  // nothing was protected
  phase.store(2);
  writer.join();
  const scan_result r = reg.protect_next_window(4);
  EXPECT_EQ(r.outcome, scan_outcome::scanned);
  EXPECT_EQ(r.pages_protected, 4u);
  EXPECT_EQ(reg.counters().periods_scanned, 1u);
}

TEST(TryLock, AWaitingWriterTurnsNewReadersAwayAndGetsIn) {
  rt::sync::rwlock l;
  ASSERT_TRUE(l.try_lock_shared());
  ASSERT_TRUE(l.try_lock_shared());
  EXPECT_FALSE(l.try_lock());
  std::atomic<bool> written{false};
  std::thread writer([&] {
    l.lock();
    written.store(true);
    l.unlock();
  });
  // Once the writer waits, try_lock_shared fails (and returns at once).
  while (true) {
    if (!l.try_lock_shared()) break;
    l.unlock_shared();
    std::this_thread::yield();
  }
  EXPECT_FALSE(written.load());
  l.unlock_shared();
  l.unlock_shared();
  writer.join();
  EXPECT_TRUE(written.load());
  EXPECT_TRUE(l.try_lock());
  EXPECT_FALSE(l.try_lock_shared());
  l.unlock();
  EXPECT_TRUE(l.try_lock_shared());
  l.unlock_shared();
}

// Mutual exclusion under contention: writers bump two plain counters together, readers (both
// blocking and trying) must never see them differ.
TEST(TryLock, ReadersNeverSeeAHalfWrittenState) {
  rt::sync::rwlock l;
  std::uint64_t a = 0, b = 0;
  std::atomic<std::uint64_t> torn{0}, read_ok{0}, refused{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> ts;
  for (int w = 0; w < 2; ++w)
    ts.emplace_back([&] {
      for (int i = 0; i < 5000; ++i) {
        rt::sync::exclusive_guard g(l);
        ++a;
        ++b;
      }
    });
  for (int r = 0; r < 2; ++r)
    ts.emplace_back([&, r] {
      while (!stop.load()) {
        if (r == 0) {
          rt::sync::shared_guard g(l);
          if (a != b) torn.fetch_add(1);
          read_ok.fetch_add(1);
        } else if (l.try_lock_shared()) {
          if (a != b) torn.fetch_add(1);
          read_ok.fetch_add(1);
          l.unlock_shared();
        } else {
          refused.fetch_add(1);
        }
      }
    });
  ts[0].join();
  ts[1].join();
  stop.store(true);
  ts[2].join();
  ts[3].join();
  EXPECT_EQ(torn.load(), 0u);
  EXPECT_EQ(a, 10000u);
  EXPECT_EQ(b, 10000u);
}

}  // namespace
