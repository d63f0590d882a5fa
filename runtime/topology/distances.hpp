// What the topology layer derives from a NUMA distance matrix, as pure functions over plain
// matrices (no hwloc): validation, distance levels, hop counts, the topology class and the
// per-node nearby lists. topology::load calls these; tests call them on hand-made matrices.
// docs/design/topology.md, I-TOPO-4 .. I-TOPO-7.
#pragma once

#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace rt::topo {

using distance_matrix = std::vector<std::vector<int>>;  // [from][to], logical node order

enum class matrix_verdict { ok, not_square, bad_diagonal, bad_remote };

struct matrix_check {
  matrix_verdict verdict = matrix_verdict::ok;
  int from = 0;  // the first offending entry, row-major (meaningful unless verdict == ok)
  int to = 0;
  int value = 0;
  std::string reason() const;  // one phrase, e.g. "distance[0][1] is 10, must be 11..255"
};

// I-TOPO-4: square, kLocalDistance on the diagonal, kLocalDistance < d <= kMaxDistance elsewhere
// (the ACPI SLIT rules Linux enforces before it trusts a table).
matrix_check check_matrix(const distance_matrix& d);

// The matrix used when a topology has none: kLocalDistance on the diagonal, kRemoteDistance
// elsewhere (what Linux's node_distance() falls back to).
distance_matrix default_matrix(int nodes);

// I-TOPO-5: sorted distinct values of d (kLocalDistance first on a valid matrix).
std::vector<int> distinct_levels(const distance_matrix& d);

// I-TOPO-5: hops[a][b] = index of d[a][b] in `levels` (0 on the diagonal, 1 = nearest tier).
std::vector<std::vector<int>> hop_counts(const distance_matrix& d, const std::vector<int>& levels);

// I-TOPO-6: upstream Linux's init_numa_topology_type(), over the nodes with has_cores[n] true
// (for_each_cpu_node_but); a topology with a single node is uma.
topology_class classify(const distance_matrix& d, const std::vector<bool>& has_cores);

// I-TOPO-7: per node n, the nodes m != n with d[n][m] < max_distance, nearest first (ties by
// index), weight ((max - d) << kNearbyScaleShift) / (max - kLocalDistance).
std::vector<std::vector<nearby_node>> nearby_lists(const distance_matrix& d, int max_distance);

}  // namespace rt::topo
