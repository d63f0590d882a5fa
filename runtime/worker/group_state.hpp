// The state behind rt::group, its reference count (I-GROUP-1) and the per-worker cache of
// references that keeps the count off the spawn path (I-GROUP-2, docs/design/tasks.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "sync/atomics.hpp"

namespace rt::detail {

class scheduler;

struct group_state {
  group_state(std::string n, scheduler* s, group_state* p = nullptr) : name(std::move(n)), sched(s), parent(p) {}
  std::string name;
  scheduler* sched;
  // The numa_group this group is a member of, or null (rt::group(group&, name)). The member
  // holds a reference on it (I-GROUP-1), dropped when the member's state is deleted.
  group_state* const parent;
  // One reference for the rt::group object, one per task frame naming the group (from alloc to
  // the frame's free) and those the workers' caches hold (I-GROUP-2); the last one deletes the
  // state (I-GROUP-1). Added relaxed (the adder already holds a reference, or is the spawn
  // whose handle does); subtracted acq_rel, so the deleter sees every earlier use.
  sync::native::atomic<std::uint32_t> refs{1};
  // Written by the worker that runs a task of the group (relaxed: a placement hint).
  sync::native::atomic<int> home_worker{-1};
  // Written by the balancer or set_preferred_node (relaxed: a placement hint).
  sync::native::atomic<int> preferred_node{-1};
  // The node whose count of preferring groups (scheduler::preferring_, I-STEAL-19) holds this
  // group: -1 none, kForgotten once the rt::group is gone (no later change counts). Guarded by
  // group_active_lock(), which scheduler::set_preferred_node holds across the exchange of
  // preferred_node, so that the group is counted on the node it prefers.
  static constexpr int kForgotten = -2;
  int counted_node = -1;
  std::vector<int> active_nodes;   // guarded by group_active_lock()
};

// Guards every group's active_nodes and counted_node: one lock for the process, held across
// fork() by atfork handlers (prepare locks it, parent and child unlock it), so that a child
// never inherits it held by a thread it does not have (ADR 0007, I-SHUT-6). Its holders copy one
// vector or move one group's count between two nodes, and take no other lock but the
// allocator's (whose atfork prepare runs after this one); the balancer takes it once or twice
// per group it places, a user's group::active_nodes(), set_active_nodes() and
// set_preferred_node() and stats() once per group, a destroyed rt::group once.
std::mutex& group_active_lock() noexcept;

// The last reference's work: deletes the state, then drops the reference a member holds on
// its parent (I-GROUP-1). Out of line and cold: a frame's release seldom ends a group.
[[gnu::cold]] void destroy_group(group_state* g) noexcept;
// Drops n references on a group's state (I-GROUP-1); null: nothing.
inline void release_group(group_state* g, std::uint32_t n = 1) noexcept {
  if (g != nullptr && g->refs.fetch_sub(n, sync::native::acq_rel) == n) [[unlikely]]
    destroy_group(g);
}

// I-GROUP-2: a worker's stock of references on the groups it spawns into, so that a spawn and
// a free on a worker touch the group's count once per `batch` frames, not once per frame. At
// hackbench G = 1 both workers spawn into the same 20 receivers' groups: the count's line
// bounced on every spawn and every free (alloc's fetch_add was 64 % of alloc's samples).
//
// Direct-mapped by a hash of the state's address. A slot that names a group holds at least
// one reference on it, so the state it points to is alive. A group keeps its slot until the
// next flush, or until it is dead (the slot's stock is all its count: no object, no frame, no
// other stock, so nobody can take a reference again) and a spawn into another group of the
// slot frees it. A group whose slot a live group holds counts on the state itself, one RMW per
// spawn and per free as without the cache, so a collision never costs more than no cache.
// Owner thread only. flush() returns every stock: a worker flushes before it parks, blocks in
// a join on its own runtime, or exits. So a runtime whose workers all sleep holds no
// reference, and one busy worker keeps at most kSlots states alive past their last use.
class group_ref_cache {
 public:
  static constexpr unsigned kSlotBits = 6;
  static constexpr std::size_t kSlots = std::size_t{1} << kSlotBits;

  // A reference for a frame of g spawned on this worker. `batch` (>= 1): references one
  // refill takes from the count.
  void take(group_state* g, std::uint32_t batch) noexcept {
    slot& s = slot_of(g);
    if (s.group == g) {
      if (s.held == 1) {
        g->refs.fetch_add(batch, sync::native::relaxed);
        s.held += batch;
      }
      --s.held;
      return;
    }
    if (s.group != nullptr) {
      // Relaxed: a count equal to the stock cannot grow. Every adder holds the group object's
      // reference (a spawn, another stock's refill, a member's construction), which never
      // enters a stock, and every reference in this stock came from an RMW that happens-before
      // this load; so equal means the object is gone, and this worker's release below is the
      // last one and deletes the state.
      if (s.group->refs.load(sync::native::relaxed) != s.held) {
        g->refs.fetch_add(1, sync::native::relaxed);
        return;
      }
      release_group(s.group, s.held);
      --used_;
    }
    g->refs.fetch_add(batch + 1, sync::native::relaxed);
    s = slot{g, batch};
    ++used_;
  }

  // A frame of g freed on this worker gives its reference back: to the stock when g has the
  // slot (returning to the count all but `batch` once the stock passes 2 x batch), else to the
  // count, which may delete the state.
  void give(group_state* g, std::uint32_t batch) noexcept {
    slot& s = slot_of(g);
    if (s.group != g) {
      release_group(g);
      return;
    }
    if (++s.held > 2 * batch) {
      release_group(g, s.held - batch);  // never the last: the slot keeps `batch` >= 1
      s.held = batch;
    }
  }

  // Returns every stock to its count; a group whose object and frames are gone dies here. An
  // empty cache (a runtime without groups) returns at once.
  void flush() noexcept {
    if (used_ == 0) return;
    for (slot& s : slots_) {
      group_state* g = s.group;
      const std::uint32_t n = s.held;
      s = slot{};
      release_group(g, n);
    }
    used_ = 0;
  }

  // References this cache holds on g (0: g has no slot), and the slot g maps to. For tests.
  std::uint32_t held(const group_state* g) const noexcept {
    const slot& s = slots_[slot_index(g)];
    return s.group == g ? s.held : 0;
  }
  // splitmix64's finalizer: states come from the allocator a size class apart, and a plain
  // multiplicative hash put 20 such addresses in 8 slots.
  static std::size_t slot_index(const group_state* g) noexcept {
    std::uint64_t x = reinterpret_cast<std::uintptr_t>(g);
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return static_cast<std::size_t>(x & (kSlots - 1));
  }

 private:
  struct slot {
    group_state* group = nullptr;
    std::uint32_t held = 0;  // >= 1 while group is non-null
  };

  slot& slot_of(const group_state* g) noexcept { return slots_[slot_index(g)]; }

  slot slots_[kSlots];
  std::size_t used_ = 0;  // slots that name a group
};

}  // namespace rt::detail
