#include "core/ids.hpp"

#include <gtest/gtest.h>

#include <type_traits>
#include <unordered_set>

namespace {

using rt::core::llc_id;
using rt::core::worker_id;

static_assert(!std::is_convertible_v<int, worker_id>, "construction from int is explicit");
static_assert(!std::is_convertible_v<worker_id, int>, "no implicit way back to int");
static_assert(!std::is_convertible_v<worker_id, llc_id>, "kinds of ids do not mix");
static_assert(!std::is_convertible_v<llc_id, worker_id>, "kinds of ids do not mix");
static_assert(std::is_trivially_copyable_v<worker_id> && sizeof(worker_id) == sizeof(int));
static_assert(worker_id{3}.value() == 3, "constexpr");

TEST(Ids, ValueAndComparisons) {
  const worker_id a{2};
  const worker_id b{5};
  EXPECT_EQ(a.value(), 2);
  EXPECT_EQ(b.index(), 5u);
  EXPECT_TRUE(a < b);
  EXPECT_TRUE(a != b);
  EXPECT_TRUE(a == worker_id{2});
  EXPECT_TRUE(b >= a);
  EXPECT_EQ(worker_id{}.value(), 0);
  EXPECT_EQ(llc_id{7}.value(), 7);
}

TEST(Ids, Hashable) {
  std::unordered_set<worker_id> s;
  s.insert(worker_id{1});
  s.insert(worker_id{1});
  s.insert(worker_id{4});
  EXPECT_EQ(s.size(), 2u);
  EXPECT_EQ(s.count(worker_id{4}), 1u);
  EXPECT_EQ(s.count(worker_id{2}), 0u);
}

}  // namespace
