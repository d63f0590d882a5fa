#include "trace/summary.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <utility>

#include "trace/json.hpp"

namespace rt::trace {
namespace {

// A numart event whose fields are missing or malformed: kept until the whole document is read,
// so that a foreign document is reported as foreign first.
struct bad_event {
  std::string message;
};

const json_value& member(const json_value& v, std::string_view key, const std::string& where) {
  const json_value* m = v.find(key);
  if (m == nullptr) throw bad_event{where + ": no '" + std::string(key) + "'"};
  return *m;
}

std::uint64_t micros_field(const json_value& v, std::string_view key, const std::string& where) {
  const std::optional<std::uint64_t> ns = member(v, key, where).micros_as_ns();
  if (!ns) throw bad_event{where + ": '" + std::string(key) + "' is not a non-negative number of microseconds"};
  return *ns;
}

std::int64_t int_field(const json_value& v, std::string_view key, const std::string& where) {
  const std::optional<std::int64_t> i = member(v, key, where).as_int();
  if (!i) throw bad_event{where + ": '" + std::string(key) + "' is not an integer"};
  return *i;
}

int small_int_field(const json_value& v, std::string_view key, const std::string& where) {
  const std::int64_t i = int_field(v, key, where);
  if (i < -1'000'000'000 || i > 1'000'000'000) throw bad_event{where + ": '" + std::string(key) + "' is out of range"};
  return static_cast<int>(i);
}

std::uint64_t uint_field(const json_value& v, std::string_view key, const std::string& where) {
  const std::optional<std::uint64_t> u = member(v, key, where).as_uint();
  if (!u) throw bad_event{where + ": '" + std::string(key) + "' is not a non-negative integer"};
  return *u;
}

const std::string& string_field(const json_value& v, std::string_view key, const std::string& where) {
  const json_value& m = member(v, key, where);
  if (!m.is_string()) throw bad_event{where + ": '" + std::string(key) + "' is not a string"};
  return m.text;
}

std::uint64_t hex_field(const json_value& v, std::string_view key, const std::string& where) {
  const std::string& s = string_field(v, key, where);
  const auto bad = [&] { return bad_event{where + ": '" + std::string(key) + "' is not a 0x-prefixed 64-bit id"}; };
  if (s.size() < 3 || s.size() > 18 || s[0] != '0' || s[1] != 'x') throw bad();
  std::uint64_t out = 0;
  for (std::size_t i = 2; i < s.size(); ++i) {
    const char c = s[i];
    out <<= 4;
    if (c >= '0' && c <= '9') {
      out |= static_cast<std::uint64_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      out |= static_cast<std::uint64_t>(c - 'a' + 10);
    } else {
      throw bad();
    }
  }
  return out;
}

// Events as read, with the thread id that the tracks table maps to a worker afterwards.
struct pending_events {
  std::vector<std::pair<int, parsed_trace::task>> tasks;
  std::vector<std::pair<int, parsed_trace::park>> parks;
};

void take_event(const json_value& ev, std::size_t index, parsed_trace& out, pending_events& pending) {
  const std::string where = "traceEvents[" + std::to_string(index) + "]";
  if (!ev.is_object()) throw bad_event{where + " is not an object"};
  const json_value* args = ev.find("args");
  const json_value* what = args != nullptr ? args->find("event") : nullptr;
  if (what == nullptr) return;  // metadata, counters, flows: nothing to summarize
  if (!what->is_string()) throw bad_event{where + ": args.event is not a string"};
  const std::string& k = what->text;
  const std::string in_args = where + ".args";
  if (k == "task") {
    parsed_trace::task t;
    t.ts = micros_field(ev, "ts", where);
    t.dur = micros_field(ev, "dur", where);
    t.id = hex_field(*args, "task", in_args);
    t.group = hex_field(*args, "group", in_args);
    t.group_node = small_int_field(*args, "group_node", in_args);
    const json_value* open = args->find("open");
    t.open = open != nullptr && open->t == json_value::type::boolean && open->b;
    pending.tasks.emplace_back(small_int_field(ev, "tid", where), t);
  } else if (k == "spawn") {
    parsed_trace::spawn s;
    s.ts = micros_field(ev, "ts", where);
    s.id = hex_field(*args, "task", in_args);
    s.affine = string_field(*args, "affine", in_args);
    s.path = string_field(*args, "path", in_args);
    s.scan = small_int_field(*args, "scan", in_args);
    out.spawns.push_back(std::move(s));
  } else if (k == "steal") {
    out.steal_tiers.push_back(string_field(*args, "tier", in_args));
  } else if (k == "park") {
    parsed_trace::park p;
    p.ts = micros_field(ev, "ts", where);
    p.dur = micros_field(ev, "dur", where);
    if (args->find("runnable") != nullptr) p.runnable = std::min(p.dur, micros_field(*args, "runnable", in_args));
    const json_value* reason = args->find("reason");
    p.join = reason != nullptr && reason->is_string() && reason->text == "join";
    pending.parks.emplace_back(small_int_field(ev, "tid", where), p);
  } else if (k == "mailbox_handoff") {
    ++out.handoffs;
  } else if (k == "balancer_move") {
    ++out.balancer_moves;
  } else if (k == "page_migration") {
    out.pages_migrated += uint_field(*args, "pages", in_args);
  } else {
    throw bad_event{where + ": unknown numart event '" + k + "'"};
  }
}

void take_numart(const json_value& n, parsed_trace& out) {
  const std::string where = "otherData.numart";
  if (!n.is_object()) throw format_error("not a numart trace: otherData.numart is not an object");
  const json_value* format = n.find("format");
  if (format == nullptr || !format->is_string() || format->text != "numart-trace") {
    throw format_error("not a numart trace: otherData.numart.format is not \"numart-trace\"");
  }
  const json_value* version = n.find("version");
  if (version == nullptr || version->as_int() != std::optional<std::int64_t>(1)) {
    throw format_error("unsupported numart trace version " + (version != nullptr ? version->text : std::string("(none)")) +
                       " (this numart reads version 1)");
  }
  try {
    out.runtime = string_field(n, "runtime", where);
    const std::uint64_t origin = uint_field(n, "origin_ns", where);
    const std::uint64_t end = uint_field(n, "end_ns", where);
    if (end < origin) throw bad_event{where + ": end_ns is before origin_ns"};
    out.span_ns = end - origin;
    out.dropped = uint_field(n, "dropped", where);
    const json_value& nodes = member(n, "nodes", where);
    if (!nodes.is_array()) throw bad_event{where + ".nodes is not an array"};
    out.nodes = static_cast<int>(nodes.items.size());
    const json_value& tracks = member(n, "tracks", where);
    if (!tracks.is_array()) throw bad_event{where + ".tracks is not an array"};
    for (std::size_t i = 0; i < tracks.items.size(); ++i) {
      const std::string at = where + ".tracks[" + std::to_string(i) + "]";
      const json_value& t = tracks.items[i];
      if (!t.is_object()) throw bad_event{at + " is not an object"};
      parsed_trace::track tr;
      tr.name = string_field(t, "name", at);
      tr.worker = small_int_field(t, "worker", at);
      tr.node = small_int_field(t, "node", at);
      tr.tid = small_int_field(t, "tid", at);
      tr.written = uint_field(t, "written", at);
      tr.kept = uint_field(t, "kept", at);
      tr.dropped = uint_field(t, "dropped", at);
      tr.unmatched = uint_field(t, "unmatched", at);
      if (tr.worker >= 0 && (tr.node < 0 || tr.node >= out.nodes)) throw bad_event{at + ": the worker's node is not in nodes"};
      if (tr.worker >= static_cast<int>(tracks.items.size())) throw bad_event{at + ": worker " + std::to_string(tr.worker) + " is out of range"};
      for (const parsed_trace::track& seen : out.tracks) {
        if (tr.worker >= 0 && seen.worker == tr.worker) throw bad_event{at + ": worker " + std::to_string(tr.worker) + " has two tracks"};
        if (seen.tid == tr.tid) throw bad_event{at + ": tid " + std::to_string(tr.tid) + " names two tracks"};
      }
      out.tracks.push_back(std::move(tr));
    }
    const json_value& groups = member(n, "groups", where);
    if (!groups.is_array()) throw bad_event{where + ".groups is not an array"};
    for (std::size_t i = 0; i < groups.items.size(); ++i) {
      const std::string at = where + ".groups[" + std::to_string(i) + "]";
      if (!groups.items[i].is_object()) throw bad_event{at + " is not an object"};
      out.group_names[hex_field(groups.items[i], "id", at)] = string_field(groups.items[i], "name", at);
    }
  } catch (const bad_event& e) {
    throw format_error("damaged numart trace: " + e.message);
  }
}

}  // namespace

int parsed_trace::workers() const {
  int n = 0;
  for (const track& t : tracks) n = std::max(n, t.worker + 1);
  return n;
}

parsed_trace parse_trace(std::string_view text) {
  parsed_trace out;
  pending_events pending;
  std::optional<std::string> first_problem;
  std::optional<json_value> numart;
  bool saw_events = false;

  json_reader r(text);
  if (r.peek_type() != json_value::type::object) throw format_error("not a numart trace: the document is not a JSON object");
  r.for_each_member([&](const std::string& key) {
    if (key == "traceEvents") {
      if (r.peek_type() != json_value::type::array) throw format_error("not a numart trace: traceEvents is not an array");
      saw_events = true;
      std::size_t index = 0;
      r.for_each_element([&] {
        const json_value ev = r.parse_value();
        try {
          take_event(ev, index, out, pending);
        } catch (const bad_event& e) {
          if (!first_problem) first_problem = e.message;
        }
        ++index;
      });
    } else if (key == "otherData") {
      json_value other = r.parse_value();
      if (const json_value* n = other.find("numart"); n != nullptr) numart = *n;
    } else {
      r.parse_value();
    }
  });
  r.finish();

  if (!saw_events) throw format_error("not a numart trace: no traceEvents array");
  if (!numart) throw format_error("not a numart trace: no otherData.numart section");
  take_numart(*numart, out);
  if (first_problem) throw format_error("damaged numart trace: " + *first_problem);

  std::unordered_map<int, int> worker_of_tid;
  for (const parsed_trace::track& t : out.tracks) {
    if (t.worker >= 0) worker_of_tid[t.tid] = t.worker;
  }
  const auto worker_of = [&](int tid, const char* what) {
    const auto it = worker_of_tid.find(tid);
    if (it == worker_of_tid.end()) {
      throw format_error(std::string("damaged numart trace: a ") + what + " on thread " + std::to_string(tid) +
                         ", which is no worker's track");
    }
    return it->second;
  };
  for (auto& [tid, t] : pending.tasks) {
    t.worker = worker_of(tid, "task slice");
    out.tasks.push_back(t);
  }
  for (auto& [tid, p] : pending.parks) {
    p.worker = worker_of(tid, "park slice");
    out.parks.push_back(p);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

namespace {

struct interval {
  std::uint64_t begin;
  std::uint64_t end;
};

// Each spawned task's wait, from its spawn to its start: each start is bound to the latest
// earlier spawn of the same id (as the trace's flows are); a spawn never started waits until the
// trace's end. Empty waits are left out.
std::vector<interval> waits(const parsed_trace& t) {
  struct point {
    std::uint64_t ts;
    bool spawn;
    std::uint64_t id;
  };
  std::vector<point> points;
  for (const auto& s : t.spawns) points.push_back({s.ts, true, s.id});
  for (const auto& k : t.tasks) points.push_back({k.ts, false, k.id});
  std::stable_sort(points.begin(), points.end(), [](const point& a, const point& b) {
    if (a.ts != b.ts) return a.ts < b.ts;
    return a.spawn && !b.spawn;
  });
  std::unordered_map<std::uint64_t, std::uint64_t> waiting;  // id -> spawn time
  std::vector<interval> raw;
  for (const point& p : points) {
    if (p.spawn) {
      waiting[p.id] = p.ts;
      continue;
    }
    const auto it = waiting.find(p.id);
    if (it == waiting.end()) continue;
    if (p.ts > it->second) raw.push_back({it->second, p.ts});
    waiting.erase(it);
  }
  for (const auto& [id, ts] : waiting) {
    if (t.span_ns > ts) raw.push_back({ts, t.span_ns});
  }
  return raw;
}

// The union of `raw`: the intervals during which at least one task waited, sorted.
std::vector<interval> merged(std::vector<interval> raw) {
  std::sort(raw.begin(), raw.end(), [](const interval& a, const interval& b) { return a.begin < b.begin; });
  std::vector<interval> out;
  for (const interval& i : raw) {
    if (!out.empty() && i.begin <= out.back().end) {
      out.back().end = std::max(out.back().end, i.end);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

// When a park slice's worker was woken: the slice's end less its runnable tail (clamped, for
// hand-built traces).
std::uint64_t wake_of(const parsed_trace::park& p) { return p.ts + p.dur - std::min(p.runnable, p.dur); }

// The integral over time of min(workers parked, tasks waiting for which no worker is on its
// way): the parked time that waiting tasks could have used, one parked worker per waiting
// task. A park ends at its wake; a worker woken from an idle park that the OS has not run yet
// (the park's runnable tail) is on its way to one waiting task. A joiner woken from its block
// goes back to its join: its tail is neither parked nor on its way.
std::uint64_t parked_for_waiting(const std::vector<interval>& waits, const std::vector<parsed_trace::park>& parks) {
  struct edge {
    std::uint64_t ts;
    int waiting;
    int parked;
    int woken;
  };
  std::vector<edge> edges;
  for (const interval& w : waits) {
    edges.push_back({w.begin, 1, 0, 0});
    edges.push_back({w.end, -1, 0, 0});
  }
  for (const auto& p : parks) {
    const std::uint64_t wake = wake_of(p);
    if (wake > p.ts) {
      edges.push_back({p.ts, 0, 1, 0});
      edges.push_back({wake, 0, -1, 0});
    }
    if (!p.join && wake < p.ts + p.dur) {
      edges.push_back({wake, 0, 0, 1});
      edges.push_back({p.ts + p.dur, 0, 0, -1});
    }
  }
  std::sort(edges.begin(), edges.end(), [](const edge& a, const edge& b) { return a.ts < b.ts; });
  std::uint64_t sum = 0;
  std::int64_t waiting = 0;
  std::int64_t parked = 0;
  std::int64_t woken = 0;
  std::uint64_t last = 0;
  for (const edge& e : edges) {
    const std::int64_t unserved = std::max<std::int64_t>(0, waiting - woken);
    sum += static_cast<std::uint64_t>(std::min(unserved, parked)) * (e.ts - last);
    last = e.ts;
    waiting += e.waiting;
    parked += e.parked;
    woken += e.woken;
  }
  return sum;
}

std::uint64_t overlap(const std::vector<interval>& sorted, interval x) {
  auto it = std::lower_bound(sorted.begin(), sorted.end(), x.begin, [](const interval& i, std::uint64_t v) { return i.end <= v; });
  std::uint64_t sum = 0;
  for (; it != sorted.end() && it->begin < x.end; ++it) sum += std::min(it->end, x.end) - std::max(it->begin, x.begin);
  return sum;
}

}  // namespace

trace_summary summarize(const parsed_trace& t, int windows) {
  trace_summary s;
  if (windows < 1) windows = 1;
  s.span_ns = t.span_ns;
  s.workers = t.workers();
  s.nodes = t.nodes;
  s.tasks = t.tasks.size();
  s.dropped = t.dropped;

  std::vector<int> node_of(static_cast<std::size_t>(s.workers), -1);
  for (const auto& tr : t.tracks) {
    if (tr.worker >= 0) node_of[static_cast<std::size_t>(tr.worker)] = tr.node;
  }

  // Wake path.
  std::map<std::pair<std::string, std::string>, std::uint64_t> outcomes;
  for (const auto& sp : t.spawns) {
    ++outcomes[{sp.affine, sp.path}];
    if (sp.scan > 0) {
      ++s.scans;
      s.scanned += static_cast<std::uint64_t>(sp.scan);
    }
    s.max_scan = std::max(s.max_scan, sp.scan);
  }
  s.spawns = t.spawns.size();
  for (const auto& [key, n] : outcomes) s.outcomes.push_back({key.first, key.second, n});
  std::stable_sort(s.outcomes.begin(), s.outcomes.end(), [](const auto& a, const auto& b) { return a.spawns > b.spawns; });
  s.handoffs = t.handoffs;

  // Steals.
  std::map<std::string, std::uint64_t> tiers;
  for (const std::string& tier : t.steal_tiers) ++tiers[tier];
  s.steals = t.steal_tiers.size();
  for (const auto& [name, n] : tiers) s.tiers.push_back({name, n});
  std::stable_sort(s.tiers.begin(), s.tiers.end(), [](const auto& a, const auto& b) { return a.steals > b.steals; });

  // Locality per group and window.
  const auto w = static_cast<std::uint64_t>(windows);
  s.window_ns = t.span_ns / w + 1;  // windows * window_ns > span: every ts in [0, span] has a window
  std::map<std::uint64_t, trace_summary::group> groups;
  for (const auto& k : t.tasks) {
    if (k.group == 0) continue;
    trace_summary::group& g = groups[k.group];
    if (g.windows.empty()) {
      g.id = k.group;
      const auto it = t.group_names.find(k.group);
      g.name = it != t.group_names.end() ? it->second : "";
      g.windows.resize(static_cast<std::size_t>(windows));
    }
    ++g.starts;
    if (k.group_node < 0 || k.worker < 0) continue;
    const bool local = node_of[static_cast<std::size_t>(k.worker)] == k.group_node;
    const std::size_t wi = static_cast<std::size_t>(std::min<std::uint64_t>(k.ts / s.window_ns, w - 1));
    ++g.overall.starts;
    ++g.windows[wi].starts;
    if (local) {
      ++g.overall.local;
      ++g.windows[wi].local;
    }
  }
  for (auto& [id, g] : groups) s.groups.push_back(std::move(g));
  std::stable_sort(s.groups.begin(), s.groups.end(), [](const auto& a, const auto& b) { return a.starts > b.starts; });

  // Parked while work waited.
  const std::vector<interval> each = waits(t);
  const std::vector<interval> queued = merged(each);
  for (const interval& i : queued) s.queued_ns += i.end - i.begin;
  s.parked_for_waiting_ns = parked_for_waiting(each, t.parks);
  s.per_worker.resize(static_cast<std::size_t>(s.workers));
  for (int i = 0; i < s.workers; ++i) s.per_worker[static_cast<std::size_t>(i)].worker = i;
  for (const auto& p : t.parks) {
    auto& row = s.per_worker[static_cast<std::size_t>(p.worker)];
    const std::uint64_t wake = wake_of(p);
    row.parked_ns += wake - p.ts;
    row.runnable_ns += p.ts + p.dur - wake;
    row.parked_while_queued_ns += overlap(queued, {p.ts, wake});
  }
  for (const auto& row : s.per_worker) {
    s.parked_ns += row.parked_ns;
    s.runnable_ns += row.runnable_ns;
    s.parked_while_queued_ns += row.parked_while_queued_ns;
  }
  return s;
}

}  // namespace rt::trace
