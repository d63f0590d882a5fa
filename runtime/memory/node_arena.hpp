// Node-local memory: one jemalloc arena per NUMA node (DESIGN.md §3, §7; docs/design/memory.md,
// docs/adr/0010-node-arenas.md).
//
// Arenas are process-lifetime (I-MEM-1): a process-wide table creates one the first time any
// runtime needs it, keyed by what its memory IS: on the host the OS NUMA node its pages are bound
// to, in virtual-topology mode the virtual logical node index it is tagged with. A node_arenas
// object maps one runtime's logical nodes to those arenas; it may die long before memory it
// handed out is freed, and free()/node_of() need no node_arenas at all.
//
// Every arena has custom extent hooks that wrap jemalloc's defaults: on the host they bind each
// new extent to the node (mbind, I-MEM-3), everywhere they record the extent's address range so
// that node_of() answers for any address, foreign ones included (I-MEM-4).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rt::topo {
class topology;
}

namespace rt::memory {

namespace detail {
struct arena_state;  // one per jemalloc arena, never freed (node_arena.cpp)
}

// One node arena. A copyable handle to process-lifetime state: valid forever once obtained.
class arena_ref {
 public:
  // `bytes` (> 0) aligned to `align` (a power of two) from this arena, bypassing the thread
  // cache (I-MEM-2). nullptr when out of memory. Thread-safe.
  void* allocate(std::size_t bytes, std::size_t align) const noexcept;
  // Frees `p`, which this arena gave (checked: I-MEM-5). Thread-safe.
  void deallocate(void* p) const noexcept;
  int node() const noexcept;        // the logical node tag node_of() reports
  unsigned jemalloc_index() const noexcept;

 private:
  friend class node_arenas;
  explicit arena_ref(detail::arena_state* s) noexcept : s_(s) {}
  detail::arena_state* s_;
};

class node_arenas {
 public:
  // The arenas of every node of `topo`, created on first use process-wide. The topology may be
  // destroyed afterwards. Throws rt::startup_error when jemalloc cannot create an arena.
  explicit node_arenas(const topo::topology& topo);
  node_arenas(const node_arenas&) = delete;
  node_arenas& operator=(const node_arenas&) = delete;

  int node_count() const noexcept { return static_cast<int>(arenas_.size()); }
  bool is_host() const noexcept { return host_; }

  // The arena of `logical_node`. Throws std::invalid_argument naming the node and the count.
  arena_ref arena(int logical_node) const;

  // `bytes` from `logical_node`'s arena: aligned to alignof(std::max_align_t), page-aligned from
  // one page up; bytes == 0 gives a unique non-null pointer. Throws std::invalid_argument for a
  // node the topology does not have, std::bad_alloc when out of memory.
  void* alloc(std::size_t bytes, int logical_node) const;
  // Frees memory from any node arena of any runtime, alive or gone; nullptr is ignored. A
  // pointer no node arena gave breaks I-MEM-5 (abort with a message).
  static void free(void* p) noexcept;
  // Frees `p` when it lies in node-arena memory and returns true; returns false (and does
  // nothing) for any other pointer, so a caller can hand it to its own allocator.
  static bool free_if_owned(void* p) noexcept;
  // The logical node tag of the arena whose memory holds `p`, or -1 for any address no node
  // arena ever obtained (malloc'd, stack, static, null). Answers for base and interior pointers
  // of every size class (I-MEM-4).
  static int node_of(const void* p) noexcept;

  // Live bytes (jemalloc usable sizes) allocated from `logical_node`'s arena, by every runtime
  // of the process that shares that arena (I-MEM-6).
  std::uint64_t bytes(int logical_node) const;
  // True when the arena's pages are really bound to its node: host topology, at least one
  // extent bound and none left unbound by a failed bind (I-MEM-3).
  bool bound(int logical_node) const;

 private:
  detail::arena_state* at(int logical_node) const;
  std::vector<detail::arena_state*> arenas_;  // by logical node, process-lifetime entries
  bool host_ = false;
};

// Process-wide binding outcome, for diagnostics and tests: extents bound / left unbound on
// host arenas since the process started.
struct binding_counts {
  std::uint64_t bound_extents = 0;
  std::uint64_t unbound_extents = 0;
};
binding_counts binding_totals() noexcept;

}  // namespace rt::memory
