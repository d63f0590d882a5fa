// policy/idle_poll.hpp: the guest haltpoll governor's window (drivers/cpuidle/governors/
// haltpoll.c adjust_poll_limit() with its module defaults: guest_halt_poll_ns 200000, grow 2,
// grow_start 50000, shrink 2), and where polling is allowed, over real topologies.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "fixtures.hpp"
#include "policy/idle_poll.hpp"

namespace rt::policy {
namespace {

struct window_row {
  std::int64_t window_ns;
  std::int64_t block_ns;
  std::int64_t expected_ns;
  const char* why;
};

TEST(IdlePoll, TheWindowFollowsHaltpollsAdjustPollLimit) {
  const tun::settings s{};
  const window_row rows[] = {
      {0, 10'000, 50'000, "a short park from no window: grows to grow_start"},
      {50'000, 120'000, 100'000, "a park within max but past the window: doubles"},
      {150'000, 180'000, 200'000, "doubling is capped at max"},
      {200'000, 200'000, 200'000, "a park of exactly max at max: stays (grow capped)"},
      {100'000, 200'001, 50'000, "a park longer than max: halves"},
      {1, 1'000'000, 0, "halving rounds down to zero: polling stops until a short park"},
      {0, 5'000'000, 0, "no window and long parks: stays off"},
      {100'000, 100'000, 100'000, "a park no longer than the window: stays"},
      {100'000, 40'000, 100'000, "a park shorter than the window: stays"},
  };
  for (const window_row& r : rows)
    EXPECT_EQ(idle_poll_next(r.window_ns, r.block_ns, s), r.expected_ns) << r.why << " (window " << r.window_ns
                                                                         << ", block " << r.block_ns << ")";
}

TEST(IdlePoll, TheWindowFollowsItsTunables) {
  tun::settings s{};
  s.t.idle_poll_max_ns = 1'000'000;
  s.t.idle_poll_grow = 4;
  s.t.idle_poll_grow_start_ns = 10'000;
  s.t.idle_poll_shrink = 0;
  EXPECT_EQ(idle_poll_next(0, 1, s), 10'000);
  EXPECT_EQ(idle_poll_next(10'000, 20'000, s), 40'000);
  EXPECT_EQ(idle_poll_next(400'000, 900'000, s), 1'000'000);
  EXPECT_EQ(idle_poll_next(400'000, 1'000'001, s), 0) << "shrink 0 turns polling off";
  s.t.idle_poll_max_ns = 0;
  EXPECT_EQ(idle_poll_next(0, 1, s), 0) << "max 0: never a window";
}

TEST(IdlePoll, AllowedOnlyWhereEveryWorkerHasACoreOfItsOwnOnThisMachine) {
  const tun::settings on{};
  tun::settings off{};
  off.f.IDLE_POLL = false;
  tun::settings zero{};
  zero.t.idle_poll_max_ns = 0;
  const layout full = make_layout(test::opteron(), default_worker_cores(test::opteron(), 0));
  const layout sixteen = make_layout(test::opteron(), default_worker_cores(test::opteron(), 16));
  const layout wrapped = make_layout(test::opteron(), default_worker_cores(test::opteron(), 80));
  const layout shared = make_layout(test::hand_built(), std::vector<int>{0, 1, 1, 2});
  struct row {
    const layout* lay;
    bool host;
    const tun::settings* s;
    bool expected;
    const char* why;
  } rows[] = {
      {&full, true, &on, true, "64 workers on 64 cores"},
      {&sixteen, true, &on, true, "16 workers spread over 64 cores"},
      {&wrapped, true, &on, false, "80 workers on 64 cores: some share a core"},
      {&shared, true, &on, false, "two workers on core 1"},
      {&full, false, &on, false, "virtual topology: the workers time-share this machine's cores"},
      {&full, true, &off, false, "NO_IDLE_POLL"},
      {&full, true, &zero, false, "idle_poll_max_ns=0"},
  };
  for (const row& r : rows) EXPECT_EQ(idle_poll_allowed(*r.lay, r.host, *r.s), r.expected) << r.why;
}

}  // namespace
}  // namespace rt::policy
