// A traced run on a virtual 2-node topology: the file written at shutdown parses as a numart
// trace with one track per worker, every task that started ended, and its steal, hand-off and
// spawn counts equal the runtime's counters for the same run (issue 9's bar, on fib and a
// group workload rather than examples/jbb, which does not exist yet).
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "rt/rt.hpp"
#include "support/scratch_dir.hpp"
#include "trace/summary.hpp"

namespace {

int fib(int n) {
  if (n < 2) return n;
  auto h = rt::spawn([n] { return fib(n - 1); });
  const int b = fib(n - 2);
  return h.join() + b;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(TraceRun, TheFileMatchesTheCountersOfTheSameRun) {
  numart_test::scratch_dir dir("trace_run");
  const std::string path = dir.path() + "/run.json";
  rt::stats st;
  {
    rt::config c;
    c.topology = rt::topology_source::synthetic("pack:2 [numa] core:2 pu:1");
    c.trace_path = path;
    rt::runtime r{c};
    rt::group g{r, "web"};
    ASSERT_EQ(r.spawn([] { return fib(14); }).join(), 377);  // ~1,200 tasks: the rings keep all
    for (int i = 0; i < 50; ++i) r.spawn(g, [] {}).join();
    for (int i = 0; i < 50; ++i) r.spawn([] {}).join();
    r.shutdown();  // writes the trace
    st = r.stats();
  }
  const rt::trace::parsed_trace t = rt::trace::parse_trace(slurp(path));
  ASSERT_EQ(t.dropped, 0u);
  EXPECT_EQ(t.workers(), 4);
  EXPECT_EQ(t.nodes, 2);
  for (const auto& task : t.tasks) EXPECT_FALSE(task.open) << "task " << task.id << " started and never ended";
  EXPECT_EQ(t.tasks.size(), st.total("tasks_run"));
  EXPECT_EQ(t.steal_tiers.size(), st.total("steals"));
  // Hand-off events come from workers' rings; an outside spawn's hand-off is its spawn event
  // (path "idlest") on the outside track.
  std::uint64_t worker_handoffs = 0;
  for (int w = 0; w < 4; ++w) worker_handoffs += st.worker(w, "mailbox_handoffs");
  EXPECT_EQ(t.handoffs, worker_handoffs);
  EXPECT_EQ(t.spawns.size(), st.total("tasks_spawned"));
  bool named = false;
  for (const auto& [id, name] : t.group_names) named = named || name == "web";
  EXPECT_TRUE(named) << "the group's name is in the trace";
}

// The balancer's decisions and page migrations are on its track, one event per counted move.
TEST(TraceRun, BalancerMovesAndMigrationsMatchTheirCounters) {
  numart_test::scratch_dir dir("trace_balancer");
  const std::string path = dir.path() + "/balancer.json";
  rt::stats st;
  {
    rt::config c;
    c.topology = rt::topology_source::synthetic("pack:2 [numa] core:2 pu:1");
    c.trace_path = path;
    c.tune = "numa_scan_period_min_ms=2,numa_scan_period_max_ms=5,NO_FAULT_SAMPLING";
    rt::runtime r{c};
    rt::group g{r, "data-on-1"};
    const std::size_t bytes = 64u << 10;
    auto* data = static_cast<unsigned char*>(r.numa_alloc(bytes, rt::node_id{1}));
    rt::register_region(g, data, bytes);
    // Explicit samples until the balancer has moved the group and some pages.
    for (int round = 0; round < 20000 && (r.stats().total("numa_home_moves") == 0 ||
                                          r.stats().total("numa_pages_migrated") == 0); ++round) {
      r.spawn(g, [data, bytes, round] {
         for (std::size_t i = 0; i < bytes; i += 4096) {
           data[i] = static_cast<unsigned char>(round);
           rt::note_access(data + i);
         }
       }).join();
    }
    rt::unregister_region(g, data);
    rt::numa_free(data);
    r.shutdown();
    st = r.stats();
  }
  ASSERT_GT(st.total("numa_home_moves"), 0u);
  const rt::trace::parsed_trace t = rt::trace::parse_trace(slurp(path));
  EXPECT_EQ(t.balancer_moves, st.total("numa_home_moves"));
  EXPECT_EQ(t.pages_migrated, st.total("numa_pages_migrated"));
}

TEST(TraceRun, AnUnwritablePathRunsWithoutTracing) {
  rt::config c;
  c.workers = 2;
  c.trace_path = "/nonexistent-dir/numart/trace.json";
  testing::internal::CaptureStderr();
  rt::runtime r{c};
  EXPECT_EQ(r.spawn([] { return 7; }).join(), 7);
  EXPECT_FALSE(r.dump_trace());
  r.shutdown();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("/nonexistent-dir/numart/trace.json"), std::string::npos) << err;
}

}  // namespace
