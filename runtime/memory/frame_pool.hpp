// Per-worker pools of fixed-size task frames (DESIGN.md §4 step 1). A frame always returns to
// the pool of the worker that allocated it: the owner frees into its local list without
// synchronisation, any other thread pushes onto the pool's remote list (a lock-free stack that
// the owner takes whole when its local list runs dry). So a frame stolen and finished by
// another worker is reused by its spawner instead of feeding another allocator arena, and a
// steady fork-join workload stops touching the allocator (and faulting in fresh pages) once
// the pools are warm. The pool counts its local list, the fewest frames that list held since
// the last trim() (its low-water mark) and its takes; trim() returns frames beyond those the
// worker keeps to the arena (I-POOL-4: at a run-dry after enough takes, policy::frames_to_keep;
// at a park, the cap, policy::frames_to_keep_parked). Frames that miss the pool
// come from the node arena given at construction, the worker's node (docs/design/memory.md
// I-MEM-8); threads without a pool use the static allocate(), the process allocator, and
// release() frees either kind.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

#include "memory/node_arena.hpp"
#include "sync/atomics.hpp"

namespace rt::memory {

class frame_pool {
  struct node;

 public:
  static constexpr std::size_t kFrameAlign = 64;

  frame_pool(std::size_t frame_bytes, arena_ref arena) noexcept : frame_bytes_(round_up(frame_bytes)), arena_(arena) {}
  ~frame_pool() { release_all(); }
  frame_pool(const frame_pool&) = delete;
  frame_pool& operator=(const frame_pool&) = delete;

  // Owner only. Returns nullptr only when the allocator is out of memory.
  void* take(bool& from_pool) noexcept {
    if (free_ == nullptr && remote_.load(sync::native::relaxed) != nullptr) {
      // acquire pairs with give_remote's release: the frames' contents are ours again.
      free_ = remote_.exchange(nullptr, sync::native::acquire);
      count_ = remote_count_.exchange(0, sync::native::relaxed);  // I-POOL-4: a hint
    }
    ++takes_;
    if (free_ != nullptr) {
      node* n = free_;
      free_ = n->next;
      // I-POOL-4: never below 0, and exact again whenever the list runs empty.
      count_ = free_ == nullptr ? 0 : count_ - (count_ != 0);
      if (count_ < low_water_) low_water_ = count_;
      // The next spawn writes that frame's header, and a frame a thief freed is still in the
      // thief's cache: fetch it for writing now, behind this spawn's work.
      __builtin_prefetch(free_, 1);
      from_pool = true;
      return n;
    }
    from_pool = false;
    return arena_.allocate(frame_bytes_, kFrameAlign);
  }
  // Owner only.
  void give(void* p) noexcept {
    auto* n = static_cast<node*>(p);
    n->next = free_;
    free_ = n;
    ++count_;
  }
  // Any thread but the owner: a lock-free push (I-POOL-1: push-only CAS plus the owner's
  // take-all exchange has no ABA). release pairs with take()'s acquire.
  void give_remote(void* p) noexcept {
    auto* n = static_cast<node*>(p);
    give_remote_chain(n, n, 1);
  }
  // Frames of other workers' pools that one worker freed, returned to their pool in one push
  // (I-POOL-2): at most `limit` frames of one pool at a time. Owned by one thread, which must
  // flush() before it sleeps and before it exits (the pools may be destroyed after it).
  class remote_batch {
   public:
    remote_batch() = default;
    remote_batch(const remote_batch&) = delete;
    remote_batch& operator=(const remote_batch&) = delete;
    void add(frame_pool& pool, void* p, std::size_t limit) noexcept {
      if (&pool != pool_) {
        flush();
        pool_ = &pool;
      }
      auto* n = static_cast<node*>(p);
      n->next = first_;
      if (first_ == nullptr) last_ = n;
      first_ = n;
      if (++count_ >= limit) flush();
    }
    void flush() noexcept {
      if (first_ != nullptr) pool_->give_remote_chain(first_, last_, count_);
      first_ = last_ = nullptr;
      count_ = 0;
    }

   private:
    frame_pool* pool_ = nullptr;
    node* first_ = nullptr;
    node* last_ = nullptr;
    std::size_t count_ = 0;
  };

  // Owner only: when the count exceeds `keep`, frees the frames beyond `keep`. It keeps the
  // first `keep` frames (the most recently freed, still in cache) by walking past them when
  // they are at most `walk_limit` or at most as many as the frames to free, and otherwise
  // frees from the head (a collection that frees 256 of a million walks 256). Then it starts a
  // new period (low-water mark at the count it leaves, no takes). Returns the number freed.
  std::size_t trim(std::size_t keep, std::size_t walk_limit) noexcept {
    std::size_t freed = 0;
    if (count_ > keep) {
      if (keep <= walk_limit || keep <= count_ - keep) {
        node** link = &free_;
        std::size_t kept = 0;
        for (; kept < keep && *link != nullptr; ++kept) link = &(*link)->next;
        node* n = *link;
        *link = nullptr;
        for (; n != nullptr; ++freed) {
          node* next = n->next;
          arena_.deallocate(n);
          n = next;
        }
        count_ = kept;  // exact: the walk counted it
      } else {
        for (const std::size_t excess = count_ - keep; freed < excess && free_ != nullptr; ++freed) {
          node* n = free_;
          free_ = n->next;
          arena_.deallocate(n);
        }
        count_ = free_ == nullptr ? 0 : count_ - freed;
      }
    }
    low_water_ = count_;
    takes_ = 0;
    return freed;
  }
  // Owner only: the frames of the local list (I-POOL-4: exact but for remote pushes racing
  // with the owner's take of the remote list), and the fewest since the last trim().
  std::size_t count() const noexcept { return count_; }
  std::size_t low_water() const noexcept { return low_water_; }
  // Owner only: the frames taken (from the list or the arena) since the last trim().
  std::size_t takes() const noexcept { return takes_; }
  // When no other thread can free into this pool any more (destruction).
  void release_all() noexcept {
    node* lists[2] = {free_, remote_.exchange(nullptr, sync::native::acquire)};
    for (node* n : lists) {
      while (n != nullptr) {
        node* next = n->next;
        arena_.deallocate(n);
        n = next;
      }
    }
    free_ = nullptr;
    count_ = low_water_ = takes_ = 0;
    remote_count_.store(0, sync::native::relaxed);
  }
  std::size_t frame_bytes() const noexcept { return frame_bytes_; }
  // The node this pool's frames live on (its arena's logical node tag).
  int arena_node() const noexcept { return arena_.node(); }

  // A frame of any size from this pool's node arena (a worker's oversized frame); nullptr when
  // out of memory. Any thread. Free it with release().
  void* allocate_local(std::size_t bytes) const noexcept { return arena_.allocate(round_up(bytes), kFrameAlign); }
  // A frame from the process allocator, for a thread that has no pool.
  static void* allocate(std::size_t bytes) noexcept { return std::aligned_alloc(kFrameAlign, round_up(bytes)); }
  // A thread without a pool (an outside spawner) keeps the last standard frame it freed itself
  // and takes it back for its next small spawn (I-POOL-3): a spawn-and-join loop from outside
  // then skips the allocator, whose aligned path is about 200 cycles of cache misses after an
  // idle pause. Frames of `standard_bytes`, any size class the caller fixes, from allocate().
  static void* take_standard(std::size_t standard_bytes) noexcept {
    standard_slot_t& s = standard_slot();
    void* p = s.frame;
    if (p == nullptr) return allocate(standard_bytes);
    s.frame = nullptr;
    return p;
  }
  // Keeps a frame of take_standard() for this thread's next one, else frees it.
  static void release_standard(void* p) noexcept {
    standard_slot_t& s = standard_slot();
    if (s.frame != nullptr || s.closed) {
      std::free(p);
      return;
    }
    static thread_local standard_slot_guard guard;  // from the first frame kept: frees it at exit
    static_cast<void>(guard);
    s.frame = p;
  }
  // Frees a frame from allocate(), allocate_local() or any pool: node-arena memory goes back to
  // its arena (I-MEM-5), anything else to the process allocator. Out of line: it needs the
  // frame after a call, which would cost every caller's pooled path a saved register.
  [[gnu::noinline]] static void release(void* p) noexcept {
    if (!node_arenas::free_if_owned(p)) std::free(p);
  }

 private:
  struct node {
    node* next;
  };
  // Any thread but the owner: pushes the chain first..last (linked by next) in one CAS, then
  // counts its `length` frames (I-POOL-4).
  void give_remote_chain(node* first, node* last, std::size_t length) noexcept {
    node* head = remote_.load(sync::native::relaxed);
    do {
      last->next = head;
    } while (!remote_.compare_exchange_weak(head, first, sync::native::release, sync::native::relaxed));
    remote_count_.fetch_add(length, sync::native::relaxed);
  }
  // One frame per thread. The slot has no destructor, so that a frame released by a thread's
  // later-destroyed thread_local (a join handle, say) still finds it: a guard, built when the
  // first frame is kept, frees the kept frame at thread exit and closes the slot, after which
  // frames go straight back to the allocator.
  struct standard_slot_t {
    void* frame;
    bool closed;
  };
  static standard_slot_t& standard_slot() noexcept {
    static constinit thread_local standard_slot_t slot{nullptr, false};
    return slot;
  }
  struct standard_slot_guard {
    standard_slot_guard() = default;
    standard_slot_guard(const standard_slot_guard&) = delete;
    standard_slot_guard& operator=(const standard_slot_guard&) = delete;
    ~standard_slot_guard() {
      standard_slot_t& s = standard_slot();
      std::free(s.frame);
      s.frame = nullptr;
      s.closed = true;
    }
  };
  static std::size_t round_up(std::size_t b) noexcept { return (b + kFrameAlign - 1) / kFrameAlign * kFrameAlign; }

  const std::size_t frame_bytes_;
  const arena_ref arena_;  // process-lifetime arena of the owner's node (I-MEM-1)
  node* free_ = nullptr;   // owner only
  std::size_t count_ = 0;      // owner only: frames on free_
  std::size_t low_water_ = 0;  // owner only: the fewest on free_ since the last trim()
  std::size_t takes_ = 0;      // owner only: take() calls since the last trim()
  // Frames freed by other threads. Pushed by them (release CAS), taken whole by the owner
  // (acquire exchange). Own cache line: remote frees must not bounce the owner's fields.
  alignas(sync::kCacheLine) sync::native::atomic<node*> remote_{nullptr};
  // The frames pushed on remote_ since the owner last took it: added (relaxed) by each push
  // after its CAS, exchanged to 0 (relaxed) by the owner after it takes the list. A hint for
  // I-POOL-4's count, never for memory: nothing orders a push's add with the owner's two
  // exchanges, so a push racing a take may be counted with one list and its frames taken with
  // another (short then long, or long then short). On remote_'s line, which the pusher has
  // just written.
  sync::native::atomic<std::size_t> remote_count_{0};
};

}  // namespace rt::memory
