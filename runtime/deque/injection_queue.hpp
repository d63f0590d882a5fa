// A NUMA node's injection queue: tasks spawned by threads outside the runtime and tasks placed
// on this node from another node (DESIGN.md §4 step 3, §5). Multi-producer, multi-consumer:
// any worker of the node pops, thieves from other nodes take batches. Invariants I-INJ-n are
// defined in docs/design/deque.md.
//
// Built on boost::lockfree::queue in its variable-size mode: `reserve` nodes are allocated up
// front and the pool grows from the heap when they run out, so a push never fails for lack of
// room (I-INJ-1). Nodes return to the queue's own free list, never to the heap, until the queue
// is destroyed: the footprint is the high-water mark of queued tasks.
#pragma once

#include <cstddef>
#include <cstdint>

#include <boost/lockfree/queue.hpp>

#include "core/assert.hpp"
#include "sync/atomics.hpp"

namespace rt::deque {

template <class Task, class S = sync::native>
class injection_queue {
 public:
  // Preallocates `reserve` nodes; pushes beyond that allocate.
  explicit injection_queue(std::size_t reserve) : queue_(reserve) { count_.store(0, S::relaxed); }

  injection_queue(const injection_queue&) = delete;
  injection_queue& operator=(const injection_queue&) = delete;

  // Any thread. Lock-free while preallocated nodes remain; beyond that it allocates a node.
  // Either the task is enqueued or std::bad_alloc propagates and the caller still owns the task
  // (I-INJ-1). The push happens-before the pop that returns the task (I-INJ-2).
  void push(Task* task) {
    RT_DEBUG_ASSERT(task != nullptr, "I-INJ-1", "nullptr means 'no task' and cannot be pushed");
    count_.fetch_add(1, S::relaxed);  // I-INJ-3: counted before it can be popped
    bool pushed = false;
    try {
      // The variable-size queue with std::allocator reports no failure other than by throwing.
      pushed = queue_.push(task);
    } catch (...) {
      count_.fetch_sub(1, S::relaxed);
      throw;
    }
    RT_ASSERT(pushed, "I-INJ-1", "boost::lockfree::queue::push failed without throwing");
  }

  // Any thread. FIFO; nullptr when no task is queued.
  Task* pop() noexcept {
    Task* task = nullptr;
    if (!queue_.pop(task)) {
      return nullptr;
    }
    count_.fetch_sub(1, S::relaxed);  // I-INJ-3
    return task;
  }

  // Any thread. Pops up to `max` tasks into out[0..n) in FIFO order and returns n. Each pop is
  // its own linearisation point: concurrent consumers may interleave with the batch (I-INJ-4).
  std::size_t pop_batch(Task** out, std::size_t max) noexcept {
    std::size_t n = 0;
    while (n < max && queue_.pop(out[n])) {
      ++n;
    }
    if (n != 0) {
      count_.fetch_sub(static_cast<std::int64_t>(n), S::relaxed);  // I-INJ-3
    }
    return n;
  }

  // Any thread. A task is counted from before its push until after its pop (I-INJ-3): a push or
  // pop in flight may be counted, but a queued task whose push the reader can see is never
  // missed, and the count is never negative. Exact when no push or pop runs.
  std::size_t size_estimate() const noexcept {
    const std::int64_t c = count_.load(S::relaxed);
    RT_DEBUG_ASSERT(c >= 0, "I-INJ-3", "a pop was counted before its push");
    return static_cast<std::size_t>(c);
  }

 private:
  boost::lockfree::queue<Task*> queue_;
  // Written by every producer (before its push) and consumer (after its pop), relaxed; read by
  // the search ladder and the parking re-check. It orders no memory by itself: what a reader
  // may conclude from it is I-INJ-3. Own cache line: every push and pop writes it.
  alignas(sync::kCacheLine) typename S::template atomic<std::int64_t> count_;
};

}  // namespace rt::deque
