// rng: determinism, coverage and bias checks with fixed seeds (so results are reproducible).
#include "core/rng.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

namespace {

using rt::core::rng;

static_assert(std::uniform_random_bit_generator<rng>);

TEST(Rng, SameSeedSameSequence) {
  rng a(12345);
  rng b(12345);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(a.next_u64(), b.next_u64());
}

TEST(Rng, NearbySeedsDiffer) {
  std::set<std::uint64_t> firsts;
  for (std::uint64_t seed = 0; seed < 64; ++seed) firsts.insert(rng(seed).next_u64());
  EXPECT_EQ(firsts.size(), 64u);
  rng a(1);
  rng b(2);
  int equal = 0;
  for (int i = 0; i < 1000; ++i) equal += a.next_u64() == b.next_u64() ? 1 : 0;
  EXPECT_EQ(equal, 0);
}

TEST(Rng, BitsAreBalanced) {
  rng r(7);
  int ones[64] = {};
  constexpr int kDraws = 20000;
  for (int i = 0; i < kDraws; ++i) {
    const std::uint64_t v = r.next_u64();
    for (int b = 0; b < 64; ++b) ones[b] += static_cast<int>((v >> b) & 1u);
  }
  // Binomial(20000, 1/2): sd ~ 71; 6 sd is a generous band that a stuck bit cannot meet.
  for (int b = 0; b < 64; ++b) {
    EXPECT_GT(ones[b], kDraws / 2 - 430) << "bit " << b;
    EXPECT_LT(ones[b], kDraws / 2 + 430) << "bit " << b;
  }
}

TEST(Rng, NextBelowCoversItsRange) {
  rng r(99);
  for (const std::uint64_t n : {1ULL, 2ULL, 3ULL, 7ULL, 10ULL, 64ULL, 1000ULL}) {
    std::vector<int> hits(n, 0);
    const int draws = static_cast<int>(n) * 200;
    for (int i = 0; i < draws; ++i) {
      const std::uint64_t v = r.next_below(n);
      ASSERT_LT(v, n);
      ++hits[v];
    }
    for (std::uint64_t v = 0; v < n; ++v) EXPECT_GT(hits[v], 0) << "n=" << n << " never drew " << v;
  }
}

TEST(Rng, NextBelowIsUniform) {
  rng r(2024);
  constexpr int kBuckets = 10;
  constexpr int kDraws = 100000;
  int hits[kBuckets] = {};
  for (int i = 0; i < kDraws; ++i) ++hits[r.next_below(kBuckets)];
  // Chi-square with 9 degrees of freedom; 27.9 is the 0.1% critical value.
  double chi2 = 0;
  for (const int h : hits) {
    const double d = h - kDraws / kBuckets;
    chi2 += d * d / (kDraws / kBuckets);
  }
  EXPECT_LT(chi2, 27.9);
}

TEST(Rng, NextBelowHasNoModuloBias) {
  // n = 3 * 2^62: reducing a 64-bit draw modulo n puts [0, 2^62) twice as often as it should
  // (probability 1/2 instead of 1/3). An unbiased draw lands there a third of the time.
  rng r(5);
  const std::uint64_t n = 3ULL << 62;
  constexpr int kDraws = 60000;
  int low = 0;
  for (int i = 0; i < kDraws; ++i) {
    const std::uint64_t v = r.next_below(n);
    ASSERT_LT(v, n);
    low += v < (1ULL << 62) ? 1 : 0;
  }
  // sd of the fraction ~ 0.0019; 0.015 is ~8 sd and far from the biased 0.5.
  EXPECT_NEAR(static_cast<double>(low) / kDraws, 1.0 / 3.0, 0.015);
}

TEST(Rng, LargestBound) {
  rng r(3);
  const std::uint64_t n = (1ULL << 63) + 1;
  bool high = false;
  for (int i = 0; i < 100; ++i) {
    const std::uint64_t v = r.next_below(n);
    ASSERT_LT(v, n);
    high = high || v >= (1ULL << 62);
  }
  EXPECT_TRUE(high);
}

TEST(Rng, WorksWithStandardAlgorithms) {
  rng r(11);
  std::vector<int> v(50);
  for (int i = 0; i < 50; ++i) v[static_cast<std::size_t>(i)] = i;
  std::vector<int> shuffled = v;
  std::shuffle(shuffled.begin(), shuffled.end(), r);
  EXPECT_NE(shuffled, v);
  std::sort(shuffled.begin(), shuffled.end());
  EXPECT_EQ(shuffled, v);
}

}  // namespace
