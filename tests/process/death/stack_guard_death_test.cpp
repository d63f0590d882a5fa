// The stack guard in a dying process (docs/adr/0008-stack-overflow.md): a worker that overflows
// its stack says so in one line and the process still dies with SIGSEGV; every other fault goes
// on exactly as it would without numart (SIGSEGV, or the handler that was there before).
// Each statement runs in a fresh child process (threadsafe death tests re-execute the binary).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "guarded_thread.hpp"
#include "rt/rt.hpp"

namespace {

using testing::AllOf;
using testing::HasSubstr;
using testing::Not;

// What the guard should report for guard_test::kSmallStack (256 KiB, more under TSan).
std::string small_stack_kib() { return std::to_string(guard_test::thread_stack_kib(guard_test::kSmallStack)); }

class StackGuardDeath : public testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(StackGuardDeath, AWorkerThatOverflowsItsStackIsNamedAndTheProcessDiesWithSigsegv) {
  EXPECT_EXIT(
      {
        guard_test::reset_fault_dispositions();
        guard_test::run_on_thread(7, guard_test::kSmallStack, guard_test::dive_forever);
      },
      testing::KilledBySignal(SIGSEGV),
      "numart: worker 7 overflowed its stack of " + small_stack_kib() +
          " KiB \\(deep recursion in a task\\?\\); [^\n]+\n");
}

// On a moat stack (guarded_thread.hpp): on a stack glibc placed right above a library's data,
// the frame that jumps over the guard wrote into that data instead of faulting, about 1 run
// in 100 (`--gtest_repeat` on this test, session 17). A stack we map has the size we asked for.
TEST_F(StackGuardDeath, AnOverflowByFramesLargerThanTheGuardIsNamedToo) {
  EXPECT_EXIT(
      {
        guard_test::reset_fault_dispositions();
        guard_test::run_on_thread_with_moat(2, guard_test::kSmallStack, guard_test::dive_in_big_frames_forever);
      },
      testing::KilledBySignal(SIGSEGV),
      "numart: worker 2 overflowed its stack of " + std::to_string(guard_test::kSmallStack / 1024) + " KiB");
}

// A fault in a mapping right below the guard while the stack is shallow is not an overflow.
// On a moat stack, so that such a mapping is always there (on glibc's stacks, about 1 run in
// 100 found every page below the guard accessible and exited 3).
TEST_F(StackGuardDeath, AFaultJustBelowTheGuardWithAShallowStackIsNotCalledAnOverflow) {
  EXPECT_EXIT(
      {
        guard_test::reset_fault_dispositions();
        guard_test::run_on_thread_with_moat(2, guard_test::kSmallStack, guard_test::write_just_below_the_guard);
      },
      testing::KilledBySignal(SIGSEGV), Not(HasSubstr("overflowed")));
}

TEST_F(StackGuardDeath, ANullWriteOnAGuardedThreadStillDiesWithSigsegvAndNoReport) {
  if (guard_test::kUbsanCatchesNullStores) GTEST_SKIP() << "UBSan reports the null store before it faults";
  EXPECT_EXIT(
      {
        guard_test::reset_fault_dispositions();
        guard_test::run_on_thread(3, guard_test::kSmallStack, guard_test::write_through_null);
      },
      testing::KilledBySignal(SIGSEGV), Not(HasSubstr("overflowed")));
}

TEST_F(StackGuardDeath, AWriteToAProtectedPageOnAGuardedThreadStillDiesWithSigsegvAndNoReport) {
  EXPECT_EXIT(
      {
        guard_test::reset_fault_dispositions();
        guard_test::run_on_thread(3, guard_test::kSmallStack, guard_test::write_to_a_protected_page);
      },
      testing::KilledBySignal(SIGSEGV), Not(HasSubstr("overflowed")));
}

// A SIGSEGV sent with kill()/raise() is not repeated by returning from the handler: the guard
// must raise it again, or the process would go on as if nothing happened.
TEST_F(StackGuardDeath, ASigsegvSentWithRaiseStillKills) {
  EXPECT_EXIT(
      {
        guard_test::reset_fault_dispositions();
        guard_test::run_on_thread(1, guard_test::kSmallStack, [] { ::raise(SIGSEGV); });
      },
      testing::KilledBySignal(SIGSEGV), Not(HasSubstr("overflowed")));
}

TEST_F(StackGuardDeath, AThreadThatNeverEnteredGetsNoReport) {
  EXPECT_EXIT(
      {
        guard_test::reset_fault_dispositions();
        guard_test::run_on_thread(0, guard_test::kSmallStack, [] {});  // installs the handler
        guard_test::run_on_thread(-1, guard_test::kSmallStack, guard_test::dive_forever);
      },
      testing::KilledBySignal(SIGSEGV), Not(HasSubstr("overflowed")));
}

// The guard chains: after its report, the handler that was installed before it runs (here it
// exits with 42); a fault that is not an overflow goes to that handler without a report.
TEST_F(StackGuardDeath, AfterTheReportThePreviousHandlerRuns) {
  EXPECT_EXIT(
      {
        guard_test::install_previous_handler();
        guard_test::run_on_thread(5, guard_test::kSmallStack, guard_test::dive_forever);
      },
      testing::ExitedWithCode(42),
      "worker 5 overflowed its stack of " + small_stack_kib() + " KiB[^\n]*\nprevious handler ran\n");
}

TEST_F(StackGuardDeath, AFaultThatIsNotAnOverflowGoesToThePreviousHandlerUnreported) {
  EXPECT_EXIT(
      {
        guard_test::install_previous_handler();
        guard_test::run_on_thread(5, guard_test::kSmallStack, guard_test::write_to_a_protected_page);
      },
      testing::ExitedWithCode(42), AllOf(HasSubstr("previous handler ran"), Not(HasSubstr("overflowed"))));
}

// A segfault in user code run by a task still dies with SIGSEGV while NUMA sampling (the
// balancer and its fault sampling, whose SIGSEGV handler will sit in the same chain) is on.
void die_in_a_task_with_sampling_on(void (*fault)()) {
  guard_test::reset_fault_dispositions();
  guard_test::run_on_thread(0, guard_test::kSmallStack, [] {});  // the guard's handler is in place
  rt::config c;
  c.tune = "NUMA_BALANCING,FAULT_SAMPLING";
  rt::runtime r{c};
  r.spawn(fault).join();
}

TEST_F(StackGuardDeath, ANullWriteInATaskDiesWithSigsegvWhileNumaSamplingIsOn) {
  if (guard_test::kUbsanCatchesNullStores) GTEST_SKIP() << "UBSan reports the null store before it faults";
  EXPECT_EXIT(die_in_a_task_with_sampling_on(guard_test::write_through_null), testing::KilledBySignal(SIGSEGV),
              Not(HasSubstr("overflowed")));
}

TEST_F(StackGuardDeath, AWriteToAProtectedPageInATaskDiesWithSigsegvWhileNumaSamplingIsOn) {
  EXPECT_EXIT(die_in_a_task_with_sampling_on(guard_test::write_to_a_protected_page), testing::KilledBySignal(SIGSEGV),
              Not(HasSubstr("overflowed")));
}

}  // namespace
