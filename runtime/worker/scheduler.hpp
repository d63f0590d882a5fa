// The scheduler behind rt::runtime: workers, their queues, the idle set, spawn/join/shutdown.
// Protocols: docs/design/parking.md (I-PARK-N, I-SEARCH-N), docs/design/shutdown.md
// (I-SHUT-N), docs/design/tasks.md (I-TASK-N), docs/design/deque.md (I-DEQ-N).
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/rng.hpp"
#include "deque/chase_lev.hpp"
#include "deque/injection_queue.hpp"
#include "deque/mailbox.hpp"
#include "memory/frame_pool.hpp"
#include "memory/node_arena.hpp"
#include "numa/balancer.hpp"
#include "numa/context.hpp"
#include "numa/regions.hpp"
#include "policy/layout.hpp"
#include "policy/locality.hpp"
#include "policy/node_balance.hpp"
#include "policy/steal.hpp"
#include "policy/wake.hpp"
#include "rt/config.hpp"
#include "rt/group.hpp"
#include "rt/stats.hpp"
#include "stats/counters.hpp"
#include "sync/asym_fence.hpp"
#include "sync/fault.hpp"
#include "sync/futex.hpp"
#include "sync/idle.hpp"
#include "sync/parker.hpp"
#include "topology/topology.hpp"
#include "trace/events.hpp"
#include "trace/trace.hpp"
#include "tunables/tunables.hpp"
#include "worker/group_state.hpp"
#include "worker/stats_signal.hpp"
#include "worker/task.hpp"

namespace rt {
class runtime;
}

namespace rt::detail {

using atomics = sync::native;
using parker_t = sync::parker<atomics, sync::native_futex>;
struct worker;

// The state behind rt::task_group, placement-constructed in its kTaskGroupStateSize buffer.
// Pending tasks = local + shared - the workers' credits on it (I-TASK-5, I-TASK-7). Until its
// first wait, the creating worker counts the spawns and completions it does itself in `local`,
// with no atomic RMW, so a spawning owner and a thief that runs its tasks do not bounce one
// cache line per task; everyone else, and the owner after wait() folded `local` in, counts in
// `shared`, a worker through its credit (worker::credit).
struct task_group_state {
  // Line 0, read by every spawn and completion, written only at wait() and on a failure.
  scheduler* sched;
  worker* owner;                 // the creating worker, or null (created outside workers)
  const void* creator;           // identity of the creating thread (scheduler::thread_key())
  bool folded;                   // owner thread only: local counting is off until wait() returns
  // First exception: error_claimed picks the one writer (acq_rel CAS); error_set (release)
  // publishes `error` to wait() (acquire).
  atomics::atomic<bool> error_claimed;
  atomics::atomic<bool> error_set;
  std::exception_ptr error;
  // The two counters have a line each: the owner writes `local` on every spawn, thieves write
  // `shared` on every completion, and everyone reads line 0. Sharing a line with either made
  // the spawner and the thief bounce it once per task (bench/numart_bench_core empty_spawn_1M).
  alignas(sync::kCacheLine) std::int64_t local;  // owner thread only
  // Incremented (relaxed: the push publishes the task) by spawns and reservations, decremented
  // (seq_cst) by workers paying their credit (I-TASK-7); the payment that brings it to zero
  // notifies waiters by address, never touching the group again (I-TASK-5).
  alignas(sync::kCacheLine) atomics::atomic<std::int64_t> shared;
};

// The fork() generation of this process (scheduler.cpp, docs/adr/0007-fork.md).
extern atomics::atomic<std::uint32_t> g_fork_generation;

struct alignas(sync::kCacheLine) worker {
  worker(scheduler& s, int id, int node, int llc, std::size_t log2_capacity, std::size_t mailbox_capacity,
         const policy::pelt_params& pp, std::uint64_t avg_idle0, memory::arena_ref arena);

  const int id;
  const int node;
  const int llc;
  scheduler& sched;
  deque::chase_lev<task*> dq;
  deque::mailbox<task> mailbox;
  parker_t parker;
  // When a thread last unparked this worker while tracing is on (sync::now_ns(), 0: none since
  // the owner read it): written relaxed by scheduler::unpark_worker() just before
  // parker.unpark(), whose release pairs with park()'s acquire; exchanged to 0 by the owner
  // after it wakes, for its unpark event (the trace's "runnable" part of a park). A stamp that
  // lands while the owner runs is read at its next unpark and clamped to that park's start.
  atomics::atomic<std::uint64_t> wake_sent_ns{0};
  core::rng rng;
  memory::frame_pool pool;
  ctr::counter_block counters;
  // true from just before the worker registers to park until it is woken or cancels: the
  // kernel's idle CPU, the state select_idle_sibling looks for. A searching worker is not idle
  // (it is already looking for work, and one that flipped this per steal would bounce the line
  // every spawn's scan reads). Written by the owner (relaxed) and by a spawner that claims the
  // idle worker for a mailbox hand-off (CAS true -> false, relaxed: the mailbox push and the
  // parking protocol order the hand-off, I-WAKE-5); read relaxed by the wake path. A hint.
  // Own cache line: other workers read it while the owner's hot fields change.
  alignas(sync::kCacheLine) atomics::atomic<bool> idle{false};
  // The wake path's per-worker signals (docs/design/wake-path.md §3). Written by the owner at
  // start-up, at park, at wake-up or a cancelled park, when a poll window finds work, around a
  // block in a join, and every injection_poll_interval tasks (relaxed stores); read relaxed by
  // spawners through the view and by thieves (I-STEAL-16): hints, a stale value costs a worse
  // placement, never correctness.
  atomics::atomic<std::uint32_t> util{0};        // pelt util_avg, kCapacityScale
  atomics::atomic<std::uint64_t> util_us{0};     // the pelt clock (us) when util was stored
  atomics::atomic<bool> util_busy{false};        // whether it ran (true) or parked or blocked after that stamp
  atomics::atomic<std::uint32_t> util_est{0};    // estimate of the running work, 0 while parked or blocked
  atomics::atomic<std::uint64_t> avg_idle_ns{0}; // update_avg_idle EWMA
  // I-STEAL-18 (PREDICTED_WAIT): when the running top-level group task is expected to end (its
  // start plus group_task_ns), 0 when none runs or it is not timed (policy::time_group_task);
  // and the EWMA (1/8) of its timed top-level group tasks' lengths. Written by the owner at a
  // timed task's start and end and in help_or_spin, read by idle thieves of other nodes
  // (relaxed both: a prediction, nothing is published with it; a thief may pair one worker's
  // until with an older length). Off the line of idle and util, which spawners read on every
  // spawn (the owner-only fields below share this one). A timed task that waits in a join
  // clears it (help_or_spin) for the rest of its run: see I-STEAL-18.
  alignas(sync::kCacheLine) atomics::atomic<std::uint64_t> busy_until_ns{0};
  atomics::atomic<std::int64_t> group_task_ns{0};
  // Owner only.
  policy::pelt_signal pelt;
  std::uint32_t est_at_park = 0;    // util_avg when it last parked: the kernel's util_est.enqueued
  std::uint64_t parked_at_ns = 0;
  std::uint32_t spawns_since_timed = 0;
  std::int64_t group_tasks_untimed = 0;  // I-STEAL-18: short top-level group tasks not timed in a row
  alignas(sync::kCacheLine) std::uint32_t pops_since_poll = 0;
  std::int32_t depth = 0;            // tasks nested on this thread's stack right now (I-HELP-1)
  // A continuation the wake path kept on this worker (I-WAKE-10): run before the deque,
  // invisible to thieves, as an exec'd task keeps running on its CPU. Written and read by the
  // owner (relaxed); dump_state reads it from another thread (relaxed, a snapshot).
  atomics::atomic<task*> next{nullptr};
  trace::ring* trace = nullptr;      // this worker's event ring, or null: tracing off
  // The task_group this worker is blocked on in wait(), or null. Written by the worker (seq_cst,
  // before it registers as a blocked joiner), read by completions that finish a group (I-TASK-5).
  atomics::atomic<const void*> awaiting{nullptr};
  const char* help_floor = nullptr;  // below this stack address, help only from the own deque
  // help_once's last verdict on help_floor (owner only): block_joiner acts on the same one, so
  // that a joiner never blocks past work its helping would have taken (I-PARK-12).
  bool help_deep = false;
  // I-STEAL-18 (owner only): how long the running timed task had run when it first waited in
  // a join, or -1 while it has not: the length it teaches then, as the time it surely held
  // the worker (its span is no service time).
  std::int64_t timed_ran_before_join_ns = -1;
  bool searching = false;
  // The haltpoll window this worker polls for before it parks or blocks in a join
  // (policy/idle_poll.hpp), and when its current idle stretch began (0: not idle). Owner only.
  std::int64_t poll_window_ns = 0;
  std::uint64_t idle_since_ns = 0;
  std::uint64_t join_poll_since_ns = 0;  // when a joiner's window began (0: not polling)
  std::int64_t steal_refusals = 0;  // remote tasks given back in a row (I-STEAL-13); owner only
  // I-STEAL-19, owner only: this search left the remote tiers to a searcher it woke; its park
  // then backs off (I-PARK-8) and re-checks its own node. Cleared when the next search starts.
  bool delegated = false;
  policy::steal_plan plan;         // victims tier by tier, injection queues by distance
  // Owner only (I-POOL-2). Last: the fields above keep the cache lines they had without it.
  memory::frame_pool::remote_batch remote_frees;
  // Owner only (I-TASK-7): what this worker owes one task_group's `shared` count, reservations
  // it took and has not spent on spawns plus completions it has not subtracted; the group is
  // only dereferenced while credit > 0 (the count cannot reach zero before the credit is paid).
  // While a task's code runs here the credit is on that task's group or nothing.
  task_group_state* credit_group = nullptr;
  std::int64_t credit = 0;
  task_group_state* running_members = nullptr;  // the task_group of the innermost task running here
  group_ref_cache group_refs;  // owner only (I-GROUP-2); after the hot fields above
  std::thread thread;
};

class scheduler {
 public:
  // `settings` and `topo` were parsed and loaded by rt::runtime (so config errors surface
  // before anything starts); starts the workers, or throws rt::startup_error.
  scheduler(const config& cfg, runtime* owner, const tun::settings& settings, topo::topology topo);
  ~scheduler();
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;

  // The task ABI (rt/detail/task.hpp).
  task* alloc(const spawn_target& target, const task_ops* ops, std::size_t size, std::size_t align);
  void abandon(task* t) noexcept;
  void submit(task* t) noexcept;
  void wait(task* t);
  void release(task* t, bool joined) noexcept;
  void free_done(task* t, worker* w, bool detached) noexcept;
  // task_group support.
  void group_wait(task_group_state* g);
  void group_wait_noexcept(task_group_state* g) noexcept;

  // Throws std::logic_error when called from one of this runtime's workers (I-SHUT-4).
  void shutdown();
  // The calling thread's worker when it is one of this runtime's, else nullptr.
  worker* own_worker() const noexcept;
  rt::stats snapshot() const;
  bool dump_trace() const;
  void dump_state(std::ostream& os) const;
  // A group is born (names it in the trace, enters the balancer's table) and dies (leaves the
  // table; its regions are unregistered, restoring access). Any thread.
  void note_group(const group_state* g);
  void forget_group(group_state* g);
  // Sets g's preferred node (-1: none) and moves g's count among the nodes' preferring groups
  // (I-STEAL-19); returns the preferred node before. Any thread.
  int set_preferred_node(group_state* g, int node);
  // Registers [p, p + bytes) as g's region and tells the balancer, whose pass starts the
  // group's scan period at its first region (I-NUMA-15). Any thread.
  void add_region(const group_state* g, void* p, std::size_t bytes);

  // Node memory and regions (include/rt/numa.hpp).
  const memory::node_arenas& arenas() const { return *arenas_; }
  numa::region_registry& regions() { return regions_; }

  runtime* owner() const { return owner_; }
  int worker_count() const { return static_cast<int>(workers_.size()); }
  int node_count() const { return topo_.node_count(); }
  const topo::topology& topology() const { return topo_; }
  const tun::settings& settings() const { return settings_; }
  bool virtual_topology() const { return !topo_.is_host; }
  int worker_node(int w) const { return layout_.node_of(w); }

  static worker* current_worker() noexcept;

  // fork() (docs/adr/0007-fork.md): the child of a fork has none of the parent's worker
  // threads. A scheduler started before the latest fork in this process's ancestry is
  // orphaned: spawn, join and wait throw rt::runtime_stopped, shutdown leaks instead of joining.
  // Inline: every spawn, task and join asks.
  bool orphaned() const noexcept { return g_fork_generation.load(atomics::relaxed) != fork_generation_; }

 private:
  void start_workers();
  void run_worker(worker& w);
  void make_batch() noexcept;
  task* find_work(worker& w);
  bool poll_window_open(worker& w, std::uint64_t& since, ctr::counter opened) noexcept;
  task* find_local(worker& w);
  task* steal_work(worker& w, bool may_delegate);
  bool keep_remote_steal(worker& w, task* t, int src_node) noexcept;
  void predict_backlog(policy::refusal_env& env, int src_node) const noexcept;
  policy::steal_verdict classify_move(int pref, int src, int dst, policy::balance_kind kind,
                                      std::uint64_t src_queued) const noexcept;
  bool work_visible(const worker* except = nullptr) const;
  bool node_work_visible(int node) const;
  bool remote_work_visible(const worker& w) const;
  bool delegate_remote_work(worker& w) noexcept;
  bool node_preferred(int node) const noexcept {
    return preferring_[static_cast<std::size_t>(node)].preferring.load(atomics::relaxed) > 0;
  }
  bool mail_visible() const;
  // I-SHUT-2: a push from outside the workers counts itself in flight, then checks stopping_
  // (both seq_cst), so that shutdown() either sees it in flight or it sees stopping_; false
  // (and not counted) once shutdown has begun. leave_outside() after the push.
  bool enter_outside() noexcept;
  void leave_outside() noexcept { outside_inflight_.fetch_sub(1, atomics::seq_cst); }
  void park(worker& w);
  void stop_searching(worker& w) noexcept;
  void execute(worker* w, task* t) noexcept;
  void add_exported(int node, std::uint64_t start_ns, std::uint64_t end_ns) noexcept;
  std::uint64_t exported_util(int node, std::uint64_t now_us) const noexcept;
  void run_body(worker& w, task* t) noexcept;
  void complete(task* t, worker* w) noexcept;
  void trace_start(worker& w, task* t) noexcept;
  void free_frame(task* t, worker* w) noexcept;
  [[gnu::noinline]] void free_remote(worker& w, worker& home, task* t) noexcept;
  void push_local(worker& w, task* t) noexcept;
  // The two sides of I-PARK-1/2: after a push and before reading the idle set (notifier), and
  // after registering as a sleeper and before the re-check (sleeper). A seq_cst fence each,
  // or a compiler barrier and a membarrier() with ASYM_FENCE (I-PARK-7), which parks that
  // overlap share (I-PARK-11, counted in fences_shared on `w`).
  void notifier_fence() const noexcept;
  void sleeper_fence(worker& w) noexcept;
  // The wake path (docs/design/wake-path.md §6): select_worker() over the workers' signals,
  // then a mailbox hand-off to the idle worker it found, else the local deque or the target
  // node's injection queue.
  void place(worker* w, task* t) noexcept;
  bool hand_off(int target, task* t, worker* from) noexcept;
  int group_home(group_state& g) noexcept;
  int occupied_worker() const noexcept;
  // Load accounting of the owner: busy until now (tick, park) or idle until now (wake-up);
  // runs_after: whether it runs or searches from now on (false when it is about to park).
  void account(worker& w, std::uint64_t now, bool was_running, bool runs_after = true) noexcept;
  void stop_running(worker& w, std::uint64_t idle_since, std::uint64_t now) noexcept;
  void resume_running(worker& w, std::uint64_t now) noexcept;
  void end_idle(worker& w, std::uint64_t since, std::uint64_t now) noexcept;
  // Any thread: w's cpu_util() as others see it at now_us (its stamp aged as busy or idle).
  std::uint32_t seen_util(const worker& w, std::uint64_t now_us) const noexcept;
  void refresh_llc_hint(worker& w) noexcept;
  friend struct sched_view;
  void push_node(int node, task* t, worker* from) noexcept;
  bool wake_on_node(int node, worker* from) noexcept;
  // The node a queued task belongs on: its group's preferred node, or -1 (I-STEAL-14).
  // Inline: push_local asks it on every spawn.
  int placed_node(const task* t) const noexcept {
    return t->affinity != nullptr ? t->affinity->preferred_node.load(atomics::relaxed) : -1;
  }
  void notify_one(worker* from) noexcept;
  // parker.unpark(), stamping wake_sent_ns first while the worker traces.
  void unpark_worker(worker& v) noexcept {
    if (v.trace != nullptr) [[unlikely]]
      v.wake_sent_ns.store(sync::now_ns(), atomics::relaxed);
    v.parker.unpark();
  }
  void wake_all() noexcept;
  task* take_slot(worker& w) noexcept;
  void release_slot(worker& w) noexcept;
  bool help_once(worker& w);
  bool help_or_spin(worker& w, std::int64_t& idle_rounds);
  template <class Done>
  void block_joiner(worker& w, const Done& done);
  void notify_group_waiters(const task_group_state* g) noexcept;
  [[noreturn]] void throw_orphaned(const char* what) const;
  void group_count_spawn(task_group_state* g, worker* w) noexcept;
  // I-TASK-7: pays the worker's credit back to its task_group's count (no-op without credit;
  // inline, since most of its calls find none).
  void pay_group_credit(worker& w) noexcept {
    if (w.credit != 0) pay_group_credit_now(w);
  }
  void pay_group_credit_now(worker& w) noexcept;
  // I-TASK-7: before a join or wait returns to the task that called it, credit it took while
  // helping (on another group than that task's) is paid.
  void settle_group_credit(worker& w) noexcept {
    if (w.credit != 0 && w.credit_group != w.running_members) pay_group_credit_now(w);
  }

 public:
  // A per-thread identity for task_group's creator check.
  static const void* thread_key() noexcept;
  void group_init(task_group_state* g);

 private:

  runtime* owner_;
  topo::topology topo_;
  tun::settings settings_;
  policy::layout layout_;
  std::vector<std::unique_ptr<worker>> workers_;
  std::vector<std::unique_ptr<deque::injection_queue<task>>> injection_;   // per node
  sync::idle_set<atomics> idle_;
  // I-SHUT-1: set once by shutdown(); read acquire by task_alloc from outside threads.
  atomics::atomic<bool> stopping_{false};
  // I-SHUT-2: pushes from outside the workers (outside-thread spawns, the balancer's node-queue
  // transfers) between their stopping_ check and their push. Only through the two functions
  // below.
  atomics::atomic<std::int64_t> outside_inflight_{0};
  // I-SHUT-2: set by shutdown() once outside_inflight_ reached zero after stopping_; only then
  // may a worker declare the runtime quiescent.
  atomics::atomic<bool> draining_{false};
  // I-SHUT-3: set by the last worker to find the runtime quiescent; futex word for shutdown().
  atomics::atomic<std::uint32_t> terminated_{0};
  // Rotating start for outside spawns' find_idlest, so that ties spread (relaxed: a hint).
  atomics::atomic<std::uint64_t> outside_rr_{0};
  // WORKER_BATCH: set by every worker that did not switch to SCHED_BATCH (make_batch()); the
  // one that set it first says so, once per runtime (exchange, relaxed: it orders nothing else).
  atomics::atomic<bool> batch_refused_{false};
  // Host mode: by PU OS index, the first worker bound to that PU's core, else -1; empty in
  // virtual-topology mode. Written by the constructor only. An outside spawner's sched_getcpu()
  // names the worker bound to its core, spawn_request::waker (I-WAKE-9).
  std::vector<int> pu_worker_;
  policy::pelt_params pelt_params_;
  std::vector<std::uint64_t> no_faults_;  // zeros, one per node: the steal filter's fault view
  // Per LLC: the scan-cost EWMA (written by spawners of that LLC after a timed scan) and the
  // SIS_UTIL depth hint (written by its workers every injection_poll_interval tasks); relaxed
  // loads and stores, hints only. One line each: spawners of different LLCs never share.
  struct alignas(sync::kCacheLine) llc_state {
    atomics::atomic<std::uint64_t> avg_scan_cost_ns{0};
    atomics::atomic<int> nr_idle_scan{0};
  };
  std::unique_ptr<llc_state[]> llcs_;
  // Per node: its exported demand (I-STEAL-17) in one word, the pelt period of its stamp in the
  // high 40 bits (compared as a signed difference: periods_since) and the decayed sum in us in
  // the low 24 (saturating at 16.7 s: about 350 workers busy for the node elsewhere with the
  // default 32 ms halflife, about 11 at the largest, 1 s). Written by workers that finish, on
  // another node, a top-level task whose group prefers this one (CAS, relaxed: the word is the
  // whole value, nothing is published with it); read relaxed by thieves deciding whether to
  // keep a task (keep_remote_steal). A hint: a stale value costs one task's placement. One line
  // each: thieves elsewhere write different nodes' words.
  struct alignas(sync::kCacheLine) node_demand {
    atomics::atomic<std::uint64_t> word{0};
  };
  std::unique_ptr<node_demand[]> demand_;
  // Per node: how many live groups prefer it (I-STEAL-19). Moved by set_preferred_node and
  // forget_group under group_active_lock() (relaxed RMWs: the lock orders the writers, and the
  // group's counted_node says which node counts it); read relaxed by notify_one and by
  // searchers at their remote tiers. A hint: a stale count costs one wake-up's choice or one
  // delegation, made or missed. One line each: written rarely, read by every node's searchers.
  struct alignas(sync::kCacheLine) node_groups {
    atomics::atomic<std::int32_t> preferring{0};
  };
  std::unique_ptr<node_groups[]> preferring_;
  // Node arenas before the workers (their pools allocate from them); the registry and the
  // balancer before the workers too (each worker's sample ring is the balancer's), and the
  // balancer thread is stopped by shutdown() before the workers are joined.
  std::unique_ptr<memory::node_arenas> arenas_;
  numa::region_registry regions_;
  struct balancer_glue final : numa::balancer_host {
    scheduler& s;
    explicit balancer_glue(scheduler& sc) : s(sc) {}
    void node_loads(std::vector<std::uint64_t>& out) override;
    bool apply(const void* key, int preferred, std::int64_t score, const core::cpumask* active) override;
    void migrated(const void* key, int from, int to, std::uint64_t pages) override;
    void balance_nodes() override;
    void count(numa::balancer_event e, std::uint64_t n) override;
    bool migrate_pages(std::uintptr_t page, std::size_t bytes, int node) override;
  };
  balancer_glue balancer_glue_{*this};
  std::unique_ptr<numa::balancer> balancer_;
  std::unique_ptr<trace::recorder> trace_;  // null: tracing off (config::trace_path empty or unwritable)
  std::string stats_path_;
  std::unique_ptr<stats_signal_watcher> stats_watcher_;  // config::stats_on_signal
  ctr::shared_counter_block outside_counters_;  // outside threads and the balancer thread
  // Outside threads blocked in task_group::wait: their parkers, keyed by the group they wait
  // for. Guarded by outside_waiters_lock_; outside_waiter_count_ lets completions skip the lock.
  struct outside_waiter {
    const void* key;
    parker_t* parker;
  };
  std::mutex outside_waiters_lock_;
  std::vector<outside_waiter> outside_waiters_;
  atomics::atomic<std::uint32_t> outside_waiter_count_{0};
  std::mutex shutdown_lock_;
  bool joined_ = false;
  std::string name_;
  // The process's fork generation (bumped by the pthread_atfork child handler) at start.
  const std::uint32_t fork_generation_;
  const bool asym_fence_;                // ASYM_FENCE on and membarrier() available (I-PARK-7)
  const bool idle_poll_;                 // workers poll before they park (policy::idle_poll_allowed)
  // Pauses between two looks at the queues while searching, helping in a join or polling:
  // idle_poll_pause_iterations where workers poll (the window bounds the spinning, not the
  // search rounds), else spin_iterations.
  const std::int64_t search_pauses_;
};

}  // namespace rt::detail
