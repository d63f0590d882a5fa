// The scheduler: start-up, spawn placement, the work-search ladder, parking, join, shutdown.
// Protocol invariants cited here are defined in docs/design/{parking,tasks,shutdown,deque}.md.
#include "worker/scheduler.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include "core/assert.hpp"
#include "policy/frame_cache.hpp"
#include "policy/idle_poll.hpp"
#include "rt/error.hpp"
#include "rt/runtime.hpp"
#include "sync/clock.hpp"
#include "trace/stats_file.hpp"
#include "worker/stack_guard.hpp"

namespace rt::detail {

// fork() (docs/adr/0007-fork.md). Written only by the child handler, which runs in the child's
// one thread before anything else can run there; read relaxed by spawns and waits, which only
// compare it with the generation their scheduler started under (scheduler::orphaned()).
constinit atomics::atomic<std::uint32_t> g_fork_generation{0};

namespace {

// A node's demand word (scheduler::node_demand): the stamp's pelt period in the high
// kDemandStampBits, the sum in the rest.
constexpr unsigned kDemandSumBits = 24;
constexpr std::uint64_t kDemandSumMax = (std::uint64_t{1} << kDemandSumBits) - 1;
constexpr unsigned kDemandStampBits = 64 - kDemandSumBits;

std::uint64_t demand_word(std::uint64_t period, std::uint64_t sum) noexcept {
  return (period << kDemandSumBits) | std::min(sum, kDemandSumMax);
}

// Whole periods from a demand word's stamp to `period`, as a signed 40-bit difference: 0 when
// the stamp is up to kDemandClockRace periods later (written by a thread whose clock read came
// after this one's); a stamp further ahead has wrapped (2^39 periods old: 17.8 years at 1024
// us, 6.4 days at the smallest pelt_period_us) and reads as long decayed. Two corners, both
// costing one node's demand for a while, never correctness: a writer stalled more than
// kDemandClockRace periods between its clock read and its CAS (18 minutes at 1024 us, 1 s at
// 1 us) reads the newer stamp as wrapped, drops the sum and stamps its older period; a stamp
// 2^40 - kDemandClockRace or more periods old reads as fresh.
constexpr std::int64_t kDemandClockRace = std::int64_t{1} << 20;
constexpr std::uint64_t kDemandDecayed = std::uint64_t{1} << 32;  // past any halflife's 63 shifts
std::uint64_t periods_since(std::uint64_t word, std::uint64_t period) noexcept {
  constexpr unsigned shift = 64 - kDemandStampBits;
  const auto d = static_cast<std::int64_t>((period - (word >> kDemandSumBits)) << shift) >> shift;
  if (d >= 0) return static_cast<std::uint64_t>(d);
  return d > -kDemandClockRace ? 0 : kDemandDecayed;
}

// The worker the calling thread is, or null. Written once by the worker thread itself.
thread_local worker* tls_worker = nullptr;

// An outside thread's parker, for task_group::wait (one per thread, lives as long as it).
thread_local parker_t tls_outside_parker;
thread_local char tls_thread_key;
// True on a worker thread that made itself SCHED_BATCH (WORKER_BATCH, ADR 0022): a fork() child
// made from it, no worker any more, goes back to SCHED_OTHER. Written by that thread only.
thread_local bool tls_made_batch = false;
inline constexpr int kMaxWorkers = 4096;

// I-SHUT-6: held across fork() by the handlers below.
constinit std::mutex g_group_active_lock;
void before_fork() noexcept { g_group_active_lock.lock(); }
void after_fork_in_parent() noexcept { g_group_active_lock.unlock(); }
void on_fork_child() noexcept {
  g_fork_generation.fetch_add(1, atomics::relaxed);
  tls_worker = nullptr;  // a worker that forked is an outside thread of the child
  if (tls_made_batch) {   // and does not keep the workers' SCHED_BATCH (ADR 0022)
    sched_param sp{};
    pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
    tls_made_batch = false;
  }
  g_group_active_lock.unlock();
}
// Registered at load, like the region directory's handlers: registering from the first
// scheduler's constructor could wait for glibc's atfork lock, which a concurrent fork() holds
// while its prepare handlers wait for the default runtime's slot lock, held by the thread
// constructing that scheduler.
const int g_fork_handlers = pthread_atfork(&before_fork, &after_fork_in_parent, &on_fork_child);
std::uint32_t current_fork_generation() {
  RT_ASSERT(g_fork_handlers == 0, "I-SHUT-6", "pthread_atfork failed for the scheduler's fork handlers");
  return g_fork_generation.load(atomics::relaxed);
}

void* payload_of(task* t) noexcept { return task_payload(t); }

std::vector<int> worker_cores(const topo::topology& t, int workers) {
  if (workers < 0 || workers > kMaxWorkers) {
    throw rt::config_error("rt::config: workers=" + std::to_string(workers) + " is out of range (0 = one per core, 1.." +
                           std::to_string(kMaxWorkers) + ")");
  }
  std::vector<int> cores = policy::default_worker_cores(t, workers);
  if (cores.empty()) {
    throw rt::config_error("rt::config: topology '" + t.source_desc +
                           "' has no core with an allowed PU (check taskset/cpuset)");
  }
  return cores;
}

// Tracing (docs/observability.md): ids are frame and group addresses, unique while alive.
std::uint64_t trace_id(const void* p) noexcept { return reinterpret_cast<std::uintptr_t>(p); }

trace::wake_path trace_path_of(policy::wake_reason r) noexcept {
  switch (r) {
    case policy::wake_reason::target_idle: return trace::wake_path::target_idle;
    case policy::wake_reason::prev_idle: return trace::wake_path::prev_idle;
    case policy::wake_reason::idle_scan: return trace::wake_path::idle_scan;
    case policy::wake_reason::busy_target: return trace::wake_path::busy_target;
    case policy::wake_reason::idlest: return trace::wake_path::idlest;
  }
  return trace::wake_path::local;
}

trace::wake_affine trace_affine_of(const policy::wake_decision& d) noexcept {
  if (!d.affine_attempted()) return trace::wake_affine::none;
  return d.affine_moved() ? trace::wake_affine::affine : trace::wake_affine::not_affine;
}

trace::trace_layout make_trace_layout(const policy::layout& l, const topo::topology& t, const std::string& name) {
  trace::trace_layout tl;
  for (int w = 0; w < l.worker_count(); ++w) tl.worker_node.push_back(l.node_of(w));
  for (const topo::numa_node& n : t.nodes)
    tl.node_package.push_back(n.cores.empty() ? -1 : t.cores[static_cast<std::size_t>(n.cores.front())].package);
  tl.name = name;
  return tl;
}

const char* policy_name(int policy) noexcept {
  switch (policy) {
    case SCHED_FIFO: return "SCHED_FIFO";
    case SCHED_RR: return "SCHED_RR";
    case SCHED_BATCH: return "SCHED_BATCH";
    case SCHED_IDLE: return "SCHED_IDLE";
    default: return "another policy";
  }
}

}  // namespace

std::mutex& group_active_lock() noexcept { return g_group_active_lock; }

worker::worker(scheduler& s, int id_, int node_, int llc_, std::size_t log2_capacity, std::size_t mailbox_capacity,
               const policy::pelt_params& pp, std::uint64_t avg_idle0, memory::arena_ref arena)
    : id(id_), node(node_), llc(llc_), sched(s), dq(static_cast<unsigned>(log2_capacity)), mailbox(mailbox_capacity),
      rng(0x6e756d617274ull ^ static_cast<std::uint64_t>(id_)), pool(kPooledFrameSize, arena), avg_idle_ns(avg_idle0),
      pelt(pp) {}

// The wake path's view of the workers (policy::wake_view): relaxed loads of hints.
struct sched_view {
  const scheduler& s;
  const worker& at(int w) const { return *s.workers_[static_cast<std::size_t>(w)]; }
  bool idle(int w) const { return at(w).idle.load(atomics::relaxed); }
  std::uint64_t avg_idle_ns(int w) const { return at(w).avg_idle_ns.load(atomics::relaxed); }
  std::uint64_t avg_scan_cost_ns(int llc) const {
    return s.llcs_[static_cast<std::size_t>(llc)].avg_scan_cost_ns.load(atomics::relaxed);
  }
  int nr_idle_scan(int llc) const { return s.llcs_[static_cast<std::size_t>(llc)].nr_idle_scan.load(atomics::relaxed); }
  std::uint32_t util(int w) const { return at(w).util.load(atomics::relaxed); }
  std::uint32_t util_est(int w) const { return at(w).util_est.load(atomics::relaxed); }
  std::uint64_t node_load(int n) const {
    std::uint64_t sum = 0;
    s.layout_.node_workers[static_cast<std::size_t>(n)].for_each([&](std::size_t w) {
      const int wi = static_cast<int>(w);
      sum += policy::cpu_util(util(wi), util_est(wi), s.settings_);
    });
    return sum;
  }
};
static_assert(policy::wake_view<sched_view>);

worker* scheduler::current_worker() noexcept { return tls_worker; }

void scheduler::throw_orphaned(const char* what) const {
  throw rt::runtime_stopped(std::string("numart: ") + what + " on runtime '" + name_ +
                            "', which was started before fork(): its workers exist only in the parent "
                            "process; create a new rt::runtime in the child");
}

// A task that called fork() returned in the child (docs/adr/0007-fork.md): the child has no
// workers to go back to, so it ends as if its one thread had finished, with status 0.
[[noreturn]] static void end_forked_child() { std::exit(0); }
const void* scheduler::thread_key() noexcept { return &tls_thread_key; }

void scheduler::group_init(task_group_state* g) {
  worker* w = own_worker();
  ::new (g) task_group_state{this, w, thread_key(), false, {false}, {false}, nullptr, 0, {0}};
}

// I-TASK-7: a task of the group spawning into it spends the worker's credit on the group if
// it has some, else pays any credit on another group and reserves task_group_reserve counts at
// once (relaxed, as one count was: the reservation precedes every push that spends it, and so
// every completion that repays it). Any other spawner counts one: a reservation held by a task
// outside the group could outlive the group's last task for as long as that task runs.
void scheduler::group_count_spawn(task_group_state* g, worker* w) noexcept {
  if (w != nullptr && w == g->owner && !g->folded) {
    ++g->local;
  } else if (w == nullptr || w->running_members != g) {
    g->shared.fetch_add(1, atomics::relaxed);
  } else if (w->credit_group == g && w->credit > 0) {
    --w->credit;
  } else {
    pay_group_credit(*w);
    const std::int64_t reserve = settings_.t.task_group_reserve;
    g->shared.fetch_add(reserve, atomics::relaxed);
    w->credit_group = g;
    w->credit = reserve - 1;
  }
}

// I-TASK-5 as for a completion: this RMW is the worker's last access to the group.
void scheduler::pay_group_credit_now(worker& w) noexcept {
  task_group_state* g = w.credit_group;
  const std::int64_t n = w.credit;
  w.credit = 0;
  w.credit_group = nullptr;
  if (g->shared.fetch_sub(n, atomics::seq_cst) == n) notify_group_waiters(g);
}

scheduler::scheduler(const config& cfg, runtime* owner, const tun::settings& settings, topo::topology topo)
    : owner_(owner), topo_(std::move(topo)), settings_(settings),
      layout_(policy::make_layout(topo_, worker_cores(topo_, cfg.workers))),
      idle_(layout_.worker_count(),
            std::max(1, layout_.worker_count() * static_cast<int>(settings_.t.searching_max_pct) / 100)),
      pelt_params_(policy::make_pelt_params(settings_)),
      regions_(settings_.f.FAULT_SAMPLING ? numa::sampling_mode::faults : numa::sampling_mode::explicit_only,
               static_cast<std::size_t>(settings_.t.numa_sample_block_pages)),
      name_(cfg.name),
      fork_generation_(current_fork_generation()),
      asym_fence_(settings_.f.ASYM_FENCE && sync::asym_fence::available()),
      idle_poll_(policy::idle_poll_allowed(layout_, topo_.is_host, settings_)),
      search_pauses_(idle_poll_ ? settings_.t.idle_poll_pause_iterations : settings_.t.spin_iterations) {
  const int n = layout_.worker_count();
  no_faults_.assign(static_cast<std::size_t>(topo_.node_count()), 0);
  demand_ = std::make_unique<node_demand[]>(static_cast<std::size_t>(topo_.node_count()));
  preferring_ = std::make_unique<node_groups[]>(static_cast<std::size_t>(topo_.node_count()));
  for (int node = 0; node < topo_.node_count(); ++node)  // stamped now, so that the first decay is short
    demand_[static_cast<std::size_t>(node)].word.store(demand_word(sync::now_ns() / 1000 / pelt_params_.period_us, 0),
                                                       atomics::relaxed);
  arenas_ = std::make_unique<memory::node_arenas>(topo_);
  balancer_ = std::make_unique<numa::balancer>(topo_, layout_.node_capacity, n, settings_, regions_, balancer_glue_);
  const std::size_t llcs = layout_.llc_workers.size();
  llcs_ = std::make_unique<llc_state[]>(llcs);
  for (std::size_t c = 0; c < llcs; ++c)  // an LLC nobody has loaded yet scans its whole span
    llcs_[c].nr_idle_scan.store(policy::sis_util_nr_scan(0, static_cast<int>(layout_.llc_workers[c].count()), settings_),
                                atomics::relaxed);
  workers_.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const auto& place = layout_.workers[static_cast<std::size_t>(i)];
    workers_.push_back(std::make_unique<worker>(*this, i, place.node, place.llc,
                                                static_cast<std::size_t>(settings_.t.deque_log2_capacity),
                                                static_cast<std::size_t>(settings_.t.mailbox_capacity), pelt_params_,
                                                policy::initial_avg_idle(settings_), arenas_->arena(place.node)));
  }
  for (int nd = 0; nd < topo_.node_count(); ++nd) injection_.push_back(std::make_unique<deque::injection_queue<task>>(static_cast<std::size_t>(settings_.t.injection_queue_reserve)));
  for (auto& wp : workers_) wp->plan = policy::make_steal_plan(layout_, wp->id);
  if (topo_.is_host) {
    for (int i = 0; i < n; ++i) {
      for (const unsigned pu : topo_.cores[static_cast<std::size_t>(layout_.workers[static_cast<std::size_t>(i)].core)].pus) {
        if (pu >= pu_worker_.size()) pu_worker_.resize(pu + 1, -1);
        if (pu_worker_[pu] < 0) pu_worker_[pu] = i;
      }
    }
  }
  if (!cfg.trace_path.empty()) {
    trace_ = trace::recorder::open(cfg.trace_path, make_trace_layout(layout_, topo_, name_), std::cerr);
    if (trace_)
      for (auto& wp : workers_) wp->trace = &trace_->for_worker(wp->id);
  }
  stats_path_ = cfg.stats_path;
  if (cfg.stats_on_signal && stats_path_.empty())
    throw rt::config_error("rt::config: stats_on_signal (RT_STATS_SIGNAL=1) needs stats_path (RT_STATS): where to write");
  start_workers();
  if (cfg.stats_on_signal)
    stats_watcher_ = std::make_unique<stats_signal_watcher>(
        [this] { trace::write_stats_file(snapshot(), stats_path_, std::cerr); });
  // I-BAL-6: one node has nothing to balance (the kernel enables NUMA balancing only when
  // more than one node is online). The thread is named like the workers (<runtime name>-<id>),
  // so that top, gdb and perf tell it apart.
  if (settings_.f.NUMA_BALANCING && topo_.node_count() > 1) balancer_->start(name_.substr(0, 10) + "-bal");
}

void scheduler::start_workers() {
  std::size_t started = 0;
  try {
    for (; started < workers_.size(); ++started) {
      worker& w = *workers_[started];
      if (sync::fault::thread_start_fails(static_cast<int>(started)))
        throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                                "injected thread-creation failure (sync/fault.hpp)");
      w.thread = std::thread([this, &w] { run_worker(w); });
    }
  } catch (const std::system_error& e) {
    // I-SHUT-5: a failed start stops the workers already running and leaks nothing.
    terminated_.store(1, atomics::release);
    for (std::size_t i = 0; i < started; ++i) unpark_worker(*workers_[i]);
    for (std::size_t i = 0; i < started; ++i) workers_[i]->thread.join();
    joined_ = true;
    throw rt::startup_error(std::string("numart: cannot start worker thread ") + std::to_string(started) + " of " +
                            std::to_string(workers_.size()) + ": " + e.what());
  }
}

scheduler::~scheduler() { shutdown(); }

// ---------------------------------------------------------------------------------------------
// The worker loop (DESIGN.md §5): find work, run it, else park.

void scheduler::run_worker(worker& w) {
  tls_worker = &w;
  stack_guard::enter_worker(w.id);  // a runaway recursion is reported, then dies (ADR 0008)
  if (topo_.is_host) topo_.bind_current_thread(layout_.workers[static_cast<std::size_t>(w.id)].core);
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* base = nullptr;
    std::size_t size = 0;
    if (pthread_attr_getstack(&attr, &base, &size) == 0) {
      // The stack grows down from base + size; helping stops below this mark (I-HELP-1).
      w.help_floor = static_cast<const char*>(base) +
                     size * static_cast<std::size_t>(settings_.t.help_stack_reserve_pct) / 100u;
    }
    pthread_attr_destroy(&attr);
  }
  if (settings_.f.WORKER_BATCH) make_batch();
  numa::enter_sampling(&balancer_->ring(w.id), w.node);  // this worker's hinting faults feed its ring
  const std::uint64_t started = sync::now_ns();
  w.pelt = policy::pelt_signal(pelt_params_, started / 1000);
  account(w, started, false);  // util_us from this clock before any thief ages util
  std::string tname = name_.substr(0, 10) + "-" + std::to_string(w.id);
  pthread_setname_np(pthread_self(), tname.c_str());
  for (;;) {
    if (task* t = find_work(w)) {
      execute(&w, t);
      continue;
    }
    if (terminated_.load(atomics::acquire) != 0) break;
    park(w);
    if (terminated_.load(atomics::acquire) != 0) break;
  }
  w.remote_frees.flush();  // I-POOL-2: before the pools can be destroyed
  w.group_refs.flush();    // I-GROUP-2: groups dropped by now die with their last frame
  RT_ASSERT(w.credit == 0, "I-TASK-7", "a worker leaves its loop owing a task_group counts");
  numa::leave_sampling();
  stack_guard::leave_worker();
  tls_worker = nullptr;
}

task* scheduler::find_local(worker& w) {
  if (task* t = w.mailbox.pop()) {
    w.counters.add(ctr::counter::mailbox_taken);
    release_slot(w);  // I-WAKE-10: the worker goes on with the mail first
    return t;
  }
  // Fairness: every injection_poll_interval pops, look at the node queue before the deque, so
  // a worker busy with its own tree cannot starve outside spawns (Go's schedule() does this).
  // A chain of continuations in the slot counts its pops too, and yields to the queue's task:
  // the waiting continuation goes to the deque, where another worker may take it (I-WAKE-10).
  if (++w.pops_since_poll >= static_cast<std::uint32_t>(settings_.t.injection_poll_interval)) {
    w.pops_since_poll = 0;
    account(w, sync::now_ns(), true);  // a busy worker's load signal ages too (the kernel's tick)
    refresh_llc_hint(w);
    if (task* t = injection_[static_cast<std::size_t>(w.node)]->pop()) {
      w.counters.add(ctr::counter::injected_taken);
      release_slot(w);
      return t;
    }
  }
  if (task* t = take_slot(w)) return t;  // I-WAKE-10
  if (task* t = w.dq.pop()) return t;
  if (task* t = injection_[static_cast<std::size_t>(w.node)]->pop()) {
    w.counters.add(ctr::counter::injected_taken);
    return t;
  }
  return nullptr;
}

// The steal ladder (docs/design/stealing.md): victims tier by tier (same LLC, same node, then
// nodes by distance), each tier from a random start with wrap; after each remote tier, the
// injection queues of that tier's nodes; last, every injection queue by distance (nodes without
// workers included). A lost race is retry, never empty (I-STEAL-2): a tier is walked again
// while any steal in it returned retry.
task* scheduler::steal_work(worker& w, bool may_delegate) {
  // I-STEAL-19: once a searcher has left the remote tiers to a searcher it woke, this call
  // skips them (the search then ends); a joiner's help (may_delegate false) never delegates.
  bool remote_left = false;
  bool asked = !may_delegate;
  for (const policy::steal_tier& tier : w.plan.tiers) {
    if (tier.level == policy::steal_level::remote && !asked) {
      asked = true;
      remote_left = delegate_remote_work(w);
    }
    if (remote_left && tier.level == policy::steal_level::remote) continue;
    bool retry = true;
    while (retry) {
      retry = false;
      const std::uint64_t start = w.rng.next_below(tier.victims.size());
      for (std::size_t i = 0; i < tier.victims.size(); ++i) {
        worker& v = *workers_[static_cast<std::size_t>(policy::victim_at(tier, start, i))];
        task* t = nullptr;
        sync::fault::point(sync::fault::site::before_steal);
        switch (v.dq.steal(t)) {
          case deque::steal_result::success:
            w.counters.add(ctr::counter::steals);
            if (w.trace != nullptr) [[unlikely]]
              trace::steal(*w.trace, trace_id(t), v.id,
                           tier.level == policy::steal_level::llc    ? trace::steal_tier::llc
                           : tier.level == policy::steal_level::node ? trace::steal_tier::node
                                                                     : trace::steal_tier::remote);
            w.counters.add(tier.level == policy::steal_level::llc    ? ctr::counter::steals_llc
                           : tier.level == policy::steal_level::node ? ctr::counter::steals_node
                                                                     : ctr::counter::steals_remote);
            if (tier.level == policy::steal_level::remote && !keep_remote_steal(w, t, v.node)) break;
            return t;
          case deque::steal_result::retry:
            w.counters.add(ctr::counter::steal_retries);
            retry = true;
            break;
          case deque::steal_result::empty:
            break;
        }
      }
    }
    if (tier.level == policy::steal_level::remote) {
      for (int nd : tier.nodes) {
        if (task* t = injection_[static_cast<std::size_t>(nd)]->pop()) {
          w.counters.add(ctr::counter::injected_taken);
          if (!keep_remote_steal(w, t, nd)) continue;
          return t;
        }
      }
    }
  }
  for (int nd : w.plan.injection_order) {
    if (remote_left && nd != w.node) continue;
    if (task* t = injection_[static_cast<std::size_t>(nd)]->pop()) {
      w.counters.add(ctr::counter::injected_taken);
      if (nd != w.node && !keep_remote_steal(w, t, nd)) continue;
      return t;
    }
  }
  return nullptr;
}

// The locality filter on the steal ladder (docs/design/stealing.md §2, I-STEAL-13): a task
// taken from another node whose group prefers that node is put back on that node's queue
// (waking one of its sleepers) instead of run here, unless the policy has no objection, or the
// verdict is last_resort and either this thief has already given back numa_steal_refusals
// tasks in a row (the kernel's can_migrate_task() moves a cache-hot task once
// nr_balance_failed exceeds cache_nice_tries: an idle thief is not kept idle forever, 000
// patch 5, I-STEAL-6) or the source node is backlogged (I-STEAL-15) or overloaded
// (I-STEAL-16) or its last queued task is predicted to start late (I-STEAL-18). The decision
// reads only the group's preferred node: the balancer's fault counts stay on its thread.
// The filter's verdict for moving a task whose group prefers `pref` (-1: none) from src to
// dst. The worker side sees only the preferred node (one exists only once the group has
// samples); the fault counts stay on the balancer's thread, so the policy's last case
// (neither node preferred: compare faults) sees none.
policy::steal_verdict scheduler::classify_move(int pref, int src, int dst, policy::balance_kind kind,
                                                std::uint64_t src_queued) const noexcept {
  policy::group_locality loc;
  loc.preferred_node = pref;
  loc.faults = no_faults_;
  loc.total_faults = 1;
  policy::migration_env env;
  env.src_node = src;
  env.dst_node = dst;
  env.kind = kind;
  env.src_queued = src_queued;
  env.src_node_workers = static_cast<std::uint32_t>(layout_.node_workers[static_cast<std::size_t>(src)].count());
  return policy::classify_steal(pref >= 0 ? &loc : nullptr, env, settings_.f);
}

bool scheduler::keep_remote_steal(worker& w, task* t, int src_node) noexcept {
  const int pref = placed_node(t);
  if (pref != src_node || pref == w.node) return true;
  const policy::steal_verdict v = classify_move(pref, src_node, w.node, policy::balance_kind::idle, 1);
  if (v == policy::steal_verdict::prefer || v == policy::steal_verdict::accept) return true;
  if (v == policy::steal_verdict::last_resort) {
    // I-STEAL-15: the source node's backlog, from relaxed size estimates. I-STEAL-16 (only
    // with its feature on): the workers not parked, and their utilisation aged to now from
    // its stamp, as busy or idle as the worker was when it stamped it (seen_util(); a busy
    // worker publishes util only every injection_poll_interval tasks and at its parks).
    policy::refusal_env env;
    env.thief_refusals = w.steal_refusals;
    env.src_backlog = 1 + injection_[static_cast<std::size_t>(src_node)]->size_estimate();
    const bool overload = settings_.f.OVERLOADED_NODE_STEAL;
    const std::uint64_t now_us = overload ? sync::now_ns() / 1000 : 0;
    layout_.node_workers[static_cast<std::size_t>(src_node)].for_each([&](std::size_t id) {
      const worker& sw = *workers_[id];
      ++env.src_workers;
      env.src_backlog += sw.dq.size_estimate();
      if (!overload) return;
      if (!sw.idle.load(atomics::relaxed)) ++env.src_running;
      env.src_util += seen_util(sw, now_us);
    });
    if (overload && settings_.f.EXPORTED_NODE_UTIL) env.src_exported = exported_util(src_node, now_us);
    if (settings_.f.PREDICTED_WAIT) predict_backlog(env, src_node);
    if (policy::keep_refused_steal(env, settings_)) {
      w.steal_refusals = 0;
      w.counters.add(ctr::counter::steals_overridden);
      return true;
    }
  }
  ++w.steal_refusals;
  w.counters.add(ctr::counter::steals_refused);
  push_node(src_node, t, &w);
  return false;
}

// I-STEAL-18: the source node's workers, free now (parked, or between timed tasks) or when
// their running timed task is expected to end, and their group-task lengths. A worker on its
// first timed task published its start (start plus a length of 0): the mean of the others'
// lengths stands in, as for its queued tasks. The backlog is bounded at four rounds of the
// node's workers (the prediction is then several task lengths ahead already); a node of more
// than kMaxPredicted workers is predicted on its first.
void scheduler::predict_backlog(policy::refusal_env& env, int src_node) const noexcept {
  constexpr std::size_t kMaxPredicted = 64;
  std::array<std::uint64_t, kMaxPredicted> until{};
  std::array<std::int64_t, kMaxPredicted> remaining{};
  std::array<std::int64_t, kMaxPredicted> lengths{};
  std::size_t n = 0;
  layout_.node_workers[static_cast<std::size_t>(src_node)].for_each([&](std::size_t id) {
    if (n == kMaxPredicted) return;
    const worker& sw = *workers_[id];
    until[n] = sw.busy_until_ns.load(atomics::relaxed);
    lengths[n] = sw.group_task_ns.load(atomics::relaxed);
    ++n;
  });
  const std::span<const std::int64_t> known(lengths.data(), n);
  env.src_task_ns = policy::mean_known_length_ns(known);
  const std::uint64_t now = sync::now_ns();
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t end =
        until[i] == 0 || lengths[i] > 0 ? until[i] : until[i] + static_cast<std::uint64_t>(env.src_task_ns);
    remaining[i] = end > now ? static_cast<std::int64_t>(end - now) : 0;
  }
  env.src_last_start_ns = policy::predicted_last_start_ns(std::span(remaining.data(), n), known,
                                                          std::min<std::uint64_t>(env.src_backlog, 4 * n));
}

// A searcher that stops searching gives its slot back; the last one wakes another, since more
// work may be queued (I-SEARCH-1).
void scheduler::stop_searching(worker& w) noexcept {
  if (!w.searching) return;
  w.searching = false;
  if (idle_.stop_searching()) notify_one(&w);
}

task* scheduler::find_work(worker& w) {
  w.delegated = false;  // I-STEAL-19: each search may delegate once
  if (task* t = find_local(w)) {
    w.steal_refusals = 0;  // work of its own: the run of refusals (I-STEAL-13) ends
    stop_searching(w);
    return t;
  }
  pay_group_credit(w);  // I-TASK-7: no local work left, the group may be done but for this
  // I-POOL-4: a busy period that spawned enough ends here; the frames it left unused go back to
  // the arena.
  if (policy::frame_collection_due(w.pool.takes(), settings_)) {
    const std::size_t keep = policy::frames_to_keep(w.pool.count(), w.pool.low_water(), settings_);
    if (const std::size_t trimmed = w.pool.trim(keep, static_cast<std::size_t>(settings_.t.frame_pool_max)))
      w.counters.add(ctr::counter::frames_trimmed, trimmed);
  }
  if (!w.searching && idle_.try_start_searching()) {
    w.searching = true;
    w.counters.add(ctr::counter::searches);
  }
  if (!w.searching) return nullptr;
  // search_rounds rounds, then more while the haltpoll window lasts (I-PARK-9): the poller
  // stays a searcher (I-SEARCH-1 unchanged: a spawn seeing it wakes nobody, and when it finds
  // work it wakes another), so work spawned meanwhile costs neither a futex wake nor a
  // cross-core wake-up. A thief that gave tasks back (I-STEAL-13) would find them again on
  // every round: it parks with its backoff instead (I-PARK-8).
  for (std::int64_t round = 1;; ++round) {
    task* t = steal_work(w, true);
    if (t == nullptr) t = find_local(w);
    if (t != nullptr) {
      if (w.idle_since_ns != 0) {  // found within the window, which was idle time (I-PARK-10)
        w.counters.add(ctr::counter::idle_poll_hits);
        account(w, w.idle_since_ns, true);
        end_idle(w, w.idle_since_ns, sync::now_ns());
        w.idle_since_ns = 0;
      }
      stop_searching(w);
      return t;
    }
    // I-STEAL-19: a search that left the remote tiers to a woken searcher ends here; polling on
    // as a searcher that skips them would keep spawns from waking anyone for their work.
    if (w.delegated) return nullptr;
    if (round >= settings_.t.search_rounds &&
        (w.steal_refusals > 0 || terminated_.load(atomics::relaxed) != 0 ||
         !poll_window_open(w, w.idle_since_ns, ctr::counter::idle_polls)))
      return nullptr;
    for (std::int64_t i = 0; i < search_pauses_; ++i) atomics::cpu_relax();
  }
}

// The haltpoll window (policy/idle_poll.hpp, docs/design/parking.md "Idle polling") of a
// searcher (`since` = idle_since_ns) or a joiner (join_poll_since_ns): opens it at the first call
// of an idle stretch (since == 0), counting `opened`; true while it lasts.
bool scheduler::poll_window_open(worker& w, std::uint64_t& since, ctr::counter opened) noexcept {
  if (!idle_poll_ || w.poll_window_ns == 0) return false;
  const std::uint64_t now = sync::now_ns();
  if (since == 0) {
    since = now;
    w.counters.add(opened);
  }
  return now - since < static_cast<std::uint64_t>(w.poll_window_ns);
}

// Whether any deque or injection queue holds a task. Called by a worker that registered as a
// sleeper, after its seq_cst fence (I-PARK-2).
// `except`: a blocked joiner's own deque holds only tasks it may not take (I-HELP-1).
bool scheduler::work_visible(const worker* except) const {
  for (const auto& q : injection_)
    if (q->size_estimate() != 0) return true;
  for (const auto& v : workers_)
    if (v.get() != except && !v->dq.empty_estimate()) return true;
  return false;
}

// Whether `node`'s injection queue or one of its workers' deques holds a task: the re-check of
// a worker that parks after delegating (I-STEAL-19), after its seq_cst fence.
bool scheduler::node_work_visible(int node) const {
  if (injection_[static_cast<std::size_t>(node)]->size_estimate() != 0) return true;
  bool seen = false;
  layout_.node_workers[static_cast<std::size_t>(node)].for_each([&](std::size_t id) {
    if (!workers_[id]->dq.empty_estimate()) seen = true;
  });
  return seen;
}

// Whether a deque of w's remote tiers or another node's injection queue holds a task (relaxed
// estimates: a hint for I-STEAL-19, which wakes a worker only for work it can see).
bool scheduler::remote_work_visible(const worker& w) const {
  for (const policy::steal_tier& tier : w.plan.tiers) {
    if (tier.level != policy::steal_level::remote) continue;
    for (const int v : tier.victims)
      if (!workers_[static_cast<std::size_t>(v)]->dq.empty_estimate()) return true;
  }
  for (const int nd : w.plan.injection_order)
    if (nd != w.node && injection_[static_cast<std::size_t>(nd)]->size_estimate() != 0) return true;
  return false;
}

// I-STEAL-19 (DELEGATE_REMOTE_WORK): a searcher of a node that some group prefers, seeing work
// on other nodes, wakes a sleeper of a node no group prefers for it, as a searcher (the woken
// worker holds a searcher's place whatever the number searching, so I-SEARCH-1 covers the work
// it was woken for), and leaves the remote tiers to it. True when one was woken; the search
// then ends without its remote tiers, and the park after it backs off (I-PARK-8).
bool scheduler::delegate_remote_work(worker& w) noexcept {
  if (!settings_.f.DELEGATE_REMOTE_WORK) return false;
  if (!node_preferred(w.node)) return false;
  if (!remote_work_visible(w)) return false;
  struct view {
    const scheduler& s;
    bool idle(int v) const { return s.workers_[static_cast<std::size_t>(v)]->idle.load(atomics::relaxed); }
    int node_of(int v) const { return s.layout_.node_of(v); }
    bool node_preferred(int n) const { return s.node_preferred(n); }
  };
  const int woken = policy::delegate_remote_work(w.plan, view{*this}, [&](int v) {
    worker& cand = *workers_[static_cast<std::size_t>(v)];
    if (!idle_.take_sleeper_as_searcher(cand.id)) return false;
    unpark_worker(cand);
    return true;
  });
  if (woken < 0) return false;
  w.delegated = true;
  w.counters.add(ctr::counter::steals_delegated);
  w.counters.add(ctr::counter::wakeups_sent);
  return true;
}

bool scheduler::enter_outside() noexcept {
  outside_inflight_.fetch_add(1, atomics::seq_cst);
  if (!stopping_.load(atomics::seq_cst)) return true;
  leave_outside();
  return false;
}

// Whether any worker's mailbox holds a task. Only quiescence asks (I-SHUT-3): a hand-off's
// target may be registered with its mail not yet taken (its re-check only looks; it cancels
// after). Another worker cannot take mail (I-MBX-3), so a parking worker's own re-check leaves
// the others' mailboxes alone.
bool scheduler::mail_visible() const {
  for (const auto& v : workers_)
    if (!v->mailbox.empty_estimate()) return true;
  return false;
}

void scheduler::park(worker& w) {
  RT_DEBUG_ASSERT(w.next.load(atomics::relaxed) == nullptr, "I-WAKE-10", "a worker parks with a continuation in its slot");
  const bool was_searching = w.searching;
  w.searching = false;
  // The busy stretch ends here: age the load signal, sample util_est, and show the worker idle
  // to the wake path before registering, so a hand-off can find it (I-WAKE-5).
  const std::uint64_t parked_at = sync::now_ns();
  // A haltpoll window before this park was idle time (I-PARK-10): the busy stretch ended when
  // the window opened.
  const std::uint64_t idle_since = w.idle_since_ns != 0 ? w.idle_since_ns : parked_at;
  w.idle_since_ns = 0;
  stop_running(w, idle_since, parked_at);
  w.est_at_park = w.pelt.util_avg();
  w.idle.store(true, atomics::relaxed);
  sync::fault::point(sync::fault::site::idle_shown);
  // The last searcher needs no extra check here: the re-check below covers every queue
  // (I-SEARCH-2), and it runs after the registration whatever the searcher count was; so it
  // does for a worker that delegated (I-STEAL-19) when it is the last, but not for a refusing
  // thief (I-PARK-8), whose skipped work waits at most one timeout.
  const bool last_searcher = idle_.prepare_park(w.id, was_searching);
  sync::fault::point(sync::fault::site::park_registered);
  sleeper_fence(w);  // I-PARK-2: registration before the re-check
  // I-SHUT-2: draining_ is read after the registration and before the re-check: a worker that
  // registered before shutdown() set it is woken by shutdown's wake_all; one that registered
  // after sees it, and then also every outside push that preceded it.
  const bool draining = draining_.load(atomics::seq_cst);
  // The re-check only looks (I-PARK-2); the loop takes the work after the cancel, so that no
  // registered worker ever holds a task (I-SHUT-3).
  // A cancelled park stamps the load signal again: the stamp above said "about to park", and
  // a worker that then ran a long task would decay as idle to every thief's eyes for as long
  // as it ran (I-STEAL-16 never saw its node overloaded).
  // A park that slept (a backoff that timed out) or followed a haltpoll window was an idle
  // stretch, and avg_idle takes it (I-PARK-10); one whose re-check found work at once was not
  // (the kernel's newidle balance that pulled a task leaves avg_idle alone).
  const auto cancel = [&](bool slept) {
    const std::uint64_t now = sync::now_ns();
    if (slept || idle_since != parked_at)
      end_idle(w, idle_since, now);
    else
      resume_running(w, now);
    w.idle.store(false, atomics::relaxed);
    if (idle_.cancel_park(w.id) == sync::idle_set<atomics>::cancel_result::already_woken) {
      // I-PARK-5: a notifier took us off the list: honour its intent (as a searcher if it
      // counted us as one); its token makes a later park() return once, absorbed below.
      w.searching = idle_.after_wake(w.id) == sync::idle_set<atomics>::wake_kind::as_searcher;
    }
  };
  // I-PARK-8: a thief that gave tasks back to their nodes in this search (I-STEAL-13) would
  // see them again in every re-check and spin; it sleeps for migration_cost_ns instead (the
  // kernel's cache-hot time), then looks again: visible work waits at most that long for it.
  // I-STEAL-19: a worker that left remote work to a searcher it woke backs off the same way,
  // but still re-checks its own node, whose work is what it stays free for, and every queue when
  // it parks as the last searcher (the one it woke found work and stopped; I-SEARCH-2), unless
  // it also gave tasks back in this search (it would see them again).
  const bool backoff = w.steal_refusals > 0 || w.delegated;
  const bool recheck_all = w.steal_refusals == 0 && (!w.delegated || last_searcher);
  if (!w.mailbox.empty_estimate() || (recheck_all && work_visible()) || (w.delegated && node_work_visible(w.node))) {
    w.counters.add(ctr::counter::park_cancels);
    cancel(false);
    return;
  }
  if (draining) {
    // I-SHUT-3: every worker registered and no joiner blocked (epoch E), then every queue
    // empty, then nothing registered, cancelled or woken since E: no task runs, none is
    // queued, no outside spawn can come (I-SHUT-2). Terminate under the idle set's lock.
    const std::uint64_t e = idle_.quiescent_epoch();
    if (e != 0 && !work_visible() && !mail_visible() &&
        idle_.confirm_quiescent(e, [this] { terminated_.store(1, atomics::release); })) {
      sync::native_futex::wake_all(terminated_);
      for (auto& v : workers_) unpark_worker(*v);
      return;
    }
  }
  // I-POOL-4: a sleeping worker's local list holds at most frame_pool_max free frames (its
  // remote list is not counted). Only once the park is certain: a park its re-check cancels is
  // no idle stretch (a thief whose parks are cancelled again and again would otherwise give
  // back the pool it filled as a spawner; numart_bench_core's empty_spawn_1M). Under the cap
  // the pool's period goes on: the takes before and after this park add up.
  if (const std::size_t keep = policy::frames_to_keep_parked(w.pool.count(), settings_); keep < w.pool.count())
    w.counters.add(ctr::counter::frames_trimmed, w.pool.trim(keep, keep));
  w.counters.flush(settings_.t.injection_poll_interval);  // I-CTR-4: nothing unpublished sleeps
  // Last, so that a snapshot that shows this park shows its batch and the pool's trims too
  // (I-CTR-6, I-POOL-4).
  w.counters.add(ctr::counter::parks);
  w.remote_frees.flush();  // I-POOL-2: nothing held back sleeps
  w.group_refs.flush();    // I-GROUP-2: an idle worker holds no group reference
  if (w.trace != nullptr) [[unlikely]]
    trace::park(*w.trace, trace::park_reason::idle);
  for (;;) {
    if (!backoff) {
      w.parker.park();
    } else if (!w.parker.park_for(static_cast<std::uint64_t>(settings_.t.migration_cost_ns))) {
      w.counters.add(ctr::counter::backoff_wakeups);
      if (w.trace != nullptr) [[unlikely]]
        trace::unpark(*w.trace, trace::unpark_reason::timeout, -1);
      cancel(true);  // I-PARK-8: timed out; a notifier that chose us meanwhile is honoured
      return;
    }
    if (terminated_.load(atomics::acquire) != 0) {
      if (w.trace != nullptr) [[unlikely]]
        trace::unpark(*w.trace, trace::unpark_reason::shutdown, -1);
      return;
    }
    auto kind = idle_.after_wake(w.id);
    if (kind == sync::idle_set<atomics>::wake_kind::still_parked) {
      w.counters.add(ctr::counter::spurious_wakeups);  // I-PARK-4
      continue;
    }
    if (w.trace != nullptr) [[unlikely]]
      trace::unpark(*w.trace, trace::unpark_reason::woken, -1, w.wake_sent_ns.exchange(0, atomics::relaxed));
    w.searching = kind == sync::idle_set<atomics>::wake_kind::as_searcher;
    const std::uint64_t woke_at = sync::now_ns();
    end_idle(w, idle_since, woke_at);
    if (idle_poll_)  // haltpoll's adjust_poll_limit(), on the halt's residency
      w.poll_window_ns = policy::idle_poll_next(w.poll_window_ns, static_cast<std::int64_t>(woke_at - parked_at), settings_);
    w.idle.store(false, atomics::relaxed);
    return;
  }
}

void scheduler::account(worker& w, std::uint64_t now, bool was_running, bool runs_after) noexcept {
  w.pelt.update(now / 1000, was_running);
  w.util.store(w.pelt.util_avg(), atomics::relaxed);
  w.util_us.store(now / 1000, atomics::relaxed);
  w.util_busy.store(runs_after, atomics::relaxed);
}

std::uint32_t scheduler::seen_util(const worker& w, std::uint64_t now_us) const noexcept {
  const std::uint64_t at = w.util_us.load(atomics::relaxed);
  const std::uint32_t util = policy::pelt_util_after(w.util.load(atomics::relaxed), now_us - std::min(now_us, at),
                                                     w.util_busy.load(atomics::relaxed), pelt_params_);
  return policy::cpu_util(util, w.util_est.load(atomics::relaxed), settings_);
}

// WORKER_BATCH (docs/adr/0022-worker-batch.md): a worker woken by a spawn then waits for the
// spawner to sleep or for the tick instead of preempting it. Only a worker that inherited
// SCHED_OTHER switches: a builder's real-time, idle or batch policy is the user's choice. A
// worker that keeps its policy, or whose request is refused, says so once per runtime.
void scheduler::make_batch() noexcept {
  int policy = SCHED_OTHER;
  sched_param sp{};
  int err = pthread_getschedparam(pthread_self(), &policy, &sp);
  if (err == 0 && policy == SCHED_OTHER) {  // sp's priority is 0, as SCHED_BATCH needs
    err = pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
    if (err == 0) {
      tls_made_batch = true;
      return;
    }
  }
  if (batch_refused_.exchange(true, atomics::relaxed)) return;
  if (err != 0)
    std::cerr << "numart: WORKER_BATCH: runtime '" << name_ << "': SCHED_BATCH refused (" << std::strerror(err)
              << "); its workers keep their scheduling policy\n";
  else
    std::cerr << "numart: WORKER_BATCH: runtime '" << name_ << "': its workers keep the policy they inherited ("
              << policy_name(policy) << ", not SCHED_OTHER)\n";
}

// The owner stops running at `now` (a park, or a block in a join): its load signal ages as busy
// until `idle_since` (the start of a poll window before it, I-PARK-10, else now) and as idle from
// there, and is stamped "not running"; its estimate is 0 until resume_running().
void scheduler::stop_running(worker& w, std::uint64_t idle_since, std::uint64_t now) noexcept {
  account(w, idle_since, true, false);
  if (idle_since != now) account(w, now, false, false);
  w.util_est.store(0, atomics::relaxed);
}

// The owner runs again at `now`: idle since its last stamp, then stamped running with the
// estimate sampled at its last park (a no-op for the estimate when it did not stop).
void scheduler::resume_running(worker& w, std::uint64_t now) noexcept {
  account(w, now, false);
  w.util_est.store(w.est_at_park, atomics::relaxed);
}

// An idle stretch that began at `since` ends at `now` (a woken park, or a poll window that
// found work): the load signal ages as idle, and avg_idle takes the stretch as a sample.
void scheduler::end_idle(worker& w, std::uint64_t since, std::uint64_t now) noexcept {
  resume_running(w, now);
  w.avg_idle_ns.store(policy::update_avg_idle(w.avg_idle_ns.load(atomics::relaxed), now - since, settings_),
                      atomics::relaxed);
}

// SIS_UTIL's depth hint of the worker's LLC, refreshed by its workers every
// injection_poll_interval tasks (upstream refreshes it from periodic load balancing).
void scheduler::refresh_llc_hint(worker& w) noexcept {
  if (!settings_.f.SIS_UTIL) return;
  llcs_[static_cast<std::size_t>(w.llc)].nr_idle_scan.store(
      policy::llc_nr_idle_scan(layout_, sched_view{*this}, w.llc, settings_), atomics::relaxed);
}

void scheduler::notify_one(worker* from) noexcept {
  // I-STEAL-19: while some node is preferred by a group, a wake-up for work any worker may run
  // goes to a sleeper of a node that no group prefers when there is one.
  const int s = idle_.take_sleeper_to_search(
      [this](int v) { return !settings_.f.DELEGATE_REMOTE_WORK || !node_preferred(layout_.node_of(v)); });
  if (s < 0) return;
  unpark_worker(*workers_[static_cast<std::size_t>(s)]);
  if (from != nullptr)
    from->counters.add(ctr::counter::wakeups_sent);
  else
    outside_counters_.add_shared(ctr::counter::wakeups_sent);
}

void scheduler::wake_all() noexcept {
  for (auto& v : workers_) {
    if (idle_.take_sleeper(v->id)) unpark_worker(*v);
  }
}

// ---------------------------------------------------------------------------------------------
// Spawn.

task* scheduler::alloc(const spawn_target& target, const task_ops* ops, std::size_t size, std::size_t align) {
  if (orphaned()) throw_orphaned("spawn");
  worker* w = own_worker();
  // Misuse is refused before the spawn counts as in flight, so these throws undo nothing.
  if (target.affinity != nullptr && target.affinity->state()->sched != this) {
    throw std::invalid_argument("numart: rt::group '" + target.affinity->state()->name +
                                "' belongs to another runtime than the spawn's (or its task_group's)");
  }
  if (target.node >= topo_.node_count() || target.node < -1) {
    throw std::invalid_argument("numart: spawn_on(node " + std::to_string(target.node) + "): the topology has " +
                                std::to_string(topo_.node_count()) + " nodes");
  }
  if (w == nullptr && !enter_outside())
    throw rt::runtime_stopped("numart: spawn on runtime '" + name_ + "' after shutdown began");
  void* mem = nullptr;
  std::uint16_t flags = 0;
  if (w != nullptr && size <= kPooledPayload && align <= kTaskAlign) {
    flags |= kFramePooled;
    bool from_pool = false;
    mem = w->pool.take(from_pool);
    // A pooled frame is not counted here: flush() derives frames_pooled (I-CTR-7).
    if (!from_pool) [[unlikely]]
      w->counters.add(ctr::counter::frames_allocated);
  } else if (w == nullptr && size <= kPooledPayload && align <= kTaskAlign) {
    flags |= kFrameStandard;
    mem = memory::frame_pool::take_standard(kPooledFrameSize);
  } else {
    RT_ASSERT(align <= kTaskAlign, "I-TASK-6", "task payloads are at most kTaskAlign-aligned");
    mem = w != nullptr ? w->pool.allocate_local(kTaskHeaderSize + size) : memory::frame_pool::allocate(kTaskHeaderSize + size);
    if (w != nullptr) w->counters.add(ctr::counter::frames_allocated);
  }
  if (mem == nullptr) {
    if (w == nullptr) leave_outside();
    throw std::bad_alloc();
  }
  task* t = static_cast<task*>(mem);
  t->ops = ops;
  t->sched = this;
  t->members = target.members;
  t->affinity = target.affinity != nullptr ? target.affinity->state() : nullptr;
  ::new (&t->state) atomics::atomic<std::uint32_t>(0);
  if (target.continuation) flags |= kFrameContinuation;
  t->flags = flags;
  t->spawner = static_cast<std::int16_t>(w != nullptr ? w->id : -1);
  t->depth = w != nullptr ? w->depth : 0;
  t->node = static_cast<std::int16_t>(target.node);
  if (t->affinity != nullptr) {  // I-GROUP-1, I-GROUP-2
    if (w != nullptr)
      w->group_refs.take(t->affinity, static_cast<std::uint32_t>(settings_.t.group_ref_batch));
    else
      t->affinity->refs.fetch_add(1, atomics::relaxed);
  }
  return t;
}

void scheduler::abandon(task* t) noexcept {
  const bool outside = t->spawner < 0;
  if (!outside) tls_worker->counters.add(ctr::counter::frames_abandoned);  // I-CTR-7
  free_frame(t, outside ? nullptr : tls_worker);
  if (outside) leave_outside();
}

void scheduler::submit(task* t) noexcept {
  worker* w = t->spawner >= 0 ? tls_worker : nullptr;
  if (t->members != nullptr) group_count_spawn(t->members, w);
  if (w != nullptr) {
    if (w->counters.count_spawn()) [[unlikely]]
      w->counters.flush(settings_.t.injection_poll_interval);  // I-CTR-4: a busy worker's interval
    if (t->node < 0)
      place(w, t);
    else if (t->node != w->node)
      push_node(t->node, t, w);
    else
      push_local(*w, t);
    return;
  }
  outside_counters_.add_shared(ctr::counter::tasks_spawned);
  outside_counters_.add_shared(ctr::counter::spawns_outside);
  if (t->node < 0)
    place(nullptr, t);
  else
    push_node(t->node, t, nullptr);
  leave_outside();  // I-SHUT-2: after the push (or hand-off)
}

// DESIGN.md §4 steps 2-3; docs/design/wake-path.md §6.
void scheduler::place(worker* w, task* t) noexcept {
  // Read before the task is published: once pushed or handed off, a thief may run and free it
  // while the trace below still names its group.
  group_state* const group = t->affinity;
  int home = group != nullptr ? group_home(*group) : -1;
  // I-WAKE-7: a worker's own spawn (not a continuation) with nobody parked, whose home is the
  // spawner or on its node, can only end on the spawner's deque: no worker is idle for
  // select_idle_sibling to find, and a busy target on this node (self, or the home wake_affine
  // may prefer) means the local push. A home sharing the LLC is counted as the affine move that
  // the share-cache shortcut would make; elsewhere on the node no decision is counted.
  if (w != nullptr && (t->flags & kFrameContinuation) == 0 && !idle_.anyone_parked()) {
    const bool own = home < 0 || home == w->id;
    if (own || layout_.node_of(home) == w->node) {
      const bool shortcut = !own && settings_.f.WA_SHARE_CACHE && layout_.share_llc(home, w->id);
      if (shortcut) {
        w->counters.add(ctr::counter::affine_attempts);
        w->counters.add(ctr::counter::affine_moves);
      }
      push_local(*w, t);
      if (w->trace != nullptr) [[unlikely]]
        trace::spawn(*w->trace, trace_id(t), trace_id(group), own ? w->id : home, w->id,
                     shortcut ? trace::wake_affine::affine : trace::wake_affine::none, trace::wake_path::local, 0);
      return;
    }
  }
  auto count = [&](ctr::counter c, std::uint64_t n = 1) {
    if (w != nullptr)
      w->counters.add(c, n);
    else
      outside_counters_.add_shared(c, n);
  };
  policy::spawn_request r;
  if (group != nullptr) r.preferred_node = group->preferred_node.load(atomics::relaxed);
  if (w != nullptr) {
    r.self = w->id;
    if (home < 0) home = w->id;
    if ((t->flags & kFrameContinuation) != 0) {
      r.exec = true;
      // numart does not time tasks on this path (a clock read costs more than a spawn; only a
      // task run away from its preferred node is timed, I-STEAL-17): the running task is
      // charged with its worker's whole signal, which a chain of continuations is.
      // Alone: the owner's own snapshot; only it pushes to its deque and fills its slot. Mail
      // can still land (a hand-off that claimed it as it cancelled a park): find_local then
      // moves the slot's task to the deque as it takes the mail (I-WAKE-10).
      r.task = {w->id, w->util.load(atomics::relaxed), w->util_est.load(atomics::relaxed),
                policy::task_presence::running,
                w->dq.empty_estimate() && w->mailbox.empty_estimate() && w->next.load(atomics::relaxed) == nullptr};
    }
  } else {
    if (home < 0)
      home = static_cast<int>(outside_rr_.fetch_add(1, atomics::relaxed) % static_cast<std::uint64_t>(worker_count()));
    r.waker = occupied_worker();
  }
  r.home = home;
  const bool timed = w != nullptr && ++w->spawns_since_timed >= static_cast<std::uint32_t>(settings_.t.scan_cost_sample_interval);
  const std::uint64_t t0 = timed ? sync::now_ns() : 0;
  const policy::wake_decision d = policy::select_worker(layout_, sched_view{*this}, r, settings_);
  if (timed) {
    w->spawns_since_timed = 0;
    if (d.scan_ran()) {
      auto& cost = llcs_[static_cast<std::size_t>(w->llc)].avg_scan_cost_ns;
      cost.store(policy::update_scan_cost(cost.load(atomics::relaxed), sync::now_ns() - t0, settings_), atomics::relaxed);
    }
  }
  if (d.affine_attempted()) count(ctr::counter::affine_attempts);
  if (d.affine_moved()) count(ctr::counter::affine_moves);
  if (d.scan_ran()) {
    count(ctr::counter::idle_scans);
    count(ctr::counter::workers_scanned, static_cast<std::uint64_t>(d.scanned));
  }
  if (d.scan_cut_short()) count(ctr::counter::scans_cut_short);
  if (d.idle_found) count(ctr::counter::idle_found);
  if (d.cross_node) count(ctr::counter::cross_node_placements);
  // I-TRACE-8: the spawn's time is read before a hand-off publishes the task.
  const std::uint64_t spawn_ts = trace_ != nullptr ? sync::now_ns() : 0;
  const bool handed = d.idle_found && (w == nullptr || d.target != w->id) && hand_off(d.target, t, w);
  if (trace_ != nullptr) [[unlikely]] {
    const bool local = !handed && w != nullptr && !d.cross_node;
    const trace::wake_path path = local ? trace::wake_path::local : trace_path_of(d.reason);
    if (w != nullptr)
      trace::spawn_at(*w->trace, spawn_ts, trace_id(t), trace_id(group), r.home, local ? w->id : d.target,
                      trace_affine_of(d), path, d.scanned);
    else
      trace_->outside_spawn(spawn_ts, trace_id(t), trace_id(group), r.home, d.target, path);
  }
  if (handed) return;
  if (w != nullptr && !d.cross_node) {
    // I-WAKE-10: a continuation kept here waits in the slot for its spawner to return; the
    // slot holds one, so a second continuation from the same task goes to the deque.
    if (r.exec && w->next.load(atomics::relaxed) == nullptr)
      w->next.store(t, atomics::relaxed);
    else
      push_local(*w, t);
  } else {
    push_node(layout_.node_of(d.target), t, w);
  }
}

// I-WAKE-9: the worker bound to the core this outside thread runs on, -1 when none is. The
// answer may be stale by the time it is used (the thread can migrate): a hint, like the
// kernel's this_cpu.
int scheduler::occupied_worker() const noexcept {
  if (pu_worker_.empty()) return -1;
  const int cpu = sched_getcpu();
  return cpu >= 0 && static_cast<std::size_t>(cpu) < pu_worker_.size() ? pu_worker_[static_cast<std::size_t>(cpu)] : -1;
}

// The home a spawn into `g` starts from: the worker that last ran the group, moved onto the
// group's preferred node when it is not there (the balancer changed the node, or the group
// never ran). The new home rotates over the node's workers so that the groups a balancer pass
// moves to one node do not all start on its first worker. Relaxed: homes are hints (I-WAKE-8).
int scheduler::group_home(group_state& g) noexcept {
  const int home = g.home_worker.load(atomics::relaxed);
  const int pref = g.preferred_node.load(atomics::relaxed);
  if (pref < 0 || pref >= node_count() || (home >= 0 && layout_.node_of(home) == pref)) return home;
  const core::cpumask& on_node = layout_.node_workers[static_cast<std::size_t>(pref)];
  const std::size_t count = on_node.count();
  if (count == 0) return home;  // a node without workers: placement cannot follow it
  std::size_t skip = static_cast<std::size_t>(outside_rr_.fetch_add(1, atomics::relaxed) % count);
  int pick = home;
  on_node.for_each([&](std::size_t id) {
    if (skip-- == 0) pick = static_cast<int>(id);
  });
  g.home_worker.store(pick, atomics::relaxed);
  return pick;
}

// I-WAKE-5: the spawner claims the idle worker (CAS of its idle flag, so that one idle period
// takes one hand-off), mails the task, and wakes that worker alone if it sleeps. A worker that
// is between showing itself idle and registering sees the mailbox on its re-check (I-PARK-2).
// False, with the task still the caller's, when another spawner claimed it first or the
// mailbox is full.
bool scheduler::hand_off(int target, task* t, worker* from) noexcept {
  worker& tw = *workers_[static_cast<std::size_t>(target)];
  bool expected = true;
  if (!tw.idle.compare_exchange_strong(expected, false, atomics::relaxed)) return false;
  if (tw.mailbox.push(t) != deque::mailbox_push::delivered) return false;
  sync::fault::point(sync::fault::site::handoff_mailed);
  notifier_fence();  // I-PARK-1: the mailbox push before reading the sleeper list
  const bool woke = idle_.take_sleeper(target);
  if (woke) unpark_worker(tw);
  if (from != nullptr) {
    if (from->trace != nullptr) [[unlikely]]
      trace::mailbox_handoff(*from->trace, trace_id(t), target);
    from->counters.add(ctr::counter::mailbox_handoffs);
    if (woke) from->counters.add(ctr::counter::wakeups_sent);
  } else {
    outside_counters_.add_shared(ctr::counter::mailbox_handoffs);
    if (woke) outside_counters_.add_shared(ctr::counter::wakeups_sent);
  }
  return true;
}

void scheduler::notifier_fence() const noexcept {
  if (asym_fence_)
    sync::asym_fence::light();
  else
    atomics::fence(atomics::seq_cst);
}

void scheduler::sleeper_fence(worker& w) noexcept {
  if (!asym_fence_) {
    atomics::fence(atomics::seq_cst);
    return;
  }
  if (!sync::asym_fence::heavy()) w.counters.add(ctr::counter::fences_shared);  // heavy() fences first
}

void scheduler::push_local(worker& w, task* t) noexcept {
  // I-STEAL-14: a task placed on this node wakes only a sleeper of this node. A worker
  // elsewhere would steal it only to give it back (I-STEAL-13); when nobody here sleeps, the
  // pusher itself or its node's searchers run it. Read before the push: once published, the
  // task may be stolen, run and its frame freed.
  const bool placed_here = placed_node(t) == w.node;
  w.dq.push(t);
  sync::fault::point(sync::fault::site::push_published);
  notifier_fence();  // I-PARK-1: the push before reading the sleepers' state
  if (placed_here) {
    static_cast<void>(wake_on_node(w.node, &w));
    return;
  }
  if (idle_.should_wake()) notify_one(&w);
}

// I-WAKE-10: the owner takes its slot's continuation, or moves it to its deque when the worker
// goes on with something else than the task that spawned it returning (a join that ended, an
// outside task taken for fairness): another worker may then take it.
task* scheduler::take_slot(worker& w) noexcept {
  task* t = w.next.load(atomics::relaxed);
  if (t != nullptr) w.next.store(nullptr, atomics::relaxed);
  return t;
}

void scheduler::release_slot(worker& w) noexcept {
  if (task* t = take_slot(w)) push_local(w, t);
}

// Wakes one registered sleeper of `node`; false when none was found.
bool scheduler::wake_on_node(int node, worker* from) noexcept {
  bool woke = false;
  layout_.node_workers[static_cast<std::size_t>(node)].for_each([&](std::size_t id) {
    if (woke) return;
    worker& cand = *workers_[id];
    if (cand.idle.load(atomics::relaxed) && idle_.take_sleeper(cand.id)) {
      unpark_worker(cand);
      woke = true;
    }
  });
  if (woke) {
    if (from != nullptr)
      from->counters.add(ctr::counter::wakeups_sent);
    else
      outside_counters_.add_shared(ctr::counter::wakeups_sent);
  }
  return woke;
}

void scheduler::push_node(int node, task* t, worker* from) noexcept {
  // Read before the push: once published, the task may be taken, run and its frame freed.
  const bool placed_there = placed_node(t) == node;
  injection_[static_cast<std::size_t>(node)]->push(t);
  sync::fault::point(sync::fault::site::push_published);
  notifier_fence();  // I-PARK-1
  // Prefer a sleeper of the target node: it polls that node's queue before stealing elsewhere.
  if (wake_on_node(node, from)) return;
  // I-STEAL-14: a task placed on the pusher's own node waits for that node's workers, the
  // pusher among them (it polls its node's queue before it parks), rather than wake a worker
  // elsewhere. From anywhere else the usual rule applies: the pusher may not come back here.
  if (from != nullptr && from->node == node && placed_there) return;
  if (idle_.should_wake()) notify_one(from);
}

// ---------------------------------------------------------------------------------------------
// Running and completing tasks.

void scheduler::execute(worker* w, task* t) noexcept {
  // The group's home follows the worker that runs it, except away from its preferred node:
  // a thief elsewhere that ran one of its tasks does not drag the home along (I-WAKE-8). A
  // top-level task away from its preferred node is that node's exported demand (I-STEAL-17),
  // with whatever it runs nested and the time it blocks while it joins (the worker is held for
  // that long: the demand is the node's work done elsewhere, joins included, where I-STEAL-18
  // below asks how soon a worker can take the node's next task, which a joiner may); a nested
  // task by itself is not timed. Only timed while the overload test that
  // reads it is on.
  // I-STEAL-18: a top-level task of a group with a preferred node (one the filter may give
  // back to it) is timed as policy::time_group_task says, and a timed one publishes when it is
  // expected to end.
  int exported_to = -1;
  bool timed = false;
  std::int64_t task_ns = 0;
  if (group_state* g = t->affinity; g != nullptr) {
    const int pref = g->preferred_node.load(atomics::relaxed);
    if (pref < 0 || pref == w->node) {
      if (g->home_worker.load(atomics::relaxed) != w->id) g->home_worker.store(w->id, atomics::relaxed);
    } else if (w->depth == 0 && settings_.f.OVERLOADED_NODE_STEAL && settings_.f.EXPORTED_NODE_UTIL) {
      exported_to = pref;
    }
    if (pref >= 0 && w->depth == 0 && settings_.f.PREDICTED_WAIT) {
      task_ns = w->group_task_ns.load(atomics::relaxed);
      timed = policy::time_group_task(task_ns, w->group_tasks_untimed, settings_.t);
      w->group_tasks_untimed = timed ? 0 : w->group_tasks_untimed + 1;
    }
  }
  const std::uint64_t start_ns = (exported_to >= 0 || timed) ? sync::now_ns() : 0;
  if (timed) w->busy_until_ns.store(start_ns + static_cast<std::uint64_t>(task_ns), atomics::relaxed);
  run_body(*w, t);
  if (exported_to >= 0 || timed) {
    const std::uint64_t end_ns = sync::now_ns();
    if (exported_to >= 0) add_exported(exported_to, start_ns, end_ns);
    if (timed) {
      const std::int64_t took = w->timed_ran_before_join_ns >= 0 ? w->timed_ran_before_join_ns
                                                                 : static_cast<std::int64_t>(end_ns - start_ns);
      w->timed_ran_before_join_ns = -1;
      w->group_task_ns.store(task_ns == 0 ? took : task_ns + (took - task_ns) / 8, atomics::relaxed);
      w->busy_until_ns.store(0, atomics::relaxed);
    }
  }
  w->counters.add(ctr::counter::tasks_run);  // the inline runs are added at flush (I-CTR-7)
  // I-CTR-3: a top-level task publishes the batch before complete() makes its end visible.
  // I-CTR-4: so does every injection_poll_interval-th nested one (a joiner helping).
  if (w->depth == 0 || w->counters.tick()) w->counters.flush(settings_.t.injection_poll_interval);
  complete(t, w);
}

void scheduler::add_exported(int node, std::uint64_t start_ns, std::uint64_t end_ns) noexcept {
  const std::uint64_t period = end_ns / 1000 / pelt_params_.period_us;
  const std::uint64_t busy_us = (end_ns - std::min(end_ns, start_ns) + 500) / 1000;  // to the nearest us
  atomics::atomic<std::uint64_t>& word = demand_[static_cast<std::size_t>(node)].word;
  std::uint64_t old = word.load(atomics::relaxed);
  for (;;) {
    const std::uint64_t elapsed = periods_since(old, period);
    const std::uint64_t stamp = elapsed > 0 ? period : old >> kDemandSumBits;  // never backwards
    const std::uint64_t sum = policy::demand_sum_add(old & kDemandSumMax, elapsed, busy_us, pelt_params_);
    if (word.compare_exchange_weak(old, demand_word(stamp, sum), atomics::relaxed, atomics::relaxed)) return;
  }
}

std::uint64_t scheduler::exported_util(int node, std::uint64_t now_us) const noexcept {
  const std::uint64_t word = demand_[static_cast<std::size_t>(node)].word.load(atomics::relaxed);
  return policy::demand_util(word & kDemandSumMax, periods_since(word, now_us / pelt_params_.period_us), pelt_params_);
}

// The one place a worker runs a task's closure, whoever took the task (the worker loop, a
// helping joiner, or a joiner running its own task inline, I-TASK-3).
void scheduler::run_body(worker& w, task* t) noexcept {
  // I-TASK-7: the task's code may run for ever or block: only credit on its own group may stay.
  if (w.credit != 0 && w.credit_group != t->members) pay_group_credit_now(w);
  task_group_state* const outer_members = w.running_members;
  w.running_members = t->members;
  ++w.depth;
  if (w.trace != nullptr) [[unlikely]]
    trace_start(w, t);
  // The group a hinting fault is charged to (numa/context.hpp); restored after, since a
  // joiner runs tasks of other groups nested inside its own.
  const void* outer_group = numa::running_group();
  numa::set_running_group(t->affinity);
  t->ops->run(payload_of(t));
  numa::set_running_group(outer_group);
  if (orphaned()) end_forked_child();
  if (w.trace != nullptr) [[unlikely]]
    trace::task_end(*w.trace, trace_id(t), trace_id(t->affinity));
  --w.depth;
  w.running_members = outer_members;
}

// The group's node for the locality summary: its preferred node, else its home's, else -1.
void scheduler::trace_start(worker& w, task* t) noexcept {
  int node = -1;
  if (const group_state* g = t->affinity) {
    node = g->preferred_node.load(atomics::relaxed);
    const int home = g->home_worker.load(atomics::relaxed);
    if (node < 0 && home >= 0) node = layout_.node_of(home);
  }
  trace::task_start(*w.trace, trace_id(t), trace_id(t->affinity), node);
}

void scheduler::complete(task* t, worker* w) noexcept {
  sync::fault::point(sync::fault::site::task_completed);
  if (t->members != nullptr) {
    task_group_state* g = t->members;
    t->ops->drop(payload_of(t), true);
    free_frame(t, w);
    if (w == g->owner && !g->folded) {
      --g->local;
      return;
    }
    // I-TASK-7: the completion becomes the worker's credit, paid when it runs a task of
    // another group, runs out of local work, spins or blocks in a join, or spawns into another
    // group; the payment that finishes the group notifies its waiters (I-TASK-5).
    if (w->credit_group != g) {
      pay_group_credit(*w);
      w->credit_group = g;
    }
    ++w->credit;
    return;
  }
  // I-TASK-1, I-TASK-2.
  std::uint32_t prev = t->state.fetch_or(kTaskDone, atomics::acq_rel);
  if ((prev & kTaskReleased) != 0) {
    free_done(t, w, true);  // released first: only a dropped handle releases before the end
  } else if ((prev >> kTaskWaiterShift) != 0) {
    unpark_worker(*workers_[(prev >> kTaskWaiterShift) - 1]);  // I-TASK-4
  } else if ((prev & kTaskWaiter) != 0) {
    sync::native_futex::wake_all(t->state);  // I-TASK-4
  }
}

// I-TASK-5: the waiter registers (awaiting = g, then the joiner count, both seq_cst) before it
// re-checks `shared`; the completion decrements `shared` (seq_cst) before it reads the joiner
// count and the awaiting words. So either the waiter sees zero or this sees the waiter. `g` is
// only compared, never dereferenced: the group may be gone already, and a stale match on a
// reused address is a spurious wake-up, which every waiter absorbs.
void scheduler::notify_group_waiters(const task_group_state* g) noexcept {
  if (idle_.joiner_count() != 0) {
    for (auto& v : workers_)
      if (v->awaiting.load(atomics::seq_cst) == g) unpark_worker(*v);
  }
  if (outside_waiter_count_.load(atomics::seq_cst) != 0) {
    std::lock_guard<std::mutex> lk(outside_waiters_lock_);
    for (const auto& ow : outside_waiters_)
      if (ow.key == g) ow.parker->unpark();
  }
}

// I-GROUP-1: the last reference deletes the state, and a member's state then drops the
// reference it holds on its parent.
void destroy_group(group_state* g) noexcept {
  do {
    group_state* parent = g->parent;
    delete g;
    g = parent;
  } while (g != nullptr && g->refs.fetch_sub(1, atomics::acq_rel) == 1);
}

// I-POOL-2. Out of line, so that free_frame() stays short: code that joins its tasks frees
// nearly every frame into its own pool (fib30 frees none remotely).
void scheduler::free_remote(worker& w, worker& home, task* t) noexcept {
  w.remote_frees.add(home.pool, t, static_cast<std::size_t>(settings_.t.frame_remote_batch));
}

void scheduler::free_frame(task* t, worker* w) noexcept {
  group_state* g = t->affinity;
  if ((t->flags & kFramePooled) != 0) {
    // A pooled frame goes home to its spawner's pool (memory/frame_pool.hpp).
    worker& home = *workers_[static_cast<std::size_t>(t->spawner)];
    if (&home == w)
      home.pool.give(t);
    else if (w != nullptr)
      free_remote(*w, home, t);
    else
      home.pool.give_remote(t);
  } else if ((t->flags & kFrameStandard) != 0 && w == nullptr) {
    memory::frame_pool::release_standard(t);  // I-POOL-3: the freeing thread has no pool of ours
  } else {
    memory::frame_pool::release(t);
  }
  if (g == nullptr) return;
  if (w != nullptr)
    w->group_refs.give(g, static_cast<std::uint32_t>(settings_.t.group_ref_batch));
  else
    release_group(g);
}

// I-TASK-2: whichever of the executor and the handle comes second frees the frame. A task whose
// handle was dropped and that failed is counted (ADR 0003) on either side: a handle dropped
// after the task ended was missed before (under TSan, Spawn.DroppedHandleStillRuns... saw 0).
void scheduler::free_done(task* t, worker* w, bool detached) noexcept {
  if (detached && t->ops->failed != nullptr && t->ops->failed(payload_of(t))) {
    if (w != nullptr)
      w->counters.add(ctr::counter::detached_failures);
    else
      outside_counters_.add_shared(ctr::counter::detached_failures);
  }
  t->ops->drop(payload_of(t), true);
  free_frame(t, w);
}

void scheduler::release(task* t, bool joined) noexcept {
  worker* w = own_worker();
  // I-TASK-3: INLINE is only ever written by the joiner that popped the task itself, so a
  // relaxed load by that same thread sees it, and no other thread holds the frame.
  if ((t->state.load(atomics::relaxed) & kTaskInline) != 0) {
    t->ops->drop(payload_of(t), true);
    free_frame(t, w);
    return;
  }
  std::uint32_t prev = t->state.fetch_or(kTaskReleased, atomics::acq_rel);
  if ((prev & kTaskDone) != 0) free_done(t, w, !joined);
}

// One step of helping while a join or a task_group waits: run one task if any is found.
// I-HELP-1: a waiter nests the tasks it helps with on top of its own frames. From its own
// deque it only takes tasks spawned at its current depth or deeper (descendants of the waiting
// frame; older entries belong to frames below it and are put back), so that part of the nesting
// is bounded by the spawn tree's depth. Other workers' tasks (mailbox, node queues, steals) are
// taken only while less than help_stack_reserve_pct of the stack is in use (oneTBB stops
// stealing past half its stack likewise). I-HELP-2: putting a popped task back with push()
// restores the deque exactly (pop took the bottom slot, push refills it).
bool scheduler::help_once(worker& w) {
  const bool deep = static_cast<const char*>(__builtin_frame_address(0)) < w.help_floor;
  w.help_deep = deep;
  if (task* cont = take_slot(w)) {  // I-WAKE-10
    if (!deep || cont->depth >= w.depth) {
      execute(&w, cont);
      return true;
    }
    push_local(w, cont);  // too deep to run it here: to the deque, where others may take it
    return false;
  }
  if (task* own = w.dq.pop()) {
    if (!deep || own->depth >= w.depth) {
      execute(&w, own);
      return true;
    }
    push_local(w, own);  // I-HELP-2: back where it was, and other workers are told
  }
  if (deep) return false;
  task* t = w.mailbox.pop();
  if (t != nullptr) {
    w.counters.add(ctr::counter::mailbox_taken);
  } else if ((t = injection_[static_cast<std::size_t>(w.node)]->pop()) != nullptr) {
    w.counters.add(ctr::counter::injected_taken);
  } else {
    t = steal_work(w, false);
  }
  if (t == nullptr) return false;
  execute(&w, t);
  return true;
}

// A worker whose join found nothing to help with registers as a sleeper (so that new work
// wakes it to help) and parks until the awaited task or group unparks it (I-TASK-4, I-TASK-5).
// The caller registered itself on the awaited object first; `done` re-checks it after the
// fence, like every other queue (I-PARK-2). It always leaves the sleeper list before returning.
// One round of a waiting worker: help with a task, or spin a little. False once
// search_rounds rounds in a row found nothing: time to block.
// With a haltpoll window (I-PARK-9), a joiner whose search_rounds found nothing keeps helping
// and spinning for its window before it blocks: a blocked joiner is an idle CPU too, and the
// completion or spawn that ends its block costs the same futex wake-up as a park.
bool scheduler::help_or_spin(worker& w, std::int64_t& idle_rounds) {
  if (idle_rounds == 0) w.join_poll_since_ns = 0;  // a new idle stretch
  // I-STEAL-18: a timed task that waits in a join no longer holds its worker until its
  // predicted end (the worker helps with its node's work, or blocks), and its span is no
  // service time: it teaches the time it ran before this first join (its start is the
  // published end less the length that end was predicted with, which only execute() changes).
  if (const std::uint64_t until = w.busy_until_ns.load(atomics::relaxed); until != 0) {
    w.busy_until_ns.store(0, atomics::relaxed);
    const std::uint64_t start = until - static_cast<std::uint64_t>(w.group_task_ns.load(atomics::relaxed));
    const std::uint64_t now = sync::now_ns();
    w.timed_ran_before_join_ns = now > start ? static_cast<std::int64_t>(now - start) : 1;  // 0: unknown
  }
  // Read before helping: joins nested in the helped task restart the field.
  const bool polling = w.join_poll_since_ns != 0;
  if (help_once(w)) {
    if (polling) w.counters.add(ctr::counter::join_poll_hits);
    idle_rounds = 0;
    return true;
  }
  pay_group_credit(w);  // I-TASK-7: the wait may be on a group this worker owes counts to
  if (++idle_rounds >= settings_.t.search_rounds &&
      !poll_window_open(w, w.join_poll_since_ns, ctr::counter::join_polls))
    return false;
  for (std::int64_t i = 0; i < search_pauses_; ++i) atomics::cpu_relax();
  return true;
}

template <class Done>
void scheduler::block_joiner(worker& w, const Done& done) {
  // I-CTR-4: nothing unpublished sleeps; I-CTR-6: the batch before join_blocks.
  w.counters.flush(settings_.t.injection_poll_interval);
  w.counters.add(ctr::counter::join_blocks);
  w.remote_frees.flush();  // I-POOL-2: no frame of another pool is held while this blocks
  w.group_refs.flush();    // I-GROUP-2: nor a group reference
  RT_DEBUG_ASSERT(w.next.load(atomics::relaxed) == nullptr, "I-WAKE-10", "a joiner blocks with a continuation in its slot");
  // I-PARK-12: past its help floor (help_once's verdict of this round: help_or_spin ran it last)
  // a joiner takes nothing from its mailbox or from other workers, so what waits there must not
  // keep it spinning, and a wake-up for new work must not pick it: it registers as a sleeper
  // that cannot search, and blocks.
  const bool deep = w.help_deep;
  idle_.prepare_park(w.id, false, true, !deep);
  sync::fault::point(sync::fault::site::park_registered);
  sleeper_fence(w);  // I-PARK-2
  if (!done() && (deep || (w.mailbox.empty_estimate() && !work_visible(&w)))) {
    if (w.trace != nullptr) [[unlikely]]
      trace::park(*w.trace, trace::park_reason::join);
    // The block is idle time: the core runs nothing, as a CPU whose thread sleeps on a futex
    // (its load signal ages as idle and its estimate is 0 meanwhile, then est_at_park again:
    // the block does not re-sample it), and avg_idle takes it as a sample. So was the join's
    // poll window before it (I-PARK-10).
    const std::uint64_t blocked_at = sync::now_ns();
    const std::uint64_t idle_since = w.join_poll_since_ns != 0 ? w.join_poll_since_ns : blocked_at;
    stop_running(w, idle_since, blocked_at);
    w.parker.park();
    const std::uint64_t woke_at = sync::now_ns();
    end_idle(w, idle_since, woke_at);
    if (idle_poll_)  // haltpoll's adjust_poll_limit(), on the block's length
      w.poll_window_ns = policy::idle_poll_next(w.poll_window_ns, static_cast<std::int64_t>(woke_at - blocked_at), settings_);
    if (w.trace != nullptr) [[unlikely]]
      trace::unpark(*w.trace, done() ? trace::unpark_reason::task_done : trace::unpark_reason::woken, -1,
                    w.wake_sent_ns.exchange(0, atomics::relaxed));
  }
  if (idle_.cancel_park(w.id, true) == sync::idle_set<atomics>::cancel_result::already_woken &&
      idle_.after_wake(w.id) == sync::idle_set<atomics>::wake_kind::as_searcher) {
    // I-PARK-5: a notifier counted us as a searcher; we go back to a join, not to searching,
    // so pass the obligation on.
    if (idle_.stop_searching()) notify_one(&w);
  }
}

void scheduler::wait(task* t) {
  if (orphaned() && (t->state.load(atomics::acquire) & kTaskDone) == 0) throw_orphaned("join");
  worker* w = own_worker();
  if (w != nullptr) {
    bool counted = false;
    std::int64_t idle_rounds = 0;
    for (;;) {
      std::uint32_t s = t->state.load(atomics::acquire);  // I-TASK-1
      if ((s & kTaskDone) != 0) {
        settle_group_credit(*w);  // I-TASK-7
        release_slot(*w);         // I-WAKE-10: the joining task runs on
        return;
      }
      task* x = w->dq.pop();
      if (x == t) {
        // I-TASK-3: the joiner took its own task back: nobody else can see it any more.
        run_body(*w, t);
        t->state.store(kTaskDone | kTaskInline, atomics::relaxed);
        w->counters.add(ctr::counter::tasks_inline);
        release_slot(*w);  // I-WAKE-10: a continuation of t waits for no one here
        return;
      }
      if (x != nullptr) push_local(*w, x);  // I-HELP-2: help_once decides whether to run it
      if (!counted) {
        w->counters.add(ctr::counter::join_waits);
        counted = true;
      }
      if (help_or_spin(*w, idle_rounds)) continue;
      const std::uint32_t me = static_cast<std::uint32_t>(w->id + 1) << kTaskWaiterShift;
      if ((s & me) != me && !t->state.compare_exchange_strong(s, s | me, atomics::acq_rel)) continue;
      block_joiner(*w, [t] { return (t->state.load(atomics::acquire) & kTaskDone) != 0; });
      idle_rounds = 0;
    }
  }
  for (;;) {
    std::uint32_t s = t->state.load(atomics::acquire);
    if ((s & kTaskDone) != 0) return;
    if ((s & kTaskWaiter) == 0 && !t->state.compare_exchange_strong(s, s | kTaskWaiter, atomics::acq_rel)) continue;
    sync::native_futex::wait(t->state, s | kTaskWaiter);
  }
}

void scheduler::group_wait_noexcept(task_group_state* g) noexcept {
  if (orphaned()) return;  // the child of a fork: its tasks will never run here (ADR 0007)
  worker* w = own_worker();
  // From here on every spawn and completion counts in `shared` (the owner's too).
  if (!g->folded) {
    if (g->local != 0) g->shared.fetch_add(g->local, atomics::seq_cst);
    g->local = 0;
    g->folded = true;
  }
  auto done = [g] { return g->shared.load(atomics::seq_cst) == 0; };
  std::int64_t idle_rounds = 0;
  for (;;) {
    // I-TASK-7: when the count is all this waiter's own credit (completions it ran while
    // helping), the group is done: it pays and returns, instead of helping with unrelated work,
    // nested on its stack, until something made it pay. Otherwise it keeps the credit: one
    // payment per wait, not one per task it helps with.
    if (w != nullptr && w->credit != 0 && w->credit_group == g && g->shared.load(atomics::seq_cst) == w->credit)
      pay_group_credit_now(*w);
    if (done()) break;
    if (w != nullptr) {
      if (help_or_spin(*w, idle_rounds)) continue;
      w->awaiting.store(g, atomics::seq_cst);
      block_joiner(*w, done);
      w->awaiting.store(nullptr, atomics::relaxed);
      idle_rounds = 0;
      continue;
    }
    // Outside thread: register its parker under the group's address, re-check, park.
    {
      std::lock_guard<std::mutex> lk(outside_waiters_lock_);
      outside_waiters_.push_back({g, &tls_outside_parker});
      outside_waiter_count_.fetch_add(1, atomics::seq_cst);
    }
    atomics::fence(atomics::seq_cst);
    if (!done()) tls_outside_parker.park();
    {
      std::lock_guard<std::mutex> lk(outside_waiters_lock_);
      for (std::size_t i = 0; i < outside_waiters_.size(); ++i) {
        if (outside_waiters_[i].parker == &tls_outside_parker) {
          outside_waiters_[i] = outside_waiters_.back();
          outside_waiters_.pop_back();
          break;
        }
      }
      outside_waiter_count_.fetch_sub(1, atomics::seq_cst);
    }
  }
  if (w != nullptr) {
    settle_group_credit(*w);  // I-TASK-7
    release_slot(*w);         // I-WAKE-10: the waiting task runs on
  }
  g->folded = false;  // the group may be reused: local counting resumes
}

void scheduler::group_wait(task_group_state* g) {
  if (g->creator != thread_key())
    throw std::logic_error("rt::task_group::wait must be called by the thread that created the group");
  if (orphaned() && (g->shared.load(atomics::seq_cst) != 0 || (!g->folded && g->local != 0)))
    throw_orphaned("task_group::wait");
  group_wait_noexcept(g);
  if (g->error_set.load(atomics::acquire)) {
    std::exception_ptr e = std::exchange(g->error, nullptr);
    g->error_set.store(false, atomics::relaxed);
    g->error_claimed.store(false, atomics::relaxed);
    std::rethrow_exception(e);
  }
}

// ---------------------------------------------------------------------------------------------
// Shutdown (docs/design/shutdown.md).

void scheduler::shutdown() {
  if (orphaned()) {
    // The child of a fork: the worker threads do not exist here, and the lock may have been
    // held by a parent thread at the fork. Leak the workers rather than join them (ADR 0007).
    if (!joined_) {
      for (auto& w : workers_) static_cast<void>(w.release());
      workers_.clear();
      static_cast<void>(balancer_.release());  // its thread is not in this process either
      static_cast<void>(stats_watcher_.release());
    }
    joined_ = true;
    return;
  }
  // I-SHUT-4: misuse, refused before anything changes; the calling task fails with it.
  if (own_worker() != nullptr)
    throw std::logic_error("numart: runtime '" + name_ +
                           "': shutdown() called from one of its own tasks, which it would wait for (I-SHUT-4); "
                           "shut it down from a thread outside the runtime");
  std::lock_guard<std::mutex> lk(shutdown_lock_);
  if (joined_) return;
  stopping_.store(true, atomics::seq_cst);  // I-SHUT-1
  sync::fault::point(sync::fault::site::shutdown_step);
  // I-SHUT-2: wait for outside spawns that passed their stopping_ check to finish their push.
  while (outside_inflight_.load(atomics::seq_cst) != 0) std::this_thread::yield();
  sync::fault::point(sync::fault::site::shutdown_step);
  draining_.store(true, atomics::seq_cst);
  // Every worker registered as a sleeper before this point re-runs its loop and re-checks
  // quiescence with draining_ set; later ones read it themselves (I-SHUT-2).
  wake_all();
  while (terminated_.load(atomics::acquire) == 0) sync::native_futex::wait(terminated_, 0);
  for (auto& w : workers_) w->thread.join();
  balancer_->stop();  // it balanced while the last tasks drained; nothing is left to place
  stats_watcher_.reset();
  joined_ = true;
  if (trace_ != nullptr) trace_->dump(std::cerr);
  if (!stats_path_.empty()) trace::write_stats_file(snapshot(), stats_path_, std::cerr);
}

worker* scheduler::own_worker() const noexcept {
  worker* self = tls_worker;
  return self != nullptr && &self->sched == this ? self : nullptr;
}

void scheduler::dump_state(std::ostream& os) const {
  os << "runtime '" << name_ << "': stopping " << stopping_.load(atomics::relaxed) << ", draining "
     << draining_.load(atomics::relaxed) << ", terminated " << terminated_.load(atomics::relaxed)
     << ", outside spawns in flight " << outside_inflight_.load(atomics::relaxed) << ", blocked joiners "
     << idle_.joiner_count() << "\n";
  for (std::size_t n = 0; n < injection_.size(); ++n)
    os << "  node " << n << " injection queue ~" << injection_[n]->size_estimate() << " tasks\n";
  for (const auto& w : workers_) {
    os << "  worker " << w->id << " (node " << w->node << "): idle " << w->idle.load(atomics::relaxed) << ", deque ~"
       << w->dq.size_estimate() << ", slot " << (w->next.load(atomics::relaxed) != nullptr ? "a continuation" : "empty")
       << ", mailbox " << (w->mailbox.empty_estimate() ? "empty" : "non-empty")
       << ", tasks run " << w->counters.read(ctr::counter::tasks_run) << ", parks " << w->counters.read(ctr::counter::parks)
       << ", steals " << w->counters.read(ctr::counter::steals) << "\n";
  }
}

// In a fork child the balancer and the trace of an inherited (orphaned) runtime are never
// used again, and their locks may be held by parent threads that do not exist there (ADR
// 0007): groups made or destroyed in the child skip them.
void scheduler::note_group(const group_state* g) {
  if (orphaned()) return;
  if (trace_ != nullptr) trace_->name_group(trace_id(g), g->name);
  balancer_->add_group(g, g->parent);
}

void scheduler::add_region(const group_state* g, void* p, std::size_t bytes) {
  regions_.add(g, p, bytes, memory::node_arenas::node_of(p));
  if (!orphaned()) balancer_->note_region(g);
}

void scheduler::forget_group(group_state* g) {
  if (!orphaned()) balancer_->remove_group(g);
  regions_.remove_all(g);
  // I-STEAL-19: a group without its rt::group asks for nothing more; its tasks in flight keep
  // their preferred node.
  std::lock_guard<std::mutex> lk(group_active_lock());
  if (g->counted_node >= 0)
    preferring_[static_cast<std::size_t>(g->counted_node)].preferring.fetch_sub(1, atomics::relaxed);
  g->counted_node = group_state::kForgotten;
}

int scheduler::set_preferred_node(group_state* g, int node) {
  std::lock_guard<std::mutex> lk(group_active_lock());
  const int before = g->preferred_node.exchange(node, atomics::relaxed);
  const int counted = g->counted_node;
  if (counted != group_state::kForgotten && counted != node) {
    if (counted >= 0) preferring_[static_cast<std::size_t>(counted)].preferring.fetch_sub(1, atomics::relaxed);
    if (node >= 0) preferring_[static_cast<std::size_t>(node)].preferring.fetch_add(1, atomics::relaxed);
    g->counted_node = node;
  }
  return before;
}

// ---------------------------------------------------------------------------------------------
// The balancer's view of the scheduler (numa/balancer.hpp), called from the balancer thread.

void scheduler::balancer_glue::node_loads(std::vector<std::uint64_t>& out) {
  out.assign(static_cast<std::size_t>(s.node_count()), 0);
  for (const auto& w : s.workers_) out[static_cast<std::size_t>(w->node)] += w->util.load(atomics::relaxed);
}

// The decision lands in the group's placement hints; the next spawn into the group moves its
// home onto the node (group_home, I-WAKE-8). `key` is live: the balancer holds its table.
// The active nodes are listed before anything changes: without memory for the list (I-BAL-8)
// the group keeps its old hints whole.
bool scheduler::balancer_glue::apply(const void* key, int preferred, std::int64_t score, const core::cpumask* active) {
  auto* g = const_cast<group_state*>(static_cast<const group_state*>(key));
  std::vector<int> nodes;
  if (active != nullptr) {
    nodes.reserve(active->count());
    active->for_each([&](std::size_t n) { nodes.push_back(static_cast<int>(n)); });
  }
  const int before = s.set_preferred_node(g, preferred);
  if (before != preferred && s.trace_ != nullptr) [[unlikely]]
    trace::balancer_move(s.trace_->balancer(), trace_id(g), before, preferred, score);
  if (active != nullptr) {
    std::lock_guard<std::mutex> lk(group_active_lock());
    g->active_nodes.swap(nodes);
  }
  return before != preferred;
}

void scheduler::balancer_glue::count(numa::balancer_event e, std::uint64_t n) {
  ctr::counter c = ctr::counter::numa_passes;
  switch (e) {
    case numa::balancer_event::pass: c = ctr::counter::numa_passes; break;
    case numa::balancer_event::period_skipped: c = ctr::counter::numa_periods_skipped; break;
    case numa::balancer_event::pages_protected: c = ctr::counter::numa_pages_protected; break;
    case numa::balancer_event::samples: c = ctr::counter::numa_samples; break;
    case numa::balancer_event::samples_dropped: c = ctr::counter::numa_samples_dropped; break;
    case numa::balancer_event::home_moved: c = ctr::counter::numa_home_moves; break;
    case numa::balancer_event::page_migrated: c = ctr::counter::numa_pages_migrated; break;
    case numa::balancer_event::member_swapped: c = ctr::counter::numa_member_swaps; break;
  }
  s.outside_counters_.add_shared(c, n);
}

void scheduler::balancer_glue::migrated(const void* key, int from, int to, std::uint64_t pages) {
  if (s.trace_ != nullptr) [[unlikely]]
    trace::page_migration(s.trace_->balancer(), trace_id(key), from, to, pages);
}

// docs/design/stealing.md section 3: when a node's queue holds more than its workers can start
// and another node has idle workers, move part of the queue there (decide_node_balance), each
// candidate through the filter with balance_kind::periodic: a task whose group prefers the
// busy node stays there (I-STEAL-7). Refused tasks go back to their queue (I-STEAL-9).
void scheduler::balancer_glue::balance_nodes() {
  const int nodes = s.node_count();
  std::vector<std::uint64_t> queued(static_cast<std::size_t>(nodes));
  std::vector<std::uint64_t> load;
  node_loads(load);
  for (int n = 0; n < nodes; ++n) queued[static_cast<std::size_t>(n)] = s.injection_[static_cast<std::size_t>(n)]->size_estimate();
  const policy::node_balance_decision d =
      policy::decide_node_balance(queued, load, s.layout_.node_capacity, s.settings_.t.imbalance_pct_numa);
  if (d.outcome != policy::node_balance_outcome::move) return;
  // The vectors are sized before the pop, and without memory for pick_batch's order the whole
  // batch goes back (I-STEAL-9, counted as refused), so nothing throws between the pop and the
  // pushes. The pushes themselves may still need a queue node (injection_queue), as every
  // spawn's may: that failure ends the process.
  const auto cap = static_cast<std::size_t>(std::min<std::uint64_t>(d.tasks, static_cast<std::uint64_t>(s.settings_.t.steal_batch_max)));
  std::vector<task*> batch(cap);
  std::vector<policy::steal_verdict> verdicts;
  verdicts.reserve(cap);
  std::vector<bool> moved(cap, false);
  // I-SHUT-2: between its pop and its pushes the batch is in no queue, and this thread is no
  // worker, so quiescence (I-SHUT-3) could not see it: the transfer counts as an outside push
  // in flight, and none starts once shutdown has begun.
  if (!s.enter_outside()) return;
  batch.resize(s.injection_[static_cast<std::size_t>(d.busiest)]->pop_batch(batch.data(), batch.size()));
  // The fault hook holds a batch in transit (tests/stress/faults): a pop that found the queue
  // emptied meanwhile (thieves took it since decide_node_balance) holds nothing.
  if (!batch.empty()) sync::fault::point(sync::fault::site::balance_popped);
  for (task* t : batch) {
    verdicts.push_back(s.classify_move(s.placed_node(t), d.busiest, d.idlest, policy::balance_kind::periodic, batch.size()));
  }
  std::vector<std::size_t> picked;
  try {
    picked = policy::pick_batch(verdicts, static_cast<std::size_t>(d.tasks));
  } catch (const std::bad_alloc&) {
    // `picked` stays empty: the loop below puts every task back.
  }
  for (const std::size_t i : picked) {
    moved[i] = true;
    s.push_node(d.idlest, batch[i], nullptr);
  }
  std::uint64_t kept = 0;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (moved[i]) continue;
    s.push_node(d.busiest, batch[i], nullptr);  // I-STEAL-9: back where it was
    ++kept;
  }
  s.leave_outside();
  s.outside_counters_.add_shared(ctr::counter::node_balance_moves, picked.size());
  if (kept > 0) s.outside_counters_.add_shared(ctr::counter::node_balance_refused, kept);
}

bool scheduler::balancer_glue::migrate_pages(std::uintptr_t page, std::size_t bytes, int node) {
  return s.topo_.migrate_area(reinterpret_cast<void*>(page), bytes, node);
}

bool scheduler::dump_trace() const {
  if (trace_ == nullptr) {
    std::cerr << "numart: dump_trace: tracing is off for runtime '" << name_ << "' (set RT_TRACE or config.trace_path)\n";
    return false;
  }
  // ADR 0007: in a fork child the trace's locks may be held by parent threads that are gone,
  // and its file is the parent's.
  if (orphaned()) {
    std::cerr << "numart: dump_trace: runtime '" << name_ << "' was inherited through fork(); its trace belongs to the parent\n";
    return false;
  }
  return trace_->dump(std::cerr);
}

// ---------------------------------------------------------------------------------------------
// Stats.

rt::stats scheduler::snapshot() const {
  rt::stats s;
  for (const auto& info : ctr::kCounterInfo) {
    s.counter_names.emplace_back(info.name);
    s.counter_units.emplace_back(info.unit);
  }
  for (const auto& w : workers_) {
    std::vector<std::uint64_t> row;
    row.reserve(ctr::kCounterCount);
    for (std::size_t c = 0; c < ctr::kCounterCount; ++c) row.push_back(w->counters.read(static_cast<ctr::counter>(c)));
    s.per_worker.push_back(std::move(row));
    s.worker_node.push_back(w->node);
  }
  const std::uint64_t now_us = sync::now_ns() / 1000;
  for (const auto& w : workers_) {
    s.worker_util.push_back(seen_util(*w, now_us));
    s.worker_avg_idle_ns.push_back(w->avg_idle_ns.load(atomics::relaxed));
  }
  for (std::size_t c = 0; c < ctr::kCounterCount; ++c)
    s.outside.push_back(outside_counters_.read(static_cast<ctr::counter>(c)));
  for (int n = 0; n < topo_.node_count(); ++n) s.node_memory_bytes.push_back(arenas_->bytes(n));
  // An orphaned runtime's balancer may have been locked by the parent's balancer thread at
  // the fork, and is gone once the child shut the runtime down (ADR 0007): its stats have no
  // scan period and no group rows.
  s.numa_scan_period_ms = orphaned() ? 0 : balancer_->scan_period_ms();
  if (!orphaned()) balancer_->for_each_group([&](const void* key, const void* parent, const numa::balancer::group_counters& c) {
    const auto* g = static_cast<const group_state*>(key);
    rt::stats::group_row row;
    row.name = g->name;
    if (parent != nullptr) row.parent = static_cast<const group_state*>(parent)->name;
    row.preferred_node = g->preferred_node.load(atomics::relaxed);
    const int home = g->home_worker.load(atomics::relaxed);
    row.home_node = home >= 0 ? layout_.node_of(home) : -1;
    {
      std::lock_guard<std::mutex> lk(group_active_lock());
      row.active_nodes = g->active_nodes;
    }
    row.samples = c.samples;
    row.local_samples = c.local_samples;
    row.moves = c.moves;
    row.pages_migrated = c.pages_migrated;
    row.scan_period_ms = c.scan_period_ms;
    s.groups.push_back(std::move(row));
  });
  s.tunables = tun::describe(settings_);
  s.topology = topo_.source_desc;
  s.virtual_topology = !topo_.is_host;
  return s;
}

}  // namespace rt::detail
