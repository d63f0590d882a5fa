// A broken invariant aborts with its id (runtime/core/assert.hpp): the one-line message names
// the rule in docs/design/ that was broken. I-SHUT-4 (docs/design/shutdown.md): a runtime cannot
// be shut down or destroyed from one of its own workers; it would wait for itself.
#include <gtest/gtest.h>
#include <signal.h>

#include <memory>

#include "rt/rt.hpp"

namespace {

constexpr const char* kShut4 = "numart: invariant I-SHUT-4 broken: [^\n]*own workers[^\n]*\n";

class InvariantDeath : public testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(InvariantDeath, ShutdownFromOneOfItsOwnTasksAbortsWithIShut4) {
  EXPECT_EXIT(
      {
        rt::runtime r;
        r.spawn([&r] { r.shutdown(); }).join();
      },
      testing::KilledBySignal(SIGABRT), kShut4);
}

TEST_F(InvariantDeath, DestroyingARuntimeFromOneOfItsOwnTasksAbortsWithIShut4) {
  EXPECT_EXIT(
      {
        auto* r = new rt::runtime;
        r->spawn([r] { delete r; }).join();
      },
      testing::KilledBySignal(SIGABRT), kShut4);
}

TEST_F(InvariantDeath, ShuttingTheDefaultRuntimeDownFromItsTaskAbortsWithIShut4) {
  EXPECT_EXIT(rt::spawn([] { rt::default_runtime().shutdown(); }).join(), testing::KilledBySignal(SIGABRT), kShut4);
}

// The same misuse from inside a nested task_group: the check does not depend on the depth.
TEST_F(InvariantDeath, ShutdownFromANestedTaskAbortsWithIShut4) {
  EXPECT_EXIT(
      {
        rt::runtime r;
        r.spawn([&r] {
           rt::task_group g;
           g.spawn([&r] { r.shutdown(); });
           g.wait();
         }).join();
      },
      testing::KilledBySignal(SIGABRT), kShut4);
}

// Shutting down from an outside thread, by contrast, is the normal path and returns.
TEST(InvariantNoDeath, ShutdownFromAnOutsideThreadReturns) {
  auto r = std::make_unique<rt::runtime>();
  EXPECT_EQ(r->spawn([] { return 4; }).join(), 4);
  r->shutdown();
  r->shutdown();
  EXPECT_THROW((void)r->spawn([] {}), rt::runtime_stopped);
}

}  // namespace
