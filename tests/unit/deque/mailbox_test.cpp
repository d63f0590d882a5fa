// Single-thread semantics of the worker mailbox (runtime/deque/mailbox.hpp): FIFO, the `full`
// outcome at the documented capacity, capacity limits. The MPSC ledger is in tests/stress/deque.
#include <cstddef>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "deque/mailbox.hpp"

namespace rt::deque {
namespace {

TEST(Mailbox, NewMailboxIsEmpty) {
  mailbox<int> m(4);
  EXPECT_TRUE(m.empty_estimate());
  EXPECT_EQ(m.pop(), nullptr);
}

TEST(Mailbox, IsFifo) {
  std::vector<int> cells(8);
  mailbox<int> m(8);
  for (int& c : cells) ASSERT_EQ(m.push(&c), mailbox_push::delivered);
  EXPECT_FALSE(m.empty_estimate());
  for (int& c : cells) EXPECT_EQ(m.pop(), &c);
  EXPECT_EQ(m.pop(), nullptr);
  EXPECT_TRUE(m.empty_estimate());
}

TEST(Mailbox, FullAtCapacityAndTheTaskStaysWithTheCaller) {
  std::vector<int> cells(4);
  mailbox<int> m(3);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(m.push(&cells[i]), mailbox_push::delivered);
  EXPECT_EQ(m.push(&cells[3]), mailbox_push::full);
  // Room again after one pop; the rejected task was not enqueued (it never comes out).
  EXPECT_EQ(m.pop(), &cells[0]);
  EXPECT_EQ(m.push(&cells[3]), mailbox_push::delivered);
  EXPECT_EQ(m.pop(), &cells[1]);
  EXPECT_EQ(m.pop(), &cells[2]);
  EXPECT_EQ(m.pop(), &cells[3]);
  EXPECT_EQ(m.pop(), nullptr);
}

TEST(Mailbox, LargestCapacityHoldsExactlyThatMany) {
  int cell = 0;
  mailbox<int> m(mailbox<int>::kMaxCapacity);
  for (std::size_t i = 0; i < 65534; ++i) ASSERT_EQ(m.push(&cell), mailbox_push::delivered) << i;
  EXPECT_EQ(m.push(&cell), mailbox_push::full);
}

TEST(Mailbox, RejectsUnrepresentableCapacities) {
  EXPECT_THROW(mailbox<int> m(0), std::length_error);
  EXPECT_THROW(mailbox<int> m(65535), std::length_error);
}

}  // namespace
}  // namespace rt::deque
