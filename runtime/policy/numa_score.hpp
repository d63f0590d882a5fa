// The NUMA balancer's policy: node scores per group, the preferred node, the active node set,
// member placement, the capacity check and the scan period (docs/design/numa-scoring.md, seed
// 002 and the kernel functions it touches: task_numa_placement, score_nearby_nodes,
// task_weight/group_weight, preferred_group_nid, numa_group_count_active_nodes,
// update_task_scan_period).
//
// The mechanism (runtime/numa/balancer) folds each period's samples into numa_faults
// (numa_fold_period), fills a numa_pass_input and calls balance_pass(); it applies the result.
// Groups are two-level: a top-level group (the kernel's numa_group, a "JVM") and its members
// (the kernel's tasks of that numa_group, a warehouse). A group without members is scored alone.
//
// Integer arithmetic with power-of-two scales (the review of 002 patch 2): node weights are
// shares of kNumaScoreScale, nearby nodes add faults * weight >> kNearbyScaleShift from the
// lists precomputed at topology load (I-TOPO-7), so one placement costs O(nodes x neighbours).
// Pure: no threads, no atomics, no clocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/cpumask.hpp"
#include "topology/topology.hpp"
#include "tunables/tunables.hpp"

namespace rt::policy {

// The seed's 1000, as a power of two: a node weight is its share of a group's faults in 1/1024.
inline constexpr std::uint32_t kNumaScoreShift = 10;
inline constexpr std::uint64_t kNumaScoreScale = std::uint64_t{1} << kNumaScoreShift;

// ---------------------------------------------------------------------------------------------
// Fault statistics (I-NUMA-1). mem[n]: samples whose page lived on node n (the kernel's
// NUMA_MEM); cpu[n]: samples taken by a worker running on node n (NUMA_CPU). Totals are kept
// equal to the sums. A period's raw samples use the same type (the kernel's NUMA_MEMBUF /
// NUMA_CPUBUF), folded into the decayed statistics by numa_fold_period().
struct numa_faults {
  std::vector<std::uint64_t> mem;
  std::vector<std::uint64_t> cpu;
  std::uint64_t total_mem = 0;
  std::uint64_t total_cpu = 0;

  numa_faults() = default;
  explicit numa_faults(int nodes);
  int node_count() const { return static_cast<int>(mem.size()); }
  // One sample: the page was on mem_node, the accessing worker on cpu_node.
  void add_sample(int mem_node, int cpu_node, std::uint64_t count = 1);
  void clear();
};

// The period's locality counts (the kernel's numa_faults_locality and fault_types): local when
// the page was on the accessing worker's node. shared/priv are optional (both 0: not modelled):
// shared = samples on pages last touched by another group, priv = the others.
struct numa_locality_counts {
  std::uint64_t local = 0;
  std::uint64_t remote = 0;
  std::uint64_t shared = 0;
  std::uint64_t priv = 0;
  numa_locality_counts& operator+=(const numa_locality_counts& o);
};

// x = x - (x >> numa_fault_decay_shift) + period.x for every mem and cpu counter (the kernel's
// "decay existing window, copy faults since last scan"); totals recomputed. Requires equal node
// counts (checked: throws std::invalid_argument naming both sizes).
void numa_fold_period(numa_faults& stats, const numa_faults& period, const tun::settings& s);

// into += from, counter by counter (members' faults add up into their parent's, I-NUMA-2).
// Requires equal node counts (checked like numa_fold_period).
void numa_add_faults(numa_faults& into, const numa_faults& from);

// ---------------------------------------------------------------------------------------------
// What scoring needs from the topology, derived once at load (I-NUMA-3): the class, the nearby
// lists flattened, which nodes can run work, and the remote distance levels (backplane search).
class numa_scorer {
 public:
  // node_capacity: layout::node_capacity (0 for a node without workers; such a node is never
  // preferred, like the kernel's for_each_node_state(N_CPU)). Empty: every node that has cores.
  // Throws std::invalid_argument when node_capacity's size differs from the node count.
  explicit numa_scorer(const topo::topology& t, std::span<const std::uint32_t> node_capacity = {});

  int node_count() const { return nodes_; }
  topo::topology_class klass() const { return klass_; }
  bool runs_work(int n) const { return capacity_[static_cast<std::size_t>(n)] > 0; }
  std::uint32_t capacity(int n) const { return capacity_[static_cast<std::size_t>(n)]; }
  int distance(int a, int b) const { return dist_[static_cast<std::size_t>(a * nodes_ + b)]; }

  // score_nearby_nodes(): faults on the nodes near `n` (I-NUMA-4).
  //   uma, direct:   0 (every remote node is equally far; the review of 002 patch 2)
  //   glueless_mesh: sum over nearby[n] of faults[m] * weight >> kNearbyScaleShift
  //   backplane:     sum over nearby[n] of faults[m], unweighted (upstream's lim_dist == max)
  std::uint64_t nearby_score(std::span<const std::uint64_t> faults, int n) const;

  // faults[n] + nearby_score(faults, n): the numerator of task_weight / group_weight.
  std::uint64_t raw_score(std::span<const std::uint64_t> faults, int n) const;

  // task_weight() / group_weight(): kNumaScoreScale * raw_score / total, 0 when total == 0.
  std::uint64_t weight(std::span<const std::uint64_t> faults, std::uint64_t total, int n) const;

  // raw_score of every node into `out` (resized to the node count), computed by scattering
  // each node's faults to the nodes whose lists hold it (the lists transposed at construction):
  // O(nodes + nodes with faults x neighbours), the same integers as raw_score() node by node.
  void raw_scores(std::span<const std::uint64_t> faults, std::vector<std::uint64_t>& out) const;

  // The pull toward a group's preferred node (002 patch 4, I-NUMA-12): on a topology scored
  // with nearby nodes (glueless mesh, backplane), the scores of `preferred` and of the nodes on
  // its nearby list are multiplied by (max - LOCAL). The patch's changelog: "Give a bonus to
  // nodes near a workload's preferred node. This will pull workloads towards their preferred
  // node." Its code sets the flag before it skips far nodes, so every node gets the multiplier
  // and nothing changes but rounding; numart does what the changelog says. No-op for
  // preferred < 0, on uma and direct topologies, and with NUMA_PULL off.
  void pull_toward(int preferred, std::vector<std::uint64_t>& scores, const tun::settings& s) const;

  // preferred_group_nid() (I-NUMA-5): the node with the highest raw score among the nodes that
  // run work (uma, direct, glueless_mesh), or the kernel's descent through nested node groups
  // (backplane). Ties go to `previous` (the group's preferred node of the last pass, 002 patch
  // 3), then to the node nearest to it, then to the lower index. -1 when total == 0.
  // `scores` must be raw_scores(faults).
  int preferred_node(std::span<const std::uint64_t> faults, std::span<const std::uint64_t> scores,
                     std::uint64_t total, int previous) const;
  int preferred_node(std::span<const std::uint64_t> faults, std::uint64_t total, int previous) const;

  // The tie-break order of preferred_node(): is node a (score sa) ahead of node b (score sb)?
  // A strict total order (score, then `previous`, then nearness to it, then index), so the
  // first of a sorted walk is the maximum of a linear scan (I-NUMA-8, I-NUMA-10).
  bool ahead(std::uint64_t sa, int a, std::uint64_t sb, int b, int previous) const {
    if (sa != sb) return sa > sb;
    return tie_ahead(a, b, previous);
  }

  // The nodes that run work, in index order (precomputed, I-NUMA-3); all_work(): every node.
  std::span<const int> work_nodes() const { return work_nodes_; }
  bool all_work() const { return all_work_; }

  // The island's edge of node p (precomputed, I-NUMA-11): the nodes that run work and are p or
  // within the nearest remote distance of p among the nodes that run work. Requires
  // 0 <= p < node_count().
  const core::cpumask& island_edge(int p) const { return island_edge_[static_cast<std::size_t>(p)]; }

 private:
  bool tie_ahead(int a, int b, int previous) const;
  int backplane_preferred(std::span<const std::uint64_t> faults, int previous) const;

  int nodes_ = 0;
  topo::topology_class klass_ = topo::topology_class::uma;
  int max_distance_ = topo::kLocalDistance;
  std::vector<int> dist_;                       // [a * nodes + b]
  std::vector<std::uint32_t> capacity_;         // > 0: the node runs work
  std::vector<std::uint32_t> nearby_begin_;     // CSR offsets into nearby_node_/_weight_/_dist_
  std::vector<int> nearby_node_;
  std::vector<std::uint32_t> nearby_weight_;
  std::vector<int> nearby_dist_;
  // The transpose, for raw_scores(): the nodes whose nearby list holds m, in runs of one weight
  // (one term per run instead of one per node: a topology has a few distance levels).
  struct near_of_run {
    std::uint32_t weight;  // the weight m carries on these nodes
    std::uint32_t end;     // one past the run's last index into near_of_node_
  };
  std::vector<std::uint32_t> near_of_begin_;       // per m: its nodes are [begin[m], begin[m + 1])
  std::vector<std::uint32_t> near_of_runs_begin_;  // per m: its runs are [begin[m], begin[m + 1])
  std::vector<near_of_run> near_of_runs_;
  std::vector<std::uint32_t> near_of_node_;
  std::vector<int> remote_levels_desc_;         // distance levels above LOCAL, largest first
  std::vector<int> work_nodes_;                 // capacity > 0, ascending
  bool all_work_ = false;                       // every node runs work: scans need no list
  std::vector<core::cpumask> island_edge_;      // per node, see island_edge()
};

// numa_group_count_active_nodes() (I-NUMA-6): nodes n that run work with
// cpu[n] * numa_active_node_fraction > max, or cpu[n] == max, where max is the largest cpu[n]
// over those nodes; empty when max == 0. Bits are logical node indexes.
core::cpumask numa_active_nodes(const numa_scorer& sc, std::span<const std::uint64_t> cpu, const tun::settings& s);

// Member placement (I-NUMA-7): the node of `active` with the highest raw_score of the member's
// own mem faults; ties go to the member's current node, then the parent's preferred node, then
// the lower index. No samples (total == 0): the current node if >= 0, else parent_preferred.
// Empty `active`: every node that runs work is a candidate.
int numa_member_node(const numa_scorer& sc, std::span<const std::uint64_t> mem, std::uint64_t total,
                     const core::cpumask& active, int current, int parent_preferred);

// ---------------------------------------------------------------------------------------------
// The capacity check (I-NUMA-8), in the spirit of task_numa_compare()'s load checks and
// numa_wake_affine(): a group may not move its home onto a node it would overload.
struct numa_capacity_input {
  std::uint64_t load = 0;      // the group's work, kCapacityScale per busy worker
  std::uint64_t active = 1;    // nodes its work spreads over (>= 1; 0 is taken as 1)
  std::uint64_t here = 0;      // its load already on the candidate node
};
// The load a move adds to the candidate: want - here when positive, want = ceil(load / active).
std::uint64_t numa_move_adds(const numa_capacity_input& in);
// Fits when 100 * (node_load + adds) <= imbalance_pct_numa * capacity; never for capacity 0.
bool numa_move_fits(std::uint64_t node_load, std::uint32_t capacity, std::uint64_t adds, const tun::settings& s);

// The group test of linux should_numa_migrate_memory() (I-BAL-4), pure: may a page of the
// group whose decayed faults are `owner` move from node src to node dst, after the two-stage
// filter passed? Yes when the group's CPU faults on dst exceed numa_active_node_fraction times
// those on src, else when cpu(dst) * mem(src) * 3 > cpu(src) * mem(dst) * 4 (memory follows
// the group's CPU use, with 3/4 hysteresis). Nodes out of range: false.
bool numa_should_migrate(const numa_faults& owner, int src, int dst, const tun::settings& s);

// ---------------------------------------------------------------------------------------------
// I-NUMA-13 (hysteresis on the preferred node): `best` (preferred_node() over `scores`, the pull
// applied) replaces `previous` only when previous * 1000 < best * (1000 -
// numa_preferred_hysteresis_permille), the kernel's SMALLIMP (task_numa_compare() takes a move
// only when it improves by more than 30/1000). previous < 0, out of range or without workers:
// best. Without it a group whose scores on two neighbouring nodes are close flips between them
// every pass (examples/jbb on the virtual Opteron: an instance's home 0 -> 6 -> 0 ... for 10 s).
int numa_sticky_best(const numa_scorer& sc, std::span<const std::uint64_t> scores, int best, int previous,
                     const tun::settings& s);

// ---------------------------------------------------------------------------------------------
// update_task_scan_period() (I-NUMA-9), pure: the next period from the current one and the
// period's counts. slot = ceil(current / numa_period_slots); lr = local * slots / (local +
// remote); sp = shared * slots / (shared + priv) when shared + priv > 0.
//   no samples (local + remote == 0):  min(2 * current, max)
//   lr >= threshold:                   current + max(1, lr - threshold) * slot
//   sp >= threshold:                   current + max(1, sp - threshold) * slot
//   otherwise:                         current - (threshold - lr) * slot
// clamped to [numa_scan_period_min_ms, numa_scan_period_max_ms].
std::int64_t numa_next_scan_period(std::int64_t current_ms, const numa_locality_counts& c, const tun::settings& s);

// ---------------------------------------------------------------------------------------------
// The whole pass (I-NUMA-10).
struct numa_member_input {
  const numa_faults* faults = nullptr;  // its decayed faults; nullptr: no samples
  int node = -1;                        // its current node, -1 none
  std::uint64_t load = 0;               // its work, kCapacityScale per busy worker (I-NUMA-11)
};

// Member placement with room (I-NUMA-11): the kernel spreads a numa_group's tasks over nodes
// because its load balancer will not stack them on one node; numart's placement is strict
// (I-WAKE-8, I-STEAL-13), so the pass itself spreads members. A member goes to the node of
// `candidates` with the highest raw_score of its own mem faults (ties as numa_member_node)
// among those where `member_load[n] + load` fits numa_move_fits; when none fits, to its
// unconstrained best. Candidates: the parent's active nodes plus every node within the nearest
// remote distance of the parent's preferred node (its island's edge), so that a full node
// spills onto a neighbour, where memory and samples then follow. `member_load` accumulates;
// balance_pass() starts it from every member's current node and takes a member's own load off
// its node before placing it, so members not placed yet count where they run.
// The candidates (once per group): `active` plus every node within the nearest remote distance
// of `parent_preferred`, the island's edge.
core::cpumask numa_member_candidates(const numa_scorer& sc, const core::cpumask& active, int parent_preferred);
int numa_place_member(const numa_scorer& sc, const numa_member_input& m, const core::cpumask& candidates,
                      int parent_preferred, std::vector<std::uint64_t>& member_load, const tun::settings& s);

struct numa_group_input {
  const numa_faults* faults = nullptr;        // the group's own faults, outside any member
  std::span<const numa_member_input> members; // empty: scored alone
  int node = -1;                              // its current home, -1 none
  int preferred = -1;                         // its preferred node from the last pass (the pull)
  std::uint64_t load = 0;                     // its work, kCapacityScale per busy worker
  numa_locality_counts period;                // this period's counts
  // Its own scan period (I-NUMA-15), 0 while it has none: a group's period starts at
  // numa_scan_period_min_ms when it or a member registers its first region.
  std::int64_t scan_period_ms = 0;
};

struct numa_pass_input {
  std::span<const numa_group_input> groups;
  std::span<const std::uint64_t> node_load;   // per node: the load of the groups' work now
  std::int64_t scan_period_ms = 0;            // the balancer's current period
};

enum class numa_placement : std::uint8_t {
  no_samples,     // no faults yet: preferred -1, home unchanged
  stay,           // the best node is the current home
  move,           // the home moves to the best node
  next_best,      // the best node was full: the home moves to the next best that fits
  kept,           // no better node fits: the home stays where it is
  over_capacity,  // no home yet and no node fits: the best node, over capacity
};
const char* to_string(numa_placement p);

struct numa_group_decision {
  int best = -1;                    // the highest-scoring node (before the capacity check)
  int preferred = -1;               // the node to apply as the group's home; -1: no samples
  numa_placement placement = numa_placement::no_samples;
  core::cpumask active;             // its active nodes
  std::size_t members_begin = 0;    // its members' nodes: member_nodes[members_begin ..]
  std::int64_t scan_period_ms = 0;  // its next period (I-NUMA-15); 0: it has none
};

struct numa_pass_result {
  std::vector<numa_group_decision> groups;   // one per input group, same order
  std::vector<int> member_nodes;             // every member's preferred node, groups in order
  std::size_t member_swaps = 0;              // pairs of members that traded nodes (I-NUMA-14)
  std::vector<std::uint64_t> node_load;      // node_load after the pass's moves
  // The balancer's next period (I-NUMA-15): the shortest of the groups' next periods; when no
  // group has a period, numa_next_scan_period of the current one with the summed counts.
  std::int64_t scan_period_ms = 0;
};

// Groups are decided in input order, each seeing the loads left by the moves before it.
// Throws std::invalid_argument when node_load's size or a faults' node count differs from
// the scorer's node count. Cost O(groups x nodes x neighbours + members x nodes x neighbours).
numa_pass_result balance_pass(const numa_scorer& sc, const numa_pass_input& in, const tun::settings& s);

}  // namespace rt::policy
