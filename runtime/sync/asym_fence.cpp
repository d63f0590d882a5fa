#include "sync/asym_fence.hpp"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "core/assert.hpp"
#include "sync/futex.hpp"

namespace rt::sync {

namespace {
long membarrier(int cmd) noexcept { return syscall(SYS_membarrier, cmd, 0, 0); }

// I-PARK-11, process-wide like membarrier itself: the ticket of the last membarrier a leader
// began. Written by the leader, under g_leader, before its syscall (seq_cst); read by every
// heavy() after its own seq_cst fence (seq_cst). A caller that read n knows that every ticket
// above n was taken, and its membarrier begun, after that read.
std::atomic<std::uint64_t> g_started{0};
// The ticket of the last membarrier that returned. Written by the leader after its syscall
// (release); read by every heavy() (acquire): a caller that reads a ticket above the one it
// read from g_started knows that membarrier began after its fence and has returned.
std::atomic<std::uint64_t> g_completed{0};
// Who leads: 0 nobody, 1 a leader, 2 a leader and callers waiting for it (FUTEX_WAIT on 2).
// The leader wakes them all when its membarrier returns: each either finds it was served or
// tries to lead the next one, so a queue of parkers costs one wake-up, not one per parker.
std::atomic<std::uint32_t> g_leader{0};

// fork(): the child has only the forking thread, which was not inside heavy(); a leader that
// held the lock at the fork is gone there, so the child starts with it free.
void on_fork_child() noexcept { g_leader.store(0, std::memory_order_relaxed); }
// Registered at load (see the scheduler's handlers for why not later).
const int g_fork_handler = pthread_atfork(nullptr, nullptr, &on_fork_child);
}  // namespace

bool asym_fence::available() noexcept {
#if defined(RT_TSAN)
  return false;
#else
  static const bool ok = [] {
    RT_ASSERT(g_fork_handler == 0, "I-PARK-11", "pthread_atfork failed for the fence's fork handler");
    const long cmds = membarrier(MEMBARRIER_CMD_QUERY);
    if (cmds < 0 || (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
    return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
  }();
  return ok;
#endif
}

bool asym_fence::heavy() noexcept {
  std::atomic_thread_fence(std::memory_order_seq_cst);  // this thread's stores before the read below
  const std::uint64_t seen = g_started.load(std::memory_order_seq_cst);
  for (;;) {
    if (g_completed.load(std::memory_order_acquire) > seen) return false;
    std::uint32_t state = 0;
    if (g_leader.compare_exchange_strong(state, 1, std::memory_order_acquire, std::memory_order_relaxed)) break;
    // A leader is running: wait for it unless it finished meanwhile.
    if (state == 2 || g_leader.compare_exchange_strong(state, 2, std::memory_order_relaxed, std::memory_order_relaxed))
      native_futex::wait(g_leader, 2);
  }
  // Leading. The last leader may have finished between the check above and the lock.
  const bool lead = g_completed.load(std::memory_order_relaxed) <= seen;
  if (lead) {
    const std::uint64_t ticket = g_started.load(std::memory_order_relaxed) + 1;
    g_started.store(ticket, std::memory_order_seq_cst);
    // Registered in available(); the only documented failures are EINVAL/EPERM for an
    // unregistered or unsupported command, which available() ruled out.
    const long r = membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
    RT_ASSERT(r == 0, "I-PARK-7", "membarrier(PRIVATE_EXPEDITED) failed after registration");
    g_completed.store(ticket, std::memory_order_release);
  }
  if (g_leader.exchange(0, std::memory_order_release) == 2) native_futex::wake_all(g_leader);
  return lead;
}

}  // namespace rt::sync
