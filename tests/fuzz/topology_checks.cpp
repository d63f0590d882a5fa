#include "topology_checks.hpp"

#include <hwloc.h>
#include <stdlib.h>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "rt/error.hpp"
#include "topology/distances.hpp"

namespace numart_fuzz {
namespace {

using rt::topo::topology;

std::size_t at(int i) { return static_cast<std::size_t>(i); }

template <class T>
bool strictly_ascending(const std::vector<T>& v) {
  return std::adjacent_find(v.begin(), v.end(), [](const T& a, const T& b) { return !(a < b); }) == v.end();
}

bool in_range(int i, std::size_t size) { return i >= 0 && at(i) < size; }

// I-TOPO-2 and I-TOPO-3: cores, nodes and LLC domains index each other consistently, and every
// PU is in exactly one core (hence in exactly one node).
void check_cores(const topology& t, const std::string& desc) {
  require(t.node_count() >= 1, "a topology has at least one NUMA node", desc);
  require(t.core_count() >= 1, "a topology has at least one core", desc);
  require(!t.llcs.empty(), "a topology has at least one LLC domain", desc);
  std::vector<std::vector<int>> node_cores(t.nodes.size());
  std::vector<std::vector<unsigned>> node_pus(t.nodes.size());
  std::vector<std::vector<int>> llc_cores(t.llcs.size());
  std::vector<unsigned> all_pus;
  for (std::size_t c = 0; c < t.cores.size(); ++c) {
    const rt::topo::core& k = t.cores[c];
    require(at(k.index) == c, "cores[c].index == c", desc);
    require(in_range(k.node, t.nodes.size()), "a core's node is a valid logical node index", desc);
    require(in_range(k.llc, t.llcs.size()), "a core's LLC is a valid domain index", desc);
    require(k.package >= 0 && (t.packages == 0 ? k.package == 0 : k.package < t.packages), "a core's package is a valid logical package index", desc);
    require(!k.pus.empty() && strictly_ascending(k.pus), "a core has PUs, in ascending order", desc);
    require(t.llcs[at(k.llc)].node == k.node, "an LLC domain lies in its cores' node (I-TOPO-3)", desc);
    node_cores[at(k.node)].push_back(k.index);
    node_pus[at(k.node)].insert(node_pus[at(k.node)].end(), k.pus.begin(), k.pus.end());
    llc_cores[at(k.llc)].push_back(k.index);
    all_pus.insert(all_pus.end(), k.pus.begin(), k.pus.end());
    const bool allowed = std::any_of(k.pus.begin(), k.pus.end(), [&](unsigned pu) { return std::binary_search(t.allowed_pus.begin(), t.allowed_pus.end(), pu); });
    require(k.allowed == allowed, "a core is allowed exactly when one of its PUs is in allowed_pus", desc);
  }
  std::sort(all_pus.begin(), all_pus.end());
  require(strictly_ascending(all_pus), "every PU is in exactly one core (I-TOPO-2)", desc);
  require(all_pus.size() == static_cast<std::size_t>(t.pus), "the cores hold every PU of the topology", desc);
  require(strictly_ascending(t.allowed_pus), "allowed_pus is ascending without repeats", desc);
  for (std::size_t n = 0; n < t.nodes.size(); ++n) {
    const rt::topo::numa_node& node = t.nodes[n];
    require(at(node.logical) == n, "nodes[n].logical == n", desc);
    require(node.cores == node_cores[n], "a node lists exactly the cores that name it, ascending", desc);
    std::sort(node_pus[n].begin(), node_pus[n].end());
    require(node.pus == node_pus[n], "a node's PUs are exactly its cores' PUs (I-TOPO-2)", desc);
    require(node.cpuless == node.cores.empty(), "a node is cpuless exactly when no core belongs to it", desc);
  }
  for (std::size_t l = 0; l < t.llcs.size(); ++l) {
    require(at(t.llcs[l].index) == l, "llcs[l].index == l", desc);
    require(!t.llcs[l].cores.empty(), "an LLC domain has cores", desc);
    require(t.llcs[l].cores == llc_cores[l], "an LLC domain lists exactly the cores that name it, ascending", desc);
  }
}

// I-TOPO-1, I-TOPO-4 .. I-TOPO-7: the matrix is a square SLIT and what is derived from it agrees.
void check_distances(const topology& t, const rt::topo::source& src, const std::string& desc) {
  const std::size_t n = t.nodes.size();
  require(t.distance.size() == n, "the distance matrix has a row per node", desc);
  std::set<int> values;
  for (std::size_t a = 0; a < n; ++a) {
    require(t.distance[a].size() == n, "the distance matrix is square", desc);
    for (std::size_t b = 0; b < n; ++b) {
      const int d = t.distance[a][b];
      if (a == b) {
        require(d == rt::topo::kLocalDistance, "the diagonal is the local distance 10 (I-TOPO-4)", desc);
      } else {
        require(d > rt::topo::kLocalDistance && d <= rt::topo::kMaxDistance, "remote distances are 11..255 (I-TOPO-4)", desc);
      }
      values.insert(d);
    }
  }
  if (!t.has_distance_matrix) require(t.distance == rt::topo::default_matrix(t.node_count()), "without a matrix, distances are 10 local / 20 remote", desc);
  if (src.what == rt::topo::source::kind::synthetic) {
    std::vector<int> flat;
    for (const std::vector<int>& row : t.distance) flat.insert(flat.end(), row.begin(), row.end());
    if (src.distances.empty()) {
      require(!t.has_distance_matrix, "a synthetic topology without distances has no matrix", desc);
    } else {
      require(flat == src.distances, "a synthetic topology's matrix is the one given, row-major", desc);
    }
  }

  require(t.distance_levels == std::vector<int>(values.begin(), values.end()), "distance_levels are the matrix's distinct values, sorted (I-TOPO-5)", desc);
  require(t.distance_levels.front() == rt::topo::kLocalDistance && t.max_distance == t.distance_levels.back(), "levels start at 10 and end at max_distance", desc);
  require(t.hops.size() == n, "hops has a row per node", desc);
  for (std::size_t a = 0; a < n; ++a) {
    require(t.hops[a].size() == n, "hops is square", desc);
    for (std::size_t b = 0; b < n; ++b) {
      const int h = t.hops[a][b];
      if (a == b) {
        require(h == 0, "hops are 0 on the diagonal", desc);
      } else {
        require(h >= 1 && in_range(h, t.distance_levels.size()) && t.distance_levels[at(h)] == t.distance[a][b], "hops[a][b] is the level of distance[a][b]", desc);
      }
    }
  }
  require((t.klass == rt::topo::topology_class::uma) == (n == 1), "the class is uma exactly when there is one node (I-TOPO-6)", desc);

  require(t.nearby.size() == n, "nearby has a list per node", desc);
  for (std::size_t a = 0; a < n; ++a) {
    std::size_t closer = 0;
    for (std::size_t b = 0; b < n; ++b) closer += b != a && t.distance[a][b] < t.max_distance ? 1 : 0;
    require(t.nearby[a].size() == closer, "nearby[n] lists every node closer than max_distance (I-TOPO-7)", desc);
    for (std::size_t i = 0; i < t.nearby[a].size(); ++i) {
      const rt::topo::nearby_node& m = t.nearby[a][i];
      require(in_range(m.node, n) && at(m.node) != a, "a nearby node is another valid node", desc);
      require(m.distance == t.distance[a][at(m.node)] && m.distance < t.max_distance, "a nearby node's distance is the matrix's, below max", desc);
      require(m.weight >= 1 && m.weight < rt::topo::kNearbyScale, "nearby weights are in [1, kNearbyScale)", desc);
      if (i > 0) {
        const rt::topo::nearby_node& p = t.nearby[a][i - 1];
        require(p.distance < m.distance || (p.distance == m.distance && p.node < m.node), "nearby lists are nearest first, ties by index", desc);
      }
    }
  }
}

}  // namespace

void prepare_hwloc() {
  // Never destroyed, on purpose: destroying the last topology unloads hwloc's plugins, libxml2
  // with them, and what libxml2 keeps in its globals would be reported as leaked at exit.
  static hwloc_topology_t kept = nullptr;
  if (kept != nullptr) return;
  require(::setenv("HWLOC_HIDE_ERRORS", "2", 0) == 0, "HWLOC_HIDE_ERRORS can be set");
  require(hwloc_topology_init(&kept) == 0, "hwloc_topology_init succeeds");
}

void check_topology(const topology& t, const rt::topo::source& src) {
  const std::string desc = src.describe();
  require(t.source_desc == desc, "source_desc is the source's describe()", t.source_desc);
  require(t.is_host == (src.what == rt::topo::source::kind::host), "only the host source is this system", desc);
  check_cores(t, desc);
  // topology.cpp measures a synthetic description before hwloc builds it and refuses more than
  // 8192 PUs: a larger one that loads means the measure missed something hwloc reads.
  if (src.what == rt::topo::source::kind::synthetic) require(t.pus <= 8192, "a synthetic topology that loads has at most 8192 PUs", desc);
  check_distances(t, src, desc);
  for (const std::string& note : t.notes) require_one_line_message(note, "");
}

void load_and_check(const rt::topo::source& src) {
  std::optional<topology> t;
  try {
    t = topology::load(src);
  } catch (const rt::topo::topology_error& e) {
    require_one_line_message(e.what(), "topology '");
    return;
  } catch (const std::exception& e) {
    property_failed("topology::load throws only topo::topology_error", e.what());
  }
  check_topology(*t, src);
}

}  // namespace numart_fuzz
