// Idle polling before park (IDLE_POLL, policy/idle_poll.hpp, docs/design/parking.md "Idle
// polling"): on this machine's own topology (host mode, one worker per core), a worker that
// parks briefly grows its haltpoll window and then picks up the next spawn while polling, before
// it parks, and a joiner helps during its window before it blocks; where workers share cores
// (virtual topologies) or with NO_IDLE_POLL, nobody polls.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "rt/rt.hpp"

namespace {

std::uint64_t total(rt::runtime& r, const char* name) { return r.stats().total(name); }

// Spawn-and-join ping-pong from this thread: each spawn comes some tens of microseconds after
// the worker finished the last one, within the window once it has grown.
void ping_pong(rt::runtime& r, int rounds) {
  for (int i = 0; i < rounds; ++i) r.spawn([] {}).join();
}

TEST(IdlePoll, AWorkerPollsAndCatchesTheNextSpawnOnThisMachine) {
  rt::config c;  // this machine: host mode, one worker per allowed core
  rt::runtime r{c};
  // Liveness, not timing: the window grows after any park shorter than idle_poll_max_ns and a
  // spawn lands in it sooner or later; a loaded machine only makes that take longer.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (total(r, "idle_poll_hits") == 0 && std::chrono::steady_clock::now() < deadline) ping_pong(r, 200);
  EXPECT_GT(total(r, "idle_polls"), 0u);
  EXPECT_GT(total(r, "idle_poll_hits"), 0u) << "no spawn was ever taken by a polling worker";
  EXPECT_LE(total(r, "idle_poll_hits"), total(r, "idle_polls"));
}

// A short busy task: long enough for a thief to find it queued.
void busy_us(int us) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < end) {
  }
}

// A joiner is an idle CPU too (I-PARK-9): the root's worker, waiting for a child that the other
// worker took, polls before it blocks and takes the grandchild the child queued meanwhile.
TEST(IdlePoll, AJoinerPollsAndHelpsBeforeItBlocks) {
  rt::runtime r{rt::config{}};
  if (r.workers() < 2) GTEST_SKIP() << "one worker on this machine: nothing to help with";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (total(r, "join_poll_hits") == 0 && std::chrono::steady_clock::now() < deadline) {
    r.spawn([] {
       for (int i = 0; i < 200; ++i) {
         auto child = rt::spawn([] {
           busy_us(5);
           auto g1 = rt::spawn([] { busy_us(20); });
           auto g2 = rt::spawn([] { busy_us(20); });
           g2.join();
           g1.join();
         });
         child.join();
       }
     }).join();
  }
  EXPECT_GT(total(r, "join_polls"), 0u);
  EXPECT_GT(total(r, "join_poll_hits"), 0u) << "no joiner ever helped during its window";
  EXPECT_LE(total(r, "join_poll_hits"), total(r, "join_polls"));
}

TEST(IdlePoll, NobodyPollsWhereWorkersShareCoresOrWithTheFeatureOff) {
  rt::config shared;
  shared.topology = rt::topology_source::synthetic("pack:1 l3:1 core:4 pu:1");  // virtual: 4 workers, 2 cores
  rt::config off;
  off.tune = "NO_IDLE_POLL";
  for (const rt::config& c : {shared, off}) {
    rt::runtime r{c};
    ping_pong(r, 2000);
    EXPECT_EQ(total(r, "idle_polls"), 0u) << (c.tune.empty() ? "virtual topology" : c.tune);
    EXPECT_EQ(total(r, "idle_poll_hits"), 0u);
    EXPECT_EQ(total(r, "join_polls"), 0u);
  }
}

}  // namespace
