// Single-thread semantics of the Chase-Lev deque (runtime/deque/chase_lev.hpp): LIFO pops, FIFO
// steals, empty outcomes, resizes that keep order and contents. Concurrency is covered by
// tests/stress/deque and tests/model.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "deque/chase_lev.hpp"

namespace rt::deque {
namespace {

// Items are pointers into this array; the deque never dereferences them.
struct items {
  std::vector<int> cells = std::vector<int>(1024);
  int* operator[](std::size_t i) { return &cells[i]; }
};

using int_deque = chase_lev<int*>;

TEST(ChaseLev, NewDequeIsEmpty) {
  int_deque d(3);
  EXPECT_EQ(d.pop(), nullptr);
  EXPECT_TRUE(d.empty_estimate());
  EXPECT_EQ(d.size_estimate(), 0u);
  EXPECT_EQ(d.capacity(), 8u);  // 2^3
}

TEST(ChaseLev, StealFromEmptyIsEmptyAndLeavesOutAlone) {
  items it;
  int_deque d(2);
  int* out = it[7];
  EXPECT_EQ(d.steal(out), steal_result::empty);
  EXPECT_EQ(out, it[7]);
  // Emptied again after use: still `empty`, never `retry` (nobody raced us).
  d.push(it[1]);
  EXPECT_EQ(d.pop(), it[1]);
  EXPECT_EQ(d.steal(out), steal_result::empty);
  d.push(it[2]);
  ASSERT_EQ(d.steal(out), steal_result::success);
  EXPECT_EQ(out, it[2]);
  EXPECT_EQ(d.steal(out), steal_result::empty);
  EXPECT_EQ(d.pop(), nullptr);
}

TEST(ChaseLev, PopIsLifo) {
  items it;
  int_deque d(4);
  for (std::size_t i = 1; i <= 5; ++i) d.push(it[i]);
  EXPECT_EQ(d.size_estimate(), 5u);
  for (std::size_t i = 5; i >= 1; --i) EXPECT_EQ(d.pop(), it[i]);
  EXPECT_EQ(d.pop(), nullptr);
}

TEST(ChaseLev, StealIsFifo) {
  items it;
  int_deque d(4);
  for (std::size_t i = 1; i <= 5; ++i) d.push(it[i]);
  for (std::size_t i = 1; i <= 5; ++i) {
    int* out = nullptr;
    ASSERT_EQ(d.steal(out), steal_result::success);
    EXPECT_EQ(out, it[i]);
  }
  int* out = nullptr;
  EXPECT_EQ(d.steal(out), steal_result::empty);
}

TEST(ChaseLev, StealAndPopMeetInTheMiddle) {
  items it;
  int_deque d(2);
  for (std::size_t i = 1; i <= 4; ++i) d.push(it[i]);
  int* out = nullptr;
  ASSERT_EQ(d.steal(out), steal_result::success);
  EXPECT_EQ(out, it[1]);
  EXPECT_EQ(d.pop(), it[4]);
  ASSERT_EQ(d.steal(out), steal_result::success);
  EXPECT_EQ(out, it[2]);
  EXPECT_EQ(d.size_estimate(), 1u);
  EXPECT_EQ(d.pop(), it[3]);  // the last element, taken through the CAS path (I-DEQ-5)
  EXPECT_EQ(d.pop(), nullptr);
  EXPECT_EQ(d.steal(out), steal_result::empty);
  // bottom was restored correctly: the deque works after the last-element path.
  d.push(it[5]);
  EXPECT_EQ(d.size_estimate(), 1u);
  EXPECT_EQ(d.pop(), it[5]);
}

TEST(ChaseLev, ResizeKeepsOrderAndContents) {
  items it;
  int_deque d(1);  // 2 slots
  for (std::size_t i = 1; i <= 100; ++i) d.push(it[i]);
  // Doubling from 2 until 100 items fit: 2, 4, ..., 128.
  EXPECT_EQ(d.capacity(), 128u);
  EXPECT_EQ(d.size_estimate(), 100u);
  for (std::size_t i = 1; i <= 50; ++i) {
    int* out = nullptr;
    ASSERT_EQ(d.steal(out), steal_result::success);
    EXPECT_EQ(out, it[i]);
  }
  for (std::size_t i = 100; i > 50; --i) EXPECT_EQ(d.pop(), it[i]);
  EXPECT_EQ(d.pop(), nullptr);
}

TEST(ChaseLev, ResizeOfAWrappedBufferKeepsOrder) {
  items it;
  int_deque d(2);  // 4 slots
  for (std::size_t i = 1; i <= 3; ++i) d.push(it[i]);
  int* out = nullptr;
  ASSERT_EQ(d.steal(out), steal_result::success);  // top = 1
  ASSERT_EQ(d.steal(out), steal_result::success);  // top = 2
  // Items 3..6 (indices 2..5) fill all 4 slots, wrapping at index 4; pushing item 7 (index 6)
  // forces a resize that copies [2, 6) out of the wrapped buffer.
  for (std::size_t i = 4; i <= 7; ++i) d.push(it[i]);
  EXPECT_EQ(d.capacity(), 8u);
  for (std::size_t i = 3; i <= 7; ++i) {
    ASSERT_EQ(d.steal(out), steal_result::success);
    EXPECT_EQ(out, it[i]);
  }
  EXPECT_EQ(d.pop(), nullptr);
}

TEST(ChaseLev, CapacityOneGrows) {
  items it;
  int_deque d(0);
  EXPECT_EQ(d.capacity(), 1u);
  for (std::size_t i = 1; i <= 3; ++i) d.push(it[i]);
  EXPECT_EQ(d.capacity(), 4u);
  for (std::size_t i = 3; i >= 1; --i) EXPECT_EQ(d.pop(), it[i]);
}

TEST(ChaseLev, RejectsAnUnrepresentableCapacity) {
  EXPECT_THROW(int_deque d(int_deque::kMaxLog2Capacity + 1), std::length_error);
}

// A long random single-thread sequence against std::deque as the reference: pop takes the
// back, steal takes the front. Small initial capacity so that it resizes and wraps many times.
TEST(ChaseLev, MatchesAReferenceDequeOverARandomSequence) {
  chase_lev<std::uintptr_t> d(0);
  std::deque<std::uintptr_t> ref;
  std::mt19937 rng(12345);
  std::uintptr_t next = 1;
  for (int step = 0; step < 200000; ++step) {
    const unsigned op = rng() % 8;
    if (op < 4) {  // push: half of the operations, so the deque grows on average
      d.push(next);
      ref.push_back(next);
      ++next;
    } else if (op < 6) {
      const std::uintptr_t got = d.pop();
      if (ref.empty()) {
        ASSERT_EQ(got, 0u);
      } else {
        ASSERT_EQ(got, ref.back());
        ref.pop_back();
      }
    } else {
      std::uintptr_t got = 0;
      const steal_result r = d.steal(got);
      if (ref.empty()) {
        ASSERT_EQ(r, steal_result::empty);
      } else {
        ASSERT_EQ(r, steal_result::success);
        ASSERT_EQ(got, ref.front());
        ref.pop_front();
      }
    }
    ASSERT_EQ(d.size_estimate(), ref.size());
  }
}

}  // namespace
}  // namespace rt::deque
