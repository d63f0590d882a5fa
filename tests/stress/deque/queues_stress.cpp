// Ledger tests of the mailbox (4 producers, 1 consumer) and of the injection queue (3 producers,
// 3 consumers mixing pop and pop_batch), oversubscribed on a 2-core machine.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "deque/injection_queue.hpp"
#include "deque/mailbox.hpp"

namespace rt::deque {
namespace {

struct message {
  unsigned producer = 0;
  std::size_t seq = 0;
  std::uint64_t check = 0;  // written before the push, checked by the consumer
};
constexpr std::uint64_t check_of(unsigned p, std::size_t seq) { return (seq << 8) ^ (p + 1); }

// The wake path's contract (I-MBX-1): a push that finds the mailbox full leaves the task with
// the caller, who places it elsewhere, here on a fallback injection queue. The consumer drains
// both. Nothing may be lost or duplicated; what went through the mailbox keeps each producer's
// order (the queue is linearisable FIFO).
TEST(MailboxStress, FourProducersOneConsumerLoseNothing) {
  constexpr unsigned kProducers = 4;
  constexpr std::size_t kPerProducer = 250'000;
  constexpr std::size_t kTotal = kProducers * kPerProducer;
  std::vector<std::vector<message>> msgs(kProducers, std::vector<message>(kPerProducer));
  mailbox<message> box(64);
  injection_queue<message> fallback(64);
  std::atomic<std::size_t> fulls{0};

  std::vector<std::thread> producers;
  for (unsigned p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      std::size_t full_here = 0;
      for (std::size_t s = 0; s < kPerProducer; ++s) {
        message* m = &msgs[p][s];
        m->producer = p;
        m->seq = s;
        m->check = check_of(p, s);
        if (box.push(m) == mailbox_push::full) {
          fallback.push(m);
          ++full_here;
          std::this_thread::yield();  // let the consumer catch up, so both paths carry traffic
        }
      }
      fulls.fetch_add(full_here, std::memory_order_relaxed);
    });
  }

  std::vector<std::uint32_t> seen(kTotal, 0);
  std::vector<std::size_t> next_from_box(kProducers, 0);  // lowest seq the box may still yield
  std::size_t received = 0;
  std::size_t out_of_order = 0;
  std::size_t bad_payload = 0;
  while (received < kTotal) {
    message* m = box.pop();
    const bool from_box = m != nullptr;
    if (m == nullptr) m = fallback.pop();
    if (m == nullptr) {
      std::this_thread::yield();
      continue;
    }
    if (m->check != check_of(m->producer, m->seq)) ++bad_payload;
    if (from_box) {
      if (m->seq < next_from_box[m->producer]) ++out_of_order;
      next_from_box[m->producer] = m->seq + 1;
    }
    ++seen[m->producer * kPerProducer + m->seq];
    ++received;
  }
  for (auto& t : producers) t.join();

  std::size_t wrong = 0;
  for (std::uint32_t n : seen) wrong += n != 1;
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(bad_payload, 0u);
  EXPECT_EQ(out_of_order, 0u);
  EXPECT_EQ(box.pop(), nullptr);
  EXPECT_EQ(fallback.pop(), nullptr);
  RecordProperty("mailbox_full", static_cast<int>(fulls.load()));
}

TEST(InjectionQueueStress, ThreeProducersThreeConsumersLoseNothing) {
  constexpr unsigned kProducers = 3;
  constexpr unsigned kConsumers = 3;
  constexpr std::size_t kPerProducer = 300'000;
  constexpr std::size_t kTotal = kProducers * kPerProducer;
  std::vector<std::vector<message>> msgs(kProducers, std::vector<message>(kPerProducer));
  injection_queue<message> q(16);  // small reserve: the pool grows while consumers pop
  std::vector<std::atomic<std::uint32_t>> seen(kTotal);
  std::atomic<std::size_t> received{0};
  std::atomic<std::size_t> bad_payload{0};
  std::atomic<std::size_t> bad_estimate{0};

  std::vector<std::thread> threads;
  for (unsigned p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      for (std::size_t s = 0; s < kPerProducer; ++s) {
        message* m = &msgs[p][s];
        m->producer = p;
        m->seq = s;
        m->check = check_of(p, s);
        q.push(m);
      }
    });
  }
  for (unsigned c = 0; c < kConsumers; ++c) {
    threads.emplace_back([&, c] {
      std::vector<message*> batch(32);
      std::size_t round = c;
      while (received.load(std::memory_order_acquire) < kTotal) {
        // Alternate single pops and batches of 1..32.
        const std::size_t max = (round++ % 2 == 0) ? 0 : 1 + round % 32;
        std::size_t n = 0;
        if (max == 0) {
          if (message* m = q.pop()) batch[n++] = m;
        } else {
          n = q.pop_batch(batch.data(), max);
        }
        // I-INJ-3: never negative (it would show as a huge size_t), never above what was pushed.
        if (q.size_estimate() > kTotal) bad_estimate.fetch_add(1);
        if (n == 0) {
          std::this_thread::yield();
          continue;
        }
        for (std::size_t i = 0; i < n; ++i) {
          const message* m = batch[i];
          if (m->check != check_of(m->producer, m->seq)) bad_payload.fetch_add(1);
          seen[m->producer * kPerProducer + m->seq].fetch_add(1, std::memory_order_relaxed);
        }
        received.fetch_add(n, std::memory_order_release);
      }
    });
  }
  for (auto& t : threads) t.join();

  std::size_t wrong = 0;
  for (const auto& n : seen) wrong += n.load() != 1;
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(received.load(), kTotal);
  EXPECT_EQ(bad_payload.load(), 0u);
  EXPECT_EQ(bad_estimate.load(), 0u);
  EXPECT_EQ(q.pop(), nullptr);
  EXPECT_EQ(q.size_estimate(), 0u);  // exact once every thread has joined
}

}  // namespace
}  // namespace rt::deque
