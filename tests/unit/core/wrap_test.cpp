// for_each_cpu_wrap and wrap(): every set bit exactly once, in wrap order from start.
//
// The expected order is computed from a std::vector<bool> by plain modular arithmetic:
// (start + i) % n for i = 0..n-1, keeping the set positions.
//
// Seed 000 patch 3/9 says the walker before c743f0a5c50f "would skip over CPUs when bits were
// consecutive in the bitmask". BuggyWalker below models exactly that defect (after visiting
// bit c it resumes the search at c + 2, so a set c + 1 is lost) and the tests show that the
// same property check that accepts wrap() rejects it. Note: the old fair.c helper removed by
// 000 patch 2/9, ported literally, visits every bit for all masks of up to 8 bits and every
// start (checked while writing this test), so the model is of the described symptom, not a
// transcription of the removed lines.
#include <gtest/gtest.h>

#include <cstddef>
#include <random>
#include <vector>

#include "core/cpumask.hpp"

namespace {

using rt::core::cpumask;
using rt::core::for_each_cpu_wrap;
using rt::core::wrap;

std::vector<std::size_t> expected_order(const std::vector<bool>& ref, std::size_t start) {
  std::vector<std::size_t> out;
  const std::size_t n = ref.size();
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t b = (start + i) % n;
    if (ref[b]) out.push_back(b);
  }
  return out;
}

cpumask from_ref(const std::vector<bool>& ref) {
  cpumask m(ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (ref[i]) m.set(i);
  }
  return m;
}

std::vector<std::size_t> walk_range(const cpumask& m, std::size_t start) {
  std::vector<std::size_t> out;
  for (const std::size_t b : wrap(m, start)) out.push_back(b);
  return out;
}

std::vector<std::size_t> walk_callback(const cpumask& m, std::size_t start) {
  std::vector<std::size_t> out;
  for_each_cpu_wrap(m, start, [&out](std::size_t b) { out.push_back(b); });
  return out;
}

// The defect described in 000 patch 3/9: a double advance after each visited bit.
std::vector<std::size_t> buggy_walker(const cpumask& m, std::size_t start) {
  std::vector<std::size_t> out;
  const std::size_t n = m.size();
  bool wrapped = false;
  std::size_t cur = m.next(start);
  for (;;) {
    if (!wrapped && cur >= n) {
      wrapped = true;
      cur = m.next(0);
    }
    if (wrapped && cur >= start) break;
    out.push_back(cur);
    cur = m.next(cur + 2);
  }
  return out;
}

// The property under test, as a predicate so it can be shown to reject a bad walker.
template <class Walker>
bool walks_correctly(Walker&& walk, const std::vector<bool>& ref, std::size_t start) {
  return walk(from_ref(ref), start) == expected_order(ref, start);
}

TEST(WrapProperty, RandomMasksOneTo1024Bits) {
  std::mt19937_64 gen(0x5eed);
  std::uniform_int_distribution<std::size_t> size_dist(1, 1024);
  const double densities[] = {0.0, 0.01, 0.1, 0.5, 0.9, 1.0};
  for (int iter = 0; iter < 3000; ++iter) {
    const std::size_t n = size_dist(gen);
    std::bernoulli_distribution bit(densities[static_cast<std::size_t>(iter) % 6]);
    std::vector<bool> ref(n);
    for (std::size_t i = 0; i < n; ++i) ref[i] = bit(gen);
    const std::size_t start = std::uniform_int_distribution<std::size_t>(0, n - 1)(gen);
    const cpumask m = from_ref(ref);
    const std::vector<std::size_t> expect = expected_order(ref, start);
    ASSERT_EQ(walk_range(m, start), expect) << "iter " << iter << " n=" << n << " start=" << start;
    ASSERT_EQ(walk_callback(m, start), expect) << "iter " << iter << " n=" << n << " start=" << start;
  }
}

TEST(WrapProperty, ExhaustiveSmallMasks) {
  for (std::size_t n = 1; n <= 10; ++n) {
    for (unsigned bits = 0; bits < (1u << n); ++bits) {
      std::vector<bool> ref(n);
      for (std::size_t i = 0; i < n; ++i) ref[i] = ((bits >> i) & 1u) != 0;
      for (std::size_t start = 0; start < n; ++start) {
        ASSERT_TRUE(walks_correctly(walk_range, ref, start)) << "n=" << n << " bits=" << bits << " start=" << start;
      }
    }
  }
}

TEST(WrapExplicit, ConsecutiveRunsAreAllVisited) {
  // Bits 2, 3, 4 and 6, 7 set in 8; start inside the first run.
  const std::vector<bool> ref = {false, false, true, true, true, false, true, true};
  const cpumask m = from_ref(ref);
  EXPECT_EQ(walk_range(m, 3), (std::vector<std::size_t>{3, 4, 6, 7, 2}));
  EXPECT_EQ(walk_range(m, 0), (std::vector<std::size_t>{2, 3, 4, 6, 7}));
  EXPECT_EQ(walk_range(m, 7), (std::vector<std::size_t>{7, 2, 3, 4, 6}));
  // A full mask, runs across the 64-bit word boundary.
  cpumask full(130);
  for (std::size_t i = 0; i < 130; ++i) full.set(i);
  std::vector<std::size_t> expect;
  for (std::size_t i = 0; i < 130; ++i) expect.push_back((62 + i) % 130);
  EXPECT_EQ(walk_range(full, 62), expect);
}

TEST(WrapExplicit, PropertyCatchesTheSkippingWalker) {
  // With consecutive set bits the buggy walker loses some and the property check says so.
  const std::vector<bool> run = {false, false, true, true, true, false, true, true};
  EXPECT_EQ(buggy_walker(from_ref(run), 3), (std::vector<std::size_t>{3, 6, 2}));
  EXPECT_FALSE(walks_correctly(buggy_walker, run, 3));
  EXPECT_TRUE(walks_correctly(walk_range, run, 3));
  // Without adjacent set bits the defect is invisible: only runs expose it, which is why
  // the random and exhaustive tests above use dense masks too.
  const std::vector<bool> sparse = {true, false, true, false, false, true, false, false};
  EXPECT_TRUE(walks_correctly(buggy_walker, sparse, 2));
  // On random dense masks it is caught almost every time.
  std::mt19937_64 gen(99);
  int caught = 0;
  for (int iter = 0; iter < 100; ++iter) {
    std::vector<bool> ref(64);
    for (std::size_t i = 0; i < 64; ++i) ref[i] = (gen() & 1u) != 0;
    if (!walks_correctly(buggy_walker, ref, static_cast<std::size_t>(gen() % 64))) ++caught;
  }
  EXPECT_GE(caught, 99);
}

TEST(WrapExplicit, StartBitNeedNotBeSet) {
  const std::vector<bool> ref = {true, false, false, true, false};
  const cpumask m = from_ref(ref);
  EXPECT_EQ(walk_range(m, 1), (std::vector<std::size_t>{3, 0}));
  EXPECT_EQ(walk_range(m, 4), (std::vector<std::size_t>{0, 3}));
  EXPECT_EQ(walk_range(m, 3), (std::vector<std::size_t>{3, 0}));
}

template <class M>
concept wrappable = requires(M&& m) { wrap(static_cast<M&&>(m), std::size_t{0}); };
static_assert(wrappable<const cpumask&>, "wrap() takes a mask that outlives the loop");
static_assert(!wrappable<cpumask>, "wrap() refuses a temporary that would dangle in range-for");

TEST(WrapExplicit, ClearingAheadDuringTheWalkSkipsThatBit) {
  // select_idle_core-style: visiting bit b clears b's sibling b + 1 before the walk reaches it.
  cpumask m = from_ref({true, true, true, true, false, true, true, false});
  std::vector<std::size_t> seen;
  for (const std::size_t b : wrap(m, 2)) {
    seen.push_back(b);
    if (b + 1 < m.size()) m.clear(b + 1);
  }
  EXPECT_EQ(seen, (std::vector<std::size_t>{2, 5, 0}));
}

TEST(WrapExplicit, EmptyMasks) {
  EXPECT_TRUE(walk_range(cpumask(10), 7).empty());
  EXPECT_TRUE(walk_callback(cpumask(10), 0).empty());
  EXPECT_TRUE(walk_range(cpumask(), 0).empty());
  EXPECT_TRUE(walk_callback(cpumask(), 0).empty());
}

TEST(WrapExplicit, SizeOne) {
  cpumask m(1);
  EXPECT_TRUE(walk_range(m, 0).empty());
  m.set(0);
  EXPECT_EQ(walk_range(m, 0), (std::vector<std::size_t>{0}));
  EXPECT_EQ(walk_callback(m, 0), (std::vector<std::size_t>{0}));
}

TEST(WrapExplicit, StartAtLastBit) {
  EXPECT_EQ(walk_range(from_ref({true, true, false, false, false, true}), 5), (std::vector<std::size_t>{5, 0, 1}));
  EXPECT_EQ(walk_range(from_ref({true, true, false, false, false, false}), 5), (std::vector<std::size_t>{0, 1}));
  std::vector<bool> wide(128, false);
  wide[127] = true;
  wide[0] = true;
  wide[64] = true;
  EXPECT_EQ(walk_range(from_ref(wide), 127), (std::vector<std::size_t>{127, 0, 64}));
}

TEST(WrapExplicit, EarlyStop) {
  const std::vector<bool> ref = {true, true, false, true, true, true};
  const cpumask m = from_ref(ref);
  // Full order from 4 is 4, 5, 0, 1, 3; stop after the third visit.
  std::vector<std::size_t> seen;
  for_each_cpu_wrap(m, 4, [&seen](std::size_t b) {
    seen.push_back(b);
    return seen.size() < 3;
  });
  EXPECT_EQ(seen, (std::vector<std::size_t>{4, 5, 0}));
  // Stopping at the first visit.
  seen.clear();
  for_each_cpu_wrap(m, 2, [&seen](std::size_t b) {
    seen.push_back(b);
    return false;
  });
  EXPECT_EQ(seen, (std::vector<std::size_t>{3}));
  // Breaking out of the range-for after counting, the select_idle_cpu pattern.
  int nr = 2;
  std::vector<std::size_t> scanned;
  for (const std::size_t b : wrap(m, 1)) {
    if (nr-- == 0) break;
    scanned.push_back(b);
  }
  EXPECT_EQ(scanned, (std::vector<std::size_t>{1, 3}));
}

TEST(WrapExplicit, EarlyStopIsAPrefixOnRandomMasks) {
  std::mt19937_64 gen(4242);
  for (int iter = 0; iter < 500; ++iter) {
    const std::size_t n = 1 + gen() % 300;
    std::vector<bool> ref(n);
    for (std::size_t i = 0; i < n; ++i) ref[i] = (gen() % 3) == 0;
    const std::size_t start = gen() % n;
    const std::vector<std::size_t> full = expected_order(ref, start);
    const std::size_t limit = full.empty() ? 0 : gen() % (full.size() + 1);
    std::vector<std::size_t> seen;
    for_each_cpu_wrap(from_ref(ref), start, [&](std::size_t b) {
      if (seen.size() == limit) return false;
      seen.push_back(b);
      return true;
    });
    ASSERT_EQ(seen, std::vector<std::size_t>(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(limit)))
        << "iter " << iter;
  }
}

}  // namespace
