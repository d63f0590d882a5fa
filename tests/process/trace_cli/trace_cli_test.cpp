// numart trace summarize and numart stats, run as the user runs them. Good input: exit 0, the
// expected numbers on stdout, nothing on stderr. Bad input: exit 2, nothing on stdout, exactly
// one line on stderr naming the file and the reason; never a crash (a signal is status 128 + n).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "process/cli/run_tool.hpp"
#include "trace/stats_file.hpp"
#include "trace/trace.hpp"
#include "unit/trace/synthetic.hpp"

namespace {

using cli_test::result;
using cli_test::run_numart;

std::string synthetic_trace() {
  rt::trace::recorder rec(trace_test::synthetic_layout());
  trace_test::fill_synthetic(rec);
  std::ostringstream os;
  rec.write_chrome_json(os);
  return os.str();
}

std::string synthetic_stats() {
  // A fixed counter list: the runtime's table grows, the expected table below must not.
  rt::stats s;
  s.counter_names = {"tasks_spawned", "tasks_run", "steals", "parks"};
  s.counter_units = {"tasks", "tasks", "tasks", "parks"};
  for (std::uint64_t w = 0; w < 4; ++w) {
    std::vector<std::uint64_t> row;
    for (std::uint64_t i = 0; i < s.counter_names.size(); ++i) row.push_back(100 * w + i);
    s.per_worker.push_back(row);
  }
  s.outside.assign(s.counter_names.size(), 0);
  s.outside[0] = 7;
  s.worker_node = {0, 0, 1, 1};
  s.tunables = "imbalance_pct = 117\nWA_SHARE_CACHE = on";
  s.topology = "synthetic:pack:2 [numa] core:2 pu:1";
  s.virtual_topology = true;
  return rt::trace::stats_json(s);
}

void expect_refused(const std::vector<std::string>& args, const std::vector<std::string>& needles) {
  const result r = run_numart(args);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.back(), '\n');
  for (const std::string& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << "'" << n << "' not in: " << r.err;
}

bool has_line(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (l == line) return true;
  }
  return false;
}

class trace_cli : public ::testing::Test {
 protected:
  numart_test::scratch_dir dir_;
};

TEST_F(trace_cli, summarizes_a_trace) {
  const std::string f = dir_.write("t.json", synthetic_trace());
  const result r = run_numart({"trace", "summarize", f, "--windows", "2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::string& o = r.out;
  EXPECT_TRUE(has_line(o, "span:       4900 ns, 4 workers on 2 nodes, 9 task slices")) << o;
  EXPECT_TRUE(has_line(o, "wake path: 7 spawns; idle scans on 2 (28.6%), mean length 3.5, max 4; mailbox hand-offs 1")) << o;
  EXPECT_TRUE(has_line(o, "  none          local                  5    71.4%")) << o;
  EXPECT_TRUE(has_line(o, "  affine        idle_scan              1    14.3%")) << o;
  EXPECT_TRUE(has_line(o, "steals: 2")) << o;
  EXPECT_TRUE(has_line(o, "  llc                  1    50.0%")) << o;
  EXPECT_TRUE(has_line(o, "  group              starts  overall     w0     w1")) << o;
  EXPECT_TRUE(has_line(o, "  jvm-1                   6    83.3%    80%   100%")) << o;
  EXPECT_TRUE(has_line(o, "  jvm-2                   3    66.7%      -    67%")) << o;
  EXPECT_TRUE(has_line(o, "idle while work waits: workers parked 5940 ns in total, 1790 ns of it (30.1%) while a spawned task waited to start"))
      << o;
  EXPECT_TRUE(has_line(o, "  worker 3    parked        2800 ns   while work waited        1000 ns")) << o;
}

TEST_F(trace_cli, top_limits_the_outcomes_listed) {
  const std::string f = dir_.write("t.json", synthetic_trace());
  const result r = run_numart({"trace", "summarize", "--top", "1", f});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has_line(r.out, "  (2 more outcomes; --top to list them)")) << r.out;
  EXPECT_EQ(r.out.find("idle_scan  "), std::string::npos) << r.out;
}

TEST_F(trace_cli, help_lists_the_options) {
  const result r = run_numart({"trace", "--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("usage: numart trace summarize FILE"), std::string::npos) << r.out;
  const result top = run_numart({"--help"});
  EXPECT_NE(top.out.find("  trace  "), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("  stats  "), std::string::npos) << top.out;
}

TEST_F(trace_cli, truncated_traces_are_refused) {
  const std::string text = synthetic_trace();
  for (const std::size_t cut : {text.size() / 2, text.size() - 2}) {
    const std::string f = dir_.write("cut.json", text.substr(0, cut));
    expect_refused({"trace", "summarize", f}, {"numart trace: '" + f + "': truncated JSON: the text ends at byte " + std::to_string(cut)});
  }
}

TEST_F(trace_cli, foreign_json_is_refused) {
  const std::string chrome = dir_.write("chrome.json", "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"dur\": 2, \"pid\": 1, \"tid\": 1}]}");
  expect_refused({"trace", "summarize", chrome}, {"'" + chrome + "'", "not a numart trace: no otherData.numart section"});
  const std::string array = dir_.write("array.json", "[{\"ph\": \"B\"}]");
  expect_refused({"trace", "summarize", array}, {"not a numart trace: the document is not a JSON object"});
  const std::string stats = dir_.write("stats.json", synthetic_stats());
  expect_refused({"trace", "summarize", stats}, {"not a numart trace: no traceEvents array"});
  const std::string junk = dir_.write("junk.json", "\x7f" "ELF not json");
  expect_refused({"trace", "summarize", junk}, {"invalid JSON at byte 0"});
  const std::string deep = dir_.write("deep.json", std::string(200000, '['));
  expect_refused({"trace", "summarize", deep}, {"not a numart trace"});
  const std::string nested = dir_.write("nested.json", "{\"traceEvents\": " + std::string(100000, '['));
  expect_refused({"trace", "summarize", nested}, {"nesting deeper than 64 levels"});
}

TEST_F(trace_cli, missing_and_empty_files_are_refused) {
  const std::string missing = dir_.path() + "/absent.json";
  expect_refused({"trace", "summarize", missing}, {"numart trace: '" + missing + "': cannot open the file: No such file or directory"});
  const std::string empty = dir_.write("empty.json", "\n");
  expect_refused({"trace", "summarize", empty}, {"the file is empty"});
  expect_refused({"trace", "summarize", dir_.path()}, {"it is a directory"});
}

TEST_F(trace_cli, bad_usage_is_one_line) {
  const std::string f = dir_.write("t.json", synthetic_trace());
  expect_refused({"trace"}, {"numart trace: a subcommand is needed: summarize"});
  expect_refused({"trace", "explain", f}, {"unknown subcommand 'explain'"});
  expect_refused({"trace", "summarize"}, {"summarize needs a trace FILE"});
  expect_refused({"trace", "summarize", f, f}, {"unexpected argument"});
  expect_refused({"trace", "summarize", f, "--windows", "0"}, {"--windows takes a whole number from 1 to 50, not '0'"});
  expect_refused({"trace", "summarize", f, "--windows", "9x"}, {"--windows takes a whole number"});
  expect_refused({"trace", "summarize", f, "--top"}, {"--top needs a value"});
  expect_refused({"trace", "summarize", f, "--bogus"}, {"unknown option '--bogus'"});
}

TEST_F(trace_cli, prints_a_stats_file) {
  const std::string f = dir_.write("stats.json", synthetic_stats());
  const result r = run_numart({"stats", f});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::string& o = r.out;
  EXPECT_TRUE(has_line(o, "topology:  synthetic:pack:2 [numa] core:2 pu:1 (virtual topology)")) << o;
  EXPECT_TRUE(has_line(o, "workers:   4 on 2 nodes; worker -> node: 0:0 1:0 2:1 3:1")) << o;
  // tasks_spawned: workers 0..3 hold 0, 100, 200, 300; outside 7.
  EXPECT_TRUE(has_line(o, "tasks_spawned  tasks                 607         100         500           7")) << o;
  EXPECT_TRUE(has_line(o, "tasks_run      tasks                 604         102         502           0")) << o;
  EXPECT_TRUE(has_line(o, "counter               w0/n0       w1/n0       w2/n1       w3/n1")) << o;
  EXPECT_TRUE(has_line(o, "tasks_run                 1         101         201         301")) << o;
  EXPECT_TRUE(has_line(o, "  imbalance_pct = 117")) << o;
}

TEST_F(trace_cli, bad_stats_files_are_refused) {
  const std::string text = synthetic_stats();
  const std::string cut = dir_.write("cut.json", text.substr(0, text.size() / 2));
  expect_refused({"stats", cut}, {"numart stats: '" + cut + "': truncated JSON"});
  const std::string trace = dir_.write("trace.json", synthetic_trace());
  expect_refused({"stats", trace}, {"not a numart stats file"});
  const std::string damaged = dir_.write("damaged.json", [&] {
    std::string s = text;
    s.replace(s.find("\"steals\":"), 9, "\"stolen\":");
    return s;
  }());
  expect_refused({"stats", damaged}, {"damaged stats file: workers[0].counters: no counter 'steals'"});
  expect_refused({"stats", dir_.path() + "/absent.json"}, {"cannot open the file"});
  expect_refused({"stats"}, {"numart stats: a stats FILE is needed"});
  expect_refused({"stats", cut, cut}, {"one stats FILE, not 2 arguments"});
  expect_refused({"stats", "--json"}, {"unknown option '--json'"});
}

}  // namespace
