// The Chrome trace of the synthetic run (synthetic.hpp), parsed back: track metadata, one slice
// per task start with its end, flows that pair up and bind to their slices, proper nesting per
// track, counters, drops in the metadata; and the recorder's file handling.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/scratch_dir.hpp"
#include "synthetic.hpp"
#include "trace/json.hpp"
#include "trace/summary.hpp"
#include "trace/trace.hpp"

namespace {

using rt::trace::json_value;

json_value chrome_json(const rt::trace::recorder& r) {
  std::ostringstream os;
  r.write_chrome_json(os);
  return rt::trace::parse_json(os.str());
}

const std::vector<json_value>& events_of(const json_value& doc) {
  const json_value* e = doc.find("traceEvents");
  EXPECT_NE(e, nullptr);
  return e->items;
}

std::string str(const json_value& ev, const char* key) {
  const json_value* v = ev.find(key);
  return v != nullptr && v->is_string() ? v->text : std::string();
}
std::int64_t num(const json_value& ev, const char* key) {
  const json_value* v = ev.find(key);
  return v != nullptr && v->as_int() ? *v->as_int() : -999;
}
std::uint64_t ns(const json_value& ev, const char* key) { return *ev.find(key)->micros_as_ns(); }
std::string arg(const json_value& ev, const char* key) {
  const json_value* a = ev.find("args");
  return a != nullptr ? str(*a, key) : std::string();
}
std::int64_t arg_num(const json_value& ev, const char* key) {
  const json_value* a = ev.find("args");
  return a != nullptr ? num(*a, key) : -999;
}

class synthetic_trace : public ::testing::Test {
 protected:
  synthetic_trace() : rec_(trace_test::synthetic_layout()) {
    trace_test::fill_synthetic(rec_);
    doc_ = chrome_json(rec_);
  }
  std::vector<json_value> with_event(const std::string& kind) const {
    std::vector<json_value> out;
    for (const json_value& e : events_of(doc_)) {
      if (arg(e, "event") == kind) out.push_back(e);
    }
    return out;
  }
  rt::trace::recorder rec_;
  json_value doc_;
};

TEST_F(synthetic_trace, names_a_process_per_node_and_a_thread_per_worker) {
  std::map<std::int64_t, std::string> processes;
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> threads;  // name -> pid, tid
  for (const json_value& e : events_of(doc_)) {
    if (str(e, "ph") != "M") continue;
    if (str(e, "name") == "process_name") {
      EXPECT_TRUE(processes.emplace(num(e, "pid"), arg(e, "name")).second);
    }
    if (str(e, "name") == "thread_name") {
      EXPECT_TRUE(threads.emplace(arg(e, "name"), std::pair{num(e, "pid"), num(e, "tid")}).second);
    }
  }
  EXPECT_EQ(processes, (std::map<std::int64_t, std::string>{{1, "node 0 (package 0)"}, {2, "node 1 (package 1)"}, {3, "runtime synthetic"}}));
  ASSERT_EQ(threads.size(), 6u);
  const std::vector<int> node_of = {0, 0, 1, 1};
  std::set<std::int64_t> tids;
  for (int w = 0; w < 4; ++w) {
    const auto it = threads.find("worker " + std::to_string(w));
    ASSERT_NE(it, threads.end()) << w;
    EXPECT_EQ(it->second.first, node_of[static_cast<std::size_t>(w)] + 1);
    tids.insert(it->second.second);
  }
  EXPECT_EQ(threads.at("balancer").first, 3);
  EXPECT_EQ(threads.at("outside threads").first, 3);
  tids.insert(threads.at("balancer").second);
  tids.insert(threads.at("outside threads").second);
  EXPECT_EQ(tids.size(), 6u);
  for (const std::int64_t t : tids) EXPECT_FALSE(processes.count(t)) << "tid " << t << " equals a pid";
}

TEST_F(synthetic_trace, every_started_task_has_one_slice_that_ends) {
  struct expected {
    std::uint64_t start;
    std::uint64_t end;
    bool open;
    std::string name;
  };
  // task id -> times relative to the origin (100 ns)
  const std::map<std::string, expected> want = {
      {"0x10", {400, 4900, false, "jvm-1"}}, {"0x4", {1300, 1800, false, "jvm-1"}}, {"0x3", {1900, 2400, false, "jvm-1"}},
      {"0x22", {3400, 3500, false, "jvm-2"}}, {"0x23", {4600, 4700, false, "jvm-2"}}, {"0x2", {1410, 2410, false, "jvm-1"}},
      {"0x40", {4400, 4900, true, "jvm-1"}},  {"0x1", {1510, 1900, false, "jvm-1"}}, {"0x21", {3100, 3200, false, "jvm-2"}}};
  std::map<std::string, int> seen;
  for (const json_value& e : with_event("task")) {
    EXPECT_EQ(str(e, "ph"), "X");
    EXPECT_EQ(str(e, "cat"), "task");
    const std::string id = arg(e, "task");
    ++seen[id];
    const auto it = want.find(id);
    ASSERT_NE(it, want.end()) << id;
    EXPECT_EQ(ns(e, "ts"), it->second.start) << id;
    EXPECT_EQ(ns(e, "ts") + ns(e, "dur"), it->second.end) << id;
    EXPECT_EQ(str(e, "name"), it->second.name) << id;
    const json_value* open = e.find("args")->find("open");
    EXPECT_EQ(open != nullptr && open->b, it->second.open) << id;
  }
  EXPECT_EQ(seen.size(), want.size());
  for (const auto& [id, n] : seen) EXPECT_EQ(n, 1) << id;
}

TEST_F(synthetic_trace, flows_pair_up_and_bind_to_their_slices) {
  std::map<std::int64_t, std::vector<json_value>> flows;
  for (const json_value& e : events_of(doc_)) {
    if (str(e, "ph") == "s" || str(e, "ph") == "f") flows[num(e, "id")].push_back(e);
  }
  ASSERT_EQ(flows.size(), 7u);  // tasks 1-4, 0x21, 0x22, 0x23; 0x10 and 0x40 have no spawn in the trace
  const auto slice_at = [&](const json_value& flow, const std::string& kind) -> const json_value* {
    for (const json_value& e : events_of(doc_)) {
      if (str(e, "ph") == "X" && arg(e, "event") == kind && str(e, "cat") == str(flow, "cat") && num(e, "pid") == num(flow, "pid") &&
          num(e, "tid") == num(flow, "tid") && ns(e, "ts") == ns(flow, "ts")) {
        return &e;
      }
    }
    return nullptr;
  };
  std::set<std::string> tasks;
  for (const auto& [id, pair] : flows) {
    ASSERT_EQ(pair.size(), 2u) << id;
    const json_value& s = str(pair[0], "ph") == "s" ? pair[0] : pair[1];
    const json_value& f = str(pair[0], "ph") == "s" ? pair[1] : pair[0];
    ASSERT_EQ(str(s, "ph"), "s");
    ASSERT_EQ(str(f, "ph"), "f");
    EXPECT_EQ(str(f, "bp"), "e");
    EXPECT_EQ(str(s, "name"), str(f, "name"));
    EXPECT_LE(ns(s, "ts"), ns(f, "ts"));
    const json_value* spawn = slice_at(s, "spawn");
    const json_value* task = slice_at(f, "task");
    ASSERT_NE(spawn, nullptr) << id;
    ASSERT_NE(task, nullptr) << id;
    EXPECT_EQ(arg(*spawn, "task"), arg(*task, "task"));
    tasks.insert(arg(*task, "task"));
  }
  EXPECT_EQ(tasks, (std::set<std::string>{"0x1", "0x2", "0x3", "0x4", "0x21", "0x22", "0x23"}));
}

TEST_F(synthetic_trace, slices_nest_on_every_track) {
  std::map<std::int64_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>> stacks;  // tid -> open [start, end)
  std::map<std::int64_t, std::uint64_t> last_start;
  for (const json_value& e : events_of(doc_)) {
    if (str(e, "ph") != "X") continue;
    const std::uint64_t b = ns(e, "ts");
    const std::uint64_t end = b + ns(e, "dur");
    auto& stack = stacks[num(e, "tid")];
    EXPECT_GE(b, last_start[num(e, "tid")]) << "slices of a track are written in start order";
    last_start[num(e, "tid")] = b;
    while (!stack.empty() && stack.back().second <= b) stack.pop_back();
    if (!stack.empty()) {
      EXPECT_LE(end, stack.back().second) << "a slice outlives its parent on tid " << num(e, "tid");
    }
    stack.emplace_back(b, end);
  }
}

TEST_F(synthetic_trace, records_decisions_with_their_fields) {
  const std::vector<json_value> spawns = with_event("spawn");
  ASSERT_EQ(spawns.size(), 7u);
  const auto by_task = [&](const std::string& id) {
    for (const json_value& s : spawns) {
      if (arg(s, "task") == id) return s;
    }
    return json_value{};
  };
  const json_value s21 = by_task("0x21");
  EXPECT_EQ(arg(s21, "affine"), "affine");
  EXPECT_EQ(arg(s21, "path"), "idle_scan");
  EXPECT_EQ(arg_num(s21, "scan"), 3);
  EXPECT_EQ(arg_num(s21, "target"), 2);
  EXPECT_EQ(arg_num(s21, "home"), 2);
  EXPECT_EQ(arg(s21, "group"), "0x200");

  const std::vector<json_value> steals = with_event("steal");
  ASSERT_EQ(steals.size(), 2u);
  EXPECT_EQ(arg(steals[0], "tier"), "llc");
  EXPECT_EQ(arg(steals[1], "tier"), "remote");
  EXPECT_EQ(arg_num(steals[1], "victim"), 0);

  const std::vector<json_value> parks = with_event("park");
  ASSERT_EQ(parks.size(), 3u);
  int open = 0;
  for (const json_value& p : parks) {
    EXPECT_EQ(arg(p, "reason"), "idle");
    if (p.find("args")->find("open") != nullptr) {
      ++open;
      EXPECT_EQ(ns(p, "ts") + ns(p, "dur"), 4900u);
    } else {
      EXPECT_EQ(arg(p, "unpark"), "woken");
    }
  }
  EXPECT_EQ(open, 1);

  const std::vector<json_value> moves = with_event("balancer_move");
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(arg(moves[0], "name"), "jvm-2");
  EXPECT_EQ(arg_num(moves[0], "old_home"), 1);
  EXPECT_EQ(arg_num(moves[0], "new_home"), 0);
  EXPECT_EQ(arg_num(moves[0], "score"), 77);
  const std::vector<json_value> pages = with_event("page_migration");
  ASSERT_EQ(pages.size(), 1u);
  EXPECT_EQ(arg_num(pages[0], "pages"), 128);
  EXPECT_EQ(with_event("mailbox_handoff").size(), 1u);
}

TEST_F(synthetic_trace, derives_counter_tracks) {
  std::vector<std::int64_t> queued;
  std::map<std::int64_t, std::vector<std::int64_t>> parked;  // pid -> values
  std::vector<std::int64_t> home;
  for (const json_value& e : events_of(doc_)) {
    if (str(e, "ph") != "C") continue;
    if (str(e, "name") == "queued") queued.push_back(arg_num(e, "tasks"));
    if (str(e, "name") == "parked") parked[num(e, "pid")].push_back(arg_num(e, "workers"));
    if (str(e, "name") == "home jvm-2") home.push_back(arg_num(e, "node"));
  }
  EXPECT_EQ(queued, (std::vector<std::int64_t>{1, 2, 3, 4, 3, 2, 1, 0, 1, 0, 1, 0, 1, 0}));
  EXPECT_TRUE(parked[1].empty());
  EXPECT_EQ(parked[2], (std::vector<std::int64_t>{1, 2, 1, 0, 1}));
  EXPECT_EQ(home, (std::vector<std::int64_t>{1, 0}));
}

TEST_F(synthetic_trace, metadata_describes_the_run) {
  const json_value& n = *doc_.find("otherData")->find("numart");
  EXPECT_EQ(str(n, "format"), "numart-trace");
  EXPECT_EQ(num(n, "version"), 1);
  EXPECT_EQ(str(n, "runtime"), "synthetic");
  EXPECT_EQ(num(n, "origin_ns"), 100);
  EXPECT_EQ(num(n, "end_ns"), 5000);
  EXPECT_EQ(num(n, "dropped"), 0);
  const json_value& tracks = *n.find("tracks");
  ASSERT_EQ(tracks.items.size(), 6u);
  EXPECT_EQ(num(tracks.items[0], "kept"), 15);
  EXPECT_EQ(num(tracks.items[3], "node"), 1);
  EXPECT_EQ(str(tracks.items[4], "name"), "balancer");
  EXPECT_EQ(num(tracks.items[4], "worker"), -1);
  EXPECT_EQ(n.find("groups")->items.size(), 2u);
}

TEST(trace_drops, full_rings_drop_the_oldest_and_say_so) {
  rt::trace::recorder rec(trace_test::synthetic_layout(), 8);
  rt::trace::ring& w0 = rec.for_worker(0);
  for (std::uint64_t i = 0; i < 20; ++i) {
    w0.push(rt::trace::ev::task_start(1000 + 10 * i, i + 1, 0, -1));
    w0.push(rt::trace::ev::task_end(1005 + 10 * i, i + 1, 0));
  }
  w0.push(rt::trace::ev::task_start(1300, 99, 0, -1));  // 41 events; the last 8 start with an end
  const json_value doc = chrome_json(rec);
  const json_value& n = *doc.find("otherData")->find("numart");
  EXPECT_EQ(num(n, "dropped"), 33);
  const json_value& t0 = n.find("tracks")->items[0];
  EXPECT_EQ(num(t0, "written"), 41);
  EXPECT_EQ(num(t0, "kept"), 8);
  EXPECT_EQ(num(t0, "dropped"), 33);
  EXPECT_EQ(num(t0, "unmatched"), 1);
  bool named = false;
  int slices = 0;
  for (const json_value& e : events_of(doc)) {
    if (str(e, "name") == "thread_name" && arg(e, "name") == "worker 0 (33 oldest events dropped)") named = true;
    if (arg(e, "event") == "task") ++slices;
  }
  EXPECT_TRUE(named);
  EXPECT_EQ(slices, 4);  // three whole pairs and the open last start
}

// The spawner reads the spawn's time before the hand-off and writes the event after it, when
// the worker may already have started the task (I-TRACE-8): the flow still binds them.
TEST(trace_outside, outside_spawns_flow_to_the_worker_that_runs_them) {
  rt::trace::recorder rec(trace_test::synthetic_layout());
  const std::uint64_t spawned_at = rt::sync::now_ns();
  rt::trace::task_start(rec.for_worker(1), 0x99, 0, -1);
  rt::trace::task_end(rec.for_worker(1), 0x99, 0);
  rec.outside_spawn(spawned_at, 0x99, 0, -1, 1, rt::trace::wake_path::idlest);
  const json_value doc = chrome_json(rec);
  int s = 0;
  int f = 0;
  std::int64_t outside_tid = -1;
  for (const json_value& e : events_of(doc)) {
    if (str(e, "name") == "thread_name" && arg(e, "name") == "outside threads") outside_tid = num(e, "tid");
  }
  for (const json_value& e : events_of(doc)) {
    if (str(e, "ph") == "s") {
      ++s;
      EXPECT_EQ(num(e, "tid"), outside_tid);
    }
    if (str(e, "ph") == "f") ++f;
    if (arg(e, "event") == "spawn") {
      EXPECT_EQ(arg(e, "path"), "idlest");
    }
  }
  EXPECT_EQ(s, 1);
  EXPECT_EQ(f, 1);
}

TEST(trace_layout_check, refuses_inconsistent_layouts) {
  rt::trace::trace_layout l = trace_test::synthetic_layout();
  l.worker_node[3] = 2;
  EXPECT_THROW(rt::trace::recorder{l}, std::invalid_argument);
  EXPECT_THROW(rt::trace::recorder(rt::trace::trace_layout{}), std::invalid_argument);
  EXPECT_THROW(rt::trace::recorder(trace_test::synthetic_layout(), 0), std::invalid_argument);
}

class trace_file : public ::testing::Test {
 protected:
  numart_test::scratch_dir dir_;
};

TEST_F(trace_file, unwritable_paths_turn_tracing_off_with_one_line) {
  const auto refused = [&](const std::string& path, const std::string& reason) {
    std::ostringstream err;
    EXPECT_EQ(rt::trace::recorder::open(path, trace_test::synthetic_layout(), err), nullptr);
    EXPECT_EQ(err.str(), "numart: trace file '" + path + "': " + reason + " (tracing is off)\n");
  };
  refused(dir_.path() + "/missing/t.json", "cannot open it for writing: No such file or directory");
  refused(dir_.path(), "it is a directory");
  refused("/dev/null", "not a regular file");
  std::ostringstream err;
  rt::trace::trace_layout bad = trace_test::synthetic_layout();
  bad.node_package.clear();
  EXPECT_EQ(rt::trace::recorder::open(dir_.path() + "/t.json", bad, err), nullptr);
  EXPECT_EQ(err.str(), "numart: trace file '" + dir_.path() + "/t.json': trace: the layout has no node (tracing is off)\n");
  std::ostringstream empty_err;
  EXPECT_EQ(rt::trace::recorder::open("", trace_test::synthetic_layout(), empty_err), nullptr);
  EXPECT_EQ(empty_err.str(), "numart: the trace file name is empty (tracing is off)\n");
}

TEST_F(trace_file, the_file_is_created_at_open_and_written_by_dump) {
  const std::string path = dir_.path() + "/t.json";
  std::ostringstream err;
  auto rec = rt::trace::recorder::open(path, trace_test::synthetic_layout(), err);
  ASSERT_NE(rec, nullptr);
  EXPECT_EQ(err.str(), "");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0);
  trace_test::fill_synthetic(*rec);
  ASSERT_TRUE(rec->dump(err));
  const rt::trace::parsed_trace t = rt::trace::parse_trace(rt::trace::read_text_file(path));
  EXPECT_EQ(t.tasks.size(), 9u);
  // A second dump replaces the file with the trace so far.
  rt::trace::task_start(rec->for_worker(3), 0x77, 0, -1);
  ASSERT_TRUE(rec->dump(err));
  EXPECT_EQ(rt::trace::parse_trace(rt::trace::read_text_file(path)).tasks.size(), 10u);
}

TEST_F(trace_file, dump_reports_a_file_that_became_unwritable) {
  const std::string sub = dir_.path() + "/sub";
  ASSERT_EQ(::mkdir(sub.c_str(), 0700), 0);
  const std::string path = sub + "/t.json";
  std::ostringstream err;
  auto rec = rt::trace::recorder::open(path, trace_test::synthetic_layout(), err);
  ASSERT_NE(rec, nullptr);
  ASSERT_EQ(::unlink(path.c_str()), 0);
  ASSERT_EQ(::mkdir(path.c_str(), 0700), 0);  // the path is now a directory
  EXPECT_FALSE(rec->dump(err));
  const std::string line = err.str();
  EXPECT_EQ(line.rfind("numart: trace file '" + path + "': cannot open it for writing: ", 0), 0u) << line;
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1);
}

TEST(trace_memory, an_in_memory_recorder_has_no_file_to_dump) {
  rt::trace::recorder rec(trace_test::synthetic_layout());
  std::ostringstream err;
  EXPECT_FALSE(rec.dump(err));
  EXPECT_EQ(err.str(), "numart: this trace has no file to write to (an in-memory recorder)\n");
}

}  // namespace
