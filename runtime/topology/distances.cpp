// Pure derivations over a NUMA distance matrix (docs/design/topology.md, I-TOPO-4 .. I-TOPO-7).
#include "topology/distances.hpp"

#include <algorithm>
#include <cstddef>
#include <string>

namespace rt::topo {
namespace {

std::size_t at(int i) { return static_cast<std::size_t>(i); }

}  // namespace

std::string matrix_check::reason() const {
  const std::string entry = "distance[" + std::to_string(from) + "][" + std::to_string(to) + "] is " + std::to_string(value);
  switch (verdict) {
    case matrix_verdict::ok:
      return "valid";
    case matrix_verdict::not_square:
      return "row " + std::to_string(from) + " has " + std::to_string(value) + " entries, the matrix is not square";
    case matrix_verdict::bad_diagonal:
      return entry + ", the local distance must be " + std::to_string(kLocalDistance);
    case matrix_verdict::bad_remote:
      return entry + ", remote distances must be " + std::to_string(kLocalDistance + 1) + ".." + std::to_string(kMaxDistance);
  }
  return "valid";
}

matrix_check check_matrix(const distance_matrix& d) {
  const int n = static_cast<int>(d.size());
  for (int i = 0; i < n; ++i) {
    if (static_cast<int>(d[at(i)].size()) != n) return {matrix_verdict::not_square, i, 0, static_cast<int>(d[at(i)].size())};
  }
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const int v = d[at(i)][at(j)];
      if (i == j && v != kLocalDistance) return {matrix_verdict::bad_diagonal, i, j, v};
      if (i != j && (v <= kLocalDistance || v > kMaxDistance)) return {matrix_verdict::bad_remote, i, j, v};
    }
  }
  return {};
}

distance_matrix default_matrix(int nodes) {
  distance_matrix d(at(nodes), std::vector<int>(at(nodes), kRemoteDistance));
  for (int i = 0; i < nodes; ++i) d[at(i)][at(i)] = kLocalDistance;
  return d;
}

std::vector<int> distinct_levels(const distance_matrix& d) {
  std::vector<int> levels;
  for (const auto& row : d) levels.insert(levels.end(), row.begin(), row.end());
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  return levels;
}

std::vector<std::vector<int>> hop_counts(const distance_matrix& d, const std::vector<int>& levels) {
  std::vector<std::vector<int>> hops(d.size());
  for (std::size_t a = 0; a < d.size(); ++a) {
    hops[a].resize(d[a].size());
    for (std::size_t b = 0; b < d[a].size(); ++b) {
      const auto it = std::lower_bound(levels.begin(), levels.end(), d[a][b]);
      hops[a][b] = a == b ? 0 : static_cast<int>(it - levels.begin());
    }
  }
  return hops;
}

topology_class classify(const distance_matrix& d, const std::vector<bool>& has_cores) {
  if (d.size() <= 1) return topology_class::uma;
  // Linux builds its NUMA levels and its maximum distance from the nodes that have CPUs only
  // (sched_init_numa, for_each_cpu_node_but): a memory-only node at a middle distance (CXL,
  // KNL MCDRAM, 128ia64's node P#16) neither adds a level nor serves as an intermediary.
  std::vector<int> cpu_nodes;
  for (std::size_t n = 0; n < d.size() && n < has_cores.size(); ++n) {
    if (has_cores[n]) cpu_nodes.push_back(static_cast<int>(n));
  }
  distance_matrix among;
  for (const int a : cpu_nodes) {
    std::vector<int> row;
    for (const int b : cpu_nodes) row.push_back(d[at(a)][at(b)]);
    among.push_back(std::move(row));
  }
  const std::vector<int> levels = distinct_levels(among);
  // Local plus one remote tier: every node is one hop from every other (or there is only one
  // node with CPUs), which Linux calls NUMA_DIRECT.
  if (levels.size() <= 2) return topology_class::direct;
  const int max = levels.back();
  // Like the kernel, judge by the first pair of CPU nodes found at the maximum distance: a mesh
  // has a CPU node closer than max to both ends (traffic hops through it); a backplane does not.
  for (std::size_t a = 0; a < among.size(); ++a) {
    for (std::size_t b = 0; b < among.size(); ++b) {
      if (among[a][b] < max) continue;
      for (std::size_t c = 0; c < among.size(); ++c) {
        if (among[a][c] < max && among[b][c] < max) return topology_class::glueless_mesh;
      }
      return topology_class::backplane;
    }
  }
  return topology_class::direct;
}

std::vector<std::vector<nearby_node>> nearby_lists(const distance_matrix& d, int max_distance) {
  std::vector<std::vector<nearby_node>> out(d.size());
  // The 002 review: the seed recomputed (max - d) / (max - LOCAL) with a 1000 scale for every
  // node inside every node loop (O(nodes^2) per placement, four times per migration check). The
  // lists are built once here with a power-of-two scale, so the balancer's nearby bonus is
  // faults * weight >> kNearbyScaleShift over a node's neighbours only, without a division.
  // A node at the maximum distance contributes nothing, so on a direct topology (one remote
  // tier) every list is empty: the "fully connected" test the review asked for, by construction.
  if (max_distance <= kLocalDistance) return out;
  const auto span = static_cast<std::uint32_t>(max_distance - kLocalDistance);
  for (std::size_t n = 0; n < d.size(); ++n) {
    for (std::size_t m = 0; m < d[n].size(); ++m) {
      const int dist = d[n][m];
      if (m == n || dist >= max_distance) continue;
      const auto closer = static_cast<std::uint32_t>(max_distance - dist);
      out[n].push_back({static_cast<int>(m), dist, (closer << kNearbyScaleShift) / span});
    }
    std::sort(out[n].begin(), out[n].end(), [](const nearby_node& x, const nearby_node& y) {
      return x.distance != y.distance ? x.distance < y.distance : x.node < y.node;
    });
  }
  return out;
}

}  // namespace rt::topo
