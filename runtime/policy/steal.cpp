#include "policy/steal.hpp"

#include <algorithm>
#include <utility>

#include "core/assert.hpp"

namespace rt::policy {

const char* to_string(steal_level l) {
  switch (l) {
    case steal_level::llc:
      return "llc";
    case steal_level::node:
      return "node";
    case steal_level::remote:
      return "remote";
  }
  return "?";
}

std::size_t steal_plan::victim_count() const {
  std::size_t n = 0;
  for (const steal_tier& t : tiers) n += t.victims.size();
  return n;
}

namespace {

// Adds to `tier` every worker of `m` not yet placed in an earlier tier, and marks it placed.
void take_workers(const layout& l, const core::cpumask& m, std::vector<bool>& placed, steal_tier& tier) {
  m.for_each([&](std::size_t bit) {
    if (placed[bit]) return;
    placed[bit] = true;
    tier.victims.push_back(static_cast<int>(bit));
    const int node = l.node_of(static_cast<int>(bit));
    if (std::find(tier.nodes.begin(), tier.nodes.end(), node) == tier.nodes.end()) tier.nodes.push_back(node);
  });
}

void finish_tier(std::vector<steal_tier>& tiers, steal_tier&& tier) {
  if (tier.victims.empty()) return;
  std::sort(tier.victims.begin(), tier.victims.end());
  std::sort(tier.nodes.begin(), tier.nodes.end());
  tiers.push_back(std::move(tier));
}

}  // namespace

steal_plan make_steal_plan(const layout& l, int worker) {
  RT_ASSERT(l.topo != nullptr, "I-STEAL-1", "make_steal_plan needs the layout's topology");
  RT_ASSERT(worker >= 0 && worker < l.worker_count(), "I-STEAL-1", "make_steal_plan: worker id out of range");
  const topo::topology& t = *l.topo;
  const int nodes = t.node_count();
  RT_ASSERT(l.node_count() == nodes, "I-STEAL-1", "layout and topology disagree on the node count");

  const worker_place& me = l.workers[static_cast<std::size_t>(worker)];
  const std::vector<int>& row = t.distance[static_cast<std::size_t>(me.node)];
  const int local = row[static_cast<std::size_t>(me.node)];

  steal_plan plan;
  plan.worker = worker;
  plan.node = me.node;

  // placed[w]: w already belongs to a nearer tier (or is the thief), so that a worker is
  // listed once even when its LLC spans two nodes (I-STEAL-1).
  std::vector<bool> placed(static_cast<std::size_t>(l.worker_count()), false);
  placed[static_cast<std::size_t>(worker)] = true;

  // Rung 1: the LLC. Stealing there moves no data out of the shared cache, the reason the
  // kernel's wake path treats cpus_share_cache() as affine without load arithmetic (000 patch 6).
  steal_tier llc{steal_level::llc, local, {}, {}};
  take_workers(l, l.llc_workers[static_cast<std::size_t>(me.llc)], placed, llc);
  finish_tier(plan.tiers, std::move(llc));

  // Rung 2: the rest of the node: the cache is lost, local memory is kept.
  steal_tier node{steal_level::node, local, {}, {}};
  take_workers(l, l.node_workers[static_cast<std::size_t>(me.node)], placed, node);
  finish_tier(plan.tiers, std::move(node));

  // Rungs 3..: one tier per distinct remote distance, nearest first, like the kernel's NUMA
  // sched-domain levels (one per distance value, built from node_distance()).
  std::vector<int> remote_distances;
  for (int n = 0; n < nodes; ++n) {
    if (n != me.node) remote_distances.push_back(row[static_cast<std::size_t>(n)]);
  }
  std::sort(remote_distances.begin(), remote_distances.end());
  remote_distances.erase(std::unique(remote_distances.begin(), remote_distances.end()), remote_distances.end());
  for (const int d : remote_distances) {
    steal_tier tier{steal_level::remote, d, {}, {}};
    for (int n = 0; n < nodes; ++n) {
      if (n != me.node && row[static_cast<std::size_t>(n)] == d) {
        take_workers(l, l.node_workers[static_cast<std::size_t>(n)], placed, tier);
      }
    }
    finish_tier(plan.tiers, std::move(tier));
  }
  RT_ASSERT(plan.victim_count() + 1 == static_cast<std::size_t>(l.worker_count()), "I-STEAL-1",
            "steal plan does not list every other worker exactly once (inconsistent layout)");

  plan.injection_order.resize(static_cast<std::size_t>(nodes));
  for (int n = 0; n < nodes; ++n) plan.injection_order[static_cast<std::size_t>(n)] = n;
  std::stable_sort(plan.injection_order.begin(), plan.injection_order.end(), [&](int a, int b) {
    if ((a == me.node) != (b == me.node)) return a == me.node;
    return row[static_cast<std::size_t>(a)] < row[static_cast<std::size_t>(b)];
  });
  return plan;
}

std::vector<steal_plan> make_steal_plans(const layout& l) {
  std::vector<steal_plan> plans;
  plans.reserve(static_cast<std::size_t>(l.worker_count()));
  for (int w = 0; w < l.worker_count(); ++w) plans.push_back(make_steal_plan(l, w));
  return plans;
}

int victim_at(const steal_tier& t, std::uint64_t start, std::size_t i) {
  const std::size_t n = t.victims.size();
  RT_ASSERT(i < n, "I-STEAL-3", "victim_at: step beyond one full wrap of the tier");
  // Reduce start first so start + i cannot overflow.
  const std::size_t first = static_cast<std::size_t>(start % n);
  return t.victims[(first + i) % n];
}

}  // namespace rt::policy
