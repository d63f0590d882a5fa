// The SPECjbb2005-like workload of numart_jbb, independent of the runtime that runs it
// (docs/jbb.md, shared WORKLOADS.md "SPECjbb2005").
//
// A "JVM" instance owns W warehouses. A warehouse owns TPC-C-like tables (districts,
// customers, items, stock, orders, new-orders, history) as arrays of plain structs, each
// allocated on one node. Exactly one user per warehouse: a chain of tasks, one transaction in
// flight, dealt from a shuffled 33-card deck. The drivers (numart_driver.cpp,
// tbb_driver.cpp) only decide where each transaction task runs; the work is this file's.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace rt {
class runtime;
}

namespace jbb {

// ---- options --------------------------------------------------------------------------------

enum class placement { local, interleave, scatter };
enum class runtime_choice { numart, onetbb, both };
enum class tbb_arenas { single, per_node };

// The emulated memory cost of one touched chunk, in iterations of a dependent multiply-add loop.
// The data is sized down from SPECjbb's (2 MiB a warehouse against about 25 MB), so on a virtual
// topology it would sit in the caches where the original misses them: every touched chunk pays
// `local_cost` (a local DRAM access) and a chunk at distance d pays (d - 10) * remote_cost /
// kRemoteCostScale more, so equal costs follow the SLIT's ratio (d / 10 times the local cost).
// The defaults are about 80 ns each on the development VM (docs/jbb.md "Calibration", ADR 0024).
inline constexpr int kRemoteCostScale = 10;  // SLIT units from local (10) to distance 20
inline constexpr int kDefaultLocalCost = 64;
inline constexpr int kDefaultRemoteCost = 64;

struct options {
  std::string topology;          // RT_TOPOLOGY syntax; empty: from the environment
  int workers = 0;               // 0: one per core of the topology
  int instances = 2;
  int warehouses = 0;            // per instance; 0: max(1, workers / instances)
  int warehouse_kib = 2048;
  placement place = placement::local;
  std::uint64_t seed = 1;
  int local_cost = kDefaultLocalCost;
  int remote_cost = kDefaultRemoteCost;
  double warmup_s = 1.0;
  double seconds = 3.0;
  runtime_choice runtime = runtime_choice::numart;
  tbb_arenas arenas = tbb_arenas::single;
  bool balancer = true;
  bool json = false;
  bool periods_log = false;
};

// ---- transactions and the deck --------------------------------------------------------------

enum class txn : std::uint8_t { new_order, payment, customer_report, order_status, delivery, stock_level };
inline constexpr int kTxnTypes = 6;
const char* txn_name(txn t);

// splitmix64: small, fast and deterministic; one stream per purpose and warehouse.
class rng {
 public:
  explicit rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  std::uint32_t below(std::uint32_t n);  // uniform in [0, n), n > 0

 private:
  std::uint64_t state_;
};

// The 33-card deck: 10 new-order, 10 payment, 10 customer-report, 1 order-status,
// 1 delivery, 1 stock-level; shuffled (Fisher-Yates) before each pass.
class deck {
 public:
  static constexpr int kCards = 33;
  explicit deck(std::uint64_t seed);
  txn deal();

 private:
  void shuffle();
  rng rng_;
  std::array<txn, kCards> cards_{};
  int next_ = 0;
};

// The seed of a warehouse's random streams: deterministic in (seed, instance, warehouse, stream).
std::uint64_t stream_seed(std::uint64_t seed, int instance, int warehouse, int stream);
// FNV-1a over the first `passes` passes of every warehouse's deck: equal seeds and shapes give
// equal fingerprints, so two runs can be checked to deal the same transaction mix.
std::uint64_t deck_fingerprint(std::uint64_t seed, int instances, int warehouses, int passes);

// ---- latency --------------------------------------------------------------------------------

// Log-linear histogram of nanoseconds: 64 exact buckets, then 32 per power of two (relative
// error under 1/32), plus exact count, sum, sum of squares, min and max.
class histogram {
 public:
  void record(std::uint64_t ns);
  void merge(const histogram& o);
  std::uint64_t count() const { return count_; }
  double percentile_ns(unsigned per_mille) const;  // bucket midpoint; 0 when empty
  std::uint64_t min_ns() const { return count_ ? min_ : 0; }
  std::uint64_t max_ns() const { return max_; }
  double mean_ns() const;
  double stddev_ns() const;

 private:
  static constexpr int kLinear = 64;
  static constexpr int kSubBits = 5;
  static constexpr int kBuckets = kLinear + (64 - 6) * (1 << kSubBits);
  static int bucket_of(std::uint64_t ns);
  static double midpoint(int bucket);
  std::vector<std::uint64_t> buckets_ = std::vector<std::uint64_t>(kBuckets, 0);
  std::uint64_t count_ = 0, min_ = ~std::uint64_t{0}, max_ = 0;
  double sum_ = 0, sum_sq_ = 0;
};

// ---- the machine as the workload sees it ----------------------------------------------------

struct machine {
  int nodes = 1;
  std::vector<int> distance;  // nodes x nodes SLIT, row-major by logical node
  bool emulate = false;       // virtual topology with several nodes: memory costs are emulated
  int local_cost = 0;         // loop iterations per touched chunk (a local memory access)
  int remote_cost = 0;        // more loop iterations per remote chunk at distance 20 (kRemoteCostScale)
  std::string topology;       // the topology source as given
  bool virtual_topology = false;
  int dist(int a, int b) const { return distance[static_cast<std::size_t>(a * nodes + b)]; }
};

inline constexpr int kLocalDistance = 10;  // SLIT: the distance of a node to itself

// The emulated cost, in burn() iterations, of one touched chunk on node `data` for a thread on
// node `thread` (both valid nodes of `m`): local_cost, plus (distance - 10) x remote_cost /
// kRemoteCostScale when the nodes differ; 0 unless the costs are emulated.
inline std::uint64_t chunk_cost(const machine& m, int thread, int data) {
  if (!m.emulate) return 0;
  std::uint64_t cost = static_cast<std::uint64_t>(m.local_cost);
  if (thread != data) {
    const int extra = m.dist(thread, data) - kLocalDistance;
    cost += static_cast<std::uint64_t>(extra > 0 ? extra : 0) * static_cast<std::uint64_t>(m.remote_cost) / kRemoteCostScale;
  }
  return cost;
}

// ---- tables ---------------------------------------------------------------------------------

enum table_id { t_district, t_customer, t_item, t_stock, t_order, t_new_order, t_history, kTables };
const char* table_name(int t);

// Row counts of one warehouse, derived from --warehouse-kib.
struct sizing {
  std::uint32_t items = 0;                   // item and stock rows
  std::uint32_t customers_per_district = 0;
  std::uint32_t orders_per_district = 0;     // order and new-order ring capacity
  std::uint32_t history = 0;                 // payment history ring capacity
  static sizing from_kib(int kib);
  std::size_t bytes(int table) const;        // rounded up to whole pages
};

struct table {
  void* base = nullptr;
  std::size_t bytes = 0;
  int node = -1;  // the node it was allocated on (rt::node_of tells where it is now)
};

// Counts of one transaction's chunk accesses, and the emulated memory cost it paid.
class accessor;

// ---- a warehouse ----------------------------------------------------------------------------

enum class phase : int { warmup, measure, stop };

// I-JBB-1: a chain deals no card after it read phase::stop; its last task calls chain_done().
// I-JBB-2: chain_done()'s decrement is a chain's last access to run_control, and the main
// thread polls chains_left instead of blocking on a std::latch (whose count_down may still
// notify after the count reached zero), so run_control can be freed as soon as wait_chains()
// returns.
struct run_control {
  // Written by the main thread in measure() (release, at each phase change); read by every
  // transaction at its start (acquire: pairs with those stores; only the value matters).
  std::atomic<phase> now{phase::warmup};
  // Written by each chain's last task (release, once per chain); read by wait_chains (acquire),
  // which pairs with those decrements so every chain's counters and histograms are visible.
  std::atomic<std::ptrdiff_t> chains_left;
  explicit run_control(std::ptrdiff_t chains) : chains_left(chains) {}
  void chain_done() { chains_left.fetch_sub(1, std::memory_order_release); }
  void wait_chains() const;
};

class warehouse {
 public:
  warehouse(int instance, int index, const sizing& size, std::uint64_t seed);
  warehouse(const warehouse&) = delete;
  warehouse& operator=(const warehouse&) = delete;

  // Runs the next card of the deck on the calling thread, which the driver says is on logical
  // node `worker_node`. False when the run is stopping: the chain must end (and call
  // run_control::chain_done()) instead of spawning the next transaction.
  bool step(int worker_node, const machine& m, const run_control& ctl);

  int instance() const { return instance_; }
  int index() const { return index_; }
  // The node holding most of this warehouse's bytes (by rt::node_of of each table now).
  int data_node(const machine& m) const;
  void fill();  // populates the tables (main thread, before any chain starts)

  std::array<table, kTables> tables{};
  std::vector<warehouse*> peers;  // the other warehouses of the instance (remote order lines)

  // Written by the chain's running transaction (relaxed: one writer at a time, the chain's
  // tasks are ordered by their spawns); read by the main thread for progress lines (relaxed:
  // monotonic counters, a stale value only delays a figure) and after wait_chains() (which
  // orders the final values, I-JBB-2).
  std::atomic<std::uint64_t> completed{0};
  std::atomic<std::uint64_t> local_chunks{0};
  std::atomic<std::uint64_t> remote_chunks{0};
  std::atomic<std::uint64_t> unknown_chunks{0};  // memory or thread without a node

  // Chain-private (one transaction in flight); the main thread reads them after wait_chains().
  std::array<histogram, kTxnTypes> latency;
  std::uint64_t sink = 0;  // folds results so that no work is optimised away

 private:
  std::uint64_t run(txn t, accessor& a);
  std::uint64_t new_order(accessor& a);
  std::uint64_t payment(accessor& a);
  std::uint64_t customer_report(accessor& a);
  std::uint64_t order_status(accessor& a);
  std::uint64_t delivery(accessor& a);
  std::uint64_t stock_level(accessor& a);

  int instance_, index_;
  sizing size_;
  deck deck_;
  rng input_;  // transaction inputs
};

// ---- the whole company ----------------------------------------------------------------------

// All instances' warehouses and their data, allocated with runtime.numa_alloc on the nodes
// --placement chooses (from the calling thread, which is not a worker of `runtime`).
class workload {
 public:
  workload(const options& o, rt::runtime& runtime);
  ~workload();
  workload(const workload&) = delete;
  workload& operator=(const workload&) = delete;

  const machine& m() const { return machine_; }
  int instances() const { return static_cast<int>(instances_.size()); }
  int warehouses_per_instance() const { return static_cast<int>(instances_.front().size()); }
  warehouse& at(int instance, int index) { return *instances_[instance][index]; }
  std::size_t warehouse_count() const { return instances_.size() * instances_.front().size(); }

 private:
  machine machine_;
  std::vector<std::vector<std::unique_ptr<warehouse>>> instances_;
};

// ---- measuring ------------------------------------------------------------------------------

struct latency_summary {
  std::uint64_t count = 0;
  double min_us = 0, max_us = 0, mean_us = 0, stddev_us = 0, p50_us = 0, p99_us = 0;
};
latency_summary summarize(const histogram& h);

// What a driver can tell about an instance's placement (numart: its rt::group).
struct group_view {
  bool known = false;  // false for oneTBB: no groups
  int home = -1, preferred = -1;
  std::vector<int> active;
};

struct instance_result {
  double bops = 0;
  double local_share = 0;
  std::uint64_t local = 0, remote = 0;
  std::uint64_t warehouse_min = 0, warehouse_max = 0;  // "thread spread": least and most busy warehouse
  group_view view;
  std::vector<std::uint64_t> memory_bytes;  // per node, by rt::node_of at the end of the run
  latency_summary all;                      // every transaction of the instance
};

struct period {
  double t = 0;  // seconds since the measured window began
  std::vector<double> local_share;  // per instance, over this second
  std::vector<double> bops;
  std::vector<int> home;            // per instance (-1: unknown or oneTBB)
};

struct run_result {
  std::string runtime;  // "numart" or "onetbb"
  std::string detail;   // "balancer on", "arenas per-node", ...
  bool balancer = false;
  double seconds = 0;
  double bops_total = 0;
  std::uint64_t unknown_chunks = 0;
  std::vector<instance_result> instances;
  std::array<latency_summary, kTxnTypes> per_type{};
  std::vector<period> periods;
};

// Runs the warm-up and the measured window over chains the driver has started, prints a
// progress line per second to `progress`, stops the chains and waits for them. `view` tells an
// instance's placement (called from the calling thread while chains run).
run_result measure(workload& w, const options& o, run_control& ctl, const std::function<group_view(int)>& view,
                   std::ostream& progress);

}  // namespace jbb
