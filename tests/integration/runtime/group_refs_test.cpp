// I-GROUP-2: a worker's stock of references on rt::group states (worker/group_state.hpp). The
// cache is driven directly, as the owner worker drives it from alloc and free_frame, on real
// group states; a member's state shows its parent's count, which drops when the member dies.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "worker/group_state.hpp"

namespace {

using rt::detail::group_ref_cache;
using rt::detail::group_state;

std::uint32_t refs(const group_state& g) { return g.refs.load(); }

// A member of `parent`, as rt::group(parent, name) makes it: the member holds one reference on
// its parent until its state is deleted.
group_state* member_of(group_state& parent) {
  parent.refs.fetch_add(1);
  return new group_state("member", nullptr, &parent);
}

TEST(GroupRefs, SpawnsTakeFromTheStockAndRefillItABatchAtATime) {
  group_state g("g", nullptr);
  group_ref_cache c;
  constexpr std::uint32_t kBatch = 8;
  c.take(&g, kBatch);  // the first frame: the batch and the frame's own reference
  EXPECT_EQ(refs(g), 1u + kBatch + 1u);
  EXPECT_EQ(c.held(&g), kBatch);
  for (std::uint32_t i = 1; i < kBatch; ++i) c.take(&g, kBatch);  // no RMW: the stock pays
  EXPECT_EQ(refs(g), 1u + kBatch + 1u);
  EXPECT_EQ(c.held(&g), 1u);  // the slot always keeps one
  c.take(&g, kBatch);
  EXPECT_EQ(refs(g), 1u + 2 * kBatch + 1u);
  EXPECT_EQ(c.held(&g), kBatch);
  c.flush();
  EXPECT_EQ(c.held(&g), 0u);
  EXPECT_EQ(refs(g), 1u + kBatch + 1u);  // the handle and the kBatch + 1 frames still out
}

TEST(GroupRefs, FreesGiveBackToTheStockAndTheSurplusPastTwoBatchesGoesToTheCount) {
  group_state g("g", nullptr);
  group_ref_cache c;
  constexpr std::uint32_t kBatch = 4;
  g.refs.fetch_add(20);  // 20 frames spawned elsewhere (another worker, an outside thread)
  c.take(&g, kBatch);    // the slot is g's: 21 frames out, kBatch in stock
  ASSERT_EQ(refs(g), 1u + 21u + kBatch);
  for (int i = 0; i < 4; ++i) c.give(&g, kBatch);
  EXPECT_EQ(c.held(&g), 2 * kBatch);
  EXPECT_EQ(refs(g), 1u + 21u + kBatch);  // no RMW yet
  c.give(&g, kBatch);  // past 2 x batch: all but a batch go back
  EXPECT_EQ(c.held(&g), kBatch);
  EXPECT_EQ(refs(g), 1u + 16u + kBatch);
  for (int i = 0; i < 16; ++i) c.give(&g, kBatch);
  c.flush();
  EXPECT_EQ(refs(g), 1u);  // only the handle's
}

TEST(GroupRefs, AGroupWhoseSlotIsTakenCountsOnTheStateItself) {
  group_state a("a", nullptr);
  group_ref_cache c;
  constexpr std::uint32_t kBatch = 16;
  c.take(&a, kBatch);
  // Some state among a few hundred lands on a's slot (64 slots).
  std::vector<std::unique_ptr<group_state>> others;
  group_state* b = nullptr;
  for (int i = 0; i < 512 && b == nullptr; ++i) {
    others.push_back(std::make_unique<group_state>("x", nullptr));
    group_state* x = others.back().get();
    c.take(x, kBatch);
    if (c.held(x) == 0) b = x;
  }
  ASSERT_NE(b, nullptr) << "no collision among 512 states in 64 slots";
  EXPECT_EQ(refs(*b), 2u);  // its handle and the one frame: no stock
  c.take(b, kBatch);
  EXPECT_EQ(refs(*b), 3u);
  c.give(b, kBatch);
  c.give(b, kBatch);
  EXPECT_EQ(refs(*b), 1u);
  EXPECT_EQ(c.held(&a), kBatch) << "the slot's first holder keeps it";
  c.flush();
  for (auto& o : others) {
    if (o.get() == b) continue;
    EXPECT_EQ(refs(*o), 2u) << "the flush kept more than the handle and the frame";
  }
}

TEST(GroupRefs, ADroppedMemberDiesAtTheFlushAfterItsLastFrameCameBack) {
  group_state parent("jvm", nullptr);
  group_state* m = member_of(parent);
  ASSERT_EQ(refs(parent), 2u);
  group_ref_cache c;
  c.take(m, 4);                      // a frame of the member spawned here
  rt::detail::release_group(m);      // the rt::group object dies first
  c.give(m, 4);                      // the frame is freed here: its reference joins the stock
  EXPECT_EQ(refs(parent), 2u) << "the stock keeps the member alive";
  c.flush();                         // the worker parks: the member's last references go
  EXPECT_EQ(refs(parent), 1u) << "the member's state was deleted and let go of its parent";
}

TEST(GroupRefs, AFrameFreedWhereItsGroupHasNoSlotMayEndTheGroup) {
  group_state parent("jvm", nullptr);
  group_state* m = member_of(parent);
  m->refs.fetch_add(1);          // a frame spawned from an outside thread
  rt::detail::release_group(m);  // the rt::group object dies
  group_ref_cache c;
  c.give(m, 4);                  // freed on a worker whose cache never saw the group
  EXPECT_EQ(refs(parent), 1u);
}

TEST(GroupRefs, ABatchOfOneIsOneRmwPerSpawnAndPerFree) {
  group_state g("g", nullptr);
  group_ref_cache c;
  c.take(&g, 1);
  EXPECT_EQ(refs(g), 3u);  // handle, frame, the slot's one
  c.take(&g, 1);
  EXPECT_EQ(refs(g), 4u);
  c.give(&g, 1);
  c.give(&g, 1);
  EXPECT_EQ(refs(g), 2u);
  EXPECT_EQ(c.held(&g), 1u);
  c.flush();
  EXPECT_EQ(refs(g), 1u);
}

}  // namespace
