// Issue 5's locality benchmark: how much of a group's work stays on its home node as the load
// on that node grows, and how long workers sit parked while work waits, with the locality
// filter's idle override (seed 000 patch 5, docs/design/stealing.md §2, I-STEAL-6/-13) on and
// off, and with the filter off altogether.
//
//   numart_bench_locality [--quick] [--rounds=N] [--window-ms=MS] [--background=PCT] [--dump=PREFIX]
//
// Machine: the 4-socket, 8-node Opteron (tests/data/topologies/64amd64-4p2n4ca2co.xml, SLIT
// 10/16/22) with 16 workers, 2 per node, in virtual-topology mode (DESIGN.md §7): this is an
// emulation, the 16 workers time-share the host's cores. RT_TOPOLOGY overrides the topology,
// RT_TUNE applies to every runtime (each variant appends its features, so they win).
//
// Workload, per run (one fresh runtime per run):
// * kGroups groups whose preferred node is set by hand to kHomeNode (rt::group::
//   set_preferred_node; they register no memory, so the balancer has no samples and keeps it).
// * Load: an outside thread spawns the groups' tasks (alternating groups) as a Poisson stream
//   for --window-ms. Every task occupies its worker for kTaskNs of wall time on average (it
//   sleeps: a virtual worker busy for that long without taking one of the 2 real cores from the
//   others; the sleep is shortened by the oversleep measured on the earlier tasks, and task_us
//   reports the occupancy reached).
//   The arrival rate is LOAD% of the home node's capacity: rate = LOAD/100 * workers(home) /
//   kTaskNs, so 100% offers exactly what the home node's workers can run and 150% offers half
//   again as much: then the home node alone cannot keep up and idle thieves are needed.
// * Background: the same thread spawns ungrouped tasks of the same length, spawn_on each other
//   node in turn, at --background% (default 50) of the other nodes' capacity, so that the
//   thieves elsewhere are busy part of the time and idle part of the time.
// Every variant of a round replays the same arrival schedule (same seed), and variants
// alternate within a round; the table shows medians over the rounds.
//
// Metrics:
// * home%: of the group tasks, the share that started on a worker of kHomeNode (counted inside
//   each task with rt::current_node()); home%(trace) is the same figure from the trace
//   summary's per-group locality, as a cross-check.
// * idlewt%: the trace summary's "one parked worker per waiting task" (`numart trace
//   summarize`, runtime/trace/summary.cpp, ADR 0016): the integral over time of min(workers
//   parked, tasks waiting that no woken worker is on its way to), as a share of worker time
//   (workers x trace span). Parks come from the trace (RT_TRACE via config::trace_path) and end
//   at their wake (the waker's stamp): a worker woken but not yet run by the OS (16 workers on
//   2 cores) is not idle here. The waits are the benchmark's own exact spawn->start times
//   (CLOCK_MONOTONIC, the trace's clock), fed to rt::trace::summarize in place of the trace's
//   spawn events, which miss spawn_on and can carry a hand-off's spawn after its start (sumwt%
//   shows the figure from the trace's own events, for comparison). Any waiting task counts,
//   background ones included. anywt%: the definition before ADR 0016, every parked worker while
//   any task waited. grpwt% counts only the group tasks' waits; grpwt_us is their mean wait and
//   grp_p99 its 99th percentile (nearest rank, per run).
// * counters (rt::stats, runtime/stats/counters.def): steals_refused, steals_overridden,
//   backoff_wakeups, node_balance_moves, node_balance_refused (and, in the JSON, steals_remote,
//   parks, mailbox_handoffs): per run, from runtime::stats() after shutdown().
// --dump=PREFIX writes every run's raw material to PREFIX.load<L>.<variant>.r<R>.txt, for
// scripts/report/locality_decompose.py (which splits idlewt% into its parts): a line
// "S span_ns workers home_node", one "W worker node" per worker, one "P worker ts dur runnable
// join" per park slice of the trace, one "T group spawn start end worker" per task (ns from the
// trace's origin; group 1 for a group task, 0 for a background one; worker:
// rt::runtime::current_worker() in the task).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "harness.hpp"
#include "rt/rt.hpp"
#include "trace/summary.hpp"

namespace {

constexpr int kWorkers = 16;                       // 2 per node on the 8-node Opteron
constexpr int kHomeNode = 3;                       // the groups' preferred node
constexpr int kGroups = 2;
constexpr std::int64_t kTaskNs = 1'000'000;        // wall time a task occupies its worker
constexpr int kLoadsPct[] = {25, 50, 100, 150};    // offered load on the home node
constexpr int kDefaultBackgroundPct = 50;          // offered load on every other node
constexpr int kDefaultRounds = 5;
constexpr int kQuickRounds = 2;
constexpr int kDefaultWindowMs = 500;
constexpr int kQuickWindowMs = 150;
constexpr double kBarHomePct = 95.0;               // issue 5: home fraction at 50% load
constexpr int kBarHomeLoad = 50;
constexpr double kBarIdleWaitsPct = 1.0;           // issue 5: idle-while-work-waits, override on
constexpr const char* kDefaultTopology = "64amd64-4p2n4ca2co.xml";
// A spawn this much later than its scheduled arrival marks the run in a closing note (the
// spawner was not run: the arrivals it owed come as one burst).
constexpr double kLateWarnMs = 5.0;

struct variant {
  const char* side;  // harness side name
  const char* tune;  // features appended to RT_TUNE
  const char* what;
};
// The filter with the idle override (the default), the same without I-STEAL-19's delegation of
// other nodes' work (the default until session 25), without I-STEAL-18's
// predicted-wait rule (the default until session 23), the same with I-STEAL-16's overloaded-node
// rule on the served utilisation only (without I-STEAL-17), without that rule, the filter with hard refusals (pre-patch-5), and no filter (NUMA_BALANCING off:
// migrate_degrades_locality has no opinion, so every steal is accepted; placement still follows
// the preferred node, and the balancer thread does not run).
constexpr variant kVariants[] = {
    {"numart.override", "", "filter on, idle override on (default)"},
    {"numart.no_delegate", "NO_DELEGATE_REMOTE_WORK", "filter on, idle override on, home workers take remote work themselves (no I-STEAL-19)"},
    {"numart.no_predicted", "NO_PREDICTED_WAIT", "filter on, idle override on, no predicted-wait rule (I-STEAL-18)"},
    {"numart.no_exported", "NO_EXPORTED_NODE_UTIL", "filter on, idle override on, overload from served util only (I-STEAL-17)"},
    {"numart.no_overload", "NO_OVERLOADED_NODE_STEAL", "filter on, idle override on, no overloaded-node rule (I-STEAL-16)"},
    {"numart.no_override", "NO_IDLE_OVERRIDE_LOCALITY", "filter on, idle override off"},
    {"numart.no_filter", "NO_NUMA_BALANCING", "filter off (NUMA_BALANCING off)"},
};

struct options {
  bool quick = false;
  int rounds = kDefaultRounds;
  int window_ms = kDefaultWindowMs;
  int background_pct = kDefaultBackgroundPct;
  std::string dump;  // --dump=PREFIX: every run's parks and task times (empty: none)
};

int parse_int(const std::string& arg, const std::string& value, int lo, int hi) {
  std::size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || v < lo || v > hi)
    throw std::invalid_argument(arg + "='" + value + "': expected a whole number from " + std::to_string(lo) + " to " +
                                std::to_string(hi));
  return v;
}

options parse(int argc, char** argv) {
  options o;
  o.quick = bench::quick_mode(argc, argv);
  if (o.quick) {
    o.rounds = kQuickRounds;
    o.window_ms = kQuickWindowMs;
  }
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto eq = a.find('=');
    const std::string key = a.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : a.substr(eq + 1);
    if (key == "--rounds" && eq != std::string::npos)
      o.rounds = parse_int(key, value, 1, 1000);
    else if (key == "--window-ms" && eq != std::string::npos)
      o.window_ms = parse_int(key, value, 10, 600000);
    else if (key == "--background" && eq != std::string::npos)
      o.background_pct = parse_int(key, value, 0, 200);
    else if (key == "--dump" && eq != std::string::npos && !value.empty())
      o.dump = value;
    else
      throw std::invalid_argument("unknown argument '" + a +
                                  "'; usage: numart_bench_locality [--quick] [--rounds=N] [--window-ms=MS] [--background=PCT] "
                                  "[--dump=PREFIX]");
  }
  return o;
}

// One arrival of the schedule: a group task (group >= 0) or a background task on `node`.
struct arrival {
  std::int64_t at_ns;
  int group;
  int node;
};

// Poisson arrivals of `rate_per_ns` over [0, window_ns).
std::vector<std::int64_t> poisson(std::mt19937_64& rng, double rate_per_ns, std::int64_t window_ns) {
  std::vector<std::int64_t> out;
  if (rate_per_ns <= 0) return out;
  std::exponential_distribution<double> gap(rate_per_ns);
  for (double t = gap(rng); t < static_cast<double>(window_ns); t += gap(rng)) out.push_back(static_cast<std::int64_t>(t));
  return out;
}

std::vector<arrival> make_schedule(std::uint64_t seed, int load_pct, int background_pct, int home_workers,
                                   const std::vector<int>& other_nodes, int other_workers, std::int64_t window_ns) {
  std::mt19937_64 rng(seed);
  std::vector<arrival> s;
  const double task = static_cast<double>(kTaskNs);
  int g = 0;
  for (std::int64_t t : poisson(rng, load_pct / 100.0 * home_workers / task, window_ns)) {
    s.push_back({t, g, kHomeNode});
    g = (g + 1) % kGroups;
  }
  std::size_t n = 0;
  for (std::int64_t t : poisson(rng, background_pct / 100.0 * other_workers / task, window_ns))
    s.push_back({t, -1, other_nodes[n++ % other_nodes.size()]});
  std::stable_sort(s.begin(), s.end(), [](const arrival& a, const arrival& b) { return a.at_ns < b.at_ns; });
  return s;
}

// Where the group tasks ran. Written by the workers running the tasks (relaxed increments),
// read by the main thread after runtime::shutdown(), which joins the workers: the join orders
// every increment before the read, so relaxed suffices.
struct placement_counts {
  std::atomic<std::uint64_t> group_tasks{0};
  std::atomic<std::uint64_t> group_on_home{0};
};

// When one task was spawned and started, CLOCK_MONOTONIC ns (steady_clock on libstdc++, the
// trace's clock). spawn_ns: written by the spawning thread before the spawn; start_ns: by the
// worker that runs the task, once. Both read by the main thread after shutdown() joined the
// workers, so plain fields suffice (the spawn and the join order them).
struct task_times {
  std::int64_t spawn_ns = 0;
  std::int64_t start_ns = -1;
  std::int64_t end_ns = -1;
  bool group = false;
  int worker = -1;  // the worker that ran it (written with start_ns)
};

std::int64_t monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The benchmark's estimate of how late a sleep ends, ns: written by every worker running a task
// (relaxed load and store, last writer wins: it is an estimate, and a lost update only delays its
// convergence), read by the same. Kept across runs so that only the first run's first tasks pay
// for its warm-up. On this PVM guest a 1 ms sleep ends 100-170 us late (timer slack and the
// guest's timer latency): sleeping kTaskNs would make every task 13 % longer than the load
// figures assume, and "50 % load" would offer 56 %.
std::atomic<std::int64_t> g_oversleep_ns{0};

// Occupies the calling worker for kTaskNs of wall time on average: sleeps to kTaskNs minus the
// estimated oversleep, then folds this sleep's own oversleep into the estimate (1/8 weight).
// Returns the task's end, CLOCK_MONOTONIC ns.
std::int64_t occupy_worker(std::int64_t start_ns) {
  const std::int64_t early = g_oversleep_ns.load(std::memory_order_relaxed);
  const std::int64_t wake_at = start_ns + kTaskNs - early;
  std::this_thread::sleep_for(std::chrono::nanoseconds(std::max<std::int64_t>(0, wake_at - monotonic_ns())));
  const std::int64_t end = monotonic_ns();
  const std::int64_t late = std::max<std::int64_t>(0, end - wake_at);
  g_oversleep_ns.store(std::clamp<std::int64_t>(early + (late - early) / 8, 0, kTaskNs / 2), std::memory_order_relaxed);
  return end;
}

// The trace's origin (otherData.numart.origin_ns, CLOCK_MONOTONIC ns): parsed_trace keeps only
// the span, and the benchmark's own timestamps must be put on the trace's time axis.
std::uint64_t trace_origin_ns(const std::string& text) {
  const std::string key = "\"origin_ns\"";
  std::size_t at = text.find(key);
  if (at == std::string::npos) throw std::runtime_error("the trace has no origin_ns");
  at = text.find_first_not_of(" :", at + key.size());
  if (at == std::string::npos) throw std::runtime_error("the trace's origin_ns has no value");
  return std::strtoull(text.c_str() + at, nullptr, 10);
}

// The trace with its spawns and task starts replaced by the benchmark's exact spawn->start
// pairs (unique ids; only group tasks when `groups_only`), its parks and tracks kept: fed to
// rt::trace::summarize, it gives the summary's "parked while work waited" over exactly known
// waits. The trace's own pairing cannot give that here: spawn_on (push_node) records no spawn
// event, and an outside spawn handed to an idle worker's mailbox is recorded after the
// hand-off, so the task's start can carry an earlier timestamp than its spawn.
rt::trace::parsed_trace with_exact_waits(const rt::trace::parsed_trace& t, const std::vector<task_times>& times,
                                         std::uint64_t origin, bool groups_only) {
  rt::trace::parsed_trace out = t;
  out.spawns.clear();
  out.tasks.clear();
  const auto rel = [origin](std::int64_t ns) {
    const auto u = static_cast<std::uint64_t>(ns);
    return u > origin ? u - origin : 0;
  };
  for (std::size_t i = 0; i < times.size(); ++i) {
    const task_times& x = times[i];
    if (x.start_ns < 0 || (groups_only && !x.group)) continue;
    rt::trace::parsed_trace::spawn sp;
    sp.ts = rel(x.spawn_ns);
    sp.id = i + 1;
    out.spawns.push_back(sp);
    rt::trace::parsed_trace::task k;
    k.ts = rel(x.start_ns);
    k.id = i + 1;
    out.tasks.push_back(k);
  }
  return out;
}

struct run_result {
  double seconds = 0;             // first arrival to the end of the drain
  double home_pct = 0;
  double home_pct_trace = 0;
  double idle_waits_pct = 0;      // one parked worker per waiting task (exact waits), of worker time
  double any_waits_pct = 0;       // every parked worker while any task waited (exact waits)
  double group_waits_pct = 0;     // one parked worker per waiting group task (exact waits)
  double summary_waits_pct = 0;   // the same as idle_waits_pct from the trace's own events
  double group_wait_us = 0;       // mean spawn->start of the group tasks
  double group_wait_p99_us = 0;   // its 99th percentile (nearest rank)
  double task_us = 0;             // mean start->end of every task (the target is kTaskNs)
  double group_tasks = 0;
  double spawner_late_ms = 0;     // the most any spawn came after its scheduled arrival
  std::uint64_t trace_dropped = 0;
  bool preferred_kept = true;     // both groups still preferred kHomeNode at the end
  std::map<std::string, double> counters;
};

const char* kCounters[] = {"steals_refused", "steals_overridden", "backoff_wakeups", "node_balance_moves",
                           "node_balance_refused", "steals_remote", "parks", "mailbox_handoffs"};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the trace '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The summary's two idle figures as shares of worker time (workers x span): every parked
// worker while any task waited, and one parked worker per waiting task.
struct idle_pcts {
  double any = 0;
  double per_task = 0;
};

idle_pcts parked_while_queued_pct(const rt::trace::parsed_trace& t) {
  const rt::trace::trace_summary s = rt::trace::summarize(t, 1);
  const double worker_ns = static_cast<double>(s.workers) * static_cast<double>(s.span_ns);
  if (worker_ns <= 0) return {};
  return {100.0 * static_cast<double>(s.parked_while_queued_ns) / worker_ns,
          100.0 * static_cast<double>(s.parked_for_waiting_ns) / worker_ns};
}

// --dump: the run's park slices and exact task times on the trace's time axis (see the header).
void write_dump(const std::string& path, const rt::trace::parsed_trace& t, const std::vector<task_times>& times,
                std::uint64_t origin) {
  std::ofstream f(path);
  f << "S " << t.span_ns << ' ' << t.workers() << ' ' << kHomeNode << '\n';
  for (const auto& tr : t.tracks)
    if (tr.worker >= 0) f << "W " << tr.worker << ' ' << tr.node << '\n';
  for (const auto& p : t.parks)
    f << "P " << p.worker << ' ' << p.ts << ' ' << p.dur << ' ' << p.runnable << ' ' << (p.join ? 1 : 0) << '\n';
  const auto rel = [origin](std::int64_t ns) { return ns - static_cast<std::int64_t>(origin); };
  for (const task_times& x : times)
    f << "T " << (x.group ? 1 : 0) << ' ' << rel(x.spawn_ns) << ' ' << rel(x.start_ns) << ' ' << rel(x.end_ns) << ' '
      << x.worker << '\n';
  if (!f) throw std::runtime_error("cannot write the dump '" + path + "'");
}

run_result run_once(const rt::config& base, const variant& v, const std::vector<arrival>& schedule,
                    const std::string& trace_path, const std::string& dump_path, bool note) {
  rt::config cfg = base;
  if (*v.tune != '\0') cfg.tune += std::string(cfg.tune.empty() ? "" : ",") + v.tune;
  cfg.trace_path = trace_path;
  placement_counts counts;
  std::vector<task_times> times(schedule.size());
  run_result r;
  rt::stats st;
  {
    rt::runtime runtime{cfg};
    if (note) bench::note_runtime(runtime);
    std::vector<std::unique_ptr<rt::group>> groups;
    for (int g = 0; g < kGroups; ++g) {
      groups.push_back(std::make_unique<rt::group>(runtime, "home-" + std::to_string(g)));
      groups.back()->set_preferred_node(rt::node_id{kHomeNode});
    }
    const auto t0 = std::chrono::steady_clock::now();
    const std::int64_t t0_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t0.time_since_epoch()).count();
    std::int64_t late_ns = 0;
    for (std::size_t i = 0; i < schedule.size(); ++i) {
      const arrival& a = schedule[i];
      task_times* slot = &times[i];
      std::this_thread::sleep_until(t0 + std::chrono::nanoseconds(a.at_ns));
      slot->group = a.group >= 0;
      slot->spawn_ns = monotonic_ns();
      late_ns = std::max(late_ns, slot->spawn_ns - (t0_ns + a.at_ns));
      if (a.group >= 0) {
        runtime
            .spawn(*groups[static_cast<std::size_t>(a.group)],
                   [&counts, slot] {
                     slot->start_ns = monotonic_ns();
                     slot->worker = rt::runtime::current_worker();
                     if (rt::current_node().value == kHomeNode) counts.group_on_home.fetch_add(1, std::memory_order_relaxed);
                     counts.group_tasks.fetch_add(1, std::memory_order_relaxed);
                     slot->end_ns = occupy_worker(slot->start_ns);
                   })
            .detach();
      } else {
        runtime
            .spawn_on(rt::node_id{a.node},
                      [slot] {
                        slot->start_ns = monotonic_ns();
                        slot->worker = rt::runtime::current_worker();
                        slot->end_ns = occupy_worker(slot->start_ns);
                      })
            .detach();
      }
    }
    for (const auto& g : groups) r.preferred_kept = r.preferred_kept && g->preferred_node().value == kHomeNode;
    runtime.shutdown();  // runs every queued task, joins the workers, writes the trace
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.spawner_late_ms = static_cast<double>(late_ns) / 1e6;
    st = runtime.stats();
    groups.clear();
  }
  const std::uint64_t n = counts.group_tasks.load(std::memory_order_relaxed);
  r.group_tasks = static_cast<double>(n);
  r.home_pct = n == 0 ? 0 : 100.0 * static_cast<double>(counts.group_on_home.load(std::memory_order_relaxed)) / static_cast<double>(n);
  for (const char* c : kCounters) r.counters[c] = st.counter_index(c) < 0 ? 0 : static_cast<double>(st.total(c));
  double waited = 0;
  double occupied = 0;
  std::vector<std::int64_t> group_waits;
  for (const task_times& x : times) {
    if (x.start_ns < 0 || x.end_ns < 0) throw std::runtime_error("a task never ran to its end: the runtime lost it");
    if (x.group) {
      waited += static_cast<double>(x.start_ns - x.spawn_ns);
      group_waits.push_back(x.start_ns - x.spawn_ns);
    }
    occupied += static_cast<double>(x.end_ns - x.start_ns);
  }
  r.group_wait_us = n == 0 ? 0 : waited / static_cast<double>(n) / 1e3;
  if (!group_waits.empty()) {
    const std::size_t rank = (group_waits.size() * 99 + 99) / 100 - 1;  // nearest rank: ceil(0.99 n) - 1
    std::nth_element(group_waits.begin(), group_waits.begin() + static_cast<std::ptrdiff_t>(rank), group_waits.end());
    r.group_wait_p99_us = static_cast<double>(group_waits[rank]) / 1e3;
  }
  r.task_us = times.empty() ? 0 : occupied / static_cast<double>(times.size()) / 1e3;

  const std::string text = read_file(trace_path);
  std::remove(trace_path.c_str());
  const rt::trace::parsed_trace t = rt::trace::parse_trace(text);
  const std::uint64_t origin = trace_origin_ns(text);
  if (!dump_path.empty()) write_dump(dump_path, t, times, origin);
  const idle_pcts all_waits = parked_while_queued_pct(with_exact_waits(t, times, origin, false));
  r.idle_waits_pct = all_waits.per_task;
  r.any_waits_pct = all_waits.any;
  r.group_waits_pct = parked_while_queued_pct(with_exact_waits(t, times, origin, true)).per_task;
  r.summary_waits_pct = parked_while_queued_pct(t).per_task;
  const rt::trace::trace_summary all = rt::trace::summarize(t, 1);
  std::uint64_t local = 0;
  std::uint64_t starts = 0;
  for (const auto& g : all.groups) {
    local += g.overall.local;
    starts += g.overall.starts;
  }
  r.home_pct_trace = starts == 0 ? 0 : 100.0 * static_cast<double>(local) / static_cast<double>(starts);
  r.trace_dropped = all.dropped;
  return r;
}

std::string workload_name(int load) { return "locality_load" + std::to_string(load); }

double median_counter(const std::string& workload, const std::string& side, const std::string& counter) {
  const auto& s = bench::results()[workload][side];
  const auto it = s.counters.find(counter);
  return it == s.counters.end() ? 0 : bench::median(it->second);
}

int run(int argc, char** argv) {
  const options o = parse(argc, argv);
  rt::config base = rt::config::from_env();
  if (std::getenv("RT_TOPOLOGY") == nullptr)
    base.topology = rt::topology_source::xml(std::string(NUMART_TOPOLOGY_DIR) + "/" + kDefaultTopology);
  base.workers = kWorkers;

  // The machine as the runtime lays it out: the home node's workers and the others.
  int home_workers = 0;
  int other_workers = 0;
  std::vector<int> other_nodes;
  bool is_virtual = false;
  std::string topo;
  {
    rt::runtime probe{base};
    if (kHomeNode >= probe.nodes())
      throw std::invalid_argument("the topology has " + std::to_string(probe.nodes()) + " nodes; the benchmark needs node " +
                                  std::to_string(kHomeNode));
    const rt::stats s = probe.stats();
    std::vector<int> per_node(static_cast<std::size_t>(probe.nodes()), 0);
    for (int node : s.worker_node) ++per_node[static_cast<std::size_t>(node)];
    for (int n = 0; n < probe.nodes(); ++n) {
      if (n == kHomeNode) {
        home_workers = per_node[static_cast<std::size_t>(n)];
      } else if (per_node[static_cast<std::size_t>(n)] > 0) {
        other_nodes.push_back(n);
        other_workers += per_node[static_cast<std::size_t>(n)];
      }
    }
    is_virtual = probe.virtual_topology();
    topo = s.topology;
    if (home_workers == 0) throw std::invalid_argument("node " + std::to_string(kHomeNode) + " has no workers");
    if (other_nodes.empty()) throw std::invalid_argument("no other node has workers: nobody can steal");
  }

  std::printf("numart_bench_locality: %d workers, topology %s, home node %d with %d workers, %zu other nodes with %d workers\n",
              kWorkers, topo.c_str(), kHomeNode, home_workers, other_nodes.size(), other_workers);
  if (is_virtual)
    std::printf("  virtual-topology mode: EMULATION, the %d workers time-share this machine's %u cores\n", kWorkers,
                std::thread::hardware_concurrency());
  std::printf("  %d groups preferring node %d; tasks occupy a worker %.1f ms (a sleep shortened by its measured\n"
              "  oversleep: task_us below); Poisson arrivals for %d ms per run;\n"
              "  load = group arrival rate x task time / workers of node %d; background %d%% of the other nodes' capacity\n"
              "  %d rounds%s, variants alternating within a round, same arrival schedule for every variant of a round\n",
              kGroups, kHomeNode, static_cast<double>(kTaskNs) / 1e6, o.window_ms, kHomeNode, o.background_pct, o.rounds,
              o.quick ? " (quick)" : "");
  std::printf("  variants (appended to RT_TUNE='%s'):", base.tune.c_str());
  for (const variant& v : kVariants) std::printf(" %s=[%s]", v.side, v.tune);
  std::printf("\n");
  std::fflush(stdout);  // the header before the runs' progress lines on stderr

  const std::int64_t window_ns = static_cast<std::int64_t>(o.window_ms) * 1'000'000;
  const std::string trace_path = "/tmp/numart_bench_locality." + std::to_string(::getpid()) + ".json";
  bool preferred_kept = true;
  std::uint64_t dropped = 0;
  int late_runs = 0;
  double late_max_ms = 0;
  bool noted = false;
  for (int round = 0; round < o.rounds; ++round) {
    for (int load : kLoadsPct) {
      const std::uint64_t seed = 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(1 + round * 1000 + load);
      const std::vector<arrival> schedule =
          make_schedule(seed, load, o.background_pct, home_workers, other_nodes, other_workers, window_ns);
      for (const variant& v : kVariants) {
        const std::string dump = o.dump.empty() ? "" : o.dump + ".load" + std::to_string(load) + "." + v.side + ".r" +
                                                           std::to_string(round + 1) + ".txt";
        const run_result r = run_once(base, v, schedule, trace_path, dump, !noted);
        noted = true;
        preferred_kept = preferred_kept && r.preferred_kept;
        if (r.spawner_late_ms > kLateWarnMs) ++late_runs;
        late_max_ms = std::max(late_max_ms, r.spawner_late_ms);
        dropped += r.trace_dropped;
        bench::sample_set& s = bench::results()[workload_name(load)][v.side];
        s.seconds.push_back(r.seconds);
        s.counters["home_pct"].push_back(r.home_pct);
        s.counters["home_pct_trace"].push_back(r.home_pct_trace);
        s.counters["idle_waits_pct"].push_back(r.idle_waits_pct);
        s.counters["any_waits_pct"].push_back(r.any_waits_pct);
        s.counters["group_waits_pct"].push_back(r.group_waits_pct);
        s.counters["summary_waits_pct"].push_back(r.summary_waits_pct);
        s.counters["group_wait_us"].push_back(r.group_wait_us);
        s.counters["group_wait_p99_us"].push_back(r.group_wait_p99_us);
        s.counters["task_us"].push_back(r.task_us);
        s.counters["group_tasks"].push_back(r.group_tasks);
        for (const auto& [k, c] : r.counters) s.counters[k].push_back(c);
      }
    }
    std::fprintf(stderr, "  round %d of %d done\n", round + 1, o.rounds);
  }

  std::printf("\n%-5s %-12s %6s %7s %7s %8s %8s %8s %8s %9s %8s %8s %7s %8s %7s %7s %7s %6s\n", "load", "variant",
              "tasks", "home%", "home%tr", "idlewt%", "anywt%", "grpwt%", "sumwt%", "grpwt_us", "grp_p99", "task_us", "ms",
              "refused", "overrid", "backoff", "nb_move", "nb_ref");
  for (int load : kLoadsPct) {
    const std::string w = workload_name(load);
    for (const variant& v : kVariants) {
      auto c = [&](const char* k) { return median_counter(w, v.side, k); };
      std::printf(
          "%-5s %-12s %6.0f %7.2f %7.2f %8.3f %8.3f %8.3f %8.3f %9.1f %8.0f %8.1f %7.1f %8.0f %7.0f %7.0f %7.0f %6.0f\n",
          (std::to_string(load) + "%").c_str(), v.side + std::strlen("numart."), c("group_tasks"), c("home_pct"),
          c("home_pct_trace"), c("idle_waits_pct"), c("any_waits_pct"), c("group_waits_pct"), c("summary_waits_pct"),
          c("group_wait_us"), c("group_wait_p99_us"), c("task_us"), bench::median(bench::results()[w][v.side].seconds) * 1e3,
          c("steals_refused"), c("steals_overridden"), c("backoff_wakeups"), c("node_balance_moves"),
          c("node_balance_refused"));
    }
  }
  std::printf("medians over %d rounds. home%%: group tasks started on node %d (home%%tr: the trace summary's figure).\n"
              "idlewt%%: parked worker time the waiting tasks could have used, one parked worker per waiting task\n"
              "(the trace summary's figure over the benchmark's exact spawn->start times; ADR 0016); anywt%%: every\n"
              "parked worker while any task waited; grpwt%%: idlewt%% over the group tasks' waits only; sumwt%%:\n"
              "idlewt%% from the trace's own events; grpwt_us: mean spawn->start of a group task; grp_p99: its\n"
              "99th percentile (us); task_us: mean start->end of a task (the load figures assume %.0f);\n"
              "counters per run: steals_refused, steals_overridden, backoff_wakeups, node_balance_moves/_refused\n",
              o.rounds, kHomeNode, static_cast<double>(kTaskNs) / 1e3);
  if (!preferred_kept) std::printf("WARNING: a group's preferred node moved away from node %d during a run\n", kHomeNode);
  if (dropped != 0) std::printf("WARNING: %llu trace events dropped: the idle figures are incomplete\n",
                                static_cast<unsigned long long>(dropped));
  if (late_runs != 0)
    std::printf("NOTE: in %d of %d runs the spawning thread fell more than %.0f ms behind its arrival schedule (at most\n"
                "%.1f ms: it was descheduled, sometimes inside the runtime's spawn; not diagnosed): the arrivals it owed\n"
                "came as one burst, so those runs' waits have a tail that the schedule did not ask for\n",
                late_runs, o.rounds * static_cast<int>(std::size(kLoadsPct) * std::size(kVariants)), kLateWarnMs, late_max_ms);

  const double home = median_counter(workload_name(kBarHomeLoad), "numart.override", "home_pct");
  std::printf("\nbar home-node fraction at %d%% load, override on: %.2f%% (bar >= %.0f%%): ratio to bar %.3f, %s\n",
              kBarHomeLoad, home, kBarHomePct, home / kBarHomePct, home >= kBarHomePct ? "met" : "NOT met");
  for (int load : kLoadsPct) {
    const double idle = median_counter(workload_name(load), "numart.override", "idle_waits_pct");
    const double grp = median_counter(workload_name(load), "numart.override", "group_waits_pct");
    const double any = median_counter(workload_name(load), "numart.override", "any_waits_pct");
    std::printf("bar idle-while-work-waits at %d%% load, override on: %.3f%% of worker time (bar <= %.0f%%): ratio to bar "
                "%.3f, %s; group tasks only %.3f%%; every parked worker while any task waited %.3f%%\n",
                load, idle, kBarIdleWaitsPct, idle / kBarIdleWaitsPct, idle <= kBarIdleWaitsPct ? "met" : "NOT met", grp, any);
  }
  bench::write_json();
  return bench::json_failed() ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "numart_bench_locality: %s\n", e.what());
    return 2;
  }
}
