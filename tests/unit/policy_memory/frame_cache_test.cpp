// policy/frame_cache.hpp: when a worker that runs dry collects its pool (after
// frame_pool_gc_takes takes) and how many free frames it keeps (jemalloc's thread-cache
// collection: three quarters of the low-water mark go back, at most frame_pool_gc_batch at a
// time, down to the floor frame_pool_size), and the cap frame_pool_max of a parking worker
// (I-POOL-4).
#include <gtest/gtest.h>

#include <cstddef>

#include "policy/frame_cache.hpp"
#include "tunables/tunables.hpp"

namespace rt::policy {
namespace {

struct keep_row {
  std::size_t count;
  std::size_t low_water;
  std::size_t expected;
  const char* why;
};

// The collection's rule alone: no bound on the frees of one collection.
tun::settings unbatched() {
  tun::settings s{};
  s.t.frame_pool_gc_batch = 1048576;
  return s;
}

TEST(FrameCache, APoolKeepsWhatItsLastBusyPeriodUsed) {
  const tun::settings s = unbatched();  // floor 256, 75 %
  const keep_row rows[] = {
      {2000, 0, 2000, "a burst emptied the list: every frame was needed, all stay"},
      {2000, 1000, 1250, "1000 never used: 750 go back"},
      {2000, 1999, 500, "one frame used: ceil(0.75 * 1999) = 1500 go back"},
      {1000, 999, 256, "the floor: 1000 - 750 = 250 is below 256"},
      {256, 256, 256, "a pool at the floor stays there however idle"},
      {100, 100, 100, "a pool below the floor keeps what it has"},
      {0, 0, 0, "an empty pool"},
      {10000, 0, 10000, "a busy worker is not capped: a burst of 10000 stays for the next"},
      {10000, 9000, 3250, "10000 - 6750"},
      {5000, 7000, 1250, "a low-water mark above the count counts as the count: 3750 go back"},
      {3, 1, 3, "ceil(0.75 * 1) = 1 goes back, the floor (up to the count) holds all three"},
  };
  for (const keep_row& r : rows)
    EXPECT_EQ(frames_to_keep(r.count, r.low_water, s), r.expected)
        << r.why << " (count " << r.count << ", low water " << r.low_water << ")";
}

TEST(FrameCache, TheBoundsAndTheShareAreTunables) {
  tun::settings s = unbatched();
  s.t.frame_pool_gc_pct = 0;
  EXPECT_EQ(frames_to_keep(2000, 2000, s), 2000u) << "0 %: the low-water mark frees nothing";
  s.t.frame_pool_gc_pct = 100;
  EXPECT_EQ(frames_to_keep(2000, 1000, s), 1000u) << "100 %: every unused frame goes back";
  EXPECT_EQ(frames_to_keep(2000, 2000, s), 256u) << "down to the floor";
  s.t.frame_pool_size = 0;
  EXPECT_EQ(frames_to_keep(2000, 2000, s), 0u) << "no floor: an idle pool empties";
  s = unbatched();
  s.t.frame_pool_gc_pct = 150;  // outside the table's range: only settings built in code reach it
  EXPECT_EQ(frames_to_keep(2000, 1000, s), 1000u) << "no more than the unused frames go back";
}

TEST(FrameCache, ACollectionFreesAtMostABatch) {
  tun::settings s{};  // batch 256
  EXPECT_EQ(frames_to_keep(2000, 1000, s), 1744u) << "750 unused frames due, 256 go back now";
  EXPECT_EQ(frames_to_keep(1000, 999, s), 744u);
  EXPECT_EQ(frames_to_keep(488, 487, s), 256u) << "366 due, the floor stops it at 232";
  EXPECT_EQ(frames_to_keep(2000, 0, s), 2000u);
  s.t.frame_pool_gc_batch = 0;
  EXPECT_EQ(frames_to_keep(2000, 2000, s), 2000u) << "batch 0: run-dries free nothing";
}

TEST(FrameCache, AWorkerCollectsAfterEnoughTakes) {
  tun::settings s{};  // 512 takes
  EXPECT_FALSE(frame_collection_due(0, s)) << "a thief that spawned nothing keeps its pool";
  EXPECT_FALSE(frame_collection_due(511, s));
  EXPECT_TRUE(frame_collection_due(512, s));
  EXPECT_TRUE(frame_collection_due(2000, s));
  s.t.frame_pool_gc_takes = 1;
  EXPECT_TRUE(frame_collection_due(1, s)) << "1: every run-dry after a spawn";
}

TEST(FrameCache, AParkingWorkerKeepsAtMostTheCap) {
  tun::settings s{};  // cap 4096
  EXPECT_EQ(frames_to_keep_parked(2000, s), 2000u) << "under the cap: all stay";
  EXPECT_EQ(frames_to_keep_parked(10000, s), 4096u) << "a sleeping worker holds at most 4096";
  s.t.frame_pool_size = 600;
  s.t.frame_pool_max = 500;
  EXPECT_EQ(frames_to_keep_parked(2000, s), 500u) << "a cap below the floor wins";
  s.t.frame_pool_max = 0;
  EXPECT_EQ(frames_to_keep_parked(2000, s), 0u) << "cap 0: no frame sleeps in a pool";
}

}  // namespace
}  // namespace rt::policy
