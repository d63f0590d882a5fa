// Protected windows and the SIGSEGV handler in a live process: one sample per page (or per
// block of pages), the data intact, threads without a context, concurrent faults on the same pages, removal while
// protected, a fault inside a push (re-entrancy).
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <new>
#include <thread>
#include <vector>

#include "numa/fault_sampler.hpp"
#include "numa/regions.hpp"
#include "sampling_support.hpp"

namespace {

using namespace rt::numa;
using sampling_test::mapping;
using sampling_test::page;
using sampling_test::read_byte;
using sampling_test::write_byte;

int key_region = 0, key_task = 0;

void fill(const mapping& m) {
  for (std::size_t i = 0; i < m.bytes(); ++i) m.data()[i] = static_cast<char>(i * 7 + 3);
}

void expect_filled(const mapping& m, std::size_t skip_page_offset_0) {
  for (std::size_t i = 0; i < m.bytes(); ++i) {
    if (i % page() == 0 && skip_page_offset_0 != 0) continue;
    ASSERT_EQ(m.data()[i], static_cast<char>(i * 7 + 3)) << "byte " << i;
  }
}

// kRounds times: protects every page of `m` (asserting all were open), then kThreads workers,
// each with its own ring, touch every page at once, thread t the i-th at page_of(i, t) and at
// byte offset t.
constexpr int kThreads = 4;
constexpr int kRounds = 20;
template <class PageOf>
std::vector<std::unique_ptr<sample_ring>> touch_together(region_registry& reg, const mapping& m, std::size_t pages,
                                                         const PageOf& page_of) {
  std::vector<std::unique_ptr<sample_ring>> rings;
  for (int t = 0; t < kThreads; ++t) rings.push_back(std::make_unique<sample_ring>(pages * kRounds));
  for (int round = 0; round < kRounds; ++round) {
    EXPECT_EQ(reg.protect_next_window(pages).pages_protected, pages) << "round " << round;
    std::atomic<int> go{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < kThreads; ++t)
      ts.emplace_back([&, t] {
        enter_sampling(rings[static_cast<std::size_t>(t)].get(), t);
        go.fetch_add(1);
        while (go.load() < kThreads) std::this_thread::yield();
        for (std::size_t i = 0; i < pages; ++i) write_byte(m.page_at(page_of(i, t)) + t, 1);
        leave_sampling();
      });
    for (auto& t : ts) t.join();
  }
  return rings;
}

TEST(Faults, EachProtectedPageGivesExactlyOneSampleAndTheDataIsIntact) {
  mapping m(8);
  fill(m);
  region_registry reg;
  reg.add(&key_region, m.data(), m.bytes(), 1);
  const fault_counters before = fault_stats();
  const scan_result r = reg.protect_next_window(8);
  EXPECT_EQ(r.outcome, scan_outcome::scanned);
  EXPECT_EQ(r.pages_protected, 8u);
  EXPECT_EQ(r.pages_visited, 8u);
  EXPECT_TRUE(fault_handler_installed());

  sample_ring ring(64);
  std::vector<char> seen;
  sampling_test::run_as_worker(ring, 0, &key_task, [&] {
    for (std::size_t i = 0; i < 8; ++i) {
      seen.push_back(read_byte(m.page_at(i) + 1));  // faults: sample, restore
      seen.push_back(read_byte(m.page_at(i) + 2));  // no fault
      write_byte(m.page_at(i), static_cast<char>(100 + i));
      write_byte(m.page_at(i), static_cast<char>(100 + i));
    }
  });
  const auto got = sampling_test::drain(ring);
  ASSERT_EQ(got.size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(got[i].page, reinterpret_cast<std::uintptr_t>(m.page_at(i)));
    EXPECT_EQ(got[i].group, &key_task);
    EXPECT_EQ(got[i].region_group, &key_region);
    EXPECT_EQ(got[i].mem_node, 1);
    EXPECT_EQ(got[i].cpu_node, 0);
    EXPECT_EQ(seen[2 * i], static_cast<char>((i * page() + 1) * 7 + 3));
    EXPECT_EQ(seen[2 * i + 1], static_cast<char>((i * page() + 2) * 7 + 3));
    EXPECT_EQ(m.page_at(i)[0], static_cast<char>(100 + i));
  }
  expect_filled(m, 1);
  EXPECT_EQ(fault_stats().sampled - before.sampled, 8u);
  EXPECT_EQ(ring.counters().pushed, 8u);
}

TEST(Faults, TheWindowWalksRoundRobinAndSkipsProtectedPages) {
  mapping m(8);
  region_registry reg;
  reg.add(&key_region, m.data(), 5 * page(), 0);
  reg.add(&key_region, m.page_at(6), 2 * page(), 1);  // two regions, 7 pages
  EXPECT_EQ(reg.protect_next_window(3).pages_protected, 3u);  // pages 0-2
  EXPECT_EQ(reg.protect_next_window(3).pages_protected, 3u);  // 3-4, 6
  const scan_result third = reg.protect_next_window(3);        // 7, then 0-1 (already protected)
  EXPECT_EQ(third.pages_protected, 1u);
  EXPECT_EQ(third.pages_visited, 3u);
  EXPECT_EQ(reg.protect_next_window(100).pages_visited, 7u);  // at most once around
  sample_ring ring(64);
  sampling_test::run_as_worker(ring, 0, &key_task, [&] {
    for (std::size_t i = 0; i < 8; ++i) write_byte(m.page_at(i), 1);
  });
  const auto got = sampling_test::drain(ring);
  ASSERT_EQ(got.size(), 7u);
  EXPECT_EQ(got[5].page, reinterpret_cast<std::uintptr_t>(m.page_at(6)));
  EXPECT_EQ(got[5].mem_node, 1);
  EXPECT_EQ(reg.counters().pages_protected, 7u);
}

TEST(Faults, AThreadWithoutAContextIsRestoredWithoutASample) {
  mapping m(4);
  fill(m);
  region_registry reg;
  reg.add(&key_region, m.data(), m.bytes(), 0);
  ASSERT_EQ(reg.protect_next_window(4).pages_protected, 4u);
  const fault_counters before = fault_stats();
  std::thread t([&] {
    for (std::size_t i = 0; i < 4; ++i) write_byte(m.page_at(i), read_byte(m.page_at(i)));
  });
  t.join();
  EXPECT_EQ(fault_stats().without_context - before.without_context, 4u);
  EXPECT_EQ(fault_stats().sampled, before.sampled);
  expect_filled(m, 0);
}

TEST(Faults, PagesSetToANewNodeSaySoInTheirSamples) {
  mapping m(2);
  region_registry reg;
  reg.add(&key_region, m.data(), m.bytes(), 0);
  ASSERT_TRUE(reg.set_node(m.page_at(1), 1, 5));
  region_registry other;
  EXPECT_FALSE(other.set_node(m.page_at(1), 1, 5));  // not its region
  EXPECT_THROW(reg.set_node(m.page_at(1), 1, -2), std::invalid_argument);
  reg.protect_next_window(2);
  sample_ring ring(64);
  sampling_test::run_as_worker(ring, 3, nullptr, [&] { write_byte(m.page_at(1), 1); });
  const auto got = sampling_test::drain(ring);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].mem_node, 5);
  EXPECT_EQ(got[0].cpu_node, 3);
  EXPECT_EQ(got[0].group, nullptr);
}

TEST(Faults, ConcurrentTouchesOfTheSamePagesSampleEachPageOnce) {
  constexpr std::size_t kPages = 64;
  mapping m(kPages);
  region_registry reg;
  reg.add(&key_region, m.data(), m.bytes(), 0);
  auto rings = touch_together(reg, m, kPages, [](std::size_t i, int t) { return (i + static_cast<std::size_t>(t) * 16) % kPages; });
  std::map<std::uintptr_t, int> per_page;
  for (auto& r : rings)
    r->drain([&](const sample& s) { ++per_page[s.page]; });
  ASSERT_EQ(per_page.size(), kPages);
  for (const auto& [p, n] : per_page) EXPECT_EQ(n, kRounds) << "page " << std::hex << p;
}

// I-SAMPLE-13: a fault restores the protected pages of its block (counted from the region's
// first page, the last block clipped to the region) and samples the block once.
TEST(Faults, AFaultRestoresItsWholeBlockAndSamplesItOnce) {
  mapping m(10);
  fill(m);
  region_registry reg(sampling_mode::faults, 4);
  reg.add(&key_region, m.data(), m.bytes(), 2);
  ASSERT_TRUE(reg.set_node(m.page_at(5), 1, 6));
  ASSERT_EQ(reg.protect_next_window(10).pages_protected, 10u);
  const fault_counters before = fault_stats();
  sample_ring ring(64);
  sampling_test::run_as_worker(ring, 1, &key_task, [&] {
    for (std::size_t i : {5, 4, 6, 7, 9, 8, 0, 1, 2, 3}) write_byte(m.page_at(i) + 3, read_byte(m.page_at(i) + 3));
  });
  const auto got = sampling_test::drain(ring);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].page, reinterpret_cast<std::uintptr_t>(m.page_at(4)));
  EXPECT_EQ(got[0].pages, 4u);
  EXPECT_EQ(got[0].mem_node, 6);  // the faulting page's node
  EXPECT_EQ(got[1].page, reinterpret_cast<std::uintptr_t>(m.page_at(8)));
  EXPECT_EQ(got[1].pages, 2u);
  EXPECT_EQ(got[1].mem_node, 2);
  EXPECT_EQ(got[2].page, reinterpret_cast<std::uintptr_t>(m.page_at(0)));
  EXPECT_EQ(got[2].pages, 4u);
  EXPECT_EQ(fault_stats().sampled - before.sampled, 3u);
  expect_filled(m, 0);
  // Every page came back open: the next window protects all ten again.
  EXPECT_EQ(reg.protect_next_window(10).pages_protected, 10u);
}

// A block only partly protected (the window ended inside it) restores the protected part;
// the rest, open, is left alone and protected by the next window.
TEST(Faults, APartlyProtectedBlockRestoresOnlyItsProtectedPages) {
  mapping m(8);
  region_registry reg(sampling_mode::faults, 8);
  reg.add(&key_region, m.data(), m.bytes(), 0);
  ASSERT_EQ(reg.protect_next_window(3).pages_protected, 3u);  // pages 0-2
  sample_ring ring(64);
  sampling_test::run_as_worker(ring, 0, &key_task, [&] {
    write_byte(m.page_at(2), 1);
    for (std::size_t i = 0; i < 8; ++i) write_byte(m.page_at(i), 2);
  });
  ASSERT_EQ(sampling_test::drain(ring).size(), 1u);
  EXPECT_EQ(reg.protect_next_window(5).pages_protected, 5u);  // pages 3-7, still open
  sampling_test::run_as_worker(ring, 0, &key_task, [&] { write_byte(m.page_at(7), 3); });
  const auto got = sampling_test::drain(ring);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].page, reinterpret_cast<std::uintptr_t>(m.page_at(0)));
  EXPECT_EQ(got[0].pages, 8u);
  EXPECT_EQ(reg.protect_next_window(8).pages_protected, 8u);  // nothing left marked
}

// Threads faulting on different pages of one block at once: every page is restored by exactly
// one of them, the data stays intact, no page is left marked protected or restoring, and the
// block gives at least one sample and at most one per thread.
TEST(Faults, ConcurrentFaultsInOneBlockLeaveEveryPageOpen) {
  constexpr std::size_t kPages = 64;
  constexpr std::size_t kBlock = 16;
  mapping m(kPages);
  region_registry reg(sampling_mode::faults, kBlock);
  reg.add(&key_region, m.data(), m.bytes(), 0);
  auto rings = touch_together(reg, m, kPages, [](std::size_t i, int t) { return (i * 5 + static_cast<std::size_t>(t) * 3) % kPages; });
  std::map<std::uintptr_t, int> per_block;
  for (auto& r : rings)
    r->drain([&](const sample& s) {
      ++per_block[s.page];
      EXPECT_EQ(s.pages, kBlock);
    });
  ASSERT_EQ(per_block.size(), kPages / kBlock);
  for (const auto& [p, n] : per_block) {
    EXPECT_EQ((p - reinterpret_cast<std::uintptr_t>(m.data())) % (kBlock * page()), 0u);
    EXPECT_GE(n, kRounds);
    EXPECT_LE(n, kRounds * kThreads);
  }
  for (std::size_t i = 0; i < kPages; ++i)
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(read_byte(m.page_at(i) + t), 1);
  EXPECT_EQ(reg.protect_next_window(kPages).pages_protected, kPages);
}

TEST(Faults, RemovingARegionRestoresItsProtectedPages) {
  mapping m(4);
  fill(m);
  sample_ring ring(64);
  {
    region_registry reg;
    reg.add(&key_region, m.data(), 2 * page(), 0);
    reg.add(&key_task, m.page_at(2), 2 * page(), 0);
    ASSERT_EQ(reg.protect_next_window(4).pages_protected, 4u);
    reg.remove(&key_region, m.data());
    EXPECT_EQ(reg.remove_all(&key_task), 1u);
    ASSERT_EQ(reg.protect_next_window(4).pages_protected, 0u);
    reg.add(&key_region, m.data(), m.bytes(), 0);
    ASSERT_EQ(reg.protect_next_window(4).pages_protected, 4u);
  }  // the destructor removes what is left
  const fault_counters before = fault_stats();
  sampling_test::run_as_worker(ring, 0, &key_task, [&] {
    for (std::size_t i = 0; i < 4; ++i) write_byte(m.page_at(i) + 1, read_byte(m.page_at(i) + 1));
  });
  EXPECT_TRUE(sampling_test::drain(ring).empty());
  EXPECT_EQ(fault_stats().sampled, before.sampled);
  EXPECT_EQ(fault_stats().retried, before.retried);
  expect_filled(m, 0);
}

// I-SAMPLE-7: a fault inside the ring's own push (the sample being pushed lives on a
// protected page) runs the handler in the middle of the push; its sample is dropped and
// counted, and the interrupted push completes.
TEST(Faults, AFaultInsideAPushDropsTheHandlersSampleAndThePushCompletes) {
  mapping m(1);
  region_registry reg;
  reg.add(&key_region, m.data(), m.bytes(), 0);
  auto* s = new (m.data()) sample{&key_task, &key_region, 4242, 7, 8, 1};
  ASSERT_EQ(reg.protect_next_window(1).pages_protected, 1u);
  sample_ring ring(64);
  push_result res{};
  sampling_test::run_as_worker(ring, 0, &key_task, [&] { res = ring.push(*s); });
  EXPECT_EQ(res, push_result::pushed);
  const ring_counters c = ring.counters();
  EXPECT_EQ(c.pushed, 1u);
  EXPECT_EQ(c.dropped_reentrant, 1u);
  EXPECT_EQ(c.dropped_full, 0u);
  const auto got = sampling_test::drain(ring);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].page, 4242u);
}

}  // namespace
