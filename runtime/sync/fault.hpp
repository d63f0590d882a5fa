// Test-only fault injection at the protocols' steps (issue 8; docs/design/core.md "Fault
// injection"). Off unless a test arms it; then each fault point, with the armed probability,
// stretches the window between two steps of a protocol (a yield or a random spin), so that
// the interleavings a protocol must survive happen in seconds instead of weeks; and thread
// creation can be made to fail at a chosen worker. When disarmed a point costs one relaxed
// load of a read-only line and a predictable branch.
#pragma once

#include <atomic>
#include <cstdint>

namespace rt::sync::fault {

// Where a point sits; the scheduler cites these names next to the protocol step.
enum class site : std::uint8_t {
  push_published,   // a spawn pushed its task, before the notifier fence (I-PARK-1)
  idle_shown,       // a parking worker showed itself idle to hand-offs, before registering (I-WAKE-5)
  park_registered,  // a worker registered as a sleeper, before its fence and re-check (I-PARK-2)
  before_steal,     // a thief is about to read a victim's deque (I-DEQ-4..6)
  handoff_mailed,   // a hand-off mailed its task, before reading the sleeper list (I-WAKE-5)
  task_completed,   // a task ran, before its completion is published (I-TASK-1..5)
  shutdown_step,    // shutdown() between stopping, draining and waiting (I-SHUT-1..3)
  balance_popped,   // the balancer's node transfer popped a non-empty batch, before its pushes (I-SHUT-2)
};

struct plan {
  std::uint64_t seed = 1;
  unsigned jitter_per_mille = 0;  // chance that a point delays, in 1/1000
  unsigned max_spin = 2000;       // a delay spins up to this many pause instructions, or yields
  int fail_thread_start = -1;     // the worker index whose thread creation fails, or -1
  // Called at every point, before the delay, on the thread that reached it: a test that must
  // hold one protocol step open while it acts from another thread does it here; it must not
  // throw. Null: none.
  void (*at_point)(site, void*) = nullptr;
  void* at_point_arg = nullptr;
};

// Test side. Not thread-safe against running runtimes' start-up: arm before constructing the
// runtimes under test, disarm after they are gone.
void arm(const plan& p) noexcept;
void disarm() noexcept;
// Delays injected since the last arm().
std::uint64_t injected() noexcept;

namespace detail {
// Written by arm()/disarm() only (relaxed: the test's thread creation orders it before any
// worker reads it); read relaxed at every point.
extern std::atomic<bool> g_armed;
void hit(site s) noexcept;
bool fail_thread_start(int worker) noexcept;
}  // namespace detail

inline void point(site s) noexcept {
  if (detail::g_armed.load(std::memory_order_relaxed)) [[unlikely]]
    detail::hit(s);
}

// True when the armed plan says creating worker `worker`'s thread fails.
inline bool thread_start_fails(int worker) noexcept {
  return detail::g_armed.load(std::memory_order_relaxed) && detail::fail_thread_start(worker);
}

}  // namespace rt::sync::fault
