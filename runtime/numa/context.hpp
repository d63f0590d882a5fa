// The sampling context of the calling thread (docs/design/sampling.md I-SAMPLE-8): which ring
// a fault on this thread feeds, the node the thread runs on, and the group of the task it is
// running. The worker sets it as it starts and clears it as it stops; the scheduler sets the
// running group around each task's closure. The SIGSEGV handler reads it without a lock.
//
// Storage: a constinit thread_local with the initial-exec TLS model. No lazy initialisation
// and no __tls_get_addr call on access, so the handler may read it (libnumart is a static
// library linked into the executable, ADR 0001, which is what initial-exec needs). Each field
// is a lock-free atomic written only by its own thread and read by that thread's signal
// handler: release/acquire on `ring` keeps `node` (written before it) visible to a handler
// that sees the ring; on x86 and AArch64 these are plain loads and stores.
#pragma once

#include <cstdint>

#include "numa/sample_ring.hpp"
#include "sync/atomics.hpp"

namespace rt::numa {

struct thread_context {
  sample_ring* ring;          // null: this thread has no context (not a worker)
  int node;                   // logical node of the worker
  const void* running_group;  // key of the running task's group, or null
};

namespace detail {
struct context_cells {
  sync::native::atomic<sample_ring*> ring{nullptr};
  sync::native::atomic<std::int16_t> node{-1};
  sync::native::atomic<const void*> running_group{nullptr};
};
extern constinit thread_local context_cells tls_context __attribute__((tls_model("initial-exec")));
}  // namespace detail

// Worker start: this thread's samples go to `ring` (which must outlive leave_sampling()) and
// say `node`. Throws std::invalid_argument for a null ring or a node outside [0, 32767].
// Also re-checks that the fault handler (if installed) is still first in the chain
// (fault_sampler.hpp, I-SAMPLE-12).
void enter_sampling(sample_ring* ring, int node);
// Worker stop: no more samples from this thread. Harmless on a thread that never entered.
void leave_sampling() noexcept;

// Around each task's closure (hot path: two plain stores per task).
inline void set_running_group(const void* group) noexcept {
  detail::tls_context.running_group.store(group, sync::native::relaxed);
}
// The group set_running_group() last stored on this thread: what current_context() reports
// while the thread has a ring (enter_sampling and leave_sampling store null), without the
// ring's acquire load (hot path: one plain load per task). Owner thread only.
inline const void* running_group() noexcept {
  return detail::tls_context.running_group.load(sync::native::relaxed);
}

// The calling thread's context; ring == nullptr when it has none. Async-signal-safe.
inline thread_context current_context() noexcept {
  auto& c = detail::tls_context;
  sample_ring* r = c.ring.load(sync::native::acquire);  // pairs with enter_sampling's release
  if (r == nullptr) return {nullptr, -1, nullptr};
  return {r, c.node.load(sync::native::relaxed), c.running_group.load(sync::native::relaxed)};
}

}  // namespace rt::numa
