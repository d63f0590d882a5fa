// Stack-hungry recursion in tasks (issue 8, item 4): it either completes or the process dies
// with the stack guard's line naming the worker; never a silent SIGSEGV. These go through the
// runtime's own workers, which enter the stack guard as they start (ADR 0008).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

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

}  // namespace
