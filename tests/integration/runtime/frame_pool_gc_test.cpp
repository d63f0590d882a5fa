// I-POOL-4 on real threads (docs/design/core.md): a worker that runs out of local work after
// enough spawns keeps the free frames its last busy period used and gives most of those it left
// unused back to the arena (policy::frames_to_keep), and a parking worker keeps at most the
// cap. One worker on a one-node virtual topology,
// so that every frame of a burst comes from its pool and every park is its own.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "rt/rt.hpp"
#include "support/virtual_nodes.hpp"

namespace {

using numart_test::eventually;

constexpr int kBurst = 1000;  // above the floor (256), below the cap (4096)

rt::config one_worker(const std::string& tune) { return numart_test::synthetic_nodes("core:1 pu:1", 1, tune); }

// A root task spawns kBurst empty tasks into a task_group before it waits: with one worker,
// all kBurst frames are taken before the first is freed.
void burst(rt::runtime& r) {
  r.spawn([] {
     rt::task_group tg;
     for (int i = 0; i < kBurst; ++i) tg.spawn([] {});
     tg.wait();
   }).join();
}

// Waits until the worker parked after the last task. A park counts `parks` after its flush and
// after the collection at the run-dry before it (I-CTR-6), so the caller's next snapshot shows
// that collection. False after the liveness bound. Each test first waits for the worker's
// start-up park (a runtime does not wait for it): counted after the test read `parks`, it
// would end the test's first wait too early.
bool parked_since(rt::runtime& r, std::uint64_t parks) {
  return eventually([&] { return r.stats().total("parks") > parks; });
}

// Runs `work` (which joins what it spawns) and waits until the worker parked after it.
template <class F>
bool then_parked(rt::runtime& r, F work) {
  const std::uint64_t parks = r.stats().total("parks");
  work();
  return parked_since(r, parks);
}

// A runtime whose worker parked at start and then after one burst.
void start_with_a_burst(rt::runtime& r) {
  ASSERT_TRUE(parked_since(r, 0)) << "the worker never parked at start";
  ASSERT_TRUE(then_parked(r, [&] { burst(r); }));
}

TEST(FramePoolGc, TheFramesABurstUsedStayInThePool) {
  rt::runtime r{one_worker("")};
  ASSERT_NO_FATAL_FAILURE(start_with_a_burst(r));
  const rt::stats first = r.stats();
  EXPECT_EQ(first.total("frames_allocated"), static_cast<std::uint64_t>(kBurst)) << "a cold pool allocates the burst";
  EXPECT_EQ(first.total("frames_trimmed"), 0u) << "the list ran empty: every frame was used";
  ASSERT_TRUE(then_parked(r, [&] { burst(r); }));
  const rt::stats second = r.stats();
  EXPECT_EQ(second.total("frames_allocated"), first.total("frames_allocated"))
      << "the second burst takes every frame from the pool (a fixed 256-frame pool allocated "
      << kBurst - 256 << ")";
  EXPECT_EQ(second.total("frames_trimmed"), 0u);
}

TEST(FramePoolGc, LightWorkGivesTheUnusedFramesBackDownToTheFloor) {
  rt::runtime r{one_worker("")};
  ASSERT_NO_FATAL_FAILURE(start_with_a_burst(r));
  // Light work: 511 spawns a round, each joined before the next, so one frame at a time is out
  // and 999 of the 1000 stay unused. A collection needs 512 takes (frame_pool_gc_takes), so it
  // comes every second round (a park under the cap leaves the count of takes running), and
  // returns three quarters of the unused frames, at most 256 (frame_pool_gc_batch): 256, 256,
  // then 232 down to the floor.
  const std::uint64_t after_round[] = {0, 256, 256, 512, 512, 744, 744, 744};
  for (std::uint64_t expected : after_round) {
    ASSERT_TRUE(then_parked(r, [&] {
      r.spawn([] {
         for (int i = 0; i < 511; ++i) rt::spawn([] {}).join();
       }).join();
    }));
    EXPECT_EQ(r.stats().total("frames_trimmed"), expected);
  }
}

TEST(FramePoolGc, TasksThatSpawnNothingLeaveThePoolAlone) {
  rt::runtime r{one_worker("")};
  ASSERT_NO_FATAL_FAILURE(start_with_a_burst(r));
  // Run-dries without takes (a thief's, or a worker woken to search that found nothing): no
  // collection, so the burst's frames wait for the next burst (the parks' cap, 4096, is above).
  for (int round = 0; round < 3; ++round) ASSERT_TRUE(then_parked(r, [&] { r.spawn([] {}).join(); }));
  EXPECT_EQ(r.stats().total("frames_trimmed"), 0u);
  ASSERT_TRUE(then_parked(r, [&] { burst(r); }));
  EXPECT_EQ(r.stats().total("frames_allocated"), static_cast<std::uint64_t>(kBurst)) << "the second burst found its frames";
}

TEST(FramePoolGc, TheCapBoundsWhatAPoolKeeps) {
  rt::runtime r{one_worker("frame_pool_max=100")};
  ASSERT_NO_FATAL_FAILURE(start_with_a_burst(r));
  EXPECT_EQ(r.stats().total("frames_trimmed"), static_cast<std::uint64_t>(kBurst - 100));
}

}  // namespace
