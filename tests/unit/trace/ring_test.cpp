// The ring on one thread: capacity rounding, order, overwrite-oldest with drop accounting.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>

#include "trace/events.hpp"
#include "trace/ring.hpp"

namespace {

using rt::trace::event;
using rt::trace::ring;

event numbered(std::uint64_t n) {
  event e = rt::trace::ev::spawn(1000 + n, n, ~n, static_cast<int>(n % 7), static_cast<int>(n % 5), rt::trace::wake_affine::affine,
                                 rt::trace::wake_path::idle_scan, static_cast<int>(n % 3));
  return e;
}

void expect_numbered(const event& e, std::uint64_t n) {
  EXPECT_EQ(e.ts, 1000 + n);
  EXPECT_EQ(e.what, rt::trace::kind::spawn);
  EXPECT_EQ(e.a, n);
  EXPECT_EQ(e.b, ~n);
  EXPECT_EQ(e.g, static_cast<int>(n % 7));
  EXPECT_EQ(e.c, static_cast<int>(n % 5));
  EXPECT_EQ(e.d, static_cast<int>(n % 3));
  EXPECT_EQ(e.e, static_cast<std::uint8_t>(rt::trace::wake_affine::affine));
  EXPECT_EQ(e.f, static_cast<std::uint16_t>(rt::trace::wake_path::idle_scan));
}

TEST(trace_ring, capacity_is_a_power_of_two_at_least_two) {
  EXPECT_EQ(ring(1).capacity(), 2u);
  EXPECT_EQ(ring(2).capacity(), 2u);
  EXPECT_EQ(ring(3).capacity(), 4u);
  EXPECT_EQ(ring(1000).capacity(), 1024u);
  EXPECT_EQ(ring(1024).capacity(), 1024u);
}

TEST(trace_ring, refuses_zero_and_huge_capacities) {
  EXPECT_THROW(ring(0), std::invalid_argument);
  EXPECT_THROW(ring(ring::kMaxEvents + 1), std::invalid_argument);
}

TEST(trace_ring, empty_ring_reads_nothing) {
  const ring r(8);
  const ring::snapshot s = r.read();
  EXPECT_TRUE(s.events.empty());
  EXPECT_EQ(s.written, 0u);
  EXPECT_EQ(s.dropped, 0u);
}

TEST(trace_ring, keeps_every_event_in_order_below_capacity) {
  ring r(16);
  for (std::uint64_t n = 0; n < 16; ++n) r.push(numbered(n));
  const ring::snapshot s = r.read();
  ASSERT_EQ(s.events.size(), 16u);
  EXPECT_EQ(s.written, 16u);
  EXPECT_EQ(s.dropped, 0u);
  for (std::uint64_t n = 0; n < 16; ++n) expect_numbered(s.events[n], n);
}

TEST(trace_ring, full_ring_drops_the_oldest_and_counts_them) {
  ring r(16);
  for (std::uint64_t n = 0; n < 16 + 5; ++n) r.push(numbered(n));
  const ring::snapshot s = r.read();
  ASSERT_EQ(s.events.size(), 16u);
  EXPECT_EQ(s.written, 21u);
  EXPECT_EQ(s.dropped, 5u);
  for (std::uint64_t i = 0; i < 16; ++i) expect_numbered(s.events[i], 5 + i);
}

TEST(trace_ring, wraps_many_times) {
  ring r(4);
  for (std::uint64_t n = 0; n < 1003; ++n) r.push(numbered(n));
  const ring::snapshot s = r.read();
  ASSERT_EQ(s.events.size(), 4u);
  EXPECT_EQ(s.dropped, 999u);
  for (std::uint64_t i = 0; i < 4; ++i) expect_numbered(s.events[i], 999 + i);
}

TEST(trace_ring, reading_does_not_consume) {
  ring r(8);
  for (std::uint64_t n = 0; n < 3; ++n) r.push(numbered(n));
  EXPECT_EQ(r.read().events.size(), 3u);
  r.push(numbered(3));
  const ring::snapshot s = r.read();
  ASSERT_EQ(s.events.size(), 4u);
  expect_numbered(s.events[3], 3);
}

TEST(trace_ring, emit_functions_stamp_the_monotonic_clock) {
  ring r(8);
  const std::uint64_t before = rt::trace::now_ns();
  rt::trace::task_start(r, 7, 9, 1);
  rt::trace::task_end(r, 7, 9);
  const std::uint64_t after = rt::trace::now_ns();
  const ring::snapshot s = r.read();
  ASSERT_EQ(s.events.size(), 2u);
  EXPECT_GE(s.events[0].ts, before);
  EXPECT_LE(s.events[0].ts, s.events[1].ts);
  EXPECT_LE(s.events[1].ts, after);
  EXPECT_EQ(s.events[0].what, rt::trace::kind::task_start);
  EXPECT_EQ(s.events[0].a, 7u);
  EXPECT_EQ(s.events[0].b, 9u);
  EXPECT_EQ(s.events[0].c, 1);
  EXPECT_EQ(s.events[1].what, rt::trace::kind::task_end);
}

}  // namespace
