#include "trace/trace.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "core/assert.hpp"
#include "trace/json.hpp"

namespace rt::trace {

const char* to_string(wake_affine a) noexcept {
  switch (a) {
    case wake_affine::none: return "none";
    case wake_affine::affine: return "affine";
    case wake_affine::not_affine: return "not_affine";
  }
  return "unknown";
}

const char* to_string(wake_path p) noexcept {
  switch (p) {
    case wake_path::local: return "local";
    case wake_path::target_idle: return "target_idle";
    case wake_path::prev_idle: return "prev_idle";
    case wake_path::idle_scan: return "idle_scan";
    case wake_path::busy_target: return "busy_target";
    case wake_path::idlest: return "idlest";
  }
  return "unknown";
}

const char* to_string(steal_tier t) noexcept {
  switch (t) {
    case steal_tier::llc: return "llc";
    case steal_tier::node: return "node";
    case steal_tier::remote: return "remote";
    case steal_tier::injection: return "injection";
  }
  return "unknown";
}

const char* to_string(park_reason r) noexcept {
  switch (r) {
    case park_reason::idle: return "idle";
    case park_reason::join: return "join";
  }
  return "unknown";
}

const char* to_string(unpark_reason r) noexcept {
  switch (r) {
    case unpark_reason::woken: return "woken";
    case unpark_reason::task_done: return "task_done";
    case unpark_reason::shutdown: return "shutdown";
    case unpark_reason::spurious: return "spurious";
    case unpark_reason::timeout: return "timeout";
  }
  return "unknown";
}

const char* to_string(kind k) noexcept {
  switch (k) {
    case kind::task_start: return "task_start";
    case kind::task_end: return "task_end";
    case kind::spawn: return "spawn";
    case kind::steal: return "steal";
    case kind::park: return "park";
    case kind::unpark: return "unpark";
    case kind::mailbox_handoff: return "mailbox_handoff";
    case kind::balancer_move: return "balancer_move";
    case kind::page_migration: return "page_migration";
  }
  return "unknown";
}

// ---------------------------------------------------------------------------------------------
// recorder

recorder::recorder(trace_layout layout, std::size_t events_per_track) : layout_(std::move(layout)) {
  if (layout_.worker_node.empty()) throw std::invalid_argument("trace: the layout has no worker");
  if (layout_.node_package.empty()) throw std::invalid_argument("trace: the layout has no node");
  for (std::size_t w = 0; w < layout_.worker_node.size(); ++w) {
    const int n = layout_.worker_node[w];
    if (n < 0 || static_cast<std::size_t>(n) >= layout_.node_package.size()) {
      throw std::invalid_argument("trace: worker " + std::to_string(w) + " is on node " + std::to_string(n) + ", but the layout has " +
                                  std::to_string(layout_.node_package.size()) + " nodes");
    }
  }
  for (std::size_t w = 0; w < layout_.worker_node.size(); ++w) workers_.push_back(std::make_unique<ring>(events_per_track));
  balancer_ = std::make_unique<ring>(events_per_track);
  outside_ = std::make_unique<ring>(events_per_track);
}

std::unique_ptr<recorder> recorder::open(const std::string& path, trace_layout layout, std::ostream& err,
                                         std::size_t events_per_track) {
  const std::string prefix = "numart: trace file '" + path + "': ";
  const std::string off = " (tracing is off)\n";
  if (path.empty()) {
    err << "numart: the trace file name is empty" << off;
    return nullptr;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    err << prefix << (S_ISDIR(st.st_mode) ? "it is a directory" : "not a regular file") << off;
    return nullptr;
  }
  // Created (or truncated) now, so that a path that cannot be written is reported at start-up;
  // O_NONBLOCK in case the path turned into a FIFO since the stat.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd < 0) {
    err << prefix << "cannot open it for writing: " << std::strerror(errno) << off;
    return nullptr;
  }
  ::close(fd);
  try {
    auto r = std::make_unique<recorder>(std::move(layout), events_per_track);
    r->path_ = path;
    return r;
  } catch (const std::invalid_argument& e) {
    err << prefix << e.what() << off;
    return nullptr;
  }
}

ring& recorder::for_worker(int w) {
  RT_ASSERT(w >= 0 && w < workers(), "I-TRACE-6", "trace::recorder::for_worker: no such worker");
  return *workers_[static_cast<std::size_t>(w)];
}

void recorder::outside_spawn(std::uint64_t ts, std::uint64_t task, std::uint64_t group, int home, int target,
                             wake_path path) {
  const std::lock_guard<std::mutex> lk(outside_lock_);  // I-TRACE-7: the lock holder is the producer
  spawn_at(*outside_, ts, task, group, home, target, wake_affine::none, path, 0);
}

void recorder::name_group(std::uint64_t group, std::string_view name) {
  const std::lock_guard<std::mutex> lk(groups_lock_);
  group_names_[group] = std::string(name);
}

bool recorder::dump(std::ostream& err) const {
  const std::string prefix = "numart: trace file '" + path_ + "': ";
  if (path_.empty()) {
    err << "numart: this trace has no file to write to (an in-memory recorder)\n";
    return false;
  }
  std::ofstream out(path_, std::ios::binary | std::ios::trunc);
  if (!out) {
    err << prefix << "cannot open it for writing: " << std::strerror(errno) << "\n";
    return false;
  }
  try {
    write_chrome_json(out);
  } catch (const format_error& e) {
    err << prefix << e.what() << "\n";
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// The Chrome trace-event JSON (docs/observability.md, "The trace file").

namespace {

std::string hex_id(std::uint64_t v) {
  static constexpr char kHex[] = "0123456789abcdef";
  char buf[18];
  std::size_t at = sizeof buf;
  do {
    buf[--at] = kHex[v & 0xF];
    v >>= 4;
  } while (v != 0);
  buf[--at] = 'x';
  buf[--at] = '0';
  return std::string(buf + at, sizeof buf - at);
}

// One slice (or instant) on a track, after start/end and park/unpark pairing.
struct record {
  event ev;                  // task_start, spawn, steal, park, mailbox_handoff, balancer_move, page_migration
  std::uint64_t dur = 0;     // task and park slices
  std::uint32_t seq = 0;     // order on the track, for ties
  bool open = false;         // no end in the trace yet: it ends at the trace's end
  bool woken = false;        // park: an unpark closed it
  unpark_reason why = unpark_reason::woken;
  int woken_by = -1;
  std::uint64_t runnable = 0;  // park: from the wake sent to the unpark (0: no wake stamp)
  std::uint64_t flow = 0;    // spawn: flow out; task: flow in; 0 = none
};

struct track_out {
  std::string name;
  int worker = -1;  // -1 for the balancer and outside tracks
  int node = -1;
  int pid = 0;
  int tid = 0;
  ring::snapshot snap;
  std::vector<record> records;
  std::uint64_t unmatched = 0;  // ends and unparks whose beginning is not in the trace
};

// Pairs task_start/task_end (a stack: tasks nest when a joiner helps) and park/unpark.
void build_records(track_out& t, std::uint64_t end_ts) {
  std::vector<std::size_t> tasks;  // indexes of open task records
  std::optional<std::size_t> park_open;  // the park record waiting for its unpark
  for (const event& e : t.snap.events) {
    switch (e.what) {
      case kind::task_start:
        tasks.push_back(t.records.size());
        t.records.push_back({e});
        break;
      case kind::task_end: {
        auto it = std::find_if(tasks.rbegin(), tasks.rend(), [&](std::size_t i) { return t.records[i].ev.a == e.a; });
        if (it == tasks.rend()) {
          ++t.unmatched;
          break;
        }
        // Tasks above the matching one did not end in order: close them here (they cannot
        // outlive their caller's slice). With a correct scheduler the match is the top.
        const std::size_t keep = static_cast<std::size_t>(tasks.rend() - it) - 1;
        for (std::size_t k = keep; k < tasks.size(); ++k) t.records[tasks[k]].dur = e.ts - t.records[tasks[k]].ev.ts;
        tasks.resize(keep);
        break;
      }
      case kind::park:
        if (park_open) {
          t.records[*park_open].dur = e.ts - t.records[*park_open].ev.ts;
          ++t.unmatched;
        }
        park_open = t.records.size();
        t.records.push_back({e});
        break;
      case kind::unpark:
        if (!park_open) {
          ++t.unmatched;
          break;
        }
        t.records[*park_open].dur = e.ts - t.records[*park_open].ev.ts;
        t.records[*park_open].woken = true;
        t.records[*park_open].why = static_cast<unpark_reason>(e.e);
        t.records[*park_open].woken_by = e.c;
        if (e.a != 0) t.records[*park_open].runnable = e.ts - std::clamp(e.a, t.records[*park_open].ev.ts, e.ts);
        park_open.reset();
        break;
      case kind::spawn:
      case kind::steal:
      case kind::mailbox_handoff:
      case kind::balancer_move:
      case kind::page_migration:
        t.records.push_back({e});
        break;
    }
  }
  for (const std::size_t i : tasks) {
    t.records[i].dur = end_ts - t.records[i].ev.ts;
    t.records[i].open = true;
  }
  if (park_open) {
    t.records[*park_open].dur = end_ts - t.records[*park_open].ev.ts;
    t.records[*park_open].open = true;
  }
  for (std::size_t i = 0; i < t.records.size(); ++i) t.records[i].seq = static_cast<std::uint32_t>(i);
  // Start time, then the longer slice first: a parent before the slices it encloses.
  std::sort(t.records.begin(), t.records.end(), [](const record& x, const record& y) {
    if (x.ev.ts != y.ev.ts) return x.ev.ts < y.ev.ts;
    if (x.dur != y.dur) return x.dur > y.dur;
    return x.seq < y.seq;
  });
}

struct ref {
  std::uint64_t ts;
  std::size_t track;
  std::size_t index;
};

// Flow ids: each task start is bound to the latest earlier spawn of the same task id that no
// start took yet (task ids are unique among live tasks only). Returns the spawn/start pairs in
// time order, for the queued-tasks counter.
struct queue_change {
  std::uint64_t ts;
  int delta;
};
std::vector<queue_change> bind_flows(std::vector<track_out>& tracks) {
  std::vector<ref> refs;
  for (std::size_t t = 0; t < tracks.size(); ++t) {
    for (std::size_t i = 0; i < tracks[t].records.size(); ++i) {
      const kind k = tracks[t].records[i].ev.what;
      if (k == kind::spawn || k == kind::task_start) refs.push_back({tracks[t].records[i].ev.ts, t, i});
    }
  }
  const auto is_spawn = [&](const ref& r) { return tracks[r.track].records[r.index].ev.what == kind::spawn; };
  std::stable_sort(refs.begin(), refs.end(), [&](const ref& x, const ref& y) {
    if (x.ts != y.ts) return x.ts < y.ts;
    return is_spawn(x) && !is_spawn(y);
  });
  std::unordered_map<std::uint64_t, ref> waiting;  // task id -> its spawn
  std::vector<queue_change> changes;
  std::uint64_t next_flow = 1;
  for (const ref& r : refs) {
    record& rec = tracks[r.track].records[r.index];
    if (rec.ev.what == kind::spawn) {
      waiting[rec.ev.a] = r;
      changes.push_back({r.ts, +1});
      continue;
    }
    const auto it = waiting.find(rec.ev.a);
    if (it == waiting.end()) continue;
    tracks[it->second.track].records[it->second.index].flow = next_flow;
    rec.flow = next_flow;
    ++next_flow;
    waiting.erase(it);
    changes.push_back({r.ts, -1});
  }
  return changes;
}

class chrome_writer {
 public:
  chrome_writer(json_out& j, std::uint64_t origin) : j_(j), origin_(origin) {}

  void metadata(const char* what, int pid, int tid, const char* arg, const std::string& value) {
    j_.newline().begin_object();
    j_.key("name").value(what).key("ph").value("M").key("pid").value(pid).key("tid").value(tid);
    j_.key("args").begin_object().key(arg).value(value).end_object();
    j_.end_object();
  }
  void sort_index(const char* what, int pid, int tid, int index) {
    j_.newline().begin_object();
    j_.key("name").value(what).key("ph").value("M").key("pid").value(pid).key("tid").value(tid);
    j_.key("args").begin_object().key("sort_index").value(index).end_object();
    j_.end_object();
  }
  void counter(const std::string& name, int pid, int tid, std::uint64_t ts, const char* series, std::int64_t value) {
    j_.newline().begin_object();
    j_.key("name").value(name).key("ph").value("C");
    stamp(ts, pid, tid);
    j_.key("args").begin_object().key(series).value(value).end_object();
    j_.end_object();
  }
  // A complete slice ("X"); the caller adds args between begin and end_slice.
  void begin_slice(const std::string& name, const char* cat, std::uint64_t ts, std::uint64_t dur, int pid, int tid,
                   const char* event_kind) {
    j_.newline().begin_object();
    j_.key("name").value(name).key("cat").value(cat).key("ph").value("X");
    stamp(ts, pid, tid);
    j_.key("dur").micros(dur);
    j_.key("args").begin_object().key("event").value(event_kind);
  }
  json_out& arg(const char* k) { return j_.key(k); }
  void end_slice() { j_.end_object().end_object(); }
  // A flow event bound to the slice just written (same cat, pid, tid, ts).
  void flow(char phase, std::uint64_t id, std::uint64_t ts, int pid, int tid) {
    j_.newline().begin_object();
    j_.key("name").value("spawn").key("cat").value("task").key("ph").value(std::string_view(&phase, 1));
    if (phase == 'f') j_.key("bp").value("e");
    j_.key("id").value(id);
    stamp(ts, pid, tid);
    j_.end_object();
  }

 private:
  void stamp(std::uint64_t ts, int pid, int tid) {
    j_.key("ts").micros(ts - origin_).key("pid").value(pid).key("tid").value(tid);
  }
  json_out& j_;
  std::uint64_t origin_;
};

}  // namespace

void recorder::write_chrome_json(std::ostream& os) const {
  const std::lock_guard<std::mutex> dump_lk(dump_lock_);
  const int nodes = static_cast<int>(layout_.node_package.size());
  const int runtime_pid = nodes + 1;
  const int tid_base = nodes + 2;  // tids never equal a pid (Perfetto keys threads by tid)

  std::vector<track_out> tracks;
  for (int w = 0; w < workers(); ++w) {
    track_out t;
    t.name = "worker " + std::to_string(w);
    t.worker = w;
    t.node = layout_.worker_node[static_cast<std::size_t>(w)];
    t.pid = t.node + 1;
    t.tid = tid_base + w;
    t.snap = workers_[static_cast<std::size_t>(w)]->read();
    tracks.push_back(std::move(t));
  }
  for (const auto& [name, r] : {std::pair<const char*, const ring*>{"balancer", balancer_.get()},
                                std::pair<const char*, const ring*>{"outside threads", outside_.get()}}) {
    track_out t;
    t.name = name;
    t.pid = runtime_pid;
    t.tid = tid_base + static_cast<int>(tracks.size());
    t.snap = r->read();
    tracks.push_back(std::move(t));
  }
  std::map<std::uint64_t, std::string> groups;
  {
    const std::lock_guard<std::mutex> lk(groups_lock_);
    groups = group_names_;
  }

  // The trace spans its kept events: from the earliest to the latest (open slices end there).
  std::optional<std::uint64_t> first;
  std::uint64_t end = 0;
  for (const track_out& t : tracks) {
    if (t.snap.events.empty()) continue;
    first = first ? std::min(*first, t.snap.events.front().ts) : t.snap.events.front().ts;
    end = std::max(end, t.snap.events.back().ts);
  }
  if (!first) {
    first = now_ns();
    end = *first;
  }
  const std::uint64_t origin = *first;
  for (track_out& t : tracks) build_records(t, end);
  const std::vector<queue_change> queue = bind_flows(tracks);

  const auto group_label = [&](std::uint64_t g) -> std::string {
    const auto it = groups.find(g);
    if (it != groups.end()) return it->second;
    return g == 0 ? std::string("task") : "group " + hex_id(g);
  };

  json_out j(os);
  chrome_writer cw(j, origin);
  j.begin_object().key("traceEvents").begin_array();

  // Tracks: a "process" per node, named after its package; a "thread" per worker.
  for (int n = 0; n < nodes; ++n) {
    const int package = layout_.node_package[static_cast<std::size_t>(n)];
    cw.metadata("process_name", n + 1, n + 1, "name",
                "node " + std::to_string(n) + (package >= 0 ? " (package " + std::to_string(package) + ")" : " (memory only)"));
    cw.sort_index("process_sort_index", n + 1, n + 1, n);
  }
  cw.metadata("process_name", runtime_pid, runtime_pid, "name", "runtime " + layout_.name);
  cw.sort_index("process_sort_index", runtime_pid, runtime_pid, nodes);
  for (const track_out& t : tracks) {
    std::string label = t.name;
    if (t.snap.dropped > 0) label += " (" + std::to_string(t.snap.dropped) + " oldest events dropped)";
    cw.metadata("thread_name", t.pid, t.tid, "name", label);
    cw.sort_index("thread_sort_index", t.pid, t.tid, t.tid - tid_base);
  }

  for (const track_out& t : tracks) {
    for (const record& r : t.records) {
      const event& e = r.ev;
      switch (e.what) {
        case kind::task_start:
          cw.begin_slice(group_label(e.b), "task", e.ts, r.dur, t.pid, t.tid, "task");
          cw.arg("task").value(hex_id(e.a));
          cw.arg("group").value(hex_id(e.b));
          cw.arg("group_node").value(e.c);
          if (r.open) cw.arg("open").value(true);
          cw.end_slice();
          if (r.flow != 0) cw.flow('f', r.flow, e.ts, t.pid, t.tid);
          break;
        case kind::spawn:
          cw.begin_slice("spawn", "task", e.ts, 0, t.pid, t.tid, "spawn");
          cw.arg("task").value(hex_id(e.a));
          cw.arg("group").value(hex_id(e.b));
          cw.arg("home").value(e.g);
          cw.arg("target").value(e.c);
          cw.arg("affine").value(to_string(static_cast<wake_affine>(e.e)));
          cw.arg("path").value(to_string(static_cast<wake_path>(e.f)));
          cw.arg("scan").value(e.d);
          cw.end_slice();
          if (r.flow != 0) cw.flow('s', r.flow, e.ts, t.pid, t.tid);
          break;
        case kind::steal:
          cw.begin_slice("steal", "steal", e.ts, 0, t.pid, t.tid, "steal");
          cw.arg("task").value(hex_id(e.a));
          cw.arg("victim").value(e.c);
          cw.arg("tier").value(to_string(static_cast<steal_tier>(e.e)));
          cw.end_slice();
          break;
        case kind::mailbox_handoff:
          cw.begin_slice("mailbox hand-off", "wake", e.ts, 0, t.pid, t.tid, "mailbox_handoff");
          cw.arg("task").value(hex_id(e.a));
          cw.arg("to").value(e.c);
          cw.end_slice();
          break;
        case kind::park:
          cw.begin_slice("parked", "park", e.ts, r.dur, t.pid, t.tid, "park");
          cw.arg("reason").value(to_string(static_cast<park_reason>(e.e)));
          if (r.woken) {
            cw.arg("unpark").value(to_string(r.why));
            cw.arg("woken_by").value(r.woken_by);
            if (r.runnable != 0) cw.arg("runnable").micros(r.runnable);
          }
          if (r.open) cw.arg("open").value(true);
          cw.end_slice();
          break;
        case kind::balancer_move:
          cw.begin_slice("home move", "balancer", e.ts, 0, t.pid, t.tid, "balancer_move");
          cw.arg("group").value(hex_id(e.b));
          cw.arg("name").value(group_label(e.b));
          cw.arg("old_home").value(e.c);
          cw.arg("new_home").value(e.d);
          cw.arg("score").value(static_cast<std::int64_t>(e.a));
          cw.end_slice();
          break;
        case kind::page_migration:
          cw.begin_slice("page migration", "balancer", e.ts, 0, t.pid, t.tid, "page_migration");
          cw.arg("group").value(hex_id(e.b));
          cw.arg("from_node").value(e.c);
          cw.arg("to_node").value(e.d);
          cw.arg("pages").value(e.a);
          cw.end_slice();
          break;
        case kind::task_end:
        case kind::unpark:
          break;  // folded into their task / park slice by build_records
      }
    }
  }

  // Counter tracks: tasks spawned and not started yet; parked workers per node; group homes.
  {
    std::int64_t queued = 0;
    for (std::size_t i = 0; i < queue.size(); ++i) {
      queued += queue[i].delta;
      if (i + 1 < queue.size() && queue[i + 1].ts == queue[i].ts) continue;  // one sample per instant
      cw.counter("queued", runtime_pid, tracks[static_cast<std::size_t>(workers())].tid, queue[i].ts, "tasks", queued);
    }
  }
  for (int n = 0; n < nodes; ++n) {
    std::vector<queue_change> parked;
    int first_tid = -1;
    for (const track_out& t : tracks) {
      if (t.node != n) continue;
      if (first_tid < 0) first_tid = t.tid;
      for (const record& r : t.records) {
        if (r.ev.what != kind::park) continue;
        parked.push_back({r.ev.ts, +1});
        if (!r.open) parked.push_back({r.ev.ts + r.dur, -1});
      }
    }
    std::stable_sort(parked.begin(), parked.end(), [](const queue_change& x, const queue_change& y) { return x.ts < y.ts; });
    std::int64_t count = 0;
    for (std::size_t i = 0; i < parked.size(); ++i) {
      count += parked[i].delta;
      if (i + 1 < parked.size() && parked[i + 1].ts == parked[i].ts) continue;
      cw.counter("parked", n + 1, first_tid, parked[i].ts, "workers", count);
    }
  }
  {
    const track_out& bal = tracks[static_cast<std::size_t>(workers())];
    std::set<std::uint64_t> seen;  // groups whose home before their first move is written
    for (const record& r : bal.records) {
      if (r.ev.what != kind::balancer_move) continue;
      const std::string name = "home " + group_label(r.ev.b);
      if (seen.insert(r.ev.b).second) cw.counter(name, runtime_pid, bal.tid, origin, "node", r.ev.c);
      cw.counter(name, runtime_pid, bal.tid, r.ev.ts, "node", r.ev.d);
    }
  }
  j.newline().end_array();

  // The numart section: what `numart trace` reads besides the events.
  std::uint64_t dropped = 0;
  for (const track_out& t : tracks) dropped += t.snap.dropped;
  j.key("otherData").begin_object().key("numart").begin_object();
  j.key("format").value("numart-trace");
  j.key("version").value(1);
  j.key("runtime").value(layout_.name);
  j.key("clock").value("CLOCK_MONOTONIC");
  j.key("origin_ns").value(origin);
  j.key("end_ns").value(end);
  j.key("events_per_track").value(workers_.front()->capacity());
  j.key("dropped").value(dropped);
  j.key("nodes").begin_array();
  for (int n = 0; n < nodes; ++n) {
    j.newline().begin_object();
    j.key("node").value(n).key("package").value(layout_.node_package[static_cast<std::size_t>(n)]).key("pid").value(n + 1);
    j.end_object();
  }
  j.end_array();
  j.key("tracks").begin_array();
  for (const track_out& t : tracks) {
    j.newline().begin_object();
    j.key("name").value(t.name).key("worker").value(t.worker).key("node").value(t.node);
    j.key("pid").value(t.pid).key("tid").value(t.tid);
    j.key("written").value(t.snap.written).key("kept").value(t.snap.events.size());
    j.key("dropped").value(t.snap.dropped).key("unmatched").value(t.unmatched);
    j.end_object();
  }
  j.end_array();
  j.key("groups").begin_array();
  for (const auto& [id, name] : groups) {
    j.newline().begin_object().key("id").value(hex_id(id)).key("name").value(name).end_object();
  }
  j.end_array();
  j.end_object().end_object().end_object();
  j.finish();
}

}  // namespace rt::trace
