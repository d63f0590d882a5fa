// Ledger test of the Chase-Lev deque under real threads: one owner and three thieves
// (oversubscribed on a 2-core machine), 2,000,000 items, each taken exactly once. Every round
// starts from a 2-slot deque, so resizes happen while thieves are stealing (I-DEQ-9, I-DEQ-10).
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "deque/chase_lev.hpp"

namespace rt::deque {
namespace {

constexpr std::size_t kItems = 2'000'000;
constexpr std::size_t kRounds = 20;
constexpr unsigned kThieves = 3;
constexpr unsigned kMaxBurst = 4096;  // the deque grows from 2 to 4096 slots in every round

// The payload is written before the push and checked by whoever takes the task: a thief that
// saw the pointer but not the fields (a missing release/acquire, I-DEQ-3) fails the check.
struct task {
  std::uint64_t id = 0;
  std::uint64_t check = 0;
};
constexpr std::uint64_t check_of(std::uint64_t id) { return id * 2654435761u + 1; }

struct ledger {
  std::vector<std::atomic<std::uint32_t>> taken = std::vector<std::atomic<std::uint32_t>>(kItems);
  std::atomic<std::size_t> total{0};
  std::atomic<std::size_t> bad_payload{0};

  void take(const task* t) {
    if (t->check != check_of(t->id)) bad_payload.fetch_add(1, std::memory_order_relaxed);
    taken[t->id].fetch_add(1, std::memory_order_relaxed);
    total.fetch_add(1, std::memory_order_release);
  }
};

TEST(ChaseLevStress, OneOwnerThreeThievesTakeEveryItemExactlyOnce) {
  std::vector<task> tasks(kItems);
  ledger book;
  std::atomic<std::size_t> steals{0};
  std::atomic<std::size_t> retries{0};
  std::size_t owner_pops = 0;
  std::size_t max_capacity = 0;
  std::mt19937 rng(20240601);

  const std::size_t per_round = kItems / kRounds;
  for (std::size_t round = 0; round < kRounds; ++round) {
    chase_lev<task*> d(1);
    std::atomic<bool> done{false};
    std::vector<std::thread> thieves;
    for (unsigned i = 0; i < kThieves; ++i) {
      thieves.emplace_back([&] {
        std::size_t mine = 0;
        std::size_t lost = 0;
        while (!done.load(std::memory_order_acquire)) {
          task* t = nullptr;
          switch (d.steal(t)) {
            case steal_result::success:
              book.take(t);
              ++mine;
              break;
            case steal_result::retry:
              ++lost;
              break;
            case steal_result::empty:
              std::this_thread::yield();
              break;
          }
        }
        steals.fetch_add(mine, std::memory_order_relaxed);
        retries.fetch_add(lost, std::memory_order_relaxed);
      });
    }

    // The owner: bursts of pushes, each followed by up to as many pops, then drain.
    const std::size_t first = round * per_round;
    const std::size_t end = first + per_round;
    std::size_t next = first;
    while (next < end) {
      const std::size_t burst = std::min<std::size_t>(1 + rng() % kMaxBurst, end - next);
      for (std::size_t i = 0; i < burst; ++i, ++next) {
        tasks[next].id = next;
        tasks[next].check = check_of(next);
        d.push(&tasks[next]);
      }
      max_capacity = std::max(max_capacity, d.capacity());
      const std::size_t pops = rng() % (burst + 1);
      for (std::size_t i = 0; i < pops; ++i) {
        task* t = d.pop();
        if (t == nullptr) break;
        book.take(t);
        ++owner_pops;
      }
    }
    for (task* t = d.pop(); t != nullptr; t = d.pop()) {
      book.take(t);
      ++owner_pops;
    }
    // The deque is empty; a thief may still be between its winning CAS and its ledger entry.
    while (book.total.load(std::memory_order_acquire) < end) std::this_thread::yield();
    done.store(true, std::memory_order_release);
    for (auto& th : thieves) th.join();
    ASSERT_EQ(book.total.load(), end) << "round " << round << ": an item was taken twice";
  }

  std::size_t missing = 0;
  std::size_t duplicated = 0;
  for (const auto& n : book.taken) {
    const std::uint32_t v = n.load();
    missing += v == 0;
    duplicated += v > 1;
  }
  EXPECT_EQ(missing, 0u);
  EXPECT_EQ(duplicated, 0u);
  EXPECT_EQ(book.bad_payload.load(), 0u);
  EXPECT_EQ(owner_pops + steals.load(), kItems);
  RecordProperty("owner_pops", static_cast<int>(owner_pops));
  RecordProperty("steals", static_cast<int>(steals.load()));
  RecordProperty("retries", static_cast<int>(retries.load()));
  // How far the deque grew depends on how fast the thieves drained it; deterministic resize
  // coverage is in tests/unit/deque and tests/model.
  RecordProperty("max_capacity", static_cast<int>(max_capacity));
}

}  // namespace
}  // namespace rt::deque
