// Periodic balance of the node injection queues (docs/design/stealing.md §3): when one node
// has more work than it can run and another has idle workers, the balancer moves part of the
// overloaded node's queued tasks to the idle node's queue. The candidate tasks then go
// through the steal filter with balance_kind::periodic (locality.hpp), so a task that would
// leave its group's preferred node is refused (I-STEAL-7).
//
// The arithmetic is the kernel's NUMA-domain load balance in integers: loads are compared per
// unit of capacity by cross-multiplication, with the domain's imbalance_pct
// (`100 * busiest_load * idlest_cap > imbalance_pct * idlest_load * busiest_cap`), and at
// most half the imbalance moves, so that two nodes cannot trade the same tasks back and
// forth. Pure: no threads, no atomics, no clocks.
#pragma once

#include <cstdint>
#include <span>

namespace rt::policy {

enum class node_balance_outcome : std::uint8_t {
  move,                  // move `tasks` queued tasks from `busiest` to `idlest`
  nothing_queued,        // no node has a queued task
  not_overloaded,        // the busiest node with queued tasks runs within its capacity
  no_idle_capacity,      // no other node has a whole worker of idle capacity
  within_imbalance_pct,  // the per-capacity loads differ by no more than imbalance_pct
  below_one_task,        // half the imbalance is less than one task's load
};

const char* to_string(node_balance_outcome o);

struct node_balance_decision {
  node_balance_outcome outcome = node_balance_outcome::nothing_queued;
  int busiest = -1;         // logical node; set for every outcome after nothing_queued
  int idlest = -1;          // logical node; set for within_imbalance_pct, below_one_task, move
  std::uint64_t tasks = 0;  // > 0 exactly when outcome == move
};

// queued[n]: tasks waiting in node n's injection queue; running_load[n]: node n's running
// load (kCapacityScale per fully busy worker); capacity[n]: layout::node_capacity[n] (0 for
// a node without workers). All three spans have one entry per logical node (I-STEAL-11).
// imbalance_pct: the NUMA domain's, tun::tunables::imbalance_pct_numa (>= 100).
//
// A node's load L = running_load + kCapacityScale * queued: a queued task wants a whole
// worker. C is its capacity. All products are computed exactly (128-bit), nothing overflows.
//
//   busiest: among nodes with queued tasks, the highest load per capacity (a node without
//            workers but with queued tasks counts as infinitely loaded); ties: higher load,
//            then lower index. Must be overloaded: load > capacity.
//   idlest:  among the other nodes with at least kCapacityScale of idle capacity
//            (capacity - load), the lowest load per capacity; ties: lower index.
//   move when 100 * L_b * C_i > imbalance_pct * L_i * C_b, as many tasks as the least of
//            (L_b * C_i - L_i * C_b) / (C_b + C_i) / kCapacityScale  (half the imbalance
//                                                                      when C_b == C_i),
//            queued[busiest], and (C_i - L_i) / kCapacityScale.
//   The first cap leaves the busiest node at least as loaded per capacity as the idlest
//   (no ping-pong); the last never fills the idlest node beyond its capacity (I-STEAL-12).
node_balance_decision decide_node_balance(std::span<const std::uint64_t> queued,
                                          std::span<const std::uint64_t> running_load,
                                          std::span<const std::uint32_t> capacity, std::int64_t imbalance_pct);

}  // namespace rt::policy
