// The steal filter: does moving a task from one node to another help or hurt its group's
// memory locality? (docs/design/stealing.md §2; DESIGN.md §1 migrate_degrades_locality row.)
//
// migrate_degrades_locality() has the cases and the return values of the kernel's function
// as of Linux 4.12 with seed 000 patch 5 (Rik van Riel, "sched/numa: Override part of
// migrate_degrades_locality() when idle balancing"): 1 degrades, 0 does not, -1 no opinion.
// migrate_improves_locality() is the kernel's older companion (3.13 .. 4.1, NUMA_FAVOUR_HIGHER),
// restricted to group faults; it tells a thief on another node which tasks to take first.
// classify_steal() combines both into the decision the ladder and the node balancer apply,
// and pick_batch() orders a batch of candidates by it.
//
// Inputs are snapshots taken by the mechanism (numa/ group stats, queue counters); nothing
// here reads shared state. Pure: no threads, no atomics, no clocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tunables/tunables.hpp"

namespace rt::policy {

// Why the thief is looking for work: the kernel's enum cpu_idle_type.
enum class balance_kind : std::uint8_t {
  idle,        // CPU_IDLE: a worker with nothing to run searches (the steal ladder)
  newly_idle,  // CPU_NEWLY_IDLE: a worker that just ran out of work searches at once
  periodic,    // CPU_NOT_IDLE: the balancer's periodic pass over node queues (busy balancing)
};

// The seed's return values, kept as the underlying values.
enum class locality_verdict : int {
  no_opinion = -1,    // locality does not matter for this move
  not_degrading = 0,  // the move keeps or improves locality (migration preferred)
  degrades = 1,       // the move takes the task away from where its group's memory is
};

enum class locality_gain : std::uint8_t { none, improves };

// What the ladder / balancer does with one candidate task.
enum class steal_verdict : std::uint8_t {
  prefer,       // take before the others: the move improves locality
  accept,       // take: locality has no objection
  last_resort,  // take only when nothing better is in the batch: the move degrades locality,
                // but leaving a worker idle is worse (I-STEAL-6, I-STEAL-8)
  refuse,       // leave it where it is (I-STEAL-7); it is never dropped (I-STEAL-9)
};

const char* to_string(balance_kind k);
const char* to_string(locality_verdict v);
const char* to_string(locality_gain g);
const char* to_string(steal_verdict v);

// Snapshot of a task's group (numa_group). A task without a group is passed as nullptr.
struct group_locality {
  int preferred_node = -1;                // logical node, -1 while the group has none
  std::span<const std::uint64_t> faults;  // decayed fault samples per logical node
  std::uint64_t total_faults = 0;         // 0: no samples yet (the seed's !p->numa_faults)
};

// The kernel's lb_env, reduced to what the filter reads.
struct migration_env {
  int src_node = 0;  // the victim's node (logical)
  int dst_node = 0;  // the thief's node (logical)
  balance_kind kind = balance_kind::periodic;
  // Tasks queued at the source (the seed's src_rq->nr_running) and, among them, those whose
  // group prefers src_node (nr_preferred_running). When every queued task prefers the source,
  // refusing them all would make balancing impossible, so the seed has no opinion then.
  std::uint64_t src_queued = 0;
  std::uint64_t src_queued_preferred = 0;
  // Workers on src_node; 0 for a node without workers (cpuless, or a partial pool), whose
  // queued tasks nobody but a thief can run (I-STEAL-8).
  std::uint32_t src_node_workers = 0;
};

// 1 degrades, 0 does not, -1 no opinion; the cases in order, as in the seed:
//   NUMA_BALANCING off, no group, or no fault samples       -> no_opinion
//   src_node == dst_node (not a NUMA move)                    -> no_opinion
//   src is the preferred node: degrades if the source queue holds tasks that do not prefer
//     it (src_queued > src_queued_preferred), else no_opinion
//   dst is the preferred node                                 -> not_degrading
//   idle or newly-idle thief and IDLE_OVERRIDE_LOCALITY on    -> no_opinion (000 patch 5)
//   otherwise: degrades when the group has fewer faults on dst than on src, else not_degrading.
// Requires preferred_node < faults.size(), src and dst < faults.size() when total_faults > 0.
locality_verdict migrate_degrades_locality(const group_locality* g, const migration_env& env,
                                           const tun::features& f);

// improves when dst is the group's preferred node, or when neither node is preferred and the
// group has more faults on dst than on src. Never improves when migrate_degrades_locality()
// says degrades (I-STEAL-10): leaving the preferred node is never an improvement here,
// although the 3.13 kernel's weight comparison could say so.
locality_gain migrate_improves_locality(const group_locality* g, const migration_env& env,
                                        const tun::features& f);

// improves -> prefer; degrades -> refuse in periodic balancing, last_resort for an idle or
// newly-idle thief with IDLE_OVERRIDE_LOCALITY on, or when the source has no workers;
// anything else -> accept.
steal_verdict classify_steal(const group_locality* g, const migration_env& env, const tun::features& f);

// What an idle thief that would give a task back to its group's preferred node knows
// (mechanism snapshots, I-STEAL-13, I-STEAL-15, I-STEAL-16, I-STEAL-18).
struct refusal_env {
  std::int64_t thief_refusals = 0;  // tasks this thief gave back in a row
  std::uint32_t src_workers = 0;    // workers of the source node
  std::uint64_t src_backlog = 0;    // tasks queued on the source node (its injection queue and
                                    // its workers' deques), this one included
  std::uint32_t src_running = 0;    // workers of the source node not parked
  std::uint64_t src_util = 0;       // the sum of its workers' cpu_util() (kCapacityScale each)
  std::uint64_t src_exported = 0;   // its exported demand (demand_util(), I-STEAL-17)
  std::int64_t src_last_start_ns = 0;  // predicted start of its last queued task, from now
                                       // (predicted_last_start_ns(), I-STEAL-18)
  std::int64_t src_task_ns = 0;        // its workers' group-task length (0: not known)
};

// I-STEAL-18: the mean of the known task lengths (0 stands for not known yet); 0 when none is.
std::int64_t mean_known_length_ns(std::span<const std::int64_t> task_ns) noexcept;

// I-STEAL-18: when the last of `backlog` queued tasks would start, from now, on workers that are
// free in remaining_ns[i] (0: free now) and then take task_ns[i] per task (0: not known yet, the
// mean of the known lengths stands in). Each task goes to the worker that frees first. 0 when no
// length is known. remaining_ns is scratch: the function overwrites it. Cost: backlog times the
// workers; the caller bounds the backlog.
std::int64_t predicted_last_start_ns(std::span<std::int64_t> remaining_ns, std::span<const std::int64_t> task_ns,
                                     std::uint64_t backlog);

// Whether a worker times its next top-level group task (I-STEAL-18): always while its mean
// length is unknown (0) or at least group_task_timed_min_ns; else only once `untimed` earlier
// ones went untimed in a row reaches group_task_sample_interval - 1, so that two clock reads
// stay a small part of short tasks and the mean still follows a change of the workload.
bool time_group_task(std::int64_t mean_ns, std::int64_t untimed, const tun::tunables& t) noexcept;

// Whether an idle thief keeps a last_resort task it found queued on its group's preferred node
// instead of giving it back (a node without workers has none to wait for: keep, I-STEAL-8).
// The kernel's can_migrate_task() moves a task whose move degrades
// locality once balancing failed more than cache_nice_tries times; and leaving a core idle is
// often worse than degrading locality (000 patch 5). Keep when the thief has given back
// numa_steal_refusals tasks in a row (I-STEAL-13), or when the source node's backlog reaches
// numa_overload_queued_pct percent of its workers (I-STEAL-15): a backlog that long is not the
// short queue of a node with spare capacity, and its last task would wait for whole rounds
// of the node's work while a worker here idles. With PREDICTED_WAIT, keep also when that last
// task is predicted to start later than numa_spill_wait_pct of a group task's length from now
// (I-STEAL-18): a wait that long costs more than the locality it keeps, and the prediction,
// unlike the count, sees whether the node's workers have just started their tasks or are about
// to finish them. With OVERLOADED_NODE_STEAL, keep also when the
// source node is overloaded as the kernel's group_is_overloaded() says (I-STEAL-16): more
// runnable tasks than workers (running + backlog > workers) and util * imbalance_pct_numa >
// workers * kCapacityScale * 100. A node that already runs above its capacity's margin does not
// drain its queue; waiting for it only lengthens every wait there. With EXPORTED_NODE_UTIL the
// utilisation is the node's demand, src_util + src_exported (I-STEAL-17): the work its tasks
// brought to other nodes counts too, else every task kept elsewhere lowers the util that
// decides whether the next one is kept, and the served util settles just under the margin.
bool keep_refused_steal(const refusal_env& env, const tun::settings& s);

// Indexes of the candidates to take, at most `max` (a batch limit chosen by the caller):
// every prefer in batch order, then every accept, then every last_resort; never a refuse.
std::vector<std::size_t> pick_batch(std::span<const steal_verdict> verdicts, std::size_t max);

}  // namespace rt::policy
