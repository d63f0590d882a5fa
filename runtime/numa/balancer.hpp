// The NUMA balancer thread (DESIGN.md §6, docs/design/numa-balancer.md, I-BAL-N): once per
// period it protects the next window of the registered regions (hinting faults), drains the
// workers' sample rings into per-group fault statistics, scores the groups with the pure
// policy (policy/numa_score.hpp) and hands the decisions to the scheduler, which moves the
// groups' homes. Pages that two consecutive samples show used from another node migrate there
// (host: hwloc; virtual-topology mode: the page's node tag, emulated).
//
// The balancer owns the group table and the per-worker rings; it knows groups only by opaque
// keys (the scheduler's detail::group_state*). What it needs from the scheduler goes through
// balancer_host.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/cpumask.hpp"
#include "numa/regions.hpp"
#include "numa/sample_ring.hpp"
#include "policy/layout.hpp"
#include "policy/numa_score.hpp"
#include "sync/atomics.hpp"
#include "sync/rwlock.hpp"
#include "topology/topology.hpp"
#include "tunables/tunables.hpp"

namespace rt::numa {

// The balancer's counters, by name in the runtime's counters table (stats/counters.def).
enum class balancer_event : std::uint8_t {
  pass,              // numa_passes
  period_skipped,    // numa_periods_skipped
  pages_protected,   // numa_pages_protected
  samples,           // numa_samples
  samples_dropped,   // numa_samples_dropped
  home_moved,        // numa_home_moves
  page_migrated,     // numa_pages_migrated
  member_swapped,    // numa_member_swaps
};

// Implemented by the scheduler (runtime/worker/). Called from the balancer thread only, with
// the group table locked shared, so every key passed is a live group.
class balancer_host {
 public:
  virtual ~balancer_host() = default;
  // Per node: the load of the work running there now (kCapacityScale per busy worker).
  virtual void node_loads(std::vector<std::uint64_t>& out) = 0;
  // The balancer's decision for a group (top-level or member): its preferred node (-1 none),
  // the score that chose it (its raw score, for the trace) and, for a top-level group, its
  // active nodes. Returns true when the preferred node changed.
  virtual bool apply(const void* key, int preferred, std::int64_t score, const core::cpumask* active) = 0;
  // `pages` pages of `key`'s region (one sampling block) moved from one node to another (host
  // or emulated).
  virtual void migrated(const void* key, int from, int to, std::uint64_t pages) = 0;
  // The periodic balance of the node injection queues (docs/design/stealing.md section 3),
  // once per period, after the groups' placement.
  virtual void balance_nodes() = 0;
  virtual void count(balancer_event e, std::uint64_t n) = 0;
  // Host only: move [page, page + bytes) to `node` (hwloc, HWLOC_MEMBIND_MIGRATE). False when
  // the system refused.
  virtual bool migrate_pages(std::uintptr_t page, std::size_t bytes, int node) = 0;
};

class balancer {
 public:
  // capacity: layout::node_capacity. Creates one sample ring per worker; starts no thread.
  balancer(const topo::topology& topo, std::span<const std::uint32_t> capacity, int workers,
           const tun::settings& settings, region_registry& regions, balancer_host& host);
  ~balancer();
  balancer(const balancer&) = delete;
  balancer& operator=(const balancer&) = delete;

  sample_ring& ring(int worker) { return *rings_[static_cast<std::size_t>(worker)]; }

  // The group table (I-BAL-1): writers (group creation and destruction, any thread) take it
  // exclusively; the balancer's period takes it with a try-lock and skips when contended.
  void add_group(const void* key, const void* parent_key);
  void remove_group(const void* key);
  // `key` registered a region (any thread; waits for a writer of the table, like a stats
  // snapshot). At the first region of a top-level group or of any of its members, the next
  // pass starts the group's scan period at numa_scan_period_min_ms (I-NUMA-15), and that pass
  // runs now (at most one so brought forward every numa_scan_period_min_ms) rather than at the
  // end of a period that may have grown to numa_scan_period_max_ms (I-BAL-7).
  void note_region(const void* key);

  // Starts the thread (NUMA_BALANCING on), named `thread_name` (at most 15 bytes are kept) /
  // stops and joins it. Idempotent.
  void start(const std::string& thread_name);
  void stop() noexcept;

  // One period, on the calling thread (the thread's loop calls it; tests may too). Returns
  // false when it was skipped because the group table or the registry was contended.
  bool pass();

  // Per-group counters since the group was created (rt::stats::groups), kept by the balancer
  // thread from the samples it drained; no cost on the workers' paths.
  struct group_counters {
    std::uint64_t samples = 0;         // access samples charged to the group
    std::uint64_t local_samples = 0;   // of which the page was on the accessing worker's node
    std::uint64_t moves = 0;           // times the balancer changed its preferred node
    std::uint64_t pages_migrated = 0;  // its pages moved toward their users
    std::int64_t scan_period_ms = 0;   // its scan period (I-NUMA-15); 0: none (a member: its parent's)
  };
  // Calls f(key, parent_key, counters) for every group, holding the table shared (it waits for
  // a writer: a stats snapshot is not the balancer's period).
  template <class F>
  void for_each_group(F&& f) {
    sync::shared_guard lk(groups_lock_);
    for (const auto& e : groups_) f(e->key, e->parent_key, e->totals.read());
  }

  // Groups' scan period now (ms), for stats and the example's period lines.
  std::int64_t scan_period_ms() const noexcept { return period_ms_.load(sync::native::relaxed); }

 private:
  struct group_entry {
    const void* key;
    const void* parent_key;             // null: top-level
    policy::numa_faults faults;          // decayed (I-NUMA-1)
    policy::numa_faults period;          // this period's samples
    policy::numa_locality_counts counts; // this period's locality
    int node = -1;                       // the node last applied
    int preferred = -1;                  // the preferred node of the last pass (the pull)
    // Set by note_region() (any thread, the table held shared) on the top-level entry and on a
    // member's own, read by the pass (the table held shared): relaxed, a hint; a pass that
    // misses it is followed by another at once (wake_ still differs, I-BAL-7).
    sync::native::atomic<bool> has_region{false};
    core::cpumask active;                // its (a member: its parent's) active nodes, last pass
    // Written by the balancer thread during its period (which holds the table shared, like a
    // stats snapshot), read by snapshots: relaxed atomics, figures with no ordering.
    struct live_counters {
      sync::native::atomic<std::uint64_t> samples{0}, local_samples{0}, moves{0}, pages_migrated{0};
      // A top-level group's own scan period (I-NUMA-15), the pass's input and output; a
      // member's shows its parent's (and is where it starts if it outlives its parent). 0: none.
      sync::native::atomic<std::int64_t> scan_period_ms{0};
      static void bump(sync::native::atomic<std::uint64_t>& c, std::uint64_t n = 1) noexcept {
        c.store(c.load(sync::native::relaxed) + n, sync::native::relaxed);  // one writer
      }
      group_counters read() const noexcept {
        return {samples.load(sync::native::relaxed), local_samples.load(sync::native::relaxed),
                moves.load(sync::native::relaxed), pages_migrated.load(sync::native::relaxed),
                scan_period_ms.load(sync::native::relaxed)};
      }
    } totals;
  };
  struct page_run {
    std::int16_t node = -1;              // node of the page's last sample
    std::int64_t count = 0;              // consecutive samples from that node
  };
  void run();
  void drain(std::vector<std::uint64_t>& busy);
  void note_sample(const sample& s);
  void migrate_if_settled(const sample& s, group_entry& g);
  std::int64_t decision_score(const group_entry& g, int node) const;

  const topo::topology& topo_;
  const tun::settings& settings_;
  region_registry& regions_;
  balancer_host& host_;
  policy::numa_scorer scorer_;
  std::vector<std::unique_ptr<sample_ring>> rings_;
  sync::rwlock groups_lock_;
  std::vector<std::unique_ptr<group_entry>> groups_;               // guarded by groups_lock_
  std::unordered_map<const void*, group_entry*> by_key_;           // guarded by groups_lock_
  // Balancer thread only: the node of the last sample of each page (the two-stage filter).
  std::unordered_map<std::uintptr_t, page_run> last_node_;
  std::uint64_t dropped_seen_ = 0;
  // Balancer thread only: whether the period under way has counted a skipped period already.
  bool skip_counted_ = false;
  // Written by the balancer thread (relaxed), read by stats: a figure, no ordering.
  sync::native::atomic<std::int64_t> period_ms_;
  // 1 asks the thread to stop. Written by stop() (release, before its increment of wake_),
  // read by the thread (acquire) after each read of wake_.
  sync::native::atomic<std::uint32_t> stop_{0};
  // The thread's futex word (I-BAL-7): incremented (release) by stop() and by a top-level
  // group's first region (note_region()), then woken; the thread reads it (acquire) before it
  // tests stop_ and before each pass, and waits for it to change from the value read.
  sync::native::atomic<std::uint32_t> wake_{0};
  std::thread thread_;
};

}  // namespace rt::numa
