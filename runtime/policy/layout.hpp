// The worker layout: which worker sits on which core, LLC, node and package.
// Pure data derived once from the topology and the list of cores that received a worker;
// every policy function indexes workers by worker id (0..workers-1), never by core or PU.
#pragma once

#include <cstdint>
#include <vector>

#include "core/cpumask.hpp"
#include "topology/topology.hpp"

namespace rt::policy {

// Capacity of one worker, like the kernel's SCHED_CAPACITY_SCALE.
inline constexpr std::uint32_t kCapacityScale = 1024;

struct worker_place {
  int core = 0;      // index into topology::cores
  int llc = 0;       // index into topology::llcs
  int node = 0;      // logical NUMA node
  int package = 0;   // logical package (0 when the machine has none)
};

struct layout {
  const topo::topology* topo = nullptr;
  std::vector<worker_place> workers;        // by worker id
  std::vector<core::cpumask> llc_workers;   // by llc index: worker ids in that LLC
  std::vector<core::cpumask> node_workers;  // by logical node: worker ids on that node
  std::vector<std::uint32_t> node_capacity; // by node: kCapacityScale * workers on the node

  int worker_count() const { return static_cast<int>(workers.size()); }
  int node_count() const { return static_cast<int>(node_workers.size()); }
  bool share_llc(int a, int b) const { return workers[a].llc == workers[b].llc; }
  int node_of(int w) const { return workers[w].node; }
};

// Builds the layout for workers placed on `cores` (indexes into t.cores, one worker each,
// worker id = position in the vector). Several workers may share one core (oversubscribed
// virtual topologies); that is allowed and each still counts one kCapacityScale.
// Every index must name a core of t (I-LAYOUT-1, checked); `t` must outlive the layout.
layout make_layout(const topo::topology& t, const std::vector<int>& cores);

// The default placement: one worker per allowed core, socket by socket (topology order);
// with `workers` > 0, the first `workers` of a round-robin over nodes (round r takes the r-th
// allowed core of every node that has one) so that a partial pool still spreads across nodes;
// workers beyond the core count wrap around that round-robin. The chosen cores are returned
// sorted by core index, so worker ids follow topology order and the workers of one LLC have
// consecutive ids (the wrap scans of the wake path and the steal ladder then walk an LLC the
// way the kernel walks a sched-domain span); with workers == allowed cores the result equals
// workers == 0. Throws topo::topology_error when `workers` < 0 or no core is allowed.
std::vector<int> default_worker_cores(const topo::topology& t, int workers);

}  // namespace rt::policy
