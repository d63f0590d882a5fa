// The per-worker work-stealing deque: Chase & Lev (SPAA 2005) with the memory orders of Lê, Pop,
// Cohen, Zappa Nardelli, "Correct and Efficient Work-Stealing for Weak Memory Models" (PPoPP
// 2013), plus the fixes listed in docs/design/deque.md, which defines the invariants I-DEQ-n.
//
// One owner (the worker) pushes and pops at the bottom, LIFO; any thread steals at the top, FIFO.
// The code is a template over the sync seam `S` (sync/atomics.hpp) so that tests/model checks
// this very code under Relacy.
//
//   word      written by                        read by            ordering pairs with
//   top_      thieves' CAS; the owner's CAS     owner, thieves     CAS vs CAS; push's acquire
//             for the last element (I-DEQ-2)                       load (I-DEQ-7, I-DEQ-15)
//   bottom_   owner only, release (I-DEQ-1, 3)  thieves, acquire   the slot stores (I-DEQ-3)
//   buffer_   owner only, release (I-DEQ-9)     thieves, acquire   slot init and copy (I-DEQ-9, 11)
//   slots     owner, relaxed                    thieves, relaxed   ordered by bottom_ and buffer_
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "core/assert.hpp"
#include "sync/atomics.hpp"

namespace rt::deque {

// The outcome of one steal attempt. `retry` means the thief lost a race (another thief or the
// owner took the element it was after): the deque was not empty, so a searching worker must not
// treat it as empty (DESIGN.md §5; I-DEQ-6).
enum class steal_result { empty, success, retry };

// T is a task pointer (or any trivially copyable value no wider than a pointer); the value T{}
// is reserved to mean "no item" and must never be pushed (I-DEQ-13).
template <class T, class S = sync::native>
class chase_lev {
  static_assert(std::is_trivially_copyable_v<T>, "slots are atomics of T");
  static_assert(sizeof(T) <= sizeof(void*), "the deque stores task pointers");

 public:
  // Capacity limit: 2^48 slots is more memory than any machine has, and it keeps every
  // index computation far from the signed overflow of std::int64_t (I-DEQ-2).
  static constexpr unsigned kMaxLog2Capacity = 48;

  // Owner-side construction; the initial capacity is 2^log2_capacity slots. The deque grows
  // by doubling when full (I-DEQ-9) and never shrinks. Thieves must receive the deque through
  // some release/acquire (thread start, a published pointer): these initial stores are relaxed.
  explicit chase_lev(unsigned log2_capacity) {
    if (log2_capacity > kMaxLog2Capacity) {
      throw std::length_error("chase_lev: log2_capacity above kMaxLog2Capacity");
    }
    top_.store(0, S::relaxed);
    bottom_.store(0, S::relaxed);
    buffer_.store(new buffer(std::int64_t{1} << log2_capacity), S::relaxed);
  }

  chase_lev(const chase_lev&) = delete;
  chase_lev& operator=(const chase_lev&) = delete;

  // Precondition: no other thread uses the deque any more (the workers were joined). Frees the
  // live buffer and every retired one (I-DEQ-10). Items still queued are the caller's to drain.
  ~chase_lev() {
    destroy(buffer_.load(S::relaxed));
    while (retired_ != nullptr) {
      buffer* next = retired_->next_retired;
      destroy(retired_);
      retired_ = next;
    }
  }

  // Owner only. Strong exception guarantee: when growing fails with std::bad_alloc the deque is
  // unchanged and `item` was not pushed.
  void push(T item) {
    RT_DEBUG_ASSERT(item != T{}, "I-DEQ-13", "T{} is reserved for 'no item' and cannot be pushed");
    const std::int64_t b = bottom_.load(S::relaxed);  // I-DEQ-1: our own value
    buffer* a = buffer_.load(S::relaxed);             // I-DEQ-1: only we write buffer_
    if (b - top_seen_ > a->mask) {
      // I-DEQ-15: the cached top says the buffer may be full; only now read the thieves' line.
      top_seen_ = top_.load(S::acquire);  // I-DEQ-7
      if (b - top_seen_ > a->mask) {
        a = grow(a, top_seen_, b);  // I-DEQ-9: continue with the buffer grow() published
      }
    }
    a->slots[b & a->mask].store(item, S::relaxed);
    bottom_.store(b + 1, S::release);  // I-DEQ-3: publishes the slot
  }

  // Owner only. Takes the most recently pushed item; T{} when the deque is empty.
  T pop() {
    const std::int64_t b = bottom_.load(S::relaxed) - 1;
    // I-DEQ-12: top never decreases, so an old value of it that already reaches bottom proves
    // emptiness: an idle worker polling its own empty deque pays no fence.
    if (b < top_.load(S::relaxed)) {
      return T{};
    }
    buffer* a = buffer_.load(S::relaxed);
    std::int64_t t;
    if constexpr (S::kTsan) {
      bottom_.store(b, S::seq_cst);  // I-DEQ-8
      t = top_.load(S::seq_cst);
    } else {
      bottom_.store(b, S::release);  // I-DEQ-3 (release), I-DEQ-4 (then the fence)
      S::fence(S::seq_cst);
      t = top_.load(S::relaxed);
    }
    if (t > b) {  // thieves emptied the deque since the check above
      bottom_.store(b + 1, S::release);
      return T{};
    }
    const T item = a->slots[b & a->mask].load(S::relaxed);
    if (t < b) {
      return item;  // I-DEQ-4: more than one element, no thief can reach index b
    }
    // I-DEQ-5: the last element goes to whoever moves top from t to t+1.
    const bool won = top_.compare_exchange_strong(t, t + 1, S::seq_cst, S::relaxed);
    bottom_.store(b + 1, S::release);
    return won ? item : T{};
  }

  // Any thread. On success `out` receives the oldest item; `out` is untouched otherwise.
  steal_result steal(T& out) {
    std::int64_t t;
    std::int64_t b;
    if constexpr (S::kTsan) {
      t = top_.load(S::seq_cst);  // I-DEQ-8
      b = bottom_.load(S::seq_cst);
    } else {
      t = top_.load(S::acquire);
      S::fence(S::seq_cst);  // I-DEQ-4
      b = bottom_.load(S::acquire);  // I-DEQ-3
    }
    if (t >= b) {
      return steal_result::empty;
    }
    buffer* a = buffer_.load(S::acquire);  // I-DEQ-9: after bottom, so it holds index t
    const T item = a->slots[t & a->mask].load(S::relaxed);  // I-DEQ-6: used only if we win
    // A task frame was last written by its spawner on another core: start moving its first line
    // here while the CAS runs (a prefetch never faults, so an item lost to another thief and
    // freed since costs nothing but the hint).
    if constexpr (std::is_pointer_v<T>) __builtin_prefetch(item);
    if (!top_.compare_exchange_strong(t, t + 1, S::seq_cst, S::relaxed)) {
      return steal_result::retry;  // I-DEQ-6
    }
    out = item;
    return steal_result::success;
  }

  // Any thread; a snapshot. What it guarantees to a parking worker's re-check after a seq_cst
  // fence is stated in I-DEQ-14; otherwise it only helps the search ladder skip victims.
  bool empty_estimate() const { return size_estimate() == 0; }

  std::size_t size_estimate() const {  // I-DEQ-14
    const std::int64_t b = bottom_.load(S::relaxed);
    const std::int64_t t = top_.load(S::relaxed);
    return b > t ? static_cast<std::size_t>(b - t) : 0;
  }

  // Owner only: the number of slots of the current buffer.
  std::size_t capacity() const {
    return static_cast<std::size_t>(buffer_.load(S::relaxed)->mask + 1);
  }

 private:
  struct buffer {
    explicit buffer(std::int64_t capacity)
        : mask(capacity - 1),
          slots(new typename S::template atomic<T>[static_cast<std::size_t>(capacity)]) {
      for (std::int64_t i = 0; i < capacity; ++i) {
        slots[i].store(T{}, S::relaxed);  // I-DEQ-11
      }
    }
    const std::int64_t mask;                   // capacity - 1, capacity a power of two
    typename S::template atomic<T>* const slots;
    buffer* next_retired = nullptr;            // owner only (I-DEQ-10)
  };

  static void destroy(buffer* a) {
    delete[] a->slots;
    delete a;
  }

  // Owner only, from push() when [t, b) fills the buffer. Returns the new buffer.
  buffer* grow(buffer* old, std::int64_t t, std::int64_t b) {
    auto* fresh = new buffer(2 * (old->mask + 1));
    for (std::int64_t i = t; i < b; ++i) {
      fresh->slots[i & fresh->mask].store(old->slots[i & old->mask].load(S::relaxed), S::relaxed);
    }
    old->next_retired = retired_;  // I-DEQ-10: a thief may still be reading `old`
    retired_ = old;
    buffer_.store(fresh, S::release);  // I-DEQ-9
    return fresh;
  }

  // top_ is written by thieves; bottom_ and buffer_ by the owner: separate cache lines so that
  // pushes do not invalidate the line thieves CAS on, and vice versa.
  alignas(sync::kCacheLine) typename S::template atomic<std::int64_t> top_;
  alignas(sync::kCacheLine) typename S::template atomic<std::int64_t> bottom_;
  typename S::template atomic<buffer*> buffer_;
  buffer* retired_ = nullptr;  // owner only (I-DEQ-10)
  // Owner only: a value of top_ that push() read with acquire, refreshed only when it says
  // the buffer is full (I-DEQ-15). On the owner's line: a push stops reading the line that
  // every steal writes.
  std::int64_t top_seen_ = 0;
};

}  // namespace rt::deque
