#include "policy/node_balance.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/assert.hpp"
#include "policy/layout.hpp"

namespace rt::policy {

const char* to_string(node_balance_outcome o) {
  switch (o) {
    case node_balance_outcome::move:
      return "move";
    case node_balance_outcome::nothing_queued:
      return "nothing_queued";
    case node_balance_outcome::not_overloaded:
      return "not_overloaded";
    case node_balance_outcome::no_idle_capacity:
      return "no_idle_capacity";
    case node_balance_outcome::within_imbalance_pct:
      return "within_imbalance_pct";
    case node_balance_outcome::below_one_task:
      return "below_one_task";
  }
  return "?";
}

namespace {

// Loads reach 2^64 * kCapacityScale and are multiplied by capacities and percentages: exact
// only in 128 bits (g++ and clang++ both provide the type; __extension__ keeps -Wpedantic quiet).
__extension__ using wide = unsigned __int128;

struct node_state {
  wide load = 0;  // running + kCapacityScale * queued
  wide cap = 0;
};

// a carries more load per unit of capacity than b. A node without capacity but with load is
// more loaded than any node with capacity; two nodes without capacity compare by load.
bool more_loaded(const node_state& a, const node_state& b) {
  if (a.cap == 0 && b.cap == 0) return a.load > b.load;
  return a.load * b.cap > b.load * a.cap;
}

}  // namespace

node_balance_decision decide_node_balance(std::span<const std::uint64_t> queued,
                                          std::span<const std::uint64_t> running_load,
                                          std::span<const std::uint32_t> capacity, std::int64_t imbalance_pct) {
  RT_ASSERT(queued.size() == running_load.size() && queued.size() == capacity.size(), "I-STEAL-11",
            "decide_node_balance: per-node snapshots of different lengths");
  RT_ASSERT(imbalance_pct >= 100, "I-STEAL-12", "decide_node_balance: imbalance_pct below 100");
  const std::size_t nodes = queued.size();
  const wide scale = kCapacityScale;

  std::vector<node_state> st(nodes);
  for (std::size_t n = 0; n < nodes; ++n) {
    st[n].load = wide{running_load[n]} + scale * queued[n];
    st[n].cap = capacity[n];
  }

  node_balance_decision d;

  // Busiest: only a node with queued tasks has something the balancer can move.
  std::size_t b = nodes;
  for (std::size_t n = 0; n < nodes; ++n) {
    if (queued[n] == 0) continue;
    if (b == nodes || more_loaded(st[n], st[b]) || (!more_loaded(st[b], st[n]) && st[n].load > st[b].load)) b = n;
  }
  if (b == nodes) return d;
  d.busiest = static_cast<int>(b);
  if (st[b].load <= st[b].cap) {
    d.outcome = node_balance_outcome::not_overloaded;
    return d;
  }

  // Idlest: a node that can start at least one more task at once.
  std::size_t i = nodes;
  for (std::size_t n = 0; n < nodes; ++n) {
    if (n == b || st[n].cap == 0 || st[n].load + scale > st[n].cap) continue;
    if (i == nodes || more_loaded(st[i], st[n])) i = n;
  }
  if (i == nodes) {
    d.outcome = node_balance_outcome::no_idle_capacity;
    return d;
  }
  d.idlest = static_cast<int>(i);

  // The kernel's imbalance test, in integers: busiest per capacity above imbalance_pct
  // percent of idlest per capacity.
  const wide lb = st[b].load, cb = st[b].cap, li = st[i].load, ci = st[i].cap;
  const wide pct = static_cast<wide>(imbalance_pct);
  if (!(100 * lb * ci > pct * li * cb)) {
    d.outcome = node_balance_outcome::within_imbalance_pct;
    return d;
  }

  // The load that equalises both nodes per capacity; (L_b - L_i) / 2 when C_b == C_i.
  const wide equalise = (lb * ci - li * cb) / (cb + ci);
  const wide tasks = std::min({equalise / scale, wide{queued[b]}, (ci - li) / scale});
  if (tasks == 0) {
    d.outcome = node_balance_outcome::below_one_task;
    return d;
  }
  d.outcome = node_balance_outcome::move;
  d.tasks = static_cast<std::uint64_t>(tasks);  // <= queued[b], fits
  return d;
}

}  // namespace rt::policy
