// rt::stats: a snapshot of the runtime's counters (runtime/stats/counters.def), per worker,
// per node and in total, with a few live signals beside them (node memory, worker load,
// groups). Counters are named; the set grows with the runtime, so look them up by name
// (counter_index) rather than by position.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace rt {

struct stats {
  std::vector<std::string> counter_names;             // one per counter, table order
  std::vector<std::string> counter_units;
  std::vector<std::vector<std::uint64_t>> per_worker;  // [worker][counter]
  std::vector<std::uint64_t> outside;                 // [counter] for threads that are not workers
  std::vector<int> worker_node;                        // logical node of each worker
  // Each worker's utilisation (0-1024) as the other workers see it at the snapshot: its last
  // published pelt signal aged to now, as busy or idle as the worker was when it published it,
  // and with UTIL_EST no less than its estimate (cpu_util(); the value the thieves' overload
  // rule reads, docs/design/stealing.md I-STEAL-16). Live runtimes only: empty in stats read
  // back from a stats file.
  std::vector<std::uint32_t> worker_util;
  // Each worker's avg_idle (ns): the EWMA of its idle stretches that SIS_PROP's scan depth
  // reads (docs/design/wake-path.md), capped at twice migration_cost_ns. Live runtimes only.
  std::vector<std::uint64_t> worker_avg_idle_ns;
  // Live bytes numa_alloc'd (and task frames) per logical node: each node's arena, shared by
  // every runtime of the process whose topology has that node.
  std::vector<std::uint64_t> node_memory_bytes;
  std::int64_t numa_scan_period_ms = 0;                // the balancer's period now
  // One row per live rt::group, kept by the NUMA balancer from the samples it drained (no cost
  // on the workers' paths): where the group is and how local its sampled accesses were.
  struct group_row {
    std::string name;
    std::string parent;                 // empty for a top-level group
    int preferred_node = -1;
    int home_node = -1;
    std::vector<int> active_nodes;
    std::uint64_t samples = 0;          // access samples charged to it
    std::uint64_t local_samples = 0;    // of which on the accessing worker's node
    std::uint64_t moves = 0;            // preferred-node changes by the balancer
    std::uint64_t pages_migrated = 0;
    // Its NUMA scan period (ms) as the last pass left it: started at numa_scan_period_min_ms by
    // the group's (or a member's) first registered region, adapted at once by that pass and by
    // every pass after from the group's own locality (2 x the minimum while it has no samples);
    // the balancer runs at the shortest of them. 0: no region yet. A member shows its parent's.
    std::int64_t scan_period_ms = 0;
  };
  std::vector<group_row> groups;
  std::string tunables;                                // describe() of the runtime's settings
  std::string topology;                                // topology source ("host", "xml:...")
  bool virtual_topology = false;

  // Index of a counter, or -1 when no counter has that name.
  int counter_index(const std::string& name) const;
  // Sum over all workers and outside threads; throws std::out_of_range for an unknown name.
  std::uint64_t total(const std::string& name) const;
  std::uint64_t worker(int w, const std::string& name) const;
  std::uint64_t node(int n, const std::string& name) const;
  int workers() const { return static_cast<int>(per_worker.size()); }
  // A table: one row per counter, columns total and per node; then node memory and groups.
  void print(std::ostream& os) const;
};

}  // namespace rt
