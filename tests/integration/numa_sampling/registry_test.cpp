// The region registry: argument checks, overlap, removal, page nodes, explicit samples.
#include <gtest/gtest.h>

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "numa/regions.hpp"
#include "sync/asym_fence.hpp"
#include "sampling_support.hpp"

namespace {

using namespace rt::numa;
using sampling_test::mapping;
using sampling_test::page;

int key_a = 0, key_b = 0, key_task = 0;

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no exception)";
}

TEST(Registry, RejectsAnEmptyRangeANullPointerAndABadNode) {
  mapping m(2);
  region_registry reg;
  EXPECT_NE(message_of([&] { reg.add(&key_a, m.data(), 0, 0); }).find("empty range"), std::string::npos);
  EXPECT_THROW(reg.add(&key_a, nullptr, 16, 0), std::invalid_argument);
  EXPECT_THROW(reg.add(nullptr, m.data(), 16, 0), std::invalid_argument);
  EXPECT_NE(message_of([&] { reg.add(&key_a, m.data(), 16, 40000); }).find("outside [-1, 32767]"), std::string::npos);
  EXPECT_EQ(reg.counters().regions, 0u);
}

TEST(Registry, RoundsOutToPagesAndRejectsOverlapsAcrossGroupsAndRegistries) {
  mapping m(4);
  region_registry reg;
  region_registry other;
  // One byte in the middle of page 1 registers all of page 1.
  reg.add(&key_a, m.page_at(1) + 100, 1, 0);
  EXPECT_EQ(reg.counters().pages, 1u);
  // Same page, other group: overlap after rounding.
  const std::string msg = message_of([&] { reg.add(&key_b, m.page_at(1) + 200, 8, 0); });
  EXPECT_NE(msg.find("overlaps the registered region"), std::string::npos) << msg;
  // A range spanning pages 0..2 overlaps too, also from another registry.
  EXPECT_NE(message_of([&] { other.add(&key_b, m.data(), 3 * page(), 0); }).find("of another runtime"),
            std::string::npos);
  // Adjacent pages are fine.
  reg.add(&key_b, m.page_at(2), page(), 1);
  other.add(&key_b, m.page_at(0), page(), 1);
  EXPECT_EQ(reg.counters().regions, 2u);
  EXPECT_EQ(other.counters().regions, 1u);
}

TEST(Registry, RemoveNeedsTheGroupAndTheStartAndRemoveAllTakesEveryRegionOfTheGroup) {
  mapping m(4);
  region_registry reg;
  reg.add(&key_a, m.page_at(0), page(), 0);
  reg.add(&key_a, m.page_at(1), page(), 0);
  reg.add(&key_b, m.page_at(2), 2 * page(), 0);
  EXPECT_NE(message_of([&] { reg.remove(&key_b, m.page_at(0)); }).find("no region of this group starts at"),
            std::string::npos);
  EXPECT_THROW(reg.remove(&key_b, m.page_at(3)), std::invalid_argument);  // inside, not the start
  reg.remove(&key_b, m.page_at(2));
  EXPECT_THROW(reg.remove(&key_b, m.page_at(2)), std::invalid_argument);  // already gone
  EXPECT_EQ(reg.remove_all(&key_a), 2u);
  EXPECT_EQ(reg.remove_all(&key_a), 0u);
  EXPECT_EQ(reg.counters().regions, 0u);
  // Everything is free again.
  reg.add(&key_b, m.data(), m.bytes(), 0);
}

TEST(Registry, ExplicitSamplesWorkWithoutProtection) {
  mapping m(3);
  region_registry reg(sampling_mode::explicit_only);
  reg.add(&key_a, m.data(), 2 * page(), 1);
  ASSERT_TRUE(reg.set_node(m.page_at(1) + 5, 100, 3));  // clipped to the region's last page
  EXPECT_EQ(page_node(m.page_at(0)), 1);
  EXPECT_EQ(page_node(m.page_at(1) + 7), 3);
  EXPECT_EQ(page_node(m.page_at(2)), kNotInRegion);

  EXPECT_EQ(note_access(m.data()), access_result::no_context);  // not a worker
  sample_ring ring(64);
  access_result in0{}, in1{}, outside{};
  sampling_test::run_as_worker(ring, 2, &key_task, [&] {
    in0 = note_access(m.data() + 17);
    in1 = note_access(m.page_at(1) + 9);
    outside = note_access(m.page_at(2));
  });
  EXPECT_EQ(in0, access_result::sampled);
  EXPECT_EQ(in1, access_result::sampled);
  EXPECT_EQ(outside, access_result::not_in_region);
  const auto got = sampling_test::drain(ring);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].group, &key_task);
  EXPECT_EQ(got[0].region_group, &key_a);
  EXPECT_EQ(got[0].page, reinterpret_cast<std::uintptr_t>(m.page_at(0)));
  EXPECT_EQ(got[0].mem_node, 1);
  EXPECT_EQ(got[0].cpu_node, 2);
  EXPECT_EQ(got[1].page, reinterpret_cast<std::uintptr_t>(m.page_at(1)));
  EXPECT_EQ(got[1].mem_node, 3);
  // FAULT_SAMPLING off: the scan protects nothing.
  const scan_result r = reg.protect_next_window(8);
  EXPECT_EQ(r.outcome, scan_outcome::disabled);
  EXPECT_EQ(r.pages_protected, 0u);
  sampling_test::write_byte(m.data(), 1);  // would fault if protected
}

// page_node's search over many regions: every page of every region, every gap, and the pages
// around the first and last region (region i: 1 + i % 4 pages, then a gap of i % 3 pages).
TEST(Registry, PageNodeFindsEveryPageAmongManyRegionsAndNoGap) {
  constexpr std::size_t kPages = 160;
  mapping m(kPages);
  region_registry reg(sampling_mode::explicit_only);
  std::vector<int> expected(kPages, kNotInRegion);
  std::size_t at = 1;  // page 0 stays outside: the search's "before the first region"
  for (int i = 0; at + 1 + static_cast<std::size_t>(i % 4) < kPages - 1; ++i) {
    const std::size_t n = 1 + static_cast<std::size_t>(i % 4);
    reg.add(&key_a, m.page_at(at), n * page(), i % 7);
    for (std::size_t k = at; k < at + n; ++k) expected[k] = i % 7;
    at += n + static_cast<std::size_t>(i % 3);
  }
  ASSERT_GT(reg.counters().regions, 40u);
  for (std::size_t k = 0; k < kPages; ++k) {
    SCOPED_TRACE("page " + std::to_string(k));
    EXPECT_EQ(page_node(m.page_at(k)), expected[k]);
    EXPECT_EQ(page_node(m.page_at(k) + page() - 1), expected[k]);
  }
}

// page_node tries the thread's last hit (an index) first: after regions come and go the index
// is past the end of the snapshot (past its allocation: a read without the bounds check is a
// heap overflow under ASan), names another region, or none, and the lookup still finds the
// right one. Region k covers page 2k + 1, on node k.
TEST(Registry, PageNodeIsRightWhenRegionsShiftUnderTheThreadsLastHit) {
  mapping m(17);
  region_registry reg(sampling_mode::explicit_only);
  for (int k = 0; k < 8; ++k) reg.add(&key_a, m.page_at(2 * static_cast<std::size_t>(k) + 1), page(), k);
  EXPECT_EQ(page_node(m.page_at(15)), 7);  // last hit: index 7
  for (std::size_t k = 0; k < 6; ++k) reg.remove(&key_a, m.page_at(2 * k + 1));
  // Two regions left (pages 13 and 15); each publication reserved one more than the snapshot
  // before it held, so index 7 is past the allocation of 4.
  EXPECT_EQ(page_node(m.page_at(15)), 7);  // index 1
  EXPECT_EQ(page_node(m.page_at(13)), 6);  // index 1 names page 15's region: searched, index 0
  reg.remove(&key_a, m.page_at(13));       // index 0 names page 15's region now
  EXPECT_EQ(page_node(m.page_at(13)), kNotInRegion);
  EXPECT_EQ(page_node(m.page_at(15)), 7);
  EXPECT_EQ(page_node(m.page_at(16)), kNotInRegion);               // just past the hit's region
  EXPECT_EQ(page_node(m.page_at(14) + page() - 1), kNotInRegion);  // just before it
}

// I-SAMPLE-13: an explicit sample stands for its block, as a fault's does; 0 pages per block
// is refused.
TEST(Registry, ExplicitSamplesNameTheirBlock) {
  EXPECT_THROW(region_registry(sampling_mode::explicit_only, 0), std::invalid_argument);
  mapping m(5);
  region_registry reg(sampling_mode::explicit_only, 2);
  reg.add(&key_a, m.data(), 5 * page(), 4);
  ASSERT_TRUE(reg.set_node(m.page_at(2), 2, 1));
  EXPECT_EQ(page_node(m.page_at(1)), 4);
  EXPECT_EQ(page_node(m.page_at(3)), 1);
  EXPECT_EQ(page_node(m.page_at(4)), 4);
  sample_ring ring(64);
  sampling_test::run_as_worker(ring, 0, &key_task, [&] {
    note_access(m.page_at(3) + 1);
    note_access(m.page_at(4));
  });
  const auto got = sampling_test::drain(ring);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].page, reinterpret_cast<std::uintptr_t>(m.page_at(2)));
  EXPECT_EQ(got[0].pages, 2u);
  EXPECT_EQ(got[0].mem_node, 1);
  EXPECT_EQ(got[1].page, reinterpret_cast<std::uintptr_t>(m.page_at(4)));
  EXPECT_EQ(got[1].pages, 1u);  // the last block, clipped
  EXPECT_EQ(got[1].mem_node, 4);
}

// I-SAMPLE-15: a thread's first page_node claims a reader slot of its own, and the thread
// gives it back as it exits: more threads than slots, one after the other, each get one.
TEST(Registry, EachThreadOwnsAReaderSlotAfterItsFirstPageNodeAndGivesItBackAtExit) {
  if (!rt::sync::asym_fence::available()) GTEST_SKIP() << "no membarrier: every reader uses a stripe";
  mapping m(1);
  region_registry reg(sampling_mode::explicit_only);
  reg.add(&key_a, m.data(), page(), 3);
  constexpr int kThreads = 600;  // over twice the slots
  int owned = 0, right = 0;
  for (int i = 0; i < kThreads; ++i) {
    bool before = true, after = false, node_ok = false;
    std::thread t([&] {
      before = rt::numa::detail::owns_reader_slot();
      node_ok = page_node(m.data()) == 3;
      after = rt::numa::detail::owns_reader_slot();
    });
    t.join();
    owned += !before && after ? 1 : 0;
    right += node_ok ? 1 : 0;
  }
  EXPECT_EQ(owned, kThreads);
  EXPECT_EQ(right, kThreads);
}

// The same when a thread's first page_node runs in a pthread key's destructor (another
// library's thread-exit hook), after the thread's C++ thread_local destructors have run: the
// slot still goes back. It did not while a thread_local gave it back: after 256 such threads
// every thread of the process read on a stripe.
pthread_key_t g_exit_hook_key;
mapping* g_exit_hook_mapping = nullptr;
std::atomic<int> g_exit_hook_owned{0};

TEST(Registry, AThreadWhoseFirstPageNodeRunsInAKeyDestructorGivesItsSlotBack) {
  if (!rt::sync::asym_fence::available()) GTEST_SKIP() << "no membarrier: every reader uses a stripe";
  mapping m(1);
  region_registry reg(sampling_mode::explicit_only);
  reg.add(&key_a, m.data(), page(), 3);
  g_exit_hook_mapping = &m;
  ASSERT_EQ(::pthread_key_create(&g_exit_hook_key,
                                 [](void*) {
                                   if (page_node(g_exit_hook_mapping->data()) == 3 && rt::numa::detail::owns_reader_slot())
                                     g_exit_hook_owned.fetch_add(1);
                                 }),
            0);
  constexpr int kThreads = 600;  // over twice the slots
  for (int i = 0; i < kThreads; ++i) {
    std::thread t([] { ::pthread_setspecific(g_exit_hook_key, &g_exit_hook_key); });
    t.join();
  }
  ::pthread_key_delete(g_exit_hook_key);
  EXPECT_EQ(g_exit_hook_owned.load(), kThreads);
  bool owns = false;
  std::thread after([&] {
    static_cast<void>(page_node(m.data()));
    owns = rt::numa::detail::owns_reader_slot();
  });
  after.join();
  EXPECT_TRUE(owns) << "a thread after them found no free slot";
}

// I-SAMPLE-3 with I-SAMPLE-15: readers on their own slots never see a region that a writer
// removed and freed. A reader sees the churned region's node or no region, never another
// value (under ASan, a read of a freed node array is reported).
TEST(Registry, ReadersOnTheirOwnSlotsSeeAChurnedRegionWholeOrNotAtAll) {
  mapping m(4);
  region_registry reg(sampling_mode::explicit_only);
  reg.add(&key_a, m.data(), page(), 1);  // stable
  const bool slots = rt::sync::asym_fence::available();  // else (TSan) every reader uses a stripe
  std::atomic<bool> done{false};
  std::atomic<int> wrong{0}, owners{0}, started{0};
  std::atomic<long> seen{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r)
    readers.emplace_back([&] {
      if (page_node(m.data()) != 1) wrong.fetch_add(1);
      owners.fetch_add(rt::numa::detail::owns_reader_slot() ? 1 : 0);
      started.fetch_add(1);
      while (!done.load(std::memory_order_relaxed)) {
        const int n2 = page_node(m.page_at(2) + 8);
        const int n3 = page_node(m.page_at(3));
        if (n2 != kNotInRegion && n2 != 5) wrong.fetch_add(1);
        if (n3 != kNotInRegion && n3 != 5 && n3 != 6) wrong.fetch_add(1);
        if (n2 != kNotInRegion || n3 != kNotInRegion) seen.fetch_add(1, std::memory_order_relaxed);
      }
    });
  // The churn starts once every reader is past its first section: it races sections, not start-up.
  // It runs 400 rounds and then on until a reader has seen the region (on a loaded 2-core
  // machine the readers may not run during the first 400, about 15 ms), for at most 10 s.
  while (started.load() != 3) std::this_thread::yield();
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (int i = 0; i < 400 || (seen.load(std::memory_order_relaxed) == 0 && std::chrono::steady_clock::now() < give_up);
       ++i) {
    reg.add(&key_b, m.page_at(2), 2 * page(), 5);
    reg.set_node(m.page_at(3), 1, 6);
    reg.remove(&key_b, m.page_at(2));
  }
  done.store(true);
  for (auto& t : readers) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(owners.load(), slots ? 3 : 0);
  EXPECT_GT(seen.load(), 0) << "no reader ever saw the churned region: the race was not exercised";
  EXPECT_EQ(page_node(m.page_at(2)), kNotInRegion);
}

TEST(Registry, EnterSamplingRejectsANullRingAndABadNode) {
  sample_ring ring(64);
  EXPECT_THROW(enter_sampling(nullptr, 0), std::invalid_argument);
  EXPECT_THROW(enter_sampling(&ring, -1), std::invalid_argument);
  EXPECT_THROW(enter_sampling(&ring, 40000), std::invalid_argument);
  EXPECT_EQ(current_context().ring, nullptr);
  EXPECT_THROW(sample_ring(0), std::invalid_argument);
}

}  // namespace
