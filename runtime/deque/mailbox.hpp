// A worker's mailbox: tasks handed to that worker by the wake path (DESIGN.md §4 step 3).
// Multi-producer (any thread pushes), single-consumer (only the owning worker pops), lock-free,
// bounded. Invariants I-MBX-n are defined in docs/design/deque.md.
//
// Built on boost::lockfree::queue in fixed-size mode (decision and alternatives in
// docs/design/deque.md, "Mailbox"): every node is preallocated, so a push never allocates and
// never blocks; when the mailbox is full the push says so and the caller keeps the task.
#pragma once

#include <cstddef>
#include <stdexcept>

#include <boost/lockfree/policies.hpp>
#include <boost/lockfree/queue.hpp>

#include "core/assert.hpp"

namespace rt::deque {

// The outcome of a mailbox push. On `full` the task was NOT enqueued and the caller still owns
// it: the wake path then places it on a deque or an injection queue instead (I-MBX-1).
enum class mailbox_push { delivered, full };

template <class Task>
class mailbox {
 public:
  // Boost's fixed-size pool addresses nodes with 16-bit indexes and keeps one node as the
  // queue's dummy: 65534 items is the representable maximum.
  static constexpr std::size_t kMaxCapacity = 65534;

  // Holds at most `capacity` tasks; all nodes are allocated here. Throws std::length_error when
  // capacity is 0 or above kMaxCapacity.
  explicit mailbox(std::size_t capacity) : queue_(checked(capacity)) {}

  mailbox(const mailbox&) = delete;
  mailbox& operator=(const mailbox&) = delete;

  // Any thread; lock-free, no allocation. `delivered` happens-before the pop that returns the
  // task (I-MBX-2).
  [[nodiscard]] mailbox_push push(Task* task) noexcept {
    RT_DEBUG_ASSERT(task != nullptr, "I-MBX-1", "nullptr means 'no task' and cannot be pushed");
    return queue_.push(task) ? mailbox_push::delivered : mailbox_push::full;  // I-MBX-1
  }

  // Owner only (I-MBX-3). FIFO; nullptr when no task is queued.
  Task* pop() noexcept {
    Task* task = nullptr;
    return queue_.pop(task) ? task : nullptr;
  }

  // Any thread; a snapshot (I-MBX-4): a parking worker's re-check and the quiescence check
  // (I-SHUT-3) read it, and see every push that has returned.
  bool empty_estimate() const noexcept { return queue_.empty(); }

 private:
  static std::size_t checked(std::size_t capacity) {
    if (capacity == 0 || capacity > kMaxCapacity) {
      throw std::length_error("mailbox: capacity must be in [1, 65534]");
    }
    return capacity;
  }

  boost::lockfree::queue<Task*, boost::lockfree::fixed_sized<true>> queue_;
};

}  // namespace rt::deque
