// Sample rings: the overflow policy (drop the new sample, count it) and four producers with
// a concurrent consumer (nothing lost but what is counted).
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "numa/regions.hpp"
#include "sampling_support.hpp"

namespace {

using namespace rt::numa;

TEST(Ring, AFullRingDropsTheNewSampleAndKeepsTheOldOnes) {
  sample_ring ring(64);
  EXPECT_EQ(ring.capacity(), 64u);
  for (std::uintptr_t i = 0; i < 64; ++i) ASSERT_EQ(ring.push({nullptr, nullptr, i, 0, 0, 1}), push_result::pushed);
  EXPECT_EQ(ring.push({nullptr, nullptr, 999, 0, 0, 1}), push_result::dropped_full);
  const auto got = sampling_test::drain(ring);
  ASSERT_EQ(got.size(), 64u);
  for (std::uintptr_t i = 0; i < 64; ++i) EXPECT_EQ(got[i].page, i);
  const ring_counters c = ring.counters();
  EXPECT_EQ(c.pushed, 64u);
  EXPECT_EQ(c.dropped_full, 1u);
  EXPECT_EQ(ring.push({nullptr, nullptr, 1000, 0, 0, 1}), push_result::pushed);  // room again
}

TEST(Ring, FourProducersAndAConsumerLoseNothingButWhatTheyCount) {
  constexpr int kThreads = 4;
  constexpr std::uint64_t kAttempts = 20000;
  sampling_test::mapping m(kThreads);
  region_registry reg(sampling_mode::explicit_only);
  static int key = 0;
  reg.add(&key, m.data(), m.bytes(), 0);
  std::vector<std::unique_ptr<sample_ring>> rings;
  for (int t = 0; t < kThreads; ++t) rings.push_back(std::make_unique<sample_ring>(64));
  std::atomic<int> running{kThreads};
  std::vector<std::uint64_t> sampled(kThreads, 0), drained(kThreads, 0), order_errors(kThreads, 0);
  std::thread consumer([&] {
    std::vector<std::uintptr_t> last(kThreads, 0);
    auto sweep = [&] {
      for (int t = 0; t < kThreads; ++t)
        drained[t] += rings[t]->drain([&](const sample& s) {
          if (s.cpu_node != t) ++order_errors[t];
          ++last[t];
        });
    };
    while (running.load() > 0) sweep();
    sweep();
  });
  std::vector<std::thread> producers;
  for (int t = 0; t < kThreads; ++t)
    producers.emplace_back([&, t] {
      enter_sampling(rings[t].get(), t);
      for (std::uint64_t i = 0; i < kAttempts; ++i)
        if (note_access(m.page_at(static_cast<std::size_t>(t)) + i % 64) == access_result::sampled) ++sampled[t];
      leave_sampling();
      running.fetch_sub(1);
    });
  for (auto& p : producers) p.join();
  consumer.join();
  for (int t = 0; t < kThreads; ++t) {
    const ring_counters c = rings[t]->counters();
    EXPECT_EQ(c.pushed + c.dropped_full + c.dropped_reentrant, kAttempts) << "ring " << t;
    EXPECT_EQ(c.pushed, sampled[t]);
    EXPECT_EQ(drained[t], c.pushed);
    EXPECT_EQ(order_errors[t], 0u);
  }
}

}  // namespace
