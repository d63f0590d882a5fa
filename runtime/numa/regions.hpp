// Registered regions and their protected windows (docs/design/sampling.md; DESIGN.md §6
// steps 1-2; linux task_numa_work() / change_prot_numa(); seed 000 patch 4).
//
// A region is memory a group works on: [p, p + bytes) rounded out to whole pages, with the
// node of each page (the region's node when added, updated by set_node() when pages migrate).
// The balancer protects the next window of pages each period; the next touch of a protected
// page faults, the fault handler (fault_sampler.hpp) restores the protected pages of the
// page's block (the registry's block_pages, counted from the region's first page, like a
// transparent huge page under the kernel's hinting faults) and records one sample for the
// block (I-SAMPLE-13).
//
// Concurrency:
// * Each registry has a sync::rwlock. add/remove/remove_all take it exclusively;
//   protect_next_window takes it with try_lock_shared and skips the period when a writer holds
//   or waits for it (I-SAMPLE-1): no convoy of scans behind a registration.
// * The fault handler and note_access() never take a lock: they read an immutable snapshot of
//   every region of every registry in the process, published by the writers with an atomic
//   pointer and freed only after a grace period in which no reader can still hold it
//   (I-SAMPLE-2, I-SAMPLE-3).
// * A page's protection state is one atomic byte: open -> protected (scanner, before its
//   mprotect) -> restoring (the one handler that wins the page) -> open (after its mprotect)
//   (I-SAMPLE-4).
//
// Requirements on the user: regions are read-write memory (access is restored as
// PROT_READ|PROT_WRITE), are not mprotect-ed by anyone else while registered, and are
// unregistered before they are freed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "sync/atomics.hpp"
#include "sync/rwlock.hpp"

namespace rt::numa {

namespace detail {
struct region_state;
}  // namespace detail

// FAULT_SAMPLING on: `faults`. Off: `explicit_only`, where protect_next_window() protects
// nothing (returns scan_outcome::disabled) and the handler is never installed by this
// registry; note_access() samples work in both modes.
enum class sampling_mode : std::uint8_t { faults, explicit_only };

enum class scan_outcome : std::uint8_t {
  scanned,   // the window was walked; pages_protected pages of it are now protected
  skipped,   // the registry lock was contended: nothing done, counted in periods_skipped
  disabled,  // sampling_mode::explicit_only
};

struct scan_result {
  scan_outcome outcome;
  std::size_t pages_protected;  // pages newly protected (already protected ones are not counted)
  std::size_t pages_visited;    // pages of the window walked, protected or not
};

struct registry_counters {
  std::uint64_t periods_scanned = 0;
  std::uint64_t periods_skipped = 0;
  std::uint64_t pages_protected = 0;   // total over all scans
  std::uint64_t protect_failures = 0;  // mprotect(PROT_NONE) refused (memory freed while registered?)
  std::size_t regions = 0;
  std::size_t pages = 0;
};

class region_registry {
 public:
  // block_pages: pages per sampling block (tunable numa_sample_block_pages), at least 1;
  // throws std::invalid_argument for 0.
  explicit region_registry(sampling_mode mode = sampling_mode::faults, std::size_t block_pages = 1);
  // Removes every region of this registry, restoring access to its pages.
  ~region_registry();
  region_registry(const region_registry&) = delete;
  region_registry& operator=(const region_registry&) = delete;

  // Registers [p, p + bytes), rounded out to pages, as data of the group `key`, every page on
  // `node` (-1: unknown). Throws std::invalid_argument for an empty range, a null key, a node
  // outside [-1, 32767], or a range that overlaps (after rounding) a region of any registry
  // in the process; the message names both ranges.
  void add(const void* key, void* p, std::size_t bytes, int node);
  // Removes the region of `key` that was added at `p`, restoring PROT_READ|PROT_WRITE on all
  // of it. Throws std::invalid_argument when this registry has no such region. When it
  // returns, no fault handler touches the region any more (I-SAMPLE-3).
  void remove(const void* key, void* p);
  // Removes every region of `key` (a group that dies); returns how many.
  std::size_t remove_all(const void* key);

  // The balancer, once per period: protects the next `pages` pages of this registry's
  // regions, walking them round-robin from where the previous call stopped (like
  // mm->numa_scan_offset), at most once around. Installs the fault handler on first use and
  // keeps it first in the chain (fault_sampler.hpp). One scanner at a time per registry.
  scan_result protect_next_window(std::size_t pages);

  // The node of the `pages` pages from the page holding `p` (after a page migration), clipped
  // to the end of that page's region. False when `p` is in no region of this registry. Throws
  // std::invalid_argument for a node outside [-1, 32767].
  bool set_node(const void* p, std::size_t pages, int node);

  registry_counters counters() const;
  sampling_mode mode() const noexcept { return mode_; }
  std::size_t block_pages() const noexcept { return block_; }

  // The registry lock (I-SAMPLE-1): add/remove take it exclusively. A caller may hold it
  // exclusively to batch page-node updates against a scan; tests hold it to make a scan skip.
  sync::rwlock& lock() noexcept { return lock_; }

  // Fork child only, from the region directory's child handler while the child has no other
  // thread (I-SAMPLE-16): frees the lock of every registry in the process, which a parent
  // thread may have held at the fork (the balancer's scan shared, a writer exclusively while it
  // waited for the directory's writer mutex that the prepare handler held).
  static void release_locks_after_fork() noexcept;

 private:
  template <class Pick>
  std::size_t retire_locked(Pick pick);

  const sampling_mode mode_;
  const std::size_t page_;
  const std::size_t block_;
  sync::rwlock lock_;
  // Every registry of the process, linked at construction and unlinked at destruction, both
  // under the directory's writer mutex (regions.cpp); read by release_locks_after_fork().
  static region_registry* all_;
  region_registry* prev_ = nullptr;
  region_registry* next_ = nullptr;
  // Sorted by address. Written under lock_ exclusively and the directory's writer mutex (so a
  // fork child, which frees lock_, finds it whole: I-SAMPLE-16), read under lock_ shared.
  std::vector<std::unique_ptr<detail::region_state>> regions_;
  // The scan cursor: the next page address to visit. Written and read by the scanner only
  // (under lock_ shared; one scanner at a time), reset by writers under lock_ exclusively.
  std::uintptr_t cursor_ = 0;
  // Written by the scanner (relaxed), read by counters(); statistics, no ordering.
  sync::native::atomic<std::uint64_t> periods_scanned_{0};
  sync::native::atomic<std::uint64_t> periods_skipped_{0};
  sync::native::atomic<std::uint64_t> pages_protected_{0};
  sync::native::atomic<std::uint64_t> protect_failures_{0};
};

// What an explicit sample did.
enum class access_result : std::uint8_t {
  sampled,        // pushed into the calling thread's ring
  dropped,        // the ring was full or busy (counted by the ring)
  no_context,     // the calling thread is not a worker (no enter_sampling)
  not_in_region,  // p is in no registered region
};

// An explicit access sample (rt::note_access): the running task of the calling worker touched
// `p`; the sample stands for p's block, as a fault's does. Same lookup as the fault handler,
// no mprotect, no lock. Async-signal-safe.
access_result note_access(const void* p) noexcept;

// The node recorded for the page holding `p`, or kNotInRegion outside every region.
inline constexpr int kNotInRegion = INT32_MIN;
int page_node(const void* p) noexcept;

namespace detail {
// What the fault handler's lookup found (I-SAMPLE-4).
enum class fault_outcome : std::uint8_t {
  sampled,         // our protected page: its block restored, sample pushed
  dropped,         // restored, the ring dropped the sample
  no_context,      // restored, the thread has no context: no sample
  restore_failed,  // our protected page, but mprotect refused to restore it
  in_progress,     // another thread is restoring this page: return and retry
  not_ours,        // not a protected page of any region
};
// Async-signal-safe: no lock, no allocation.
fault_outcome take_fault(std::uintptr_t addr) noexcept;
// Grows with every publication of a new snapshot (add/remove) and every restore a handler
// wins: the handler's retry rule (I-SAMPLE-10) tells a fault that raced a removal, or a
// restore by another thread, from a real one.
std::uint64_t retry_generation() noexcept;
// Whether the calling thread's read sections count on a slot of its own (I-SAMPLE-15) rather
// than on a shared stripe (I-SAMPLE-14). For tests.
bool owns_reader_slot() noexcept;
}  // namespace detail

}  // namespace rt::numa
