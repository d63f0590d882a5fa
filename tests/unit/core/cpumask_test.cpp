// cpumask against a std::vector<bool> reference built from the same random bits.
#include "core/cpumask.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <random>
#include <vector>

namespace {

using rt::core::cpumask;

struct pair_mask {
  std::vector<bool> ref;
  cpumask mask;
};

pair_mask random_mask(std::mt19937_64& gen, std::size_t n, double density) {
  pair_mask p{std::vector<bool>(n, false), cpumask(n)};
  std::bernoulli_distribution bit(density);
  for (std::size_t i = 0; i < n; ++i) {
    if (bit(gen)) {
      p.ref[i] = true;
      p.mask.set(i);
    }
  }
  return p;
}

// Sizes on both sides of the 64-bit word boundaries.
const std::size_t kSizes[] = {1, 2, 63, 64, 65, 127, 128, 129, 200, 1024};
const double kDensities[] = {0.0, 0.02, 0.3, 0.5, 0.9, 1.0};

TEST(Cpumask, DefaultIsEmptyOfSizeZero) {
  const cpumask m;
  EXPECT_EQ(m.size(), 0u);
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.count(), 0u);
  EXPECT_EQ(m.first(), 0u);
  EXPECT_EQ(m.next(5), 0u);
}

TEST(Cpumask, SetClearTest) {
  cpumask m(130);
  EXPECT_EQ(m.size(), 130u);
  EXPECT_TRUE(m.empty());
  m.set(0);
  m.set(63);
  m.set(64);
  m.set(129);
  m.set(64);  // setting twice changes nothing
  EXPECT_TRUE(m.test(0));
  EXPECT_TRUE(m.test(63));
  EXPECT_TRUE(m.test(64));
  EXPECT_TRUE(m.test(129));
  EXPECT_FALSE(m.test(1));
  EXPECT_FALSE(m.test(65));
  EXPECT_EQ(m.count(), 4u);
  m.clear(63);
  m.clear(62);  // clearing a clear bit changes nothing
  EXPECT_FALSE(m.test(63));
  EXPECT_EQ(m.count(), 3u);
  EXPECT_FALSE(m.empty());
  m.clear(0);
  m.clear(64);
  m.clear(129);
  EXPECT_TRUE(m.empty());
}

TEST(Cpumask, QueriesMatchReference) {
  std::mt19937_64 gen(20240601);
  for (const std::size_t n : kSizes) {
    for (const double d : kDensities) {
      const pair_mask p = random_mask(gen, n, d);
      std::size_t count = 0;
      for (std::size_t i = 0; i < n; ++i) {
        EXPECT_EQ(p.mask.test(i), p.ref[i]) << "n=" << n << " bit " << i;
        count += p.ref[i] ? 1 : 0;
      }
      EXPECT_EQ(p.mask.count(), count) << "n=" << n;
      EXPECT_EQ(p.mask.empty(), count == 0) << "n=" << n;
      // next(from) for every from, and past the end.
      for (std::size_t from = 0; from <= n + 2; ++from) {
        std::size_t expect = n;
        for (std::size_t i = from; i < n; ++i) {
          if (p.ref[i]) {
            expect = i;
            break;
          }
        }
        EXPECT_EQ(p.mask.next(from), expect) << "n=" << n << " from=" << from;
      }
      EXPECT_EQ(p.mask.first(), p.mask.next(0));
      std::vector<std::size_t> seen;
      p.mask.for_each([&seen](std::size_t b) { seen.push_back(b); });
      std::vector<std::size_t> expect_seen;
      for (std::size_t i = 0; i < n; ++i) {
        if (p.ref[i]) expect_seen.push_back(i);
      }
      EXPECT_EQ(seen, expect_seen) << "n=" << n;
    }
  }
}

TEST(Cpumask, AndOrEqualMatchReference) {
  std::mt19937_64 gen(7);
  for (const std::size_t n : kSizes) {
    const pair_mask a = random_mask(gen, n, 0.5);
    const pair_mask b = random_mask(gen, n, 0.3);
    const cpumask x = a.mask & b.mask;
    const cpumask y = a.mask | b.mask;
    ASSERT_EQ(x.size(), n);
    ASSERT_EQ(y.size(), n);
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_EQ(x.test(i), a.ref[i] && b.ref[i]) << "n=" << n << " bit " << i;
      EXPECT_EQ(y.test(i), a.ref[i] || b.ref[i]) << "n=" << n << " bit " << i;
    }
    cpumask copy = a.mask;
    EXPECT_TRUE(copy == a.mask);
    copy.set(n - 1);
    copy.clear(n - 1);
    EXPECT_EQ(copy == a.mask, !a.ref[n - 1]) << "n=" << n;
  }
}

TEST(Cpumask, EqualityNeedsSameSize) {
  cpumask a(10);
  cpumask b(11);
  EXPECT_FALSE(a == b);
  a.set(3);
  b.set(3);
  EXPECT_FALSE(a == b);
  EXPECT_TRUE(a != cpumask(10));
  EXPECT_TRUE(cpumask(64) == cpumask(64));
}

}  // namespace
