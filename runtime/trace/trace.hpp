// The trace recorder (issue 9): one ring per worker, one for the balancer thread, one for
// outside threads; written out as a Chrome trace-event JSON that Perfetto's UI and
// chrome://tracing open (docs/observability.md).
//
// Call sites (the cost model: one load and one predictable branch per site when tracing is off).
// The scheduler owns `std::unique_ptr<trace::recorder> trace_`, null unless a trace path is
// configured, and gives each worker a plain pointer to its ring before the worker thread starts;
// neither changes afterwards:
//
//   w.trace = trace_ ? &trace_->for_worker(w.id) : nullptr;     // at start-up
//   ...
//   if (w.trace != nullptr) [[unlikely]] trace::task_start(*w.trace, task_id, group_id, node);
//
// The emit functions (events.hpp) run only inside the branch, so a disabled trace costs the load
// of w.trace (a field of the worker, already in cache) and a never-taken branch. Only the ring's
// producer may emit into it: a worker into its own ring, the balancer thread into balancer(),
// any other thread through outside_spawn().
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "trace/events.hpp"
#include "trace/ring.hpp"

namespace rt::trace {

// What the trace needs of the topology: tracks are grouped by node, nodes named by package.
struct trace_layout {
  std::vector<int> worker_node;   // logical node of each worker, indexed by worker id
  // Package (logical index) of each logical node: the package of the node's first core
  // (topo::topology::nodes[n].cores[0] -> cores[c].package); -1 for a node without cores.
  std::vector<int> node_package;
  std::string name = "numart";    // the runtime's name (rt::config::name)
};

// 64 Ki events of 40 bytes: 2.5 MiB per worker. A fib(30) run emits ~3 events per task, so a
// worker keeps its last ~20,000 tasks; longer runs keep the most recent window (I-TRACE-5).
inline constexpr std::size_t kDefaultEventsPerTrack = std::size_t{1} << 16;

class recorder {
 public:
  // An in-memory recorder (no file). Throws std::invalid_argument on an inconsistent layout
  // (a worker on a node that does not exist, no worker) or a bad ring capacity.
  explicit recorder(trace_layout layout, std::size_t events_per_track = kDefaultEventsPerTrack);

  // A recorder that dump() writes to `path`. The path is checked now: when the file cannot be
  // created or written (or the layout is refused), writes one line to `err` and returns null,
  // and the runtime runs without tracing.
  static std::unique_ptr<recorder> open(const std::string& path, trace_layout layout, std::ostream& err,
                                        std::size_t events_per_track = kDefaultEventsPerTrack);

  recorder(const recorder&) = delete;
  recorder& operator=(const recorder&) = delete;

  int workers() const { return static_cast<int>(workers_.size()); }
  const std::string& path() const { return path_; }

  // The ring of worker `w` (0 <= w < workers()); its producer is worker w's thread only.
  ring& for_worker(int w);
  // The balancer thread's ring (balancer_move, page_migration).
  ring& balancer() { return *balancer_; }
  // A spawn from a thread that is not a worker (any thread; serialized by a lock, off the
  // workers' paths), at time `ts`, read before the task was published (I-TRACE-8).
  void outside_spawn(std::uint64_t ts, std::uint64_t task, std::uint64_t group, int home, int target, wake_path path);
  // Names a group in the trace (slice names, the locality summary). Any thread, any time.
  void name_group(std::uint64_t group, std::string_view name);

  // The trace so far as Chrome trace-event JSON. Any thread, also while the producers run:
  // each ring is copied without stopping its producer (I-TRACE-4). Throws format_error when the
  // stream fails.
  void write_chrome_json(std::ostream& os) const;
  // write_chrome_json() into path(), replacing the file. On failure writes one line to `err` and
  // returns false. Call it at shutdown after the workers joined, and from
  // rt::runtime::dump_trace() at any time.
  bool dump(std::ostream& err) const;

 private:
  trace_layout layout_;
  std::string path_;
  std::vector<std::unique_ptr<ring>> workers_;
  std::unique_ptr<ring> balancer_;
  std::unique_ptr<ring> outside_;
  std::mutex outside_lock_;  // the outside ring's producer is whoever holds it
  mutable std::mutex groups_lock_;
  std::map<std::uint64_t, std::string> group_names_;  // guarded by groups_lock_
  mutable std::mutex dump_lock_;                        // one dump at a time
};

}  // namespace rt::trace
