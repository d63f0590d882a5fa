#include "policy/layout.hpp"

#include <algorithm>
#include <cstddef>
#include <string>

#include "core/assert.hpp"

namespace rt::policy {

layout make_layout(const topo::topology& t, const std::vector<int>& cores) {
  layout l;
  l.topo = &t;
  const std::size_t n = cores.size();
  l.workers.reserve(n);
  l.llc_workers.assign(t.llcs.size(), core::cpumask(n));
  l.node_workers.assign(static_cast<std::size_t>(t.node_count()), core::cpumask(n));
  l.node_capacity.assign(static_cast<std::size_t>(t.node_count()), 0);

  for (std::size_t w = 0; w < n; ++w) {
    const int c = cores[w];
    RT_ASSERT(c >= 0 && c < t.core_count(), "I-LAYOUT-1", "make_layout: core index out of range");
    const topo::core& cr = t.cores[static_cast<std::size_t>(c)];
    RT_ASSERT(cr.llc >= 0 && static_cast<std::size_t>(cr.llc) < t.llcs.size(), "I-LAYOUT-1",
              "make_layout: core names an LLC the topology does not have");
    RT_ASSERT(cr.node >= 0 && cr.node < t.node_count(), "I-LAYOUT-1",
              "make_layout: core names a node the topology does not have");
    l.workers.push_back(worker_place{c, cr.llc, cr.node, cr.package});
    l.llc_workers[static_cast<std::size_t>(cr.llc)].set(w);
    l.node_workers[static_cast<std::size_t>(cr.node)].set(w);
    l.node_capacity[static_cast<std::size_t>(cr.node)] += kCapacityScale;
  }
  return l;
}

std::vector<int> default_worker_cores(const topo::topology& t, int workers) {
  if (workers < 0) {
    throw topo::topology_error(t.source_desc + ": worker count " + std::to_string(workers) +
                               " is negative");
  }

  // Allowed cores per node, each list in core (topology) order.
  std::vector<std::vector<int>> per_node(static_cast<std::size_t>(t.node_count()));
  std::vector<int> allowed;
  for (const topo::core& c : t.cores) {
    if (!c.allowed) continue;
    RT_ASSERT(c.node >= 0 && c.node < t.node_count(), "I-LAYOUT-1",
              "default_worker_cores: core names a node the topology does not have");
    per_node[static_cast<std::size_t>(c.node)].push_back(c.index);
    allowed.push_back(c.index);
  }
  if (allowed.empty()) {
    throw topo::topology_error(t.source_desc + ": no core is in the process's allowed cpuset");
  }
  if (workers == 0) return allowed;

  // Round-robin over nodes: round r takes the r-th allowed core of every node that has one.
  std::vector<int> round_robin;
  round_robin.reserve(allowed.size());
  for (std::size_t r = 0; round_robin.size() < allowed.size(); ++r) {
    for (const std::vector<int>& node_cores : per_node) {
      if (r < node_cores.size()) round_robin.push_back(node_cores[r]);
    }
  }

  std::vector<int> chosen;
  chosen.reserve(static_cast<std::size_t>(workers));
  for (std::size_t i = 0; i < static_cast<std::size_t>(workers); ++i) {
    chosen.push_back(round_robin[i % round_robin.size()]);
  }
  std::stable_sort(chosen.begin(), chosen.end());
  return chosen;
}

}  // namespace rt::policy
