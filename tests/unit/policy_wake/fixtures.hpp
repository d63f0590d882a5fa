// Shared fixtures of the wake-path tests: real topologies, a hand-built one, and a table-backed
// view (the state the mechanism would read from its atomics) that records what was read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "policy/layout.hpp"
#include "topology/topology.hpp"
#include "tunables/tunables.hpp"

namespace rt::policy::test {

// 4x Opteron 6272: 8 nodes (one L3 each), 8 single-PU cores per node; core 8n+i is on node n
// and L3 n (lstopo-no-graphics -i 64amd64-4p2n4ca2co.xml).
inline const topo::topology& opteron() {
  static const topo::topology t = topo::topology::load(
      topo::source::parse(std::string("xml:") + NUMART_TOPOLOGY_DIR + "/64amd64-4p2n4ca2co.xml"));
  return t;
}

// Built by hand, no hwloc: node 0 holds LLC 0 (cores 0-3); node 1 holds LLC 1 (cores 4, 5) and
// LLC 2 (cores 6, 7), core 5 outside the allowed cpuset; node 2 has memory but no CPU.
// Packages: cores 0-3 package 0, cores 4-7 package 1.
inline const topo::topology& hand_built() {
  static const topo::topology t = [] {
    topo::topology h;
    h.source_desc = "hand-built";
    h.packages = 2;
    h.pus = 8;
    for (int n = 0; n < 3; ++n) {
      topo::numa_node node;
      node.logical = n;
      node.os_index = static_cast<unsigned>(n);
      node.cpuless = n == 2;
      h.nodes.push_back(node);
    }
    const int llc_of[8] = {0, 0, 0, 0, 1, 1, 2, 2};
    for (int c = 0; c < 8; ++c) {
      topo::core core;
      core.index = c;
      core.package = c < 4 ? 0 : 1;
      core.node = c < 4 ? 0 : 1;
      core.llc = llc_of[c];
      core.pus = {static_cast<unsigned>(c)};
      core.allowed = c != 5;
      h.cores.push_back(core);
      h.nodes[static_cast<std::size_t>(core.node)].pus.push_back(static_cast<unsigned>(c));
    }
    for (int k = 0; k < 3; ++k) {
      topo::llc_domain d;
      d.index = k;
      d.node = k == 0 ? 0 : 1;
      for (int c = 0; c < 8; ++c) {
        if (llc_of[c] == k) d.cores.push_back(c);
      }
      h.llcs.push_back(d);
    }
    h.distance = {{10, 20, 20}, {20, 10, 20}, {20, 20, 10}};
    return h;
  }();
  return t;
}

// The view over tables. Every idle() read is recorded in order (the scan order), every
// node_load() read counted (the share-cache shortcut must not do load arithmetic).
struct table_view {
  std::vector<bool> idle_flags;            // by worker
  std::vector<std::uint64_t> avg_idle;     // by worker, ns
  std::vector<std::uint32_t> utils;        // by worker
  std::vector<std::uint32_t> util_ests;    // by worker
  std::vector<std::uint64_t> scan_cost;    // by LLC, ns
  std::vector<int> nr_scan;                // by LLC
  std::vector<std::uint64_t> node_loads;   // by node
  mutable std::vector<int> idle_reads;
  mutable int node_load_reads = 0;

  explicit table_view(const layout& l)
      : idle_flags(static_cast<std::size_t>(l.worker_count()), false),
        avg_idle(static_cast<std::size_t>(l.worker_count()), 0),
        utils(static_cast<std::size_t>(l.worker_count()), 0),
        util_ests(static_cast<std::size_t>(l.worker_count()), 0),
        scan_cost(l.llc_workers.size(), 0),
        nr_scan(l.llc_workers.size(), 0),
        node_loads(static_cast<std::size_t>(l.node_count()), 0) {}

  bool idle(int w) const {
    idle_reads.push_back(w);
    return idle_flags.at(static_cast<std::size_t>(w));
  }
  std::uint64_t avg_idle_ns(int w) const { return avg_idle.at(static_cast<std::size_t>(w)); }
  std::uint32_t util(int w) const { return utils.at(static_cast<std::size_t>(w)); }
  std::uint32_t util_est(int w) const { return util_ests.at(static_cast<std::size_t>(w)); }
  std::uint64_t avg_scan_cost_ns(int llc) const { return scan_cost.at(static_cast<std::size_t>(llc)); }
  int nr_idle_scan(int llc) const { return nr_scan.at(static_cast<std::size_t>(llc)); }
  std::uint64_t node_load(int n) const {
    ++node_load_reads;
    return node_loads.at(static_cast<std::size_t>(n));
  }

  void set_idle(std::initializer_list<int> ws) {
    for (const int w : ws) idle_flags.at(static_cast<std::size_t>(w)) = true;
  }
};

}  // namespace rt::policy::test
