// The topology data model: the machine as the scheduler sees it (DESIGN.md §1, §7).
// Plain data after load; policy/ reads it, never hwloc. Everything is indexed by *logical*
// index (hwloc's logical order); OS indexes are kept beside for printing and binding.
// What is computed and why, and the invariants I-TOPO-N cited below: docs/design/topology.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "rt/error.hpp"

struct hwloc_topology;  // hwloc's handle type (hwloc_topology_t is `hwloc_topology*`)

namespace rt::topo {

// Thrown for any bad topology input; what() is one line naming the input and the reason.
class topology_error : public rt::config_error {
 public:
  using rt::config_error::config_error;
};

// Where a topology comes from. Parsed from RT_TOPOLOGY / the CLI:
//   "host" | "xml:PATH" | "synthetic:STR" with an optional ";distances:10,20,20,10" suffix
//   (row-major, nodes x nodes, logical order). The suffix is only accepted after synthetic:
//   (an xml: path is taken verbatim, `;` included). The matrix must be SLIT-like: 10 on the
//   diagonal, 11..255 elsewhere (I-TOPO-4); its length is checked against the node count at load.
struct source {
  enum class kind { host, xml, synthetic };
  kind what = kind::host;
  std::string text;                 // path for xml, description for synthetic
  std::vector<int> distances;       // optional matrix for synthetic, row-major
  static source parse(const std::string& spec);  // throws topology_error
  std::string describe() const;     // "host", "xml:PATH", "synthetic:STR[;distances:...]";
                                    // parse(describe()) gives the same source back
};

// Upstream Linux's sched_numa_topology_type (kernel/sched/topology.c, after the 002 series).
enum class topology_class { uma, direct, glueless_mesh, backplane };
const char* to_string(topology_class c);

struct numa_node {
  int logical = 0;                  // logical index = position in topology::nodes
  unsigned os_index = 0;
  std::vector<unsigned> pus;        // PU OS indexes, ascending: the PUs of this node's cores
                                    // (each PU belongs to exactly one node, I-TOPO-2)
  std::uint64_t memory_bytes = 0;   // local memory (0 when unknown)
  bool cpuless = false;             // no core belongs to this node (memory-only, like Linux's
                                    // N_MEMORY-without-N_CPU nodes; KNL MCDRAM, CXL, HBM)
  std::vector<int> cores;           // indexes into topology::cores, ascending
};

struct core {
  int index = 0;                    // position in topology::cores (logical core order)
  int package = 0;                  // logical package index (0 when the machine has none)
  int node = 0;                     // logical NUMA node index
  int llc = 0;                      // index in topology::llcs
  std::vector<unsigned> pus;        // PU OS indexes of this core
  bool allowed = true;              // at least one PU in allowed_pus
};

struct llc_domain {
  int index = 0;
  int node = 0;                     // logical NUMA node containing it: a cache shared by several
                                    // nodes (SNC, Cluster-on-Die) is split per node (I-TOPO-3)
  std::vector<int> cores;           // indexes into topology::cores, ascending
};

// A node's neighbour closer than the maximum distance (002 review: precomputed at load).
struct nearby_node {
  int node = 0;                     // logical node index
  int distance = 0;
  std::uint32_t weight = 0;         // (max - d) scaled so that (max - LOCAL) == kNearbyScale
};

inline constexpr int kLocalDistance = 10;
inline constexpr int kRemoteDistance = 20;          // used when no matrix exists
inline constexpr int kMaxDistance = 255;            // ACPI SLIT entries are one byte (I-TOPO-4)
inline constexpr std::uint32_t kNearbyScaleShift = 10;
inline constexpr std::uint32_t kNearbyScale = 1u << kNearbyScaleShift;

class topology {
 public:
  static topology load(const source& src);  // throws topology_error
  topology();
  ~topology();
  topology(topology&&) noexcept;
  topology& operator=(topology&&) noexcept;

  std::string source_desc;          // source::describe()
  bool is_host = false;             // hwloc_topology_is_thissystem()
  int packages = 0;                 // may be 0 (no Package objects)
  int pus = 0;                      // all PUs of the topology (host: within the CPU binding)
  std::vector<numa_node> nodes;     // logical order
  std::vector<core> cores;          // logical core order (socket by socket)
  std::vector<llc_domain> llcs;
  std::vector<std::vector<int>> distance;   // [from][to], logical order; 10/20 when absent
  bool has_distance_matrix = false;
  std::vector<int> distance_levels; // sorted distinct values, LOCAL first
  int max_distance = kLocalDistance;
  std::vector<std::vector<int>> hops;       // [from][to]: 0 local, else rank of the distance level
  topology_class klass = topology_class::uma;  // over the nodes that have cores (I-TOPO-6)
  std::vector<std::vector<nearby_node>> nearby;  // per node, nodes with d < max, nearest first
  std::vector<unsigned> allowed_pus;        // PU OS indexes in the process's allowed cpuset
                                            // (host: hwloc's allowed set within the process's
                                            // CPU binding, to which the topology is restricted)
  std::vector<std::string> notes;           // one line each: fallbacks taken while loading

  int node_count() const { return static_cast<int>(nodes.size()); }
  int core_count() const { return static_cast<int>(cores.size()); }
  int node_distance(int a, int b) const { return distance[a][b]; }
  // Binds the calling thread to the PUs of `core_index` (host only). Returns false and binds
  // nothing on a topology that is not this machine (virtual-topology mode) or on failure.
  bool bind_current_thread(int core_index) const;
  // Binds [addr, addr + bytes) to logical node `node` and migrates the pages already there
  // (hwloc_set_area_membind, HWLOC_MEMBIND_MIGRATE; host only). False, with nothing changed,
  // in virtual-topology mode, for a bad node, or when the system refuses (no NUMA API).
  bool migrate_area(void* addr, std::size_t bytes, int node) const;
  // The loaded hwloc topology (owned by this object; valid while it lives, moved with it), for
  // the layers that bind memory (hwloc_set_area_membind). Null on a default-constructed object.
  hwloc_topology* native_handle() const;

 private:
  struct impl;                      // owns the hwloc handle
  std::unique_ptr<impl> impl_;
};

}  // namespace rt::topo
