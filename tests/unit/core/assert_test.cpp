// RT_ASSERT's message format and the invariants the core headers check. Death tests fork a
// child; nothing here starts threads.
#include "core/assert.hpp"

#include <gtest/gtest.h>

#include <cstddef>

#include "core/cpumask.hpp"
#include "core/ids.hpp"
#include "core/rng.hpp"

namespace {

TEST(AssertDeathTest, MessageNamesInvariantFileAndLine) {
  EXPECT_DEATH(RT_ASSERT(1 + 1 == 3, "I-TEST-1", "arithmetic still works"),
               "^numart: invariant I-TEST-1 broken: arithmetic still works \\(.*assert_test\\.cpp:[0-9]+\\)\n$");
}

TEST(AssertDeathTest, PassingAssertDoesNothing) {
  int evaluated = 0;
  RT_ASSERT(++evaluated == 1, "I-TEST-2", "must hold");
  EXPECT_EQ(evaluated, 1);
}

TEST(AssertDeathTest, DebugAssertFollowsNdebug) {
  int evaluated = 0;
#if defined(NDEBUG)
  RT_DEBUG_ASSERT(++evaluated == 5, "I-TEST-3", "not evaluated under NDEBUG");
  EXPECT_EQ(evaluated, 0);
#else
  RT_DEBUG_ASSERT(++evaluated == 1, "I-TEST-3", "evaluated without NDEBUG");
  EXPECT_EQ(evaluated, 1);
  EXPECT_DEATH(RT_DEBUG_ASSERT(evaluated == 5, "I-TEST-3", "debug check"), "invariant I-TEST-3 broken: debug check");
#endif
}

TEST(AssertDeathTest, CpumaskBitOutOfRange) {
  rt::core::cpumask m(8);
  EXPECT_DEATH(m.set(8), "invariant I-CPUMASK-1 broken");
  EXPECT_DEATH(m.clear(100), "invariant I-CPUMASK-1 broken");
  EXPECT_DEATH(static_cast<void>(m.test(8)), "invariant I-CPUMASK-1 broken");
}

TEST(AssertDeathTest, CpumaskSizeMismatch) {
  const rt::core::cpumask a(8);
  const rt::core::cpumask b(9);
  EXPECT_DEATH(static_cast<void>(a & b), "invariant I-CPUMASK-2 broken");
  EXPECT_DEATH(static_cast<void>(a | b), "invariant I-CPUMASK-2 broken");
}

TEST(AssertDeathTest, WrapStartOutOfRange) {
  const rt::core::cpumask m(8);
  EXPECT_DEATH(static_cast<void>(rt::core::wrap(m, 8)), "invariant I-CPUMASK-3 broken");
}

TEST(AssertDeathTest, NextBelowZero) {
  rt::core::rng r(1);
  EXPECT_DEATH(static_cast<void>(r.next_below(0)), "invariant I-RNG-1 broken");
}

TEST(AssertDeathTest, NegativeIdAsIndex) {
  EXPECT_DEATH(static_cast<void>(rt::core::worker_id{-1}.index()), "invariant I-IDS-1 broken");
}

}  // namespace
