// The stack guard's set-up, without dying: enter_worker gives the thread an alternate signal
// stack and installs the handler (SA_ONSTACK | SA_SIGINFO, for SIGSEGV and SIGBUS);
// leave_worker takes the alternate stack away; a thread's own alternate stack is left alone.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdint>
#include <thread>

#include "guarded_thread.hpp"

namespace {

namespace sg = rt::detail::stack_guard;

stack_t current_alt_stack() {
  stack_t ss{};
  EXPECT_EQ(::sigaltstack(nullptr, &ss), 0);
  return ss;
}

// Sanitizer runtimes give every new thread an alternate stack: start these checks without one.
void drop_alt_stack() {
  stack_t off{};
  off.ss_flags = SS_DISABLE;
  ASSERT_EQ(::sigaltstack(&off, nullptr), 0);
}

TEST(StackGuard, EnterGivesTheThreadAnAlternateStackAndLeaveTakesItAway) {
  std::thread([] {
    drop_alt_stack();
    sg::enter_worker(2);
    const stack_t in = current_alt_stack();
    EXPECT_EQ(in.ss_flags & SS_DISABLE, 0);
    EXPECT_GE(in.ss_size, static_cast<std::size_t>(MINSIGSTKSZ));
    sg::enter_worker(4);  // idempotent: the same alternate stack
    EXPECT_EQ(current_alt_stack().ss_sp, in.ss_sp);
    sg::leave_worker();
    EXPECT_NE(current_alt_stack().ss_flags & SS_DISABLE, 0);
    sg::leave_worker();  // twice is harmless
  }).join();
}

TEST(StackGuard, TheHandlerIsInstalledOnTheAlternateStackWithSiginfo) {
  std::thread([] { sg::enter_worker(0); sg::leave_worker(); }).join();
  for (const int sig : {SIGSEGV, SIGBUS}) {
    struct sigaction sa {};
    ASSERT_EQ(::sigaction(sig, nullptr, &sa), 0);
    EXPECT_NE(sa.sa_flags & SA_SIGINFO, 0) << "signal " << sig;
    EXPECT_NE(sa.sa_flags & SA_ONSTACK, 0) << "signal " << sig;
  }
}

TEST(StackGuard, AThreadsOwnAlternateStackIsKept) {
  std::thread([] {
    alignas(16) static thread_local unsigned char own[64 * 1024];
    stack_t ss{};
    ss.ss_sp = own;
    ss.ss_size = sizeof own;
    ASSERT_EQ(::sigaltstack(&ss, nullptr), 0);
    sg::enter_worker(1);
    EXPECT_EQ(current_alt_stack().ss_sp, static_cast<void*>(own));
    sg::leave_worker();
    const stack_t after = current_alt_stack();
    EXPECT_EQ(after.ss_sp, static_cast<void*>(own));
    EXPECT_EQ(after.ss_flags & SS_DISABLE, 0) << "leave_worker disabled a stack it did not give";
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    ASSERT_EQ(::sigaltstack(&off, nullptr), 0);
  }).join();
}

TEST(StackGuard, LeaveWithoutEnterIsHarmless) {
  std::thread([] {
    drop_alt_stack();
    sg::leave_worker();
    EXPECT_NE(current_alt_stack().ss_flags & SS_DISABLE, 0);
  }).join();
}

// Recursion that fits is untouched by the guard: the thread returns normally.
TEST(StackGuard, RecursionWithinTheStackCompletes) {
  static std::uint64_t result = 0;
  guard_test::run_on_thread(6, guard_test::kSmallStack, [] { result = guard_test::dive(0, 100); });
  EXPECT_EQ(result, 100u + 99u * 100u / 2u);
}

}  // namespace
