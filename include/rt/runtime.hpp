// rt::runtime: owns the workers. The constructor starts them; the destructor runs every task
// already spawned, then joins them (docs/design/shutdown.md).
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <utility>

#include "rt/config.hpp"
#include "rt/error.hpp"
#include "rt/group.hpp"
#include "rt/stats.hpp"
#include "rt/task.hpp"

namespace rt {

namespace detail {
class scheduler;
}

class runtime {
 public:
  // Throws rt::config_error for bad configuration (names the item and what is valid) and
  // rt::startup_error when a worker thread cannot be created; nothing is leaked either way.
  explicit runtime(const config& cfg = config::from_env());
  ~runtime();
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  template <class F>
  auto spawn(F&& f) {
    detail::spawn_target t;
    t.rt = this;
    return spawn_with(t, std::forward<F>(f));
  }
  template <class F>
  auto spawn(group& g, F&& f) {
    detail::spawn_target t;
    t.rt = this;
    t.affinity = &g;
    return spawn_with(t, std::forward<F>(f));
  }

  template <class F>
  auto spawn_on(node_id n, F&& f) {
    detail::spawn_target t;
    t.rt = this;
    t.node = n.value;
    return spawn_with(t, std::forward<F>(f));
  }

  // Stops accepting spawns, runs every task already spawned and joins the workers.
  // Idempotent; the destructor calls it.
  void shutdown();

  int workers() const;
  int nodes() const;
  bool virtual_topology() const;   // the topology is not this machine (DESIGN.md §7)
  // The NUMA distance between two logical nodes (10 = local, SLIT units); throws
  // std::invalid_argument for a node the topology does not have.
  int node_distance(node_id a, node_id b) const;
  // rt::numa_alloc on this runtime's node arenas (for threads that are not its workers).
  void* numa_alloc(std::size_t bytes, node_id node);
  rt::stats stats() const;
  std::string describe() const;    // tunables and features in force
  // Writes the trace recorded so far to config::trace_path (docs/observability.md). False, with
  // one line on stderr, when tracing is off or the file cannot be written.
  bool dump_trace();
  // One line per worker and one for the runtime, for watchdogs and hang reports: what each
  // worker shows to others (idle flag, deque and mailbox sizes, tasks run, parks) and the
  // shutdown state. Any thread, any time; a snapshot of hints, not a consistent cut.
  void dump_state(std::ostream& os) const;
  detail::scheduler& impl() { return *impl_; }

  // The runtime the calling thread belongs to (a worker's), or nullptr.
  static runtime* current() noexcept;
  // The worker index of the calling thread in its runtime, or -1 outside workers.
  static int current_worker() noexcept;

 private:
  std::unique_ptr<detail::scheduler> impl_;
};

// The default runtime used by rt::spawn from threads that are not workers; started on first
// use from rt::config::from_env(), shut down at exit.
runtime& default_runtime();

}  // namespace rt
