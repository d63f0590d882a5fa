// A broken invariant aborts with its id (runtime/core/assert.hpp): the one-line message names
// the rule in docs/design/ that was broken. I-SHUT-4 (docs/design/shutdown.md): a runtime cannot
// be destroyed from one of its own workers, it would wait for itself; shutdown() called there
// is refused with an exception instead.
#include <gtest/gtest.h>
#include <signal.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "rt/rt.hpp"

namespace {

constexpr const char* kShut4 = "numart: invariant I-SHUT-4 broken: [^\n]*own workers[^\n]*\n";

class InvariantDeath : public testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(InvariantDeath, DestroyingARuntimeFromOneOfItsOwnTasksAbortsWithIShut4) {
  EXPECT_EXIT(
      {
        auto* r = new rt::runtime;
        r->spawn([r] { delete r; }).join();
      },
      testing::KilledBySignal(SIGABRT), kShut4);
}

// shutdown() from one of the runtime's own tasks, at any depth, is refused with an exception
// the task's joiner receives; the runtime goes on (I-SHUT-4), the default one included.
TEST(InvariantNoDeath, ShutdownFromOneOfItsOwnTasksThrowsAndChangesNothing) {
  rt::runtime r;
  EXPECT_THROW(r.spawn([&r] { r.shutdown(); }).join(), std::logic_error);
  try {
    r.spawn([&r] {
       rt::task_group g;
       g.spawn([&r] { r.shutdown(); });
       g.wait();
     }).join();
    ADD_FAILURE() << "shutdown() from a nested task returned";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("I-SHUT-4"), std::string::npos) << e.what();
  }
  EXPECT_THROW(rt::spawn([] { rt::default_runtime().shutdown(); }).join(), std::logic_error);
  EXPECT_EQ(r.spawn([] { return 5; }).join(), 5) << "the refused shutdown stopped the runtime";
  EXPECT_EQ(rt::spawn([] { return 6; }).join(), 6);
  r.shutdown();
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
