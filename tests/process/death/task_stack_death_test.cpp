// Stack-hungry recursion in tasks (issue 8, item 4): it either completes or the process dies
// with the stack guard's line naming the worker; never a silent SIGSEGV. These go through the
// runtime's own workers, which enter the stack guard as they start (ADR 0008).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "guarded_thread.hpp"
#include "rt/rt.hpp"

namespace {

class TaskStackDeath : public testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// rt::spawn + join nested `limit` deep with a few hundred bytes of locals per level. Returns
// the number of levels that ran (limit + 1).
std::uint64_t nest(std::uint64_t depth, std::uint64_t limit) {
  volatile unsigned char frame[320];
  frame[0] = 1;
  frame[sizeof frame - 1] = 0;
  if (depth >= limit) return frame[0];
  auto h = rt::spawn([depth, limit] { return nest(depth + 1, limit); });
  return h.join() + frame[0] + frame[sizeof frame - 1];
}

// Exit 0 after "completed", or death by SIGSEGV after the guard's line: both are acceptable
// outcomes; a bare SIGSEGV (no line) or anything else is not.
bool completed_or_segv(int status) {
  return (WIFEXITED(status) && WEXITSTATUS(status) == 0) || (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
}

TEST_F(TaskStackDeath, NestedSpawnAndJoinATenthOfAMillionDeepCompletesOrNamesTheWorker) {
  EXPECT_EXIT(
      {
        guard_test::reset_fault_dispositions();
        rt::runtime r;
        constexpr std::uint64_t kDepth = 100000;
        const std::uint64_t levels = r.spawn([] { return nest(0, kDepth); }).join();
        std::fprintf(stderr, "completed %llu levels\n", static_cast<unsigned long long>(levels));
        std::_Exit(levels == kDepth + 1 ? 0 : 3);
      },
      completed_or_segv,
      "completed 100001 levels\n|numart: worker [0-9]+ overflowed its stack of [0-9]+ KiB \\(deep recursion in a "
      "task\\?\\)");
}

TEST_F(TaskStackDeath, PlainRecursionInATaskNamesTheWorkerAndDiesWithSigsegv) {
  EXPECT_EXIT(
      {
        guard_test::reset_fault_dispositions();
        rt::runtime r;
        r.spawn(guard_test::dive_forever).join();
      },
      testing::KilledBySignal(SIGSEGV),
      "numart: worker [0-9]+ overflowed its stack of [0-9]+ KiB \\(deep recursion in a task\\?\\)");
}

// The same with NUMA sampling on (the order of a real process that registers a region: the
// stack guard enters with the first worker, the balancer's first scan installs the
// hinting-fault handler over it and protects a window). Both a plain dive and nested spawns
// still end in the guard's line, through the sampler's handler (I-SAMPLE-12). On a virtual
// two-node machine: a one-node topology runs no balancer (I-BAL-6).
rt::config two_nodes() {
  rt::config c;
  c.topology = rt::topology_source::synthetic("pack:2 [numa] core:2 pu:1");
  return c;
}

void wait_until_sampling(rt::runtime& r) {
  for (int i = 0; i < 3000 && r.stats().total("numa_pages_protected") == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::fprintf(stderr, "pages protected: %llu\n",
               static_cast<unsigned long long>(r.stats().total("numa_pages_protected")));
}

// Registers a region of a new group of `r` and returns the group once the balancer protected a
// window. Static: the death-test child dies (or _Exits) with them.
rt::group& sampled_group(rt::runtime& r) {
  static std::vector<char> data(std::size_t{1} << 20, 1);
  static rt::group g(r, "sampled");
  rt::register_region(g, data.data(), data.size());
  wait_until_sampling(r);
  return g;
}

TEST_F(TaskStackDeath, WithNumaSamplingOnARecursionStillNamesTheWorker) {
  EXPECT_EXIT(
      {
        guard_test::reset_fault_dispositions();
        rt::runtime r{two_nodes()};
        r.spawn(sampled_group(r), guard_test::dive_forever).join();
      },
      testing::KilledBySignal(SIGSEGV),
      "pages protected: [1-9][0-9]*\n(.|\n)*numart: worker [0-9]+ overflowed its stack of [0-9]+ KiB");
}

TEST_F(TaskStackDeath, WithNumaSamplingOnNestedSpawnsCompleteOrNameTheWorker) {
  EXPECT_EXIT(
      {
        guard_test::reset_fault_dispositions();
        rt::runtime r{two_nodes()};
        constexpr std::uint64_t kDepth = 100000;
        const std::uint64_t levels = r.spawn(sampled_group(r), [] { return nest(0, kDepth); }).join();
        std::fprintf(stderr, "completed %llu levels\n", static_cast<unsigned long long>(levels));
        std::_Exit(levels == kDepth + 1 ? 0 : 3);
      },
      completed_or_segv,
      "pages protected: [1-9][0-9]*\n(.|\n)*(completed 100001 levels\n|numart: worker [0-9]+ overflowed its stack)");
}

}  // namespace
