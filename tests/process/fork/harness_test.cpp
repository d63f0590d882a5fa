// The fork tests' own harness can fail: a hung child is killed and reported, a failed
// expectation in the child reaches the parent, and the refusal check rejects anything but
// rt::runtime_stopped mentioning fork. No runtime is started here.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>

#include "child.hpp"

namespace {

using fork_test::report;

TEST(ForkHarness, AChildThatNeverEndsIsKilledAndReportedAsHung) {
  const auto c = fork_test::start_child([](report&) {
    for (;;) ::pause();
  });
  const auto out = fork_test::await_child(c, std::chrono::milliseconds(500));
  EXPECT_TRUE(out.hung);
  EXPECT_FALSE(out.exited_cleanly());
  ASSERT_TRUE(WIFSIGNALED(out.wait_status));
  EXPECT_EQ(WTERMSIG(out.wait_status), SIGKILL);
  EXPECT_NE(out.describe().find("child hung"), std::string::npos) << out.describe();
}

TEST(ForkHarness, AFailedExpectationInTheChildReachesTheParent) {
  const auto c = fork_test::start_child([](report& r) {
    r.check(true, "not recorded");
    r.fail("first failure");
    r.check(false, "second failure");
  });
  const auto out = fork_test::await_child(c);
  EXPECT_FALSE(out.hung);
  EXPECT_FALSE(out.exited_cleanly());
  ASSERT_TRUE(WIFEXITED(out.wait_status));
  EXPECT_EQ(WEXITSTATUS(out.wait_status), 1);
  EXPECT_EQ(out.report, "first failure\nsecond failure\n");
}

TEST(ForkHarness, AnExceptionEscapingTheChildsChecksIsAFailure) {
  const auto c = fork_test::start_child([](report&) { throw std::runtime_error("boom"); });
  const auto out = fork_test::await_child(c);
  EXPECT_FALSE(out.exited_cleanly());
  EXPECT_NE(out.report.find("boom"), std::string::npos) << out.describe();
}

TEST(ForkHarness, AChildWithNoFailuresExitsCleanly) {
  const auto c = fork_test::start_child([](report& r) { r.check(true, "unused"); });
  const auto out = fork_test::await_child(c);
  EXPECT_TRUE(out.exited_cleanly()) << out.describe();
  EXPECT_EQ(out.report, "");
}

TEST(ForkHarness, OnlyRuntimeStoppedMentioningForkCountsAsARefusal) {
  report accepted;
  fork_test::expect_refused_after_fork(accepted, "fork", [] { throw rt::runtime_stopped("refused after fork()"); });
  EXPECT_TRUE(accepted.ok()) << accepted.text();

  report returned;
  fork_test::expect_refused_after_fork(returned, "returns", [] {});
  EXPECT_NE(returned.text().find("returned normally"), std::string::npos) << returned.text();

  report no_fork;
  fork_test::expect_refused_after_fork(no_fork, "shutdown", [] { throw rt::runtime_stopped("after shutdown began"); });
  EXPECT_NE(no_fork.text().find("does not mention fork"), std::string::npos) << no_fork.text();

  report other;
  fork_test::expect_refused_after_fork(other, "other", [] { throw std::logic_error("fork misuse"); });
  EXPECT_NE(other.text().find("other than rt::runtime_stopped"), std::string::npos) << other.text();
}

}  // namespace
