// Node-local memory and the NUMA balancer's inputs (docs/design/numa-balancer.md,
// docs/design/memory.md).
//
// Memory: one jemalloc arena per node of the runtime's topology. On the host its pages are
// bound to the node; in virtual-topology mode (DESIGN.md §7) they are tagged with their
// virtual node, so that sampling, scoring and placement run as on the real machine.
//
// Regions: memory a group works on. The balancer samples accesses to registered regions
// (protected windows that fault on the next touch, or explicit note_access() calls), learns
// on which nodes each group's data lives and moves the group's work there.
#pragma once

#include <cstddef>
#include <limits>
#include <new>

#include "rt/group.hpp"

namespace rt {

class runtime;

// `bytes` from `node`'s arena of the calling worker's runtime, else of the default runtime;
// aligned to alignof(std::max_align_t) (page-aligned from one page up). Throws
// std::invalid_argument for a node the topology does not have, std::bad_alloc when out of
// memory. bytes == 0 gives a unique non-null pointer.
void* numa_alloc(std::size_t bytes, node_id node);
// Frees memory from numa_alloc (any runtime's; nullptr is ignored).
void numa_free(void* p) noexcept;

// The node the runtime placed `p` on: the node of its arena (virtual tag or host binding, as
// last migrated by the balancer), or node_id{} (-1) for memory numa_alloc did not give.
// Lock-free, and cheap after a thread's first call, which claims a reader slot for the thread
// (docs/design/sampling.md I-SAMPLE-15) and registers its release at thread exit: make that
// first call outside a signal handler.
node_id node_of(const void* p) noexcept;
// The logical node of the calling worker, or node_id{} on a thread that is not a worker.
node_id current_node() noexcept;

// A standard allocator over numa_alloc on one node.
template <class T>
struct node_allocator {
  using value_type = T;
  node_id node;
  explicit node_allocator(node_id n) noexcept : node(n) {}
  template <class U>
  node_allocator(const node_allocator<U>& o) noexcept : node(o.node) {}
  T* allocate(std::size_t n) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(numa_alloc(n * sizeof(T), node));
  }
  void deallocate(T* p, std::size_t) noexcept { numa_free(p); }
  template <class U>
  friend bool operator==(const node_allocator& a, const node_allocator<U>& b) noexcept {
    return a.node == b.node;
  }
};

// Registers [p, p + bytes) as data of `g` for the balancer to sample. The range is rounded out
// to whole pages. Throws std::invalid_argument for an empty range or one that overlaps a
// registered region. Unregister before freeing the memory: a protected window of freed memory
// would fault in the next owner's hands.
void register_region(group& g, void* p, std::size_t bytes);
// Removes the region that starts at `p` (restoring access to any protected window). Throws
// std::invalid_argument when no region of `g` starts there.
void unregister_region(group& g, void* p);
// An explicit access sample: the running task of the calling worker (its group) touched `p`.
// Works with FAULT_SAMPLING off; ignored outside workers and for memory outside regions.
void note_access(const void* p) noexcept;

}  // namespace rt
