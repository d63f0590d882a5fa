// The steal ladder's victim order (docs/design/stealing.md; DESIGN.md §5).
//
// An idle worker looks for work nearest first: the workers that share its LLC, then the other
// workers of its NUMA node, then the other nodes one distance tier at a time, nearest tier
// first — the order in which the kernel's idle balancing walks the sched-domain hierarchy
// (SMT/MC, then NUMA levels by node_distance()). Inside a tier the walk starts at a random
// victim and wraps, so that thieves of one tier do not all hit the same victim first (the
// reason for for_each_cpu_wrap, seed 000 patch 2).
//
// The plan is computed once per worker at start (I-STEAL-4): the ladder in worker/ only does
// index arithmetic on it. Pure: no threads, no atomics, no clocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "policy/layout.hpp"

namespace rt::policy {

// Which rung of the ladder a tier is.
enum class steal_level : std::uint8_t {
  llc,     // workers that share the thief's LLC
  node,    // the other workers of the thief's node (other LLCs of the node)
  remote,  // the workers of the nodes at one remote distance from the thief's node
};

const char* to_string(steal_level l);

struct steal_tier {
  steal_level level = steal_level::llc;
  // topo::topology::distance[thief node][n] for every node n of this tier. The llc and node
  // tiers carry the thief's local distance (an LLC spanning two nodes still counts as llc).
  int distance = 0;
  std::vector<int> nodes;    // logical nodes the victims live on, ascending
  std::vector<int> victims;  // worker ids, ascending; never empty, never the thief (I-STEAL-1)
};

struct steal_plan {
  int worker = 0;
  int node = 0;  // the thief's logical node
  // llc tier, node tier, then remote tiers by strictly increasing distance; a tier without
  // victims is omitted, so every worker other than the thief appears exactly once (I-STEAL-1).
  std::vector<steal_tier> tiers;
  // Every logical node once, for batch steals from node injection queues: the thief's node
  // first, then the others by increasing distance from it, ties by logical index. Nodes
  // without workers are included: nobody local drains their queues (I-STEAL-1).
  std::vector<int> injection_order;

  std::size_t victim_count() const;
};

// The plan of worker `worker` (0 <= worker < l.worker_count()). Requires l.topo.
steal_plan make_steal_plan(const layout& l, int worker);

// One plan per worker, index = worker id.
std::vector<steal_plan> make_steal_plans(const layout& l);

// The i-th victim of a wrap walk over `t` that starts at position `start`:
// victims[(start + i) mod size]. `start` may be any value (the ladder passes a random number);
// for i = 0 .. size-1 the walk visits every victim of the tier exactly once (I-STEAL-3).
// Requires i < t.victims.size().
int victim_at(const steal_tier& t, std::uint64_t start, std::size_t i);

// I-STEAL-19 (feature DELEGATE_REMOTE_WORK): a searcher of a node that some group prefers
// leaves the work it finds on other nodes to a sleeper of a node that no group prefers, so that
// its own node's workers stay free for the tasks that may only run well there. The candidates,
// nearest first: the plan's remote tiers in order, victims ascending inside a tier (the llc
// and node tiers are the searcher's own node). For each candidate the view shows idle and on a
// node no group prefers, calls try_wake(w) until one returns true, and returns that worker;
// -1 when no group prefers the plan's node or no candidate was woken (the searcher then takes
// the work itself). The view:
//   bool idle(int w)            w is parked (a hint: try_wake takes the registration or fails)
//   int  node_of(int w)         w's logical node
//   bool node_preferred(int n)  some live group prefers node n
template <class V, class F>
int delegate_remote_work(const steal_plan& plan, const V& view, F&& try_wake) {
  if (!view.node_preferred(plan.node)) return -1;
  for (const steal_tier& t : plan.tiers) {
    if (t.level != steal_level::remote) continue;
    for (const int w : t.victims)
      if (view.idle(w) && !view.node_preferred(view.node_of(w)) && try_wake(w)) return w;
  }
  return -1;
}

}  // namespace rt::policy
