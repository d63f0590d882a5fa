// I-GROUP-2: a worker's stock of references on rt::group states (worker/group_state.hpp). The
// first tests drive the cache directly, as a worker drives it from alloc and free_frame, on
// real group states; the last ones go through a runtime, whose workers must flush their stock
// when they park or block in a join. A member's state shows its parent's count, which drops
// when the member's state is deleted.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <latch>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "rt/rt.hpp"
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

// A state allocated until one maps to `a`'s slot (64 slots: a few hundred suffice).
group_state* same_slot_as(const group_state& a, std::vector<std::unique_ptr<group_state>>& keep) {
  for (int i = 0; i < 4096; ++i) {
    keep.push_back(std::make_unique<group_state>("x", nullptr));
    if (group_ref_cache::slot_index(keep.back().get()) == group_ref_cache::slot_index(&a)) return keep.back().get();
  }
  return nullptr;
}

TEST(GroupRefs, AGroupWhoseSlotALiveGroupHoldsCountsOnTheStateItself) {
  group_state a("a", nullptr);
  group_ref_cache c;
  constexpr std::uint32_t kBatch = 16;
  c.take(&a, kBatch);
  std::vector<std::unique_ptr<group_state>> keep;
  group_state* b = same_slot_as(a, keep);
  ASSERT_NE(b, nullptr);
  c.take(b, kBatch);
  EXPECT_EQ(c.held(b), 0u);
  EXPECT_EQ(refs(*b), 2u);  // its object and the one frame: no stock
  c.take(b, kBatch);
  EXPECT_EQ(refs(*b), 3u);
  c.give(b, kBatch);
  c.give(b, kBatch);
  EXPECT_EQ(refs(*b), 1u);
  EXPECT_EQ(c.held(&a), kBatch) << "a live holder keeps its slot";
  c.flush();
  EXPECT_EQ(refs(a), 2u);  // its object and its frame
}

TEST(GroupRefs, ADeadHolderLeavesItsSlotToTheNextGroupSpawnedIntoIt) {
  group_state parent("jvm", nullptr);
  group_state* m = member_of(parent);
  group_ref_cache c;
  constexpr std::uint32_t kBatch = 4;
  c.take(m, kBatch);
  c.give(m, kBatch);             // its frame ran here
  rt::detail::release_group(m);  // its object died: only the stock holds it
  ASSERT_EQ(refs(parent), 2u);
  std::vector<std::unique_ptr<group_state>> keep;
  group_state* b = same_slot_as(*m, keep);
  ASSERT_NE(b, nullptr);
  c.take(b, kBatch);  // no park in between (a busy worker): the dead member is let go here
  EXPECT_EQ(refs(parent), 1u) << "the member's state was not deleted";
  EXPECT_EQ(c.held(b), kBatch);
  EXPECT_EQ(refs(*b), 1u + kBatch + 1u);
  c.give(b, kBatch);
  c.flush();
  EXPECT_EQ(refs(*b), 1u);
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

// A liveness wait: returns as soon as the parent's count is back to its object's one
// reference (the member's state was deleted), or after 20 s.
bool member_deleted(const rt::group& parent) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (refs(*parent.state()) != 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return refs(*parent.state()) == 1;
}

rt::config workers(int n) {
  rt::config c;
  c.workers = n;
  return c;
}

// Tasks spawned into a member from a worker take their references from that worker's stock;
// once the member object is gone and the worker parks, the stock goes back and the member's
// state dies (without the flush in park() it lived until the runtime shut down). One worker:
// its joins run their tasks inline and never block, so only park() can flush.
TEST(GroupRefs, ADroppedMemberDiesOnceTheWorkersThatStockedItPark) {
  rt::runtime r{workers(1)};
  rt::group jvm{r, "jvm"};
  std::atomic<int> ran{0};
  {
    rt::group wh{jvm, "wh"};
    r.spawn([&] {
       std::vector<rt::join_handle<void>> hs;
       for (int i = 0; i < 200; ++i) hs.push_back(rt::spawn(wh, [&ran] { ran.fetch_add(1); }));
       for (auto& h : hs) h.join();
     }).join();
  }
  EXPECT_EQ(ran.load(), 200);
  EXPECT_TRUE(member_deleted(jvm)) << "parent count " << refs(*jvm.state()) << ": a parked worker still stocks the member";
}

// A worker blocked in a join holds no stock either. Task B occupies the other worker (it waits
// on a latch) before task A spawns into the member, so every member frame is spawned and freed
// on A's worker; A then joins B and blocks, and the member must die while it is blocked.
TEST(GroupRefs, AWorkerBlockedInAJoinHoldsNoReference) {
  rt::runtime r{workers(2)};
  rt::group jvm{r, "jvm"};
  std::optional<rt::group> wh{std::in_place, jvm, "wh"};
  std::latch release_b{1};
  std::atomic<bool> b_started{false};
  std::atomic<bool> spawned{false};
  std::atomic<bool> b_stolen{false};
  auto a = r.spawn([&] {
    auto b = rt::spawn([&] {
      b_started.store(true);
      release_b.wait();
    });
    // B is stolen: the other worker runs it. Bounded, so that a steal that never comes fails
    // the test below instead of hanging it (A's join would then run B inline).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!b_started.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    b_stolen.store(b_started.load());
    std::vector<rt::join_handle<void>> hs;
    for (int i = 0; i < 200; ++i) hs.push_back(rt::spawn(*wh, [] {}));
    for (auto& h : hs) h.join();
    spawned.store(true);
    b.join();  // blocks until the test releases B
  });
  while (!spawned.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (!b_stolen.load()) {
    release_b.count_down();
    a.join();
    FAIL() << "the other worker never took task B in 20 s";
  }
  wh.reset();
  const bool deleted = member_deleted(jvm);
  const std::uint32_t count = refs(*jvm.state());
  release_b.count_down();
  a.join();
  EXPECT_TRUE(deleted) << "parent count " << count << ": the blocked joiner still stocks the member";
}

}  // namespace
