// Access samples and the per-worker sample ring (docs/design/sampling.md I-SAMPLE-5..7).
//
// A sample is one NUMA hinting fault (or one explicit note_access()): which group's task
// touched which block of pages of which group's region, on which node the touched page lives
// and on which node the touching worker runs. The balancer folds samples into per-group,
// per-node counters (DESIGN.md §6 step 3).
//
// sample_ring: single producer (the worker thread, *including its own signal handler*),
// single consumer (the balancer thread), over boost::lockfree::spsc_queue with a capacity
// fixed at construction (tunable numa_sample_ring_capacity). Nothing is allocated after the
// constructor, push() never waits and is async-signal-safe.
//
// Overflow policy (I-SAMPLE-6): a push into a full ring drops the NEW sample and counts it in
// dropped_full. Older samples are kept: the balancer has not yet seen them, and a burst that
// outruns it says no more about placement than the samples already queued.
//
// Re-entrancy (I-SAMPLE-7): the fault handler can interrupt its own thread in the middle of a
// note_access() push; two interleaved pushes would corrupt the single-producer queue. push()
// claims the ring with an atomic exchange on `in_push_`; a push that finds it claimed (the
// handler that interrupted a push) drops its sample and counts it in dropped_reentrant.
// Hence pushed + dropped_full + dropped_reentrant == attempts, always.
#pragma once

#include <boost/lockfree/spsc_queue.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "sync/atomics.hpp"

namespace rt::numa {

struct sample {
  const void* group;          // key of the running task's group on the touching worker, or null
  const void* region_group;   // key of the group that registered the region
  std::uintptr_t page;        // first page of the touched page's block (I-SAMPLE-13)
  std::int16_t mem_node;      // node of the touched page (region_registry::set_node), -1 unknown
  std::int16_t cpu_node;      // node of the touching worker
  std::uint32_t pages;        // pages in the block, at least 1
};

enum class push_result : std::uint8_t { pushed, dropped_full, dropped_reentrant };

struct ring_counters {
  std::uint64_t pushed = 0;
  std::uint64_t dropped_full = 0;
  std::uint64_t dropped_reentrant = 0;
};

class sample_ring {
 public:
  // Throws std::invalid_argument for capacity 0 (the tunable's range starts at 64).
  explicit sample_ring(std::size_t capacity) : q_(checked(capacity)), capacity_(capacity) {}
  sample_ring(const sample_ring&) = delete;
  sample_ring& operator=(const sample_ring&) = delete;

  // Producer side: the owning thread and its signal handlers only. Never waits, never
  // allocates, async-signal-safe.
  push_result push(const sample& s) noexcept {
    // I-SAMPLE-7: acquire keeps the queue accesses after the claim, the release store keeps
    // them before the hand-back; both are same-thread (handler vs interrupted code) orderings.
    if (in_push_.exchange(true, sync::native::acquire)) {
      dropped_reentrant_.fetch_add(1, sync::native::relaxed);  // RMW: a nested handler may race it
      return push_result::dropped_reentrant;
    }
    const bool ok = q_.push(s);
    // pushed_ and dropped_full_ are written only inside the claim: one writer, no RMW needed.
    auto& cell = ok ? pushed_ : dropped_full_;
    cell.store(cell.load(sync::native::relaxed) + 1, sync::native::relaxed);
    in_push_.store(false, sync::native::release);
    return ok ? push_result::pushed : push_result::dropped_full;
  }

  // Consumer side: one thread (the balancer). Calls f(const sample&) for every queued sample,
  // oldest first; returns how many.
  template <class F>
  std::size_t drain(F&& f) {
    return q_.consume_all(f);
  }

  std::size_t capacity() const noexcept { return capacity_; }

  // Any thread; each counter is exact, the three are not one atomic snapshot.
  ring_counters counters() const noexcept {
    return {pushed_.load(sync::native::relaxed), dropped_full_.load(sync::native::relaxed),
            dropped_reentrant_.load(sync::native::relaxed)};
  }

 private:
  static std::size_t checked(std::size_t capacity) {
    if (capacity == 0) throw std::invalid_argument("numa::sample_ring: capacity must be at least 1 sample");
    return capacity;
  }

  boost::lockfree::spsc_queue<sample> q_;
  std::size_t capacity_;
  // Written and read by the producer thread and its own signal handlers only (I-SAMPLE-7).
  sync::native::atomic<bool> in_push_{false};
  // Written by the producer (pushed_/dropped_full_ inside the claim, dropped_reentrant_ by
  // RMW), read relaxed by anyone for statistics; no ordering pairs with them.
  sync::native::atomic<std::uint64_t> pushed_{0};
  sync::native::atomic<std::uint64_t> dropped_full_{0};
  sync::native::atomic<std::uint64_t> dropped_reentrant_{0};
};

}  // namespace rt::numa
