// parse_trace + summarize on the synthetic run: every number of `numart trace summarize`,
// computed by hand from the timeline in synthetic.hpp; and the refusals of foreign documents.
#include <gtest/gtest.h>

#include <initializer_list>
#include <sstream>
#include <string>

#include "synthetic.hpp"
#include "trace/json.hpp"
#include "trace/summary.hpp"
#include "trace/trace.hpp"

namespace {

std::string synthetic_json() {
  rt::trace::recorder rec(trace_test::synthetic_layout());
  trace_test::fill_synthetic(rec);
  std::ostringstream os;
  rec.write_chrome_json(os);
  return os.str();
}

// A trace built by hand, without JSON: `workers` worker tracks on node 0, `span` ns long.
rt::trace::parsed_trace hand_built(int workers, std::uint64_t span) {
  rt::trace::parsed_trace t;
  t.span_ns = span;
  for (int w = 0; w < workers; ++w) {
    rt::trace::parsed_trace::track tr;
    tr.worker = w;
    tr.node = 0;
    t.tracks.push_back(tr);
  }
  return t;
}

// `events` on the one worker of a one-node recorder, written as JSON and read back.
rt::trace::parsed_trace one_worker_trace(std::initializer_list<rt::trace::event> events) {
  rt::trace::trace_layout l;
  l.worker_node = {0};
  l.node_package = {0};
  l.name = "one-worker";
  rt::trace::recorder rec(l);
  rt::trace::ring& w0 = rec.for_worker(0);
  for (const rt::trace::event& e : events) w0.push(e);
  std::ostringstream os;
  rec.write_chrome_json(os);
  return rt::trace::parse_trace(os.str());
}

std::string error_of(const std::string& text) {
  try {
    rt::trace::parse_trace(text);
  } catch (const rt::trace::format_error& e) {
    return e.what();
  }
  return "";
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const std::size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

TEST(trace_parse, reads_the_numart_events_back) {
  const rt::trace::parsed_trace t = rt::trace::parse_trace(synthetic_json());
  EXPECT_EQ(t.runtime, "synthetic");
  EXPECT_EQ(t.span_ns, 4900u);
  EXPECT_EQ(t.nodes, 2);
  EXPECT_EQ(t.workers(), 4);
  EXPECT_EQ(t.tasks.size(), 9u);
  EXPECT_EQ(t.spawns.size(), 7u);
  EXPECT_EQ(t.steal_tiers.size(), 2u);
  EXPECT_EQ(t.parks.size(), 3u);
  EXPECT_EQ(t.handoffs, 1u);
  EXPECT_EQ(t.balancer_moves, 1u);
  EXPECT_EQ(t.pages_migrated, 128u);
  EXPECT_EQ(t.group_names.at(trace_test::kJvm2), "jvm-2");
}

TEST(trace_summary, wake_paths_and_steals) {
  const rt::trace::trace_summary s = rt::trace::summarize(rt::trace::parse_trace(synthetic_json()), 2);
  EXPECT_EQ(s.spawns, 7u);
  ASSERT_EQ(s.outcomes.size(), 3u);
  EXPECT_EQ(s.outcomes[0].affine, "none");
  EXPECT_EQ(s.outcomes[0].path, "local");
  EXPECT_EQ(s.outcomes[0].spawns, 5u);
  EXPECT_EQ(s.outcomes[1].affine, "affine");
  EXPECT_EQ(s.outcomes[1].path, "idle_scan");
  EXPECT_EQ(s.outcomes[1].spawns, 1u);
  EXPECT_EQ(s.outcomes[2].affine, "not_affine");
  EXPECT_EQ(s.outcomes[2].path, "busy_target");
  EXPECT_EQ(s.scans, 2u);
  EXPECT_EQ(s.scanned, 7u);
  EXPECT_EQ(s.max_scan, 4);
  EXPECT_EQ(s.handoffs, 1u);
  EXPECT_EQ(s.steals, 2u);
  ASSERT_EQ(s.tiers.size(), 2u);
  EXPECT_EQ(s.tiers[0].name, "llc");
  EXPECT_EQ(s.tiers[1].name, "remote");
}

TEST(trace_summary, group_locality_per_window) {
  const rt::trace::trace_summary s = rt::trace::summarize(rt::trace::parse_trace(synthetic_json()), 2);
  EXPECT_EQ(s.window_ns, 2451u);
  ASSERT_EQ(s.groups.size(), 2u);
  const auto& g1 = s.groups[0];
  EXPECT_EQ(g1.name, "jvm-1");
  EXPECT_EQ(g1.starts, 6u);
  EXPECT_EQ(g1.overall.local, 5u);
  EXPECT_EQ(g1.overall.starts, 6u);
  ASSERT_EQ(g1.windows.size(), 2u);
  EXPECT_EQ(g1.windows[0].local, 4u);
  EXPECT_EQ(g1.windows[0].starts, 5u);
  EXPECT_EQ(g1.windows[1].local, 1u);
  EXPECT_EQ(g1.windows[1].starts, 1u);
  const auto& g2 = s.groups[1];
  EXPECT_EQ(g2.name, "jvm-2");
  EXPECT_EQ(g2.overall.local, 2u);
  EXPECT_EQ(g2.overall.starts, 3u);
  EXPECT_EQ(g2.windows[0].starts, 0u);
  EXPECT_EQ(g2.windows[1].local, 2u);
  EXPECT_EQ(g2.windows[1].starts, 3u);
}

TEST(trace_summary, parked_while_work_waited) {
  const rt::trace::trace_summary s = rt::trace::summarize(rt::trace::parse_trace(synthetic_json()), 10);
  EXPECT_EQ(s.queued_ns, 1300u);
  EXPECT_EQ(s.parked_ns, 5940u);
  EXPECT_EQ(s.parked_while_queued_ns, 1790u);
  ASSERT_EQ(s.per_worker.size(), 4u);
  EXPECT_EQ(s.per_worker[0].parked_ns, 0u);
  EXPECT_EQ(s.per_worker[2].parked_ns, 3140u);
  EXPECT_EQ(s.per_worker[2].parked_while_queued_ns, 790u);
  EXPECT_EQ(s.per_worker[3].parked_ns, 2800u);
  EXPECT_EQ(s.per_worker[3].parked_while_queued_ns, 1000u);
}

// Three workers parked over a span of 1000 ns, three waits (one never started). By hand:
// [300,350) 3 parked, 1 waiting: 50; [350,400) 3, 2: 100; [400,500) 2, 2: 200; [500,600) 2, 1:
// 100; [600,900) 1, 1: 300; [950,1000) 1, 1: 50. One parked worker per waiting task: 800. Each
// parked worker while any task waited ([300,900) and [950,1000)): 300 + 100 + 650 = 1050.
TEST(trace_summary, one_parked_worker_counts_per_waiting_task) {
  rt::trace::parsed_trace t = hand_built(3, 1000);
  t.parks = {{100, 500, 0}, {200, 200, 1}, {0, 1000, 2}};
  t.spawns = {{300, 1, "", "", 0}, {350, 2, "", "", 0}, {950, 3, "", "", 0}};
  t.tasks = {{500, 10, 0, 1, 0, -1, false}, {900, 10, 1, 2, 0, -1, false}};
  const rt::trace::trace_summary s = rt::trace::summarize(t, 1);
  EXPECT_EQ(s.queued_ns, 650u);
  EXPECT_EQ(s.parked_while_queued_ns, 1050u);
  EXPECT_EQ(s.parked_for_waiting_ns, 800u);
}

// A park whose waker stamped its wake: the JSON's park slice carries the runnable tail (wake to
// unpark), and the summary counts the park up to the wake. One worker parks 200-1000 (woken at
// 700: runnable 300); a task spawned at 300 starts at 1000, on the outside track.
TEST(trace_summary, a_stamped_wake_ends_the_parked_time) {
  const rt::trace::parsed_trace t = one_worker_trace({
      rt::trace::ev::park(200, rt::trace::park_reason::idle),
      rt::trace::ev::unpark(1000, rt::trace::unpark_reason::woken, -1, 700),
      rt::trace::ev::task_start(1000, 0x7, 0, -1),
      rt::trace::ev::task_end(1100, 0x7, 0),
      rt::trace::ev::spawn(300, 0x7, 0, -1, 0, rt::trace::wake_affine::none, rt::trace::wake_path::local, 0),
  });
  ASSERT_EQ(t.parks.size(), 1u);
  EXPECT_EQ(t.parks[0].dur, 800u);
  EXPECT_EQ(t.parks[0].runnable, 300u);
  const rt::trace::trace_summary s = rt::trace::summarize(t, 1);
  EXPECT_EQ(s.parked_ns, 500u);
  EXPECT_EQ(s.runnable_ns, 300u);
  EXPECT_EQ(s.queued_ns, 700u);
  EXPECT_EQ(s.parked_while_queued_ns, 400u);  // 300-700
  EXPECT_EQ(s.parked_for_waiting_ns, 400u);   // the woken worker was on its way from 700
}

// A stamp from before the park (a wake whose token the park consumed at once) clamps to the
// park's start: the whole slice was runnable.
TEST(trace_summary, a_stale_wake_stamp_makes_the_whole_park_runnable) {
  const rt::trace::parsed_trace t = one_worker_trace({
      rt::trace::ev::park(200, rt::trace::park_reason::idle),
      rt::trace::ev::unpark(260, rt::trace::unpark_reason::woken, -1, 150),
  });
  ASSERT_EQ(t.parks.size(), 1u);
  EXPECT_EQ(t.parks[0].runnable, 60u);
  EXPECT_EQ(rt::trace::summarize(t, 1).parked_ns, 0u);
}

// A joiner woken from its block goes back to its join: its runnable tail is not a worker on its
// way to a waiting task. Worker 0 blocks in a join 0-1000 (woken at 600), worker 1 parks idle
// 0-1000; a task waits 700-900 with worker 1 parked: 200.
TEST(trace_summary, a_woken_joiner_is_not_on_its_way_to_a_waiting_task) {
  rt::trace::parsed_trace t = hand_built(2, 1000);
  t.parks = {{0, 1000, 0, 400, true}, {0, 1000, 1, 0, false}};
  t.spawns = {{700, 1, "", "", 0}};
  t.tasks = {{900, 10, 1, 1, 0, -1, false}};
  const rt::trace::trace_summary s = rt::trace::summarize(t, 1);
  EXPECT_EQ(s.parked_for_waiting_ns, 200u);
  EXPECT_EQ(s.runnable_ns, 400u);
  EXPECT_EQ(s.parked_ns, 1600u);
}

TEST(trace_summary, one_window_holds_the_whole_span) {
  const rt::trace::trace_summary s = rt::trace::summarize(rt::trace::parse_trace(synthetic_json()), 1);
  ASSERT_EQ(s.groups[0].windows.size(), 1u);
  EXPECT_EQ(s.groups[0].windows[0].starts, s.groups[0].overall.starts);
}

TEST(trace_parse, refuses_foreign_documents) {
  EXPECT_EQ(error_of("[1, 2]"), "not a numart trace: the document is not a JSON object");
  EXPECT_EQ(error_of("{\"a\": 1}"), "not a numart trace: no traceEvents array");
  EXPECT_EQ(error_of("{\"traceEvents\": {}}"), "not a numart trace: traceEvents is not an array");
  EXPECT_EQ(error_of("{\"traceEvents\": [{\"ph\":\"X\",\"args\":{\"event\":7}}]}"), "not a numart trace: no otherData.numart section");
  EXPECT_EQ(error_of("{\"traceEvents\": [], \"otherData\": {\"numart\": {\"format\": \"other\"}}}"),
            "not a numart trace: otherData.numart.format is not \"numart-trace\"");
  const std::string json = synthetic_json();
  EXPECT_EQ(error_of(replaced(json, "\"version\":1", "\"version\":2")),
            "unsupported numart trace version 2 (this numart reads version 1)");
}

TEST(trace_parse, names_the_damaged_field) {
  const std::string json = synthetic_json();
  const std::string e = error_of(replaced(json, "\"scan\":3", "\"scans\":3"));
  EXPECT_EQ(e.rfind("damaged numart trace: traceEvents[", 0), 0u) << e;
  EXPECT_NE(e.find("].args: no 'scan'"), std::string::npos) << e;
  EXPECT_EQ(error_of(replaced(json, "\"end_ns\":5000", "\"end_ns\":50")),
            "damaged numart trace: otherData.numart: end_ns is before origin_ns");
  // A huge worker id must not size anything after it.
  EXPECT_EQ(error_of(replaced(json, "\"worker\":3", "\"worker\":999999999")),
            "damaged numart trace: otherData.numart.tracks[3]: worker 999999999 is out of range");
  EXPECT_EQ(error_of(replaced(json, "\"worker\":3", "\"worker\":2")),
            "damaged numart trace: otherData.numart.tracks[3]: worker 2 has two tracks");
}

TEST(trace_parse, truncated_traces_are_reported_as_truncated) {
  const std::string json = synthetic_json();
  for (const std::size_t cut : {std::size_t{1}, json.size() / 3, json.size() / 2, json.size() - 3}) {
    const std::string e = error_of(json.substr(0, cut));
    EXPECT_EQ(e.rfind("truncated JSON:", 0), 0u) << cut << ": " << e;
  }
}

}  // namespace

namespace {

TEST(trace_summary, an_empty_trace_is_a_valid_trace) {
  rt::trace::recorder rec(trace_test::synthetic_layout());
  std::ostringstream os;
  rec.write_chrome_json(os);
  const rt::trace::parsed_trace t = rt::trace::parse_trace(os.str());
  EXPECT_EQ(t.span_ns, 0u);
  EXPECT_EQ(t.workers(), 4);
  const rt::trace::trace_summary s = rt::trace::summarize(t, 10);
  EXPECT_EQ(s.spawns, 0u);
  EXPECT_TRUE(s.groups.empty());
  EXPECT_EQ(s.parked_ns, 0u);
  EXPECT_EQ(s.per_worker.size(), 4u);
}

}  // namespace
