// Single-thread semantics of the node injection queue (runtime/deque/injection_queue.hpp):
// FIFO, growth beyond the reserve, batches, the size estimate when nothing runs concurrently.
// The multi-thread ledger is in tests/stress/deque.
#include <cstddef>
#include <vector>

#include <gtest/gtest.h>

#include "deque/injection_queue.hpp"

namespace rt::deque {
namespace {

TEST(InjectionQueue, NewQueueIsEmpty) {
  injection_queue<int> q(4);
  EXPECT_EQ(q.pop(), nullptr);
  EXPECT_EQ(q.size_estimate(), 0u);
  int* out[2] = {nullptr, nullptr};
  EXPECT_EQ(q.pop_batch(out, 2), 0u);
  EXPECT_EQ(out[0], nullptr);
}

TEST(InjectionQueue, GrowsBeyondItsReserveAndStaysFifo) {
  std::vector<int> cells(1000);
  injection_queue<int> q(2);
  for (int& c : cells) q.push(&c);
  EXPECT_EQ(q.size_estimate(), 1000u);  // exact when nothing runs concurrently
  for (int& c : cells) ASSERT_EQ(q.pop(), &c);
  EXPECT_EQ(q.pop(), nullptr);
  EXPECT_EQ(q.size_estimate(), 0u);
}

TEST(InjectionQueue, PopBatchTakesAtMostMaxInOrder) {
  std::vector<int> cells(10);
  injection_queue<int> q(16);
  for (int& c : cells) q.push(&c);
  std::vector<int*> out(8, nullptr);

  ASSERT_EQ(q.pop_batch(out.data(), 4), 4u);  // fewer than queued
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(out[i], &cells[i]);
  EXPECT_EQ(out[4], nullptr);  // nothing written past the batch
  EXPECT_EQ(q.size_estimate(), 6u);

  ASSERT_EQ(q.pop_batch(out.data(), 8), 6u);  // more than queued: what is there
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(out[i], &cells[4 + i]);
  EXPECT_EQ(q.size_estimate(), 0u);

  EXPECT_EQ(q.pop_batch(out.data(), 0), 0u);
  q.push(&cells[0]);
  EXPECT_EQ(q.pop_batch(out.data(), 0), 0u);  // max 0 takes nothing
  EXPECT_EQ(q.size_estimate(), 1u);
}

TEST(InjectionQueue, PopAndBatchInterleave) {
  std::vector<int> cells(5);
  injection_queue<int> q(1);
  for (int& c : cells) q.push(&c);
  EXPECT_EQ(q.pop(), &cells[0]);
  int* out[2] = {nullptr, nullptr};
  ASSERT_EQ(q.pop_batch(out, 2), 2u);
  EXPECT_EQ(out[0], &cells[1]);
  EXPECT_EQ(out[1], &cells[2]);
  EXPECT_EQ(q.pop(), &cells[3]);
  EXPECT_EQ(q.size_estimate(), 1u);
  EXPECT_EQ(q.pop(), &cells[4]);
  EXPECT_EQ(q.pop(), nullptr);
}

}  // namespace
}  // namespace rt::deque
