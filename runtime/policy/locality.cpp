#include "policy/locality.hpp"

#include <initializer_list>

#include "core/assert.hpp"
#include "policy/layout.hpp"

namespace rt::policy {

const char* to_string(balance_kind k) {
  switch (k) {
    case balance_kind::idle:
      return "idle";
    case balance_kind::newly_idle:
      return "newly_idle";
    case balance_kind::periodic:
      return "periodic";
  }
  return "?";
}

const char* to_string(locality_verdict v) {
  switch (v) {
    case locality_verdict::no_opinion:
      return "no_opinion";
    case locality_verdict::not_degrading:
      return "not_degrading";
    case locality_verdict::degrades:
      return "degrades";
  }
  return "?";
}

const char* to_string(locality_gain g) {
  switch (g) {
    case locality_gain::none:
      return "none";
    case locality_gain::improves:
      return "improves";
  }
  return "?";
}

const char* to_string(steal_verdict v) {
  switch (v) {
    case steal_verdict::prefer:
      return "prefer";
    case steal_verdict::accept:
      return "accept";
    case steal_verdict::last_resort:
      return "last_resort";
    case steal_verdict::refuse:
      return "refuse";
  }
  return "?";
}

namespace {

// The guards both functions share: the kernel returns early unless NUMA balancing is on, the
// task has fault statistics and the move crosses nodes (SD_NUMA, src_nid != dst_nid).
bool locality_matters(const group_locality* g, const migration_env& env, const tun::features& f) {
  if (!f.NUMA_BALANCING || g == nullptr || g->total_faults == 0) return false;
  if (env.src_node == env.dst_node) return false;
  const std::size_t nodes = g->faults.size();
  RT_ASSERT(env.src_node >= 0 && env.dst_node >= 0 && static_cast<std::size_t>(env.src_node) < nodes &&
                static_cast<std::size_t>(env.dst_node) < nodes,
            "I-STEAL-11", "group fault snapshot does not cover the source and destination nodes");
  return true;
}

std::uint64_t faults_on(const group_locality& g, int node) { return g.faults[static_cast<std::size_t>(node)]; }

}  // namespace

locality_verdict migrate_degrades_locality(const group_locality* g, const migration_env& env,
                                           const tun::features& f) {
  // Tasks without a group, or whose group has no samples yet, are never refused (I-STEAL-5).
  if (!locality_matters(g, env, f)) return locality_verdict::no_opinion;

  // Migrating away from the preferred node is always bad -- unless every task queued at the
  // source prefers it, in which case refusing would block all balancing (seed, 4.12 fair.c).
  if (env.src_node == g->preferred_node) {
    return env.src_queued > env.src_queued_preferred ? locality_verdict::degrades : locality_verdict::no_opinion;
  }

  // Encourage migration to the preferred node.
  if (env.dst_node == g->preferred_node) return locality_verdict::not_degrading;

  // 000 patch 5: "Leaving a core idle is often worse than degrading locality." Several NAS
  // benchmarks ran slower with NUMA balancing on, with more idle time; overriding this final
  // test (the preferred-node tests above still apply) for idle balancing recovered them.
  if (env.kind != balance_kind::periodic && f.IDLE_OVERRIDE_LOCALITY) return locality_verdict::no_opinion;

  // Neither node is preferred: compare where the group's memory accesses went.
  return faults_on(*g, env.dst_node) < faults_on(*g, env.src_node) ? locality_verdict::degrades
                                                                     : locality_verdict::not_degrading;
}

locality_gain migrate_improves_locality(const group_locality* g, const migration_env& env,
                                        const tun::features& f) {
  if (!locality_matters(g, env, f)) return locality_gain::none;
  if (env.dst_node == g->preferred_node) return locality_gain::improves;
  // Leaving the preferred node is never an improvement, so that a task is never both
  // preferred and refused (I-STEAL-10).
  if (env.src_node == g->preferred_node) return locality_gain::none;
  return faults_on(*g, env.dst_node) > faults_on(*g, env.src_node) ? locality_gain::improves : locality_gain::none;
}

steal_verdict classify_steal(const group_locality* g, const migration_env& env, const tun::features& f) {
  // A thief on another node takes the tasks that move toward their group's memory first.
  if (migrate_improves_locality(g, env, f) == locality_gain::improves) return steal_verdict::prefer;
  if (migrate_degrades_locality(g, env, f) != locality_verdict::degrades) return steal_verdict::accept;
  // Nobody on a node without workers can run the task: refusing it would strand it (I-STEAL-8).
  if (env.src_node_workers == 0) return steal_verdict::last_resort;
  // The kernel's refusal is soft: can_migrate_task() still moves a "hot" task once
  // nr_balance_failed exceeds cache_nice_tries, so an idle CPU is not kept idle forever. The
  // ladder has no failure counter, so an idle thief instead takes a degrading task as a last
  // resort, after everything else it can see (I-STEAL-6). With IDLE_OVERRIDE_LOCALITY off
  // the refusal is hard, which is the pre-patch-5 behaviour the feature exists to measure.
  if (env.kind != balance_kind::periodic && f.IDLE_OVERRIDE_LOCALITY) return steal_verdict::last_resort;
  return steal_verdict::refuse;  // I-STEAL-7
}

bool keep_refused_steal(const refusal_env& env, const tun::settings& s) {
  const tun::tunables& t = s.t;
  if (env.thief_refusals >= t.numa_steal_refusals) return true;
  // backlog >= pct% of the workers, in integers; always true on a node without workers.
  if (env.src_backlog * 100 >= static_cast<std::uint64_t>(t.numa_overload_queued_pct) * env.src_workers) return true;
  // In 128 bits: a length of days times numa_spill_wait_pct's range would overflow 64.
  __extension__ using wide = __int128;
  if (s.f.PREDICTED_WAIT && env.src_task_ns > 0 &&
      static_cast<wide>(env.src_last_start_ns) * 100 > static_cast<wide>(t.numa_spill_wait_pct) * env.src_task_ns)
    return true;
  if (!s.f.OVERLOADED_NODE_STEAL) return false;
  // group_is_overloaded(): sum_nr_running > group_weight, then capacity * 100 < util * imbalance_pct.
  if (env.src_running + env.src_backlog <= env.src_workers) return false;
  const std::uint64_t capacity = static_cast<std::uint64_t>(env.src_workers) * kCapacityScale;
  const std::uint64_t util = env.src_util + (s.f.EXPORTED_NODE_UTIL ? env.src_exported : 0);
  return capacity * 100 < util * static_cast<std::uint64_t>(t.imbalance_pct_numa);
}

bool time_group_task(std::int64_t mean_ns, std::int64_t untimed, const tun::tunables& t) noexcept {
  return mean_ns <= 0 || mean_ns >= t.group_task_timed_min_ns || untimed + 1 >= t.group_task_sample_interval;
}

std::int64_t mean_known_length_ns(std::span<const std::int64_t> task_ns) noexcept {
  std::int64_t sum = 0;
  std::int64_t known = 0;
  for (const std::int64_t l : task_ns) {
    if (l <= 0) continue;
    sum += l;
    ++known;
  }
  return known > 0 ? sum / known : 0;
}

std::int64_t predicted_last_start_ns(std::span<std::int64_t> remaining_ns, std::span<const std::int64_t> task_ns,
                                     std::uint64_t backlog) {
  RT_ASSERT(remaining_ns.size() == task_ns.size(), "I-STEAL-18",
            "predicted_last_start_ns: remaining times and task lengths of different lengths");
  const std::int64_t known = mean_known_length_ns(task_ns);
  if (known <= 0 || remaining_ns.empty()) return 0;
  std::int64_t start = 0;
  for (std::uint64_t k = 0; k < backlog; ++k) {
    std::size_t first = 0;
    for (std::size_t i = 1; i < remaining_ns.size(); ++i)
      if (remaining_ns[i] < remaining_ns[first]) first = i;
    start = remaining_ns[first];
    remaining_ns[first] += task_ns[first] > 0 ? task_ns[first] : known;
  }
  return start;
}

std::vector<std::size_t> pick_batch(std::span<const steal_verdict> verdicts, std::size_t max) {
  std::vector<std::size_t> picked;
  for (const steal_verdict wanted : {steal_verdict::prefer, steal_verdict::accept, steal_verdict::last_resort}) {
    for (std::size_t i = 0; i < verdicts.size() && picked.size() < max; ++i) {
      if (verdicts[i] == wanted) picked.push_back(i);
    }
  }
  return picked;
}

}  // namespace rt::policy
