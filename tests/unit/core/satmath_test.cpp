// lsub_positive / sub_positive / sat_add tables; expected values worked out by hand from the
// kernel's definition (seed 003 patch 3/3): var -= min(var, val), i.e. a > b ? a - b : 0.
#include "core/satmath.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace {

using rt::core::lsub_positive;
using rt::core::sat_add;
using rt::core::sat_mul;
using rt::core::sub_positive;

template <class T>
struct row {
  T a;
  T b;
  T expect;
};

constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();
constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();

TEST(SubPositive, Unsigned) {
  const row<std::uint64_t> rows[] = {
      {5, 3, 2},  {3, 5, 0},                 // underflow clamps to 0 instead of wrapping
      {4, 4, 0},  {0, 0, 0},  {0, kU64Max, 0}, {kU64Max, 1, kU64Max - 1},
      {kU64Max, kU64Max, 0},  {1024, 1, 1023},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(sub_positive(r.a, r.b), r.expect) << r.a << " - " << r.b;
    std::uint64_t v = r.a;
    lsub_positive(v, r.b);
    EXPECT_EQ(v, r.expect) << r.a << " - " << r.b;
  }
}

TEST(SubPositive, Signed) {
  const row<std::int64_t> rows[] = {
      {5, 3, 2},   {3, 5, 0},   {4, 4, 0},
      {-5, 3, 0},                    // negative a: clamps to 0
      {5, -3, 8},                    // negative b adds, as var - min(var, b) does
      {-5, -10, 5}, {-5, -3, 0},
      {kI64Max, -1, kI64Max},        // would overflow: saturates
      {0, kI64Min, kI64Max},         // 0 - INT64_MIN would overflow: saturates
      {kI64Max, kI64Min, kI64Max},   {kI64Min, kI64Max, 0},
      {kI64Min, kI64Min, 0},         {kI64Max, kI64Max, 0},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(sub_positive(r.a, r.b), r.expect) << r.a << " - " << r.b;
    std::int64_t v = r.a;
    lsub_positive(v, r.b);
    EXPECT_EQ(v, r.expect) << r.a << " - " << r.b;
  }
}

TEST(SubPositive, NarrowTypes) {
  // Narrow types promote to int inside the arithmetic; the result must still clamp in T.
  EXPECT_EQ(sub_positive<std::uint8_t>(3, 5), 0);
  EXPECT_EQ(sub_positive<std::uint8_t>(255, 1), 254);
  EXPECT_EQ(sub_positive<std::int8_t>(100, -100), 127);
  EXPECT_EQ(sub_positive<std::int8_t>(-100, 100), 0);
  EXPECT_EQ(sub_positive<std::int8_t>(100, -27), 127);
  EXPECT_EQ(sub_positive<std::int8_t>(100, -26), 126);
}

TEST(SubPositive, CpuUtilWithoutDiscount) {
  // cpu_util_without(): a worker's util (300) minus a task's larger util (500) must give 0,
  // not ~2^32 or ~2^64 that would make an almost idle worker look the busiest.
  unsigned long util = 300;
  const unsigned task_util = 500;
  lsub_positive(util, task_util);
  EXPECT_EQ(util, 0u);
  static_assert(sub_positive(3u, 5u) == 0u, "usable in constant expressions");
}

TEST(SatAdd, UnsignedAndSigned) {
  EXPECT_EQ(sat_add<std::uint64_t>(1, 2), 3u);
  EXPECT_EQ(sat_add<std::uint64_t>(kU64Max - 1, 5), kU64Max);
  EXPECT_EQ(sat_add<std::uint64_t>(kU64Max, 0), kU64Max);
  EXPECT_EQ(sat_add<std::uint64_t>(kU64Max - 5, 5), kU64Max);
  EXPECT_EQ(sat_add<std::uint64_t>(kU64Max - 6, 5), kU64Max - 1);
  EXPECT_EQ(sat_add<std::int64_t>(-3, 5), 2);
  EXPECT_EQ(sat_add<std::int64_t>(kI64Max, 1), kI64Max);
  EXPECT_EQ(sat_add<std::int64_t>(kI64Max - 1, 1), kI64Max);
  EXPECT_EQ(sat_add<std::int64_t>(kI64Min, -1), kI64Min);
  EXPECT_EQ(sat_add<std::int64_t>(kI64Min + 1, -1), kI64Min);
  EXPECT_EQ(sat_add<std::int64_t>(kI64Min, kI64Max), -1);
  EXPECT_EQ(sat_add<std::uint8_t>(250, 10), 255);
  EXPECT_EQ(sat_add<std::int8_t>(-100, -100), -128);
  EXPECT_EQ(sat_add<std::int8_t>(100, 100), 127);
}

TEST(SatMath, SatMulClampsInsteadOfWrapping) {
  EXPECT_EQ(sat_mul<std::uint64_t>(0, kU64Max), 0u);
  EXPECT_EQ(sat_mul<std::uint64_t>(kU64Max, 0), 0u);
  EXPECT_EQ(sat_mul<std::uint64_t>(1024, 117), 119808u);
  EXPECT_EQ(sat_mul<std::uint64_t>(kU64Max, 1), kU64Max);
  EXPECT_EQ(sat_mul<std::uint64_t>(kU64Max / 2, 2), kU64Max - 1);
  EXPECT_EQ(sat_mul<std::uint64_t>(kU64Max / 2 + 1, 2), kU64Max);
  EXPECT_EQ(sat_mul<std::uint64_t>(std::uint64_t{1} << 32, std::uint64_t{1} << 32), kU64Max);
  EXPECT_EQ(sat_mul<std::uint8_t>(16, 16), 255);
  EXPECT_EQ(sat_mul<std::uint8_t>(15, 17), 255);
  EXPECT_EQ(sat_mul<std::uint8_t>(5, 51), 255);
  EXPECT_EQ(sat_mul<std::uint8_t>(3, 85), 255);
  EXPECT_EQ(sat_mul<std::uint8_t>(2, 127), 254);
}

}  // namespace
