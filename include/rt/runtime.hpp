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

  // The spawns return a join handle (join() or detach()). Each throws rt::runtime_stopped once
  // shutdown() began (from a thread that is not one of this runtime's workers) or when this
  // runtime was created before a fork() and the caller is the child (ADR 0007), and
  // std::invalid_argument for a group of another runtime or a node the topology does not have;
  // a spawn that throws leaves nothing behind.
  //
  // spawn(f): placed by the wake path (docs/design/wake-path.md): from a worker, near the
  // spawner; from another thread, on the idle worker bound to the calling core (host topology
  // only), else on the idlest node.
  template <class F>
  auto spawn(F&& f) {
    detail::spawn_target t;
    t.rt = this;
    return spawn_with(t, std::forward<F>(f));
  }
  // spawn(g, f): placed from the group's home worker; once the group has a preferred node (the
  // NUMA balancer's, or group::set_preferred_node) that has workers, on that node. With the
  // default features, idle thieves elsewhere give the task back to that node unless it is
  // backlogged or overloaded, or they have given back numa_steal_refusals tasks in a row
  // (docs/design/stealing.md).
  template <class F>
  auto spawn(group& g, F&& f) {
    detail::spawn_target t;
    t.rt = this;
    t.affinity = &g;
    return spawn_with(t, std::forward<F>(f));
  }

  // spawn_on(n, f): from a worker of node n, straight onto its own deque (no hand-off to an
  // idle worker), waking a parked worker when nobody searches; otherwise onto n's queue, waking a
  // parked worker of n first (else any, when nobody searches). node_id{} (-1) means no node:
  // spawn(f). A start there, not a binding: the task has no group, so an idle worker of another
  // node may steal it like any other (the locality filter never refuses a task without a group).
  template <class F>
  auto spawn_on(node_id n, F&& f) {
    detail::spawn_target t;
    t.rt = this;
    t.node = n.value;
    return spawn_with(t, std::forward<F>(f));
  }

  // Stops accepting spawns, runs every task already spawned and joins the workers.
  // Idempotent; the destructor calls it. Called from one of this runtime's own tasks it would
  // wait for itself: it throws std::logic_error and changes nothing (destroying the runtime
  // there aborts with I-SHUT-4 instead: a destructor cannot throw).
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
