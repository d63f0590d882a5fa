// The NUMA balancer's policy (numa_score.hpp; docs/design/numa-scoring.md).
#include "policy/numa_score.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "policy/domains.hpp"
#include "policy/layout.hpp"

namespace rt::policy {
namespace {

__extension__ using u128 = unsigned __int128;

void require_nodes(std::size_t got, std::size_t want, const char* what) {
  if (got != want) {
    throw std::invalid_argument(std::string("numa policy: ") + what + " has " + std::to_string(got) +
                                " nodes, expected " + std::to_string(want));
  }
}

// One nearby term: faults * weight >> kNearbyScaleShift (I-NUMA-4). weight < 2^11 and faults
// are decayed sample counts, far below 2^53: the product fits in 64 bits.
std::uint64_t nearby_term(std::uint64_t faults, std::uint32_t weight) {
  return (faults * weight) >> topo::kNearbyScaleShift;
}

// The largest of v (0 when empty), four lanes at a time: the pass takes a maximum over every
// node twice per group (I-NUMA-10).
std::uint64_t max_of(std::span<const std::uint64_t> v) {
  std::uint64_t m0 = 0, m1 = 0, m2 = 0, m3 = 0;
  std::size_t i = 0;
  for (; i + 4 <= v.size(); i += 4) {
    m0 = std::max(m0, v[i]);
    m1 = std::max(m1, v[i + 1]);
    m2 = std::max(m2, v[i + 2]);
    m3 = std::max(m3, v[i + 3]);
  }
  for (; i < v.size(); ++i) m0 = std::max(m0, v[i]);
  return std::max(std::max(m0, m1), std::max(m2, m3));
}

// a * b / c, exact (c > 0): in 64 bits when the product fits, else in 128 (I-NUMA-8's `here`).
std::uint64_t mul_div(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  std::uint64_t p = 0;
  if (!__builtin_mul_overflow(a, b, &p)) return p / c;
  return static_cast<std::uint64_t>(static_cast<u128>(a) * b / c);
}

// I-NUMA-14: the swap of task_numa_compare() between tasks of two numa_groups, for members
// left outside their parent's island by place_member (which follows each member's own data).
// A member on node x outside the island edge of its parent's best node trades nodes with a
// member of another group on a node y of that edge, same load (the swap keeps every node's
// load). Only members with samples and load take part. Partners rank by how many of the two
// end inside their islands (the member always comes in; the partner comes in, stays or
// leaves), then by the two groups' summed weight change w_a(y) - w_a(x) + w_b(x) - w_b(y); a
// swap that brings no member in net is taken only when that sum exceeds SMALLIMP, one that
// does is taken even at a loss. Like the kernel, which looks at the task of each CPU of the
// destination, a node's first 2 x its workers' worth of members are the partners looked at.
// One sweep per pass (the next pass continues): cost O(members outside their island x edge
// nodes x partners per node).
class member_swaps {
 public:
  member_swaps(std::size_t nodes, std::size_t groups, std::size_t members) : nodes_(nodes) {
    w_.reserve(groups * nodes);
    centre_.reserve(groups);
    slot_.reserve(members);
    load_.reserve(members);
  }

  // A group with members and samples: its weights (kNumaScoreScale * pulled score / total)
  // and the centre of its island. Returns its slot.
  int add_group(std::span<const std::uint64_t> scores, std::uint64_t total, int centre) {
    for (const std::uint64_t sc : scores) w_.push_back(mul_div(sc, kNumaScoreScale, total));
    centre_.push_back(centre);
    return static_cast<int>(centre_.size()) - 1;
  }
  // Every member in res.member_nodes order, with its group's slot (-1: no weights). A member
  // without samples or without load never swaps.
  void add_member(int slot, const numa_member_input& m) {
    const bool takes_part = m.faults != nullptr && m.faults->total_mem != 0 && m.load != 0;
    slot_.push_back(takes_part ? slot : -1);
    load_.push_back(m.load);
  }

  std::size_t run(const numa_scorer& sc, std::vector<int>& node_of, const tun::settings& s) {
    const auto takes_part = [&](std::size_t i) { return slot_[i] >= 0 && node_of[i] >= 0; };
    // The members that take part, per node (CSR); a swap exchanges two entries.
    std::vector<std::uint32_t> begin(nodes_ + 1, 0);
    for (std::size_t i = 0; i < node_of.size(); ++i) {
      if (takes_part(i)) ++begin[static_cast<std::size_t>(node_of[i]) + 1];
    }
    for (std::size_t n = 0; n < nodes_; ++n) begin[n + 1] += begin[n];
    std::vector<std::uint32_t> on(begin[nodes_]);
    std::vector<std::uint32_t> at(node_of.size(), 0);  // member -> its index into `on`
    {
      std::vector<std::uint32_t> fill(begin.begin(), begin.end() - 1);
      for (std::size_t i = 0; i < node_of.size(); ++i) {
        if (!takes_part(i)) continue;
        at[i] = fill[static_cast<std::size_t>(node_of[i])]++;
        on[at[i]] = static_cast<std::uint32_t>(i);
      }
    }
    const auto w = [&](int slot, int n) {
      return static_cast<std::int64_t>(w_[static_cast<std::size_t>(slot) * nodes_ + static_cast<std::size_t>(n)]);
    };
    const auto smallimp = static_cast<std::int64_t>(kNumaScoreScale) * s.t.numa_preferred_hysteresis_permille / 1000;
    std::size_t swaps = 0;
    for (std::size_t i = 0; i < node_of.size(); ++i) {
      if (!takes_part(i)) continue;
      const int a = slot_[i];
      const int x = node_of[i];
      const core::cpumask& edge = sc.island_edge(centre_[static_cast<std::size_t>(a)]);
      if (edge.test(static_cast<std::size_t>(x))) continue;
      int best_in = 0;
      std::int64_t best_gain = smallimp;
      std::uint32_t best = 0;
      bool found = false;
      edge.for_each([&](std::size_t y) {
        const std::uint32_t looked = 2 * std::max<std::uint32_t>(1, sc.capacity(static_cast<int>(y)) / kCapacityScale);
        const std::uint32_t end = std::min(begin[y + 1], begin[y] + looked);
        for (std::uint32_t k = begin[y]; k < end; ++k) {
          const std::uint32_t j = on[k];
          const int b = slot_[j];
          if (b == a || load_[j] != load_[i]) continue;
          const int ny = static_cast<int>(y);
          const int in = 1 + inside(sc, b, x) - inside(sc, b, ny);
          const std::int64_t gain = w(a, ny) - w(a, x) + w(b, x) - w(b, ny);
          if (in < best_in || (in == best_in && gain <= best_gain)) continue;
          best_in = in;
          best_gain = gain;
          best = j;
          found = true;
        }
      });
      if (!found) continue;
      std::swap(on[at[i]], on[at[best]]);
      std::swap(at[i], at[best]);
      node_of[i] = node_of[best];
      node_of[best] = x;
      ++swaps;
    }
    return swaps;
  }

 private:
  int inside(const numa_scorer& sc, int slot, int n) const {
    return sc.island_edge(centre_[static_cast<std::size_t>(slot)]).test(static_cast<std::size_t>(n)) ? 1 : 0;
  }

  std::size_t nodes_;
  std::vector<std::uint64_t> w_;     // [slot * nodes + n]
  std::vector<int> centre_;          // per slot
  std::vector<int> slot_;            // per member
  std::vector<std::uint64_t> load_;  // per member
};

// numa_move_fits() with imbalance_pct * capacity computed once per node (I-NUMA-8):
// 100 * (load + adds) <= pct * capacity  <=>  load + adds <= floor(pct * capacity / 100).
class node_room {
 public:
  node_room(const numa_scorer& sc, const tun::settings& s) : room_(static_cast<std::size_t>(sc.node_count()), 0) {
    const u128 pct = imbalance_pct(domain_level::numa, s);
    for (int n = 0; n < sc.node_count(); ++n) room_[static_cast<std::size_t>(n)] = pct * sc.capacity(n) / kPercentScale;
  }
  // Never fits on a node without workers: its room is 0 and the check also needs capacity.
  bool fits(const numa_scorer& sc, int n, std::uint64_t node_load, std::uint64_t adds) const {
    return sc.capacity(n) != 0 && static_cast<u128>(node_load) + adds <= room_[static_cast<std::size_t>(n)];
  }

 private:
  std::vector<u128> room_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
numa_faults::numa_faults(int nodes)
    : mem(static_cast<std::size_t>(nodes), 0), cpu(static_cast<std::size_t>(nodes), 0) {}

void numa_faults::add_sample(int mem_node, int cpu_node, std::uint64_t count) {
  mem.at(static_cast<std::size_t>(mem_node)) += count;
  cpu.at(static_cast<std::size_t>(cpu_node)) += count;
  total_mem += count;
  total_cpu += count;
}

void numa_faults::clear() {
  std::fill(mem.begin(), mem.end(), 0);
  std::fill(cpu.begin(), cpu.end(), 0);
  total_mem = 0;
  total_cpu = 0;
}

numa_locality_counts& numa_locality_counts::operator+=(const numa_locality_counts& o) {
  local += o.local;
  remote += o.remote;
  shared += o.shared;
  priv += o.priv;
  return *this;
}

// I-NUMA-1: x - (x >> shift) + new, the kernel's `diff = buf - x / 2; x += diff` for shift 1.
void numa_fold_period(numa_faults& stats, const numa_faults& period, const tun::settings& s) {
  require_nodes(period.mem.size(), stats.mem.size(), "numa_fold_period: the period's faults");
  require_nodes(period.cpu.size(), stats.cpu.size(), "numa_fold_period: the period's cpu faults");
  const auto shift = static_cast<unsigned>(s.t.numa_fault_decay_shift);
  stats.total_mem = 0;
  stats.total_cpu = 0;
  for (std::size_t n = 0; n < stats.mem.size(); ++n) {
    stats.mem[n] = stats.mem[n] - (stats.mem[n] >> shift) + period.mem[n];
    stats.cpu[n] = stats.cpu[n] - (stats.cpu[n] >> shift) + period.cpu[n];
    stats.total_mem += stats.mem[n];
    stats.total_cpu += stats.cpu[n];
  }
}

void numa_add_faults(numa_faults& into, const numa_faults& from) {
  require_nodes(from.mem.size(), into.mem.size(), "numa_add_faults: the added faults");
  for (std::size_t n = 0; n < into.mem.size(); ++n) {
    into.mem[n] += from.mem[n];
    into.cpu[n] += from.cpu[n];
  }
  into.total_mem += from.total_mem;
  into.total_cpu += from.total_cpu;
}

// ---------------------------------------------------------------------------------------------
numa_scorer::numa_scorer(const topo::topology& t, std::span<const std::uint32_t> node_capacity)
    : nodes_(t.node_count()), klass_(t.klass), max_distance_(t.max_distance) {
  const auto n_nodes = static_cast<std::size_t>(nodes_);
  if (!node_capacity.empty()) require_nodes(node_capacity.size(), n_nodes, "numa_scorer: node_capacity");
  dist_.resize(n_nodes * n_nodes);
  capacity_.resize(n_nodes);
  for (std::size_t a = 0; a < n_nodes; ++a) {
    for (std::size_t b = 0; b < n_nodes; ++b) dist_[a * n_nodes + b] = t.distance[a][b];
    capacity_[a] = node_capacity.empty()
                       ? static_cast<std::uint32_t>(kCapacityScale * t.nodes[a].cores.size())
                       : node_capacity[a];
  }
  // I-NUMA-3/4: the class decides the weight each list entry carries. Direct topologies have
  // empty lists by construction (I-TOPO-7); uma has one node.
  const bool weighted = klass_ == topo::topology_class::glueless_mesh;
  const bool counted = klass_ == topo::topology_class::glueless_mesh || klass_ == topo::topology_class::backplane;
  nearby_begin_.push_back(0);
  std::vector<std::vector<std::pair<int, std::uint32_t>>> transposed(n_nodes);
  for (std::size_t n = 0; n < n_nodes; ++n) {
    if (counted) {
      for (const topo::nearby_node& m : t.nearby[n]) {
        const std::uint32_t w = weighted ? m.weight : topo::kNearbyScale;
        nearby_node_.push_back(m.node);
        nearby_weight_.push_back(w);
        nearby_dist_.push_back(m.distance);
        transposed[static_cast<std::size_t>(m.node)].emplace_back(static_cast<int>(n), w);
      }
    }
    nearby_begin_.push_back(static_cast<std::uint32_t>(nearby_node_.size()));
  }
  near_of_runs_begin_.push_back(0);
  near_of_begin_.push_back(0);
  for (auto& list : transposed) {
    std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    for (std::size_t i = 0; i < list.size(); ++i) {
      near_of_node_.push_back(static_cast<std::uint32_t>(list[i].first));
      if (i + 1 == list.size() || list[i + 1].second != list[i].second)
        near_of_runs_.push_back({list[i].second, static_cast<std::uint32_t>(near_of_node_.size())});
    }
    near_of_runs_begin_.push_back(static_cast<std::uint32_t>(near_of_runs_.size()));
    near_of_begin_.push_back(static_cast<std::uint32_t>(near_of_node_.size()));
  }
  for (auto it = t.distance_levels.rbegin(); it != t.distance_levels.rend(); ++it) {
    if (*it > topo::kLocalDistance) remote_levels_desc_.push_back(*it);
  }
  // I-NUMA-3, I-NUMA-11: the nodes that run work, and each node's island edge.
  for (int n = 0; n < nodes_; ++n) {
    if (runs_work(n)) work_nodes_.push_back(n);
  }
  all_work_ = work_nodes_.size() == n_nodes;
  island_edge_.reserve(n_nodes);
  for (int p = 0; p < nodes_; ++p) {
    int nearest = 0;
    for (const int n : work_nodes_) {
      const int d = distance(p, n);
      if (n != p && (nearest == 0 || d < nearest)) nearest = d;
    }
    core::cpumask edge(n_nodes);
    for (const int n : work_nodes_) {
      if (n == p || distance(p, n) <= nearest) edge.set(static_cast<std::size_t>(n));
    }
    island_edge_.push_back(std::move(edge));
  }
}

std::uint64_t numa_scorer::nearby_score(std::span<const std::uint64_t> faults, int n) const {
  require_nodes(faults.size(), static_cast<std::size_t>(nodes_), "nearby_score: faults");
  std::uint64_t score = 0;
  for (std::uint32_t i = nearby_begin_[static_cast<std::size_t>(n)]; i < nearby_begin_[static_cast<std::size_t>(n) + 1];
       ++i) {
    score += nearby_term(faults[static_cast<std::size_t>(nearby_node_[i])], nearby_weight_[i]);
  }
  return score;
}

std::uint64_t numa_scorer::raw_score(std::span<const std::uint64_t> faults, int n) const {
  return faults[static_cast<std::size_t>(n)] + nearby_score(faults, n);
}

std::uint64_t numa_scorer::weight(std::span<const std::uint64_t> faults, std::uint64_t total, int n) const {
  if (total == 0) return 0;
  return static_cast<std::uint64_t>(static_cast<u128>(raw_score(faults, n)) * kNumaScoreScale / total);
}

void numa_scorer::raw_scores(std::span<const std::uint64_t> faults, std::vector<std::uint64_t>& out) const {
  require_nodes(faults.size(), static_cast<std::size_t>(nodes_), "raw_scores: faults");
  out.assign(faults.begin(), faults.end());
  std::uint64_t* const o = out.data();
  const std::uint32_t* const near = near_of_node_.data();
  const near_of_run* const runs = near_of_runs_.data();
  const std::uint32_t* const runs_begin = near_of_runs_begin_.data();
  for (std::size_t m = 0; m < faults.size(); ++m) {
    const std::uint64_t f = faults[m];
    if (f == 0) continue;
    std::uint32_t i = near_of_begin_[m];
    for (std::uint32_t r = runs_begin[m]; r < runs_begin[m + 1]; ++r) {
      const std::uint64_t term = nearby_term(f, runs[r].weight);  // the same term for the whole run
      const std::uint32_t end = runs[r].end;
      for (; i + 4 <= end; i += 4) {  // unrolled: the pass spends most of its time here
        o[near[i]] += term;
        o[near[i + 1]] += term;
        o[near[i + 2]] += term;
        o[near[i + 3]] += term;
      }
      for (; i < end; ++i) o[near[i]] += term;
    }
  }
}

// I-NUMA-5 tie-break between equal scores: the previous preferred node, then nearness to it,
// then the lower index.
bool numa_scorer::tie_ahead(int a, int b, int previous) const {
  if (previous >= 0 && previous < nodes_) {
    if (a == previous || b == previous) return a == previous;
    const int da = distance(previous, a);
    const int db = distance(previous, b);
    if (da != db) return da < db;
  }
  return a < b;
}

void numa_scorer::pull_toward(int preferred, std::vector<std::uint64_t>& scores, const tun::settings& s) const {
  if (!s.f.NUMA_PULL || preferred < 0 || preferred >= nodes_) return;
  if (klass_ != topo::topology_class::glueless_mesh && klass_ != topo::topology_class::backplane) return;
  const std::uint64_t bonus = static_cast<std::uint64_t>(max_distance_ - topo::kLocalDistance);
  const auto p = static_cast<std::size_t>(preferred);
  scores[p] *= bonus;
  for (std::uint32_t i = nearby_begin_[p]; i < nearby_begin_[p + 1]; ++i)
    scores[static_cast<std::size_t>(nearby_node_[i])] *= bonus;
}

int numa_scorer::preferred_node(std::span<const std::uint64_t> faults, std::span<const std::uint64_t> scores,
                                std::uint64_t total, int previous) const {
  if (total == 0) return -1;
  if (klass_ == topo::topology_class::backplane) {
    const int nid = backplane_preferred(faults, previous);
    if (nid >= 0) return nid;
  }
  // The maximum under ahead(): the highest score first (a plain scan when every node runs
  // work), then the tie-break among the nodes that have it.
  std::uint64_t top = 0;
  if (all_work_) {
    top = max_of(scores.first(static_cast<std::size_t>(nodes_)));
  } else {
    for (const int n : work_nodes_) top = std::max(top, scores[static_cast<std::size_t>(n)]);
  }
  int best = -1;
  for (const int n : work_nodes_) {
    if (scores[static_cast<std::size_t>(n)] == top && (best < 0 || tie_ahead(n, best, previous))) best = n;
  }
  return best;
}

int numa_scorer::preferred_node(std::span<const std::uint64_t> faults, std::uint64_t total, int previous) const {
  std::vector<std::uint64_t> scores;
  raw_scores(faults, scores);
  return preferred_node(faults, scores, total, previous);
}

// The kernel's preferred_group_nid() for NUMA_BACKPLANE: from the largest distance down, split
// the remaining nodes into groups of nodes closer than `dist` to the group's first node, keep
// the group with the most faults (ties: the one holding `previous`, then the first), repeat
// inside it. At the smallest remote level every group is one node: that node wins. Groups are
// read off the nearby lists (nearest first), so a level costs O(nodes x neighbours).
int numa_scorer::backplane_preferred(std::span<const std::uint64_t> faults, int previous) const {
  const auto n_nodes = static_cast<std::size_t>(nodes_);
  std::vector<std::uint8_t> in(n_nodes, 0);
  for (int n = 0; n < nodes_; ++n) in[static_cast<std::size_t>(n)] = runs_work(n) ? 1 : 0;
  std::vector<std::uint8_t> free_now(n_nodes, 0);
  std::vector<int> group;
  std::vector<int> best_group;
  int nid = -1;
  for (const int dist : remote_levels_desc_) {
    free_now = in;
    std::uint64_t best_faults = 0;
    bool best_has_prev = false;
    int best_a = -1;
    for (int a = 0; a < nodes_; ++a) {
      if (free_now[static_cast<std::size_t>(a)] == 0) continue;
      group.assign(1, a);
      free_now[static_cast<std::size_t>(a)] = 0;
      std::uint64_t f = faults[static_cast<std::size_t>(a)];
      for (std::uint32_t i = nearby_begin_[static_cast<std::size_t>(a)];
           i < nearby_begin_[static_cast<std::size_t>(a) + 1] && nearby_dist_[i] < dist; ++i) {
        const auto b = static_cast<std::size_t>(nearby_node_[i]);
        if (free_now[b] == 0) continue;
        free_now[b] = 0;
        group.push_back(nearby_node_[i]);
        f += faults[b];
      }
      const bool has_prev = std::find(group.begin(), group.end(), previous) != group.end();
      if (f > best_faults || (f == best_faults && f > 0 && has_prev && !best_has_prev)) {
        best_faults = f;
        best_has_prev = has_prev;
        best_a = a;
        best_group = group;
      }
    }
    if (best_faults == 0) break;
    std::fill(in.begin(), in.end(), 0);
    for (const int b : best_group) in[static_cast<std::size_t>(b)] = 1;
    nid = best_a;
  }
  return nid;
}

// ---------------------------------------------------------------------------------------------
core::cpumask numa_active_nodes(const numa_scorer& sc, std::span<const std::uint64_t> cpu, const tun::settings& s) {
  require_nodes(cpu.size(), static_cast<std::size_t>(sc.node_count()), "numa_active_nodes: cpu faults");
  core::cpumask active(static_cast<std::size_t>(sc.node_count()));
  std::uint64_t max = 0;
  if (sc.all_work()) {
    max = max_of(cpu);
  } else {
    for (const int n : sc.work_nodes()) max = std::max(max, cpu[static_cast<std::size_t>(n)]);
  }
  if (max == 0) return active;
  // f * fraction > max  <=>  f > floor(max / fraction), for integers and fraction >= 1; a
  // fraction below 1 (outside the tunable's range) admits only the busiest.
  const std::int64_t fraction = s.t.numa_active_node_fraction;
  const std::uint64_t above = fraction >= 1 ? max / static_cast<std::uint64_t>(fraction) : max;
  for (const int n : sc.work_nodes()) {
    const std::uint64_t f = cpu[static_cast<std::size_t>(n)];
    if (f == max || f > above) active.set(static_cast<std::size_t>(n));
  }
  return active;
}

int numa_member_node(const numa_scorer& sc, std::span<const std::uint64_t> mem, std::uint64_t total,
                     const core::cpumask& active, int current, int parent_preferred) {
  if (total == 0) return current >= 0 ? current : parent_preferred;
  require_nodes(mem.size(), static_cast<std::size_t>(sc.node_count()), "numa_member_node: faults");
  int best = -1;
  std::uint64_t best_score = 0;
  auto rank = [&](int n) {  // ties: current node, then the parent's preferred node, then index
    if (n == current) return 0;
    if (n == parent_preferred) return 1;
    return 2;
  };
  auto consider = [&](int n) {
    const std::uint64_t sn = sc.raw_score(mem, n);
    if (best < 0 || sn > best_score || (sn == best_score && rank(n) < rank(best))) {
      best = n;
      best_score = sn;
    }
  };
  if (active.empty()) {
    for (int n = 0; n < sc.node_count(); ++n) {
      if (sc.runs_work(n)) consider(n);
    }
  } else {
    active.for_each([&](std::size_t n) { consider(static_cast<int>(n)); });
  }
  return best;
}

core::cpumask numa_member_candidates(const numa_scorer& sc, const core::cpumask& active, int parent_preferred) {
  core::cpumask candidates = active.size() == static_cast<std::size_t>(sc.node_count())
                                 ? active
                                 : core::cpumask(static_cast<std::size_t>(sc.node_count()));
  if (parent_preferred < 0 || parent_preferred >= sc.node_count()) return candidates;
  return candidates | sc.island_edge(parent_preferred);
}

namespace {

// numa_place_member() with the scores' buffer and the room check supplied by the caller, so
// that the pass allocates nothing per member (I-NUMA-10).
template <class Fits>
int place_member(const numa_scorer& sc, const numa_member_input& m, const core::cpumask& candidates,
                 int parent_preferred, std::vector<std::uint64_t>& member_load, std::vector<std::uint64_t>& scores,
                 const Fits& fits) {
  const std::uint64_t total = m.faults != nullptr ? m.faults->total_mem : 0;
  if (total == 0) {
    const int n = m.node >= 0 ? m.node : parent_preferred;
    if (n >= 0) member_load[static_cast<std::size_t>(n)] += m.load;
    return n;
  }
  require_nodes(m.faults->mem.size(), static_cast<std::size_t>(sc.node_count()), "numa_place_member: faults");
  // One walk: the best candidate with room and the best of all (ties as numa_member_node:
  // the member's current node, then the parent's preferred node, then the lower index).
  const auto rank = [&](int n) { return n == m.node ? 0 : n == parent_preferred ? 1 : 2; };
  const auto ahead = [&](int n, std::uint64_t sn, int b, std::uint64_t sb) {
    return b < 0 || sn > sb || (sn == sb && rank(n) < rank(b));
  };
  int fit = -1, any = -1;
  std::uint64_t fit_score = 0, any_score = 0;
  sc.raw_scores(m.faults->mem, scores);  // scattered once: O(nodes + faulted nodes x neighbours)
  candidates.for_each([&](std::size_t i) {
    const int n = static_cast<int>(i);
    if (!sc.runs_work(n)) return;
    const std::uint64_t sn = scores[i];
    if (ahead(n, sn, any, any_score)) {
      any = n;
      any_score = sn;
    }
    if (ahead(n, sn, fit, fit_score) && fits(n, member_load[i], m.load)) {
      fit = n;
      fit_score = sn;
    }
  });
  // The island is full: the best node with room anywhere, as the kernel's task_numa_migrate()
  // searches every node when the preferred one has no room; over capacity only when no node
  // has room.
  if (fit < 0) {
    for (const int n : sc.work_nodes()) {
      const auto i = static_cast<std::size_t>(n);
      if (candidates.test(i)) continue;
      if (ahead(n, scores[i], fit, fit_score) && fits(n, member_load[i], m.load)) {
        fit = n;
        fit_score = scores[i];
      }
    }
  }
  int pick = fit >= 0 ? fit : any;
  if (pick < 0) pick = m.node >= 0 ? m.node : parent_preferred;
  if (pick >= 0) member_load[static_cast<std::size_t>(pick)] += m.load;
  return pick;
}

}  // namespace

int numa_place_member(const numa_scorer& sc, const numa_member_input& m, const core::cpumask& candidates,
                      int parent_preferred, std::vector<std::uint64_t>& member_load, const tun::settings& s) {
  std::vector<std::uint64_t> scores;
  return place_member(sc, m, candidates, parent_preferred, member_load, scores,
                      [&](int n, std::uint64_t load, std::uint64_t adds) { return numa_move_fits(load, sc.capacity(n), adds, s); });
}

// ---------------------------------------------------------------------------------------------
std::uint64_t numa_move_adds(const numa_capacity_input& in) {
  const std::uint64_t spread = std::max<std::uint64_t>(in.active, 1);
  const std::uint64_t want = in.load / spread + (in.load % spread != 0 ? 1 : 0);
  return want > in.here ? want - in.here : 0;
}

bool numa_move_fits(std::uint64_t node_load, std::uint32_t capacity, std::uint64_t adds, const tun::settings& s) {
  if (capacity == 0) return false;
  const u128 after = static_cast<u128>(node_load) + adds;
  return after * kPercentScale <= static_cast<u128>(imbalance_pct(domain_level::numa, s)) * capacity;
}

bool numa_should_migrate(const numa_faults& owner, int src, int dst, const tun::settings& s) {
  const int n = owner.node_count();
  if (src < 0 || dst < 0 || src >= n || dst >= n || owner.cpu.size() != owner.mem.size()) return false;
  const u128 cpu_dst = owner.cpu[static_cast<std::size_t>(dst)];
  const u128 cpu_src = owner.cpu[static_cast<std::size_t>(src)];
  if (cpu_dst > cpu_src * static_cast<u128>(s.t.numa_active_node_fraction)) return true;
  return cpu_dst * owner.mem[static_cast<std::size_t>(src)] * 3 > cpu_src * owner.mem[static_cast<std::size_t>(dst)] * 4;
}

// ---------------------------------------------------------------------------------------------
int numa_sticky_best(const numa_scorer& sc, std::span<const std::uint64_t> scores, int best, int previous,
                     const tun::settings& s) {
  if (best < 0 || previous < 0 || previous == best || previous >= sc.node_count() || !sc.runs_work(previous))
    return best;
  require_nodes(scores.size(), static_cast<std::size_t>(sc.node_count()), "numa_sticky_best: scores");
  const u128 keep = static_cast<u128>(scores[static_cast<std::size_t>(previous)]) * 1000u;
  const u128 beat = static_cast<u128>(scores[static_cast<std::size_t>(best)]) *
                    static_cast<u128>(1000 - s.t.numa_preferred_hysteresis_permille);
  return keep >= beat ? previous : best;
}

// ---------------------------------------------------------------------------------------------
std::int64_t numa_next_scan_period(std::int64_t current_ms, const numa_locality_counts& c, const tun::settings& s) {
  const std::int64_t lo = s.t.numa_scan_period_min_ms;
  const std::int64_t hi = std::max(s.t.numa_scan_period_max_ms, lo);
  const std::int64_t cur = std::clamp(current_ms, lo, hi);
  if (c.local + c.remote == 0) return std::min(hi, 2 * cur);
  const std::int64_t slots = s.t.numa_period_slots;
  const std::int64_t threshold = s.t.numa_period_threshold;
  const std::int64_t slot = (cur + slots - 1) / slots;
  const auto lr = static_cast<std::int64_t>(static_cast<u128>(c.local) * static_cast<u128>(slots) /
                                            (static_cast<u128>(c.local) + c.remote));
  std::int64_t diff = 0;
  if (lr >= threshold) {
    diff = std::max<std::int64_t>(1, lr - threshold) * slot;
  } else if (c.shared + c.priv > 0 &&
             static_cast<std::int64_t>(static_cast<u128>(c.shared) * static_cast<u128>(slots) /
                                       (static_cast<u128>(c.shared) + c.priv)) >= threshold) {
    const auto sp = static_cast<std::int64_t>(static_cast<u128>(c.shared) * static_cast<u128>(slots) /
                                              (static_cast<u128>(c.shared) + c.priv));
    diff = std::max<std::int64_t>(1, sp - threshold) * slot;
  } else {
    diff = -(threshold - lr) * slot;
  }
  return std::clamp(cur + diff, lo, hi);
}

// ---------------------------------------------------------------------------------------------
const char* to_string(numa_placement p) {
  switch (p) {
    case numa_placement::no_samples: return "no_samples";
    case numa_placement::stay: return "stay";
    case numa_placement::move: return "move";
    case numa_placement::next_best: return "next_best";
    case numa_placement::kept: return "kept";
    case numa_placement::over_capacity: return "over_capacity";
  }
  return "?";
}

numa_pass_result balance_pass(const numa_scorer& sc, const numa_pass_input& in, const tun::settings& s) {
  const auto n_nodes = static_cast<std::size_t>(sc.node_count());
  require_nodes(in.node_load.size(), n_nodes, "balance_pass: node_load");
  numa_pass_result res;
  res.groups.reserve(in.groups.size());
  res.node_load.assign(in.node_load.begin(), in.node_load.end());
  std::size_t members = 0;
  std::size_t groups_with_members = 0;
  for (const numa_group_input& g : in.groups) {
    members += g.members.size();
    groups_with_members += g.members.empty() ? 0 : 1;
  }
  res.member_nodes.reserve(members);
  // Scratch reused by every group: nothing below allocates per group but the decision's own
  // active mask and, for a group with members, its candidate mask (I-NUMA-10).
  const node_room room(sc, s);
  numa_faults sum(sc.node_count());
  std::vector<std::uint64_t> scores;
  std::vector<std::uint64_t> member_scores;
  numa_locality_counts counts;
  std::int64_t shortest = 0;  // the shortest of the groups' next periods, 0 while none has one
  std::vector<std::uint64_t> member_load(n_nodes, 0);  // every member where it is now
  // A member's entry in member_load: its current node's, null when it has none.
  const auto load_here = [&](const numa_member_input& m) -> std::uint64_t* {
    return m.node >= 0 && static_cast<std::size_t>(m.node) < n_nodes ? &member_load[static_cast<std::size_t>(m.node)] : nullptr;
  };
  for (const numa_group_input& g : in.groups)
    for (const numa_member_input& m : g.members)
      if (std::uint64_t* here = load_here(m)) *here += m.load;
  const numa_faults none(sc.node_count());
  member_swaps swaps(n_nodes, s.f.NUMA_SWAP ? groups_with_members : 0, s.f.NUMA_SWAP ? members : 0);

  for (const numa_group_input& g : in.groups) {
    // I-NUMA-2: the group's faults are its own plus its members'; alone, its own are used as
    // they are (the same sums without the copy).
    const numa_faults* f = &none;
    if (!g.members.empty()) {
      sum.clear();
      if (g.faults != nullptr) numa_add_faults(sum, *g.faults);
      for (const numa_member_input& m : g.members) {
        if (m.faults != nullptr) numa_add_faults(sum, *m.faults);
      }
      f = &sum;
    } else if (g.faults != nullptr) {
      require_nodes(g.faults->mem.size(), n_nodes, "balance_pass: a group's faults");
      require_nodes(g.faults->cpu.size(), n_nodes, "balance_pass: a group's cpu faults");
      f = g.faults;
    }
    counts += g.period;

    numa_group_decision d;
    d.active = numa_active_nodes(sc, f->cpu, s);
    d.members_begin = res.member_nodes.size();
    if (f->total_mem != 0) {
      sc.raw_scores(f->mem, scores);
      sc.pull_toward(g.preferred, scores, s);  // I-NUMA-12
      d.best = numa_sticky_best(sc, scores, sc.preferred_node(f->mem, scores, f->total_mem, g.preferred), g.preferred, s);
      // I-NUMA-8: the capacity check, best node first, then by score; the current home ends it.
      const std::uint64_t spread = std::max<std::uint64_t>(d.active.count(), 1);
      const std::uint64_t want = g.load / spread + (g.load % spread != 0 ? 1 : 0);  // numa_move_adds
      auto adds_at = [&](int n) {
        const std::uint64_t here = f->total_cpu == 0 ? 0 : mul_div(g.load, f->cpu[static_cast<std::size_t>(n)], f->total_cpu);
        return want > here ? want - here : 0;
      };
      auto fits = [&](int n, std::uint64_t adds) { return room.fits(sc, n, res.node_load[static_cast<std::size_t>(n)], adds); };
      if (d.best == g.node) {
        d.preferred = d.best;
        d.placement = numa_placement::stay;
      } else if (const std::uint64_t adds = adds_at(d.best); fits(d.best, adds)) {
        res.node_load[static_cast<std::size_t>(d.best)] += adds;
        d.preferred = d.best;
        d.placement = numa_placement::move;
      } else {
        // The others in ahead() order, stopping at the current home or at the first that fits,
        // is the maximum under that strict total order of the nodes that are the home or fit:
        // one scan, each node's fit computed only when it would lead.
        int pick = -1;
        for (const int n : sc.work_nodes()) {
          if (n == d.best) continue;
          if (pick >= 0 && !sc.ahead(scores[static_cast<std::size_t>(n)], n, scores[static_cast<std::size_t>(pick)], pick,
                                     g.preferred))
            continue;
          if (n == g.node || fits(n, adds_at(n))) pick = n;
        }
        if (pick >= 0 && pick != g.node) {
          res.node_load[static_cast<std::size_t>(pick)] += adds_at(pick);
          d.preferred = pick;
          d.placement = numa_placement::next_best;
        } else if (g.node >= 0) {
          d.preferred = g.node;
          d.placement = numa_placement::kept;
        } else {
          d.preferred = d.best;
          d.placement = numa_placement::over_capacity;
          res.node_load[static_cast<std::size_t>(d.best)] += adds_at(d.best);
        }
      }
    }
    // I-NUMA-7, I-NUMA-11: members choose among the parent's active nodes and its island's
    // edge, where there is room.
    if (!g.members.empty()) {
      if (s.f.NUMA_SWAP) {
        const int slot = f->total_mem != 0 ? swaps.add_group(scores, f->total_mem, d.best) : -1;
        for (const numa_member_input& m : g.members) swaps.add_member(slot, m);
      }
      const core::cpumask candidates = numa_member_candidates(sc, d.active, d.preferred);
      const auto member_fits = [&](int n, std::uint64_t load, std::uint64_t adds) { return room.fits(sc, n, load, adds); };
      for (const numa_member_input& m : g.members) {
        if (std::uint64_t* here = load_here(m)) *here -= m.load;
        res.member_nodes.push_back(place_member(sc, m, candidates, d.preferred, member_load, member_scores, member_fits));
      }
    }
    // I-NUMA-15: the kernel keeps a scan period per task, from that task's own faults.
    if (g.scan_period_ms > 0) {
      d.scan_period_ms = numa_next_scan_period(g.scan_period_ms, g.period, s);
      shortest = shortest == 0 ? d.scan_period_ms : std::min(shortest, d.scan_period_ms);
    }
    res.groups.push_back(std::move(d));
  }
  if (s.f.NUMA_SWAP) res.member_swaps = swaps.run(sc, res.member_nodes, s);
  res.scan_period_ms = shortest > 0 ? shortest : numa_next_scan_period(in.scan_period_ms, counts, s);
  return res;
}

}  // namespace rt::policy
