// Wake-path benchmarks (issue 4): hackbench-like message delivery between task groups,
// schbench-like batched wake-ups (latency percentiles, requests/s) and an execl-like
// self-respawning chain (migrations per step). The workloads are in wake_workloads.hpp, written
// once for both sides. Each workload runs, in alternating rounds in this one process, on oneTBB's
// default arena and on one numart runtime per feature variant: the idle-scan bound (SIS_PROP,
// SIS_UTIL, unbounded = NO_SIS_PROP,NO_SIS_UTIL: the whole LLC) and, for execl, the
// UTIL_WITHOUT A/B; execl on an idle pool runs SIS_PROP and its IDLE_WITHOUT A/B. Bars are
// reported, never asserted.
//
//   numart_bench_wake [--quick] [--benchmark_filter=REGEX ...]
//   NUMART_BENCH_QUICK=1 numart_bench_wake       (the same as --quick: fewer rounds and events)
// RT_TUNE, RT_WORKERS and RT_TOPOLOGY apply to every numart runtime; each variant's features are
// appended to RT_TUNE, so they win over it.
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "harness.hpp"
#include "rt/rt.hpp"
#include "wake_workloads.hpp"

namespace {

using wake::clk;

// ---- parameters --------------------------------------------------------------------------

struct params {
  int rounds;                 // alternating rounds per side
  int hackbench_runs;         // hackbench: full runs per round (the round reports their mean)
  int loops;                  // hackbench: messages per sender per receiver
  int sch_batches;            // schbench: batches per message task per round
  std::uint64_t execl_steps;  // execl: steps per round
  std::uint64_t idle_steps;   // execl on an idle pool: steps per round
};
constexpr params kDefault{5, 3, 100, 10000, 1000000, 200000};
constexpr params kQuick{2, 1, 100, 3000, 300000, 50000};

constexpr int kHackbenchGroups[] = {1, 2, 4, 8};
constexpr int kFan = 20;               // hackbench's default: 20 senders + 20 receivers per group
constexpr double kRequestUs = 20;      // schbench-like request: busy work
constexpr double kBackgroundUs = 100;  // execl background: busy work per ticker task
constexpr auto kBackgroundPeriod = std::chrono::microseconds(200);  // ticker sleep between tasks
// Before each round, so that the previous side's threads have gone idle.
constexpr auto kSettle = std::chrono::milliseconds(20);

params g_p = kDefault;
std::uint64_t g_request_iters = 0;
std::uint64_t g_background_iters = 0;
int g_sch_messages = 1;
int g_sch_workers = 1;

// The counters each numart round reports (per run), when the runtime has them.
const char* const kCounters[] = {"steals",    "mailbox_handoffs", "wakeups_sent",    "parks",
                                 "idle_found", "affine_moves",     "scans_cut_short"};

std::set<std::string> g_failed;  // "workload/side" whose behaviour check failed

// ---- the sides ---------------------------------------------------------------------------

struct variant {
  const char* side;   // harness side name
  const char* tune;   // features appended to RT_TUNE
  const char* label;  // in the summary
};
const variant kScanVariants[] = {
    {"numart.SIS_PROP", "SIS_PROP,NO_SIS_UTIL,UTIL_WITHOUT", "SIS_PROP"},
    {"numart.SIS_UTIL", "NO_SIS_PROP,SIS_UTIL,UTIL_WITHOUT", "SIS_UTIL"},
    {"numart.unbounded", "NO_SIS_PROP,NO_SIS_UTIL,UTIL_WITHOUT", "unbounded scan"},
};
const variant kNoUtilWithout{"numart.NO_UTIL_WITHOUT", "SIS_PROP,NO_SIS_UTIL,NO_UTIL_WITHOUT",
                             "SIS_PROP, NO_UTIL_WITHOUT"};
const variant kNoIdleWithout{"numart.NO_IDLE_WITHOUT", "SIS_PROP,NO_SIS_UTIL,UTIL_WITHOUT,NO_IDLE_WITHOUT",
                             "SIS_PROP, NO_IDLE_WITHOUT"};

std::vector<std::unique_ptr<rt::runtime>> g_runtimes;
std::vector<std::unique_ptr<wake::numart_side>> g_numart;  // parallel to the variants registered
std::unique_ptr<wake::tbb_side> g_tbb;

using counter_list = std::vector<std::pair<std::string, std::uint64_t>>;
counter_list counters_now(const wake::numart_side& s) {
  const rt::stats st = s.runtime().stats();
  counter_list out;
  for (const char* name : kCounters)
    if (st.counter_index(name) >= 0) out.emplace_back(name, st.total(name));
  return out;
}
counter_list counters_now(const wake::tbb_side&) { return {}; }

void report_counters(benchmark::State& st, const counter_list& before, const counter_list& after) {
  const auto runs = static_cast<double>(st.iterations());
  for (std::size_t i = 0; i < after.size() && i < before.size(); ++i)
    st.counters[after[i].first] = static_cast<double>(after[i].second - before[i].second) / runs;
}

// Marks the round failed; the caller returns at once (no counters from a failed round).
void fail(benchmark::State& st, const std::string& workload, const std::string& side, const std::string& why) {
  g_failed.insert(workload + "/" + side);
  std::fprintf(stderr, "numart_bench_wake: %s/%s: %s\n", workload.c_str(), side.c_str(), why.c_str());
  st.SkipWithError(why.c_str());
}

// ---- benchmark bodies, one template per workload -----------------------------------------

template <class Side>
void bm_hackbench(benchmark::State& st, Side& side, int groups, const std::string& workload, const std::string& name) {
  wake::hackbench<Side> hb(side, groups, kFan, g_p.loops);
  std::this_thread::sleep_for(kSettle);
  const counter_list c0 = counters_now(side);
  for (auto _ : st) {
    hb.run();
    if (std::string why = hb.verify(); !why.empty()) return fail(st, workload, name, why);
  }
  report_counters(st, c0, counters_now(side));
  st.counters["affinity"] = hb.affinity_share();
}

template <class Side>
void bm_schbench(benchmark::State& st, Side& side, const std::string& workload, const std::string& name) {
  wake::schbench<Side> sb(side, g_sch_messages, g_sch_workers, g_p.sch_batches, g_request_iters);
  std::this_thread::sleep_for(kSettle);
  const counter_list c0 = counters_now(side);
  double seconds = 0;
  double moved = 0;
  for (auto _ : st) {
    const auto t0 = clk::now();
    sb.run();
    seconds += std::chrono::duration<double>(clk::now() - t0).count();
    if (std::string why = sb.verify(); !why.empty()) return fail(st, workload, name, why);
    bench::add_samples(workload, name, sb.latencies_us());
    moved += sb.moved_share();
  }
  report_counters(st, c0, counters_now(side));
  const auto runs = static_cast<double>(st.iterations());
  st.counters["rps"] = static_cast<double>(sb.requests()) * runs / seconds;
  st.counters["moved"] = moved / runs;
}

// execl (`idle_pool` false: the chain in a fork-join scope, with the background ticker) and
// execl_idle (true: the detached chain on an idle pool, no ticker).
template <class Side>
void bm_execl(benchmark::State& st, Side& side, const std::string& workload, const std::string& name, bool idle_pool) {
  const std::uint64_t steps = idle_pool ? g_p.idle_steps : g_p.execl_steps;
  wake::execl_chain<Side> ch(side, steps, g_background_iters, kBackgroundPeriod);
  std::this_thread::sleep_for(kSettle);
  const counter_list c0 = counters_now(side);
  double seconds = 0;
  double migrations = 0;
  double background = 0;
  for (auto _ : st) {
    if (idle_pool)
      ch.run_on_idle_pool();
    else
      ch.run();
    if (std::string why = ch.verify(); !why.empty()) return fail(st, workload, name, why);
    seconds += ch.chain_seconds();
    migrations += ch.migrations_per_step();
    background += static_cast<double>(ch.background_tasks()) * kBackgroundUs * 1e-6 / ch.chain_seconds();
  }
  report_counters(st, c0, counters_now(side));
  const auto runs = static_cast<double>(st.iterations());
  st.counters["migr_per_step"] = migrations / runs;
  st.counters["steps_per_s"] = static_cast<double>(steps) * runs / seconds;
  if (!idle_pool) st.counters["bg_cores"] = background / runs;
}

// ---- registration ------------------------------------------------------------------------

using side_list = std::vector<std::pair<std::string, std::function<void(benchmark::State&)>>>;

std::vector<variant> g_variants;  // index = g_numart index

// The sides of `workload`: the numart variants listed, then oneTBB; each runs
// body(state, side, workload, side name), body being generic over the side type.
template <class Body>
side_list sides_for(const std::string& workload, const std::vector<std::size_t>& variants, Body body) {
  side_list out;
  for (std::size_t v : variants) {
    wake::numart_side* side = g_numart[v].get();
    const std::string name = g_variants[v].side;
    out.emplace_back(name, [=](benchmark::State& st) { body(st, *side, workload, name); });
  }
  wake::tbb_side* tbb = g_tbb.get();
  out.emplace_back("onetbb", [=](benchmark::State& st) { body(st, *tbb, workload, std::string("onetbb")); });
  return out;
}

void register_all() {
  std::vector<std::size_t> scan;
  for (std::size_t i = 0; i < std::size(kScanVariants); ++i) scan.push_back(i);
  std::vector<std::size_t> execl = scan;
  execl.push_back(std::size(kScanVariants));  // the NO_UTIL_WITHOUT runtime

  for (int g : kHackbenchGroups) {
    const std::string wl = "hackbench_G" + std::to_string(g);
    auto body = [g](benchmark::State& st, auto& side, const std::string& w, const std::string& n) {
      bm_hackbench(st, side, g, w, n);
    };
    bench::register_side_by_side(wl, sides_for(wl, scan, body), g_p.rounds, g_p.hackbench_runs);
  }
  auto sch = [](benchmark::State& st, auto& side, const std::string& w, const std::string& n) {
    bm_schbench(st, side, w, n);
  };
  bench::register_side_by_side("schbench", sides_for("schbench", scan, sch), g_p.rounds, 1);
  auto exe = [](benchmark::State& st, auto& side, const std::string& w, const std::string& n) {
    bm_execl(st, side, w, n, false);
  };
  bench::register_side_by_side("execl", sides_for("execl", execl, exe), g_p.rounds, 1);
  auto idle = [](benchmark::State& st, auto& side, const std::string& w, const std::string& n) {
    bm_execl(st, side, w, n, true);
  };
  // SIS_PROP (the default) and its IDLE_WITHOUT A/B.
  const std::vector<std::size_t> idle_variants{0, std::size(kScanVariants) + 1};
  bench::register_side_by_side("execl_idle", sides_for("execl_idle", idle_variants, idle), g_p.rounds, 1);
}

// ---- the verdict table -------------------------------------------------------------------

double median_of(const std::string& workload, const std::string& side, const std::string& counter) {
  auto w = bench::results().find(workload);
  if (w == bench::results().end()) return -1;
  auto s = w->second.find(side);
  if (s == w->second.end()) return -1;
  if (counter.empty()) return s->second.seconds.empty() ? -1 : bench::median(s->second.seconds);
  auto c = s->second.counters.find(counter);
  return c == s->second.counters.end() || c->second.empty() ? -1 : bench::median(c->second);
}

// One row of the table for variant `v` of results workload `source`: `nv` is numart's value,
// `tv` oneTBB's (-1: not measured; no row when neither was). `bar` < 0: no bar (a reference
// row); ratio_bar: the bar is on nv / tv (at most), else on nv itself (strictly below).
void row(const char* shown, const std::string& source, const variant& v, const char* unit, double scale, double nv,
         double tv, bool ratio_bar, double bar, const char* bar_text) {
  if (nv < 0 && tv < 0) return;  // filtered out of this run
  const bool failed = g_failed.count(source + "/" + v.side) != 0 || g_failed.count(source + "/onetbb") != 0;
  char nbuf[32] = "-";
  char tbuf[32] = "-";
  char rbuf[32] = "-";
  if (nv >= 0) std::snprintf(nbuf, sizeof nbuf, "%.4g %s", nv * scale, unit);
  if (tv >= 0) std::snprintf(tbuf, sizeof tbuf, "%.4g %s", tv * scale, unit);
  const bool have_ratio = nv >= 0 && tv > 0;
  if (have_ratio) std::snprintf(rbuf, sizeof rbuf, "%.3f", nv / tv);
  const char* verdict = "-";
  if (failed)
    verdict = "INVALID (check failed)";
  else if (bar >= 0 && ratio_bar && have_ratio)
    verdict = nv / tv <= bar ? "met" : "NOT met";
  else if (bar >= 0 && !ratio_bar && nv >= 0)
    verdict = nv < bar ? "met" : "NOT met";
  std::printf("%-16s %-26s %16s %16s %8s  %-26s %s\n", shown, v.label, nbuf, tbuf, rbuf, bar_text, verdict);
}

void print_verdicts() {
  std::printf("\n== summary: medians over rounds (schbench p99: pooled samples); bars are reported, "
              "never asserted ==\n");
  std::printf("%-16s %-26s %16s %16s %8s  %-26s %s\n", "workload", "numart variant", "numart", "oneTBB", "ratio", "bar",
              "verdict");
  for (int g : kHackbenchGroups) {
    const std::string wl = "hackbench_G" + std::to_string(g);
    const std::string shown = "hackbench G=" + std::to_string(g);
    const double tv = median_of(wl, "onetbb", "");
    for (const variant& v : kScanVariants)
      row(shown.c_str(), wl, v, "ms", 1e3, median_of(wl, v.side, ""), tv, true, 1.0, "total time <= oneTBB");
  }
  const double tbb_p99 = bench::pooled_percentile("schbench", "onetbb", 0.99);
  for (const variant& v : kScanVariants)
    row("schbench p99", "schbench", v, "us", 1, bench::pooled_percentile("schbench", v.side, 0.99), tbb_p99, true, 1.0,
        "wake-up p99 <= oneTBB");
  const double tbb_rps = median_of("schbench", "onetbb", "rps");
  for (const variant& v : kScanVariants)
    row("schbench rps", "schbench", v, "k/s", 1e-3, median_of("schbench", v.side, "rps"), tbb_rps, false, -1,
        "(reported, no bar)");
  const double tbb_migr = median_of("execl", "onetbb", "migr_per_step");
  for (const variant& v : kScanVariants)
    row("execl", "execl", v, "/step", 1, median_of("execl", v.side, "migr_per_step"), tbb_migr, false, 0.01,
        "< 0.01 migrations/step");
  row("execl", "execl", kNoUtilWithout, "/step", 1, median_of("execl", kNoUtilWithout.side, "migr_per_step"), tbb_migr,
      false, -1, "(A/B: UTIL_WITHOUT off)");
  const double tbb_idle_migr = median_of("execl_idle", "onetbb", "migr_per_step");
  const double tbb_idle_rate = median_of("execl_idle", "onetbb", "steps_per_s");
  for (const variant* v : {&kScanVariants[0], &kNoIdleWithout}) {
    const bool ab = v == &kNoIdleWithout;
    row("execl idle pool", "execl_idle", *v, "/step", 1, median_of("execl_idle", v->side, "migr_per_step"),
        tbb_idle_migr, false, ab ? -1 : 0.01, ab ? "(A/B: IDLE_WITHOUT off)" : "< 0.01 migrations/step");
    row("execl idle rate", "execl_idle", *v, "k/s", 1e-3, median_of("execl_idle", v->side, "steps_per_s"),
        tbb_idle_rate, false, -1, "(reported, no bar)");
  }
}

// ---- options -----------------------------------------------------------------------------

std::string with_env_tune(const std::string& env, const char* features) {
  return env.empty() ? features : env + "," + features;
}

int run(int argc, char** argv) {
  const bool quick = bench::quick_mode(argc, argv);
  g_p = quick ? kQuick : kDefault;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  const rt::config base = rt::config::from_env();
  for (const variant& v : kScanVariants) g_variants.push_back(v);
  g_variants.push_back(kNoUtilWithout);
  g_variants.push_back(kNoIdleWithout);
  for (const variant& v : g_variants) {
    rt::config cfg = base;
    cfg.tune = with_env_tune(base.tune, v.tune);
    cfg.name = v.label;
    g_runtimes.push_back(std::make_unique<rt::runtime>(cfg));
    g_numart.push_back(std::make_unique<wake::numart_side>(*g_runtimes.back()));
  }
  tbb::task_arena arena;  // the default arena: one slot per hardware thread
  arena.initialize();
  g_tbb = std::make_unique<wake::tbb_side>(arena);

  const double per_us = wake::spin_iters_per_us();
  g_request_iters = static_cast<std::uint64_t>(per_us * kRequestUs);
  g_background_iters = static_cast<std::uint64_t>(per_us * kBackgroundUs);
  rt::runtime& first = *g_runtimes.front();
  // schbench's advice: one message thread per node, each with the workers of a node.
  g_sch_messages = first.nodes();
  g_sch_workers = std::max(1, first.workers() / first.nodes());

  std::printf("numart_bench_wake%s: numart %d workers on %s (one runtime per variant); oneTBB default arena, "
              "%d threads\n",
              quick ? " (quick)" : "", first.workers(), first.stats().topology.c_str(), arena.max_concurrency());
  std::printf("  variants (appended to RT_TUNE='%s'):", base.tune.c_str());
  for (const variant& v : g_variants) std::printf(" %s=[%s]", v.side, v.tune);
  std::printf("\n  busy loop: %.1f iterations/us, calibrated once on the main thread, the same for both sides\n",
              per_us);
  std::printf("  hackbench-like: G = 1,2,4,8 groups of %d senders + %d receivers; each sender sends %d messages of "
              "%zu bytes to every receiver of its group; a delivery is a task spawned into the receiver's affinity "
              "(numart: one rt::group per receiver; oneTBB has no per-task affinity: a plain task_group task) that "
              "copies the message into the receiver's ring under its lock; one task_group, metric: total time; "
              "'affinity' = mean share of a receiver's deliveries run by its most used thread\n",
              kFan, kFan, g_p.loops, wake::kMessageBytes);
  std::printf("  schbench-like: %d message task(s), each %d batches of %d worker tasks (a node's workers) stamped with "
              "one timestamp per batch; wake-up latency = worker start - stamp; a request = %.0f us busy loop; the "
              "batch's last worker spawns the next batch; 'moved' = share of requests run off the spawner's thread\n",
              g_sch_messages, g_p.sch_batches, g_sch_workers, kRequestUs);
  std::printf("  execl-like: a chain of %llu steps, each spawning the next as its last act (task_group::"
              "spawn_continuation, placed like an exec'd task; oneTBB: task_group::run); background: a ticker thread outside "
              "the pool submits a %.0f us busy task every %lld us of sleep ('bg_cores' = cores it kept busy)\n",
              static_cast<unsigned long long>(g_p.execl_steps), kBackgroundUs,
              static_cast<long long>(kBackgroundPeriod.count()));
  std::printf("  execl-like on an idle pool: a chain of %llu steps, no ticker and no scope: an outside thread "
              "submits the first step, each step continues detached (rt::spawn_continuation; oneTBB: "
              "task_arena::enqueue, run by the arena's one worker thread: the waiting main thread does not join), "
              "the last wakes the outside thread\n",
              static_cast<unsigned long long>(g_p.idle_steps));
  std::printf("  %d alternating rounds per side; numart is whatever spawn does today (only the public API is used)\n",
              g_p.rounds);
  std::fflush(stdout);

  register_all();
  bench::collecting_reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  bench::print_summary(stdout);
  bench::print_percentiles(stdout, "wake-up latency, us");
  print_verdicts();
  benchmark::Shutdown();
  return g_failed.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "numart_bench_wake: %s\n", e.what());
    return 2;
  }
}
