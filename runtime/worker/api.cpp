// The public API's out-of-line half: rt::runtime, rt::config, rt::group, rt::stats and the
// task ABI of rt/detail/task.hpp, all forwarding to the scheduler.
#include <pthread.h>

#include <atomic>
#include <cstdlib>
#include <iomanip>
#include <mutex>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "core/assert.hpp"
#include "rt/numa.hpp"
#include "rt/runtime.hpp"
#include "rt/task_group.hpp"
#include "worker/scheduler.hpp"

namespace rt {

// ---------------------------------------------------------------------------------------------
// config

topology_source topology_source::synthetic(const std::string& description, const std::vector<int>& distances) {
  std::string spec = "synthetic:" + description;
  if (!distances.empty()) {
    spec += ";distances:";
    for (std::size_t i = 0; i < distances.size(); ++i) spec += (i ? "," : "") + std::to_string(distances[i]);
  }
  return topology_source{spec};
}

config config::from_env() {
  config c;
  if (const char* t = std::getenv("RT_TOPOLOGY"); t != nullptr && *t != '\0') c.topology = topology_source::parse(t);
  if (const char* w = std::getenv("RT_WORKERS"); w != nullptr && *w != '\0') {
    std::string s(w);
    std::size_t used = 0;
    long v = -1;
    try {
      v = std::stol(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != s.size() || v < 0 || v > 4096)
      throw config_error("RT_WORKERS='" + s + "': expected a whole number from 0 (one per core) to 4096");
    c.workers = static_cast<int>(v);
  }
  if (const char* t = std::getenv("RT_TUNE"); t != nullptr) c.tune = t;
  if (const char* t = std::getenv("RT_TRACE"); t != nullptr) c.trace_path = t;
  if (const char* t = std::getenv("RT_STATS"); t != nullptr) c.stats_path = t;
  if (const char* t = std::getenv("RT_STATS_SIGNAL"); t != nullptr && *t != '\0') {
    const std::string v(t);
    if (v != "0" && v != "1") throw config_error("RT_STATS_SIGNAL='" + v + "': expected 1 (write RT_STATS on SIGUSR2) or 0");
    c.stats_on_signal = v == "1";
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// runtime

namespace {
detail::scheduler* make_scheduler(const config& cfg, runtime* owner) {
  tun::settings settings = tun::parse(cfg.tune);
  topo::topology topo = topo::topology::load(topo::source::parse(cfg.topology.spec()));
  return new detail::scheduler(cfg, owner, settings, std::move(topo));
}
}  // namespace

runtime::runtime(const config& cfg) : impl_(make_scheduler(cfg, this)) {}
// A destructor cannot refuse by throwing: destroying a runtime from one of its own workers,
// which it would wait for, aborts with I-SHUT-4.
runtime::~runtime() {
  RT_ASSERT(impl_->own_worker() == nullptr, "I-SHUT-4", "a runtime cannot be destroyed from one of its own workers");
  impl_->shutdown();
}
void runtime::shutdown() { impl_->shutdown(); }
int runtime::workers() const { return impl_->worker_count(); }
int runtime::node_distance(node_id a, node_id b) const {
  const int n = impl_->node_count();
  for (node_id x : {a, b})
    if (x.value < 0 || x.value >= n)
      throw std::invalid_argument("rt::runtime::node_distance: node " + std::to_string(x.value) +
                                  " does not exist (the topology has " + std::to_string(n) + " nodes)");
  return impl_->topology().node_distance(a.value, b.value);
}
int runtime::nodes() const { return impl_->node_count(); }
bool runtime::virtual_topology() const { return impl_->virtual_topology(); }
rt::stats runtime::stats() const { return impl_->snapshot(); }
std::string runtime::describe() const { return tun::describe(impl_->settings()); }
bool runtime::dump_trace() { return impl_->dump_trace(); }
void runtime::dump_state(std::ostream& os) const { impl_->dump_state(os); }

runtime* runtime::current() noexcept {
  detail::worker* w = detail::scheduler::current_worker();
  return w != nullptr ? w->sched.owner() : nullptr;
}
int runtime::current_worker() noexcept {
  detail::worker* w = detail::scheduler::current_worker();
  return w != nullptr ? w->id : -1;
}

namespace {
// The process's default runtime: started on first use from the environment, drained and
// joined at exit. The child of a fork() starts its own on first use; the inherited one is
// orphaned and leaked there (docs/adr/0007-fork.md).
struct default_slot {
  // Guards creation. The atfork handlers hold it across fork(), so that a child never
  // inherits it locked by a thread that does not exist there.
  std::mutex lock;
  // Written under `lock` (release) by the creator; read (acquire) by every default spawn.
  std::atomic<runtime*> current{nullptr};
  ~default_slot() {
    runtime* r = current.load(std::memory_order_acquire);
    if (r != nullptr && !r->impl().orphaned()) delete r;
  }
};
default_slot& the_default_slot() {
  static default_slot slot;
  static std::once_flag atfork;
  std::call_once(atfork, [] {
    pthread_atfork([] { the_default_slot().lock.lock(); }, [] { the_default_slot().lock.unlock(); },
                   [] { the_default_slot().lock.unlock(); });
  });
  return slot;
}
}  // namespace

runtime& default_runtime() {
  default_slot& slot = the_default_slot();
  runtime* r = slot.current.load(std::memory_order_acquire);
  if (r != nullptr && !r->impl().orphaned()) return *r;
  std::lock_guard<std::mutex> lk(slot.lock);
  r = slot.current.load(std::memory_order_acquire);
  if (r == nullptr || r->impl().orphaned()) {
    r = new runtime(config::from_env());
    slot.current.store(r, std::memory_order_release);
  }
  return *r;
}

// ---------------------------------------------------------------------------------------------
// group

namespace {
detail::scheduler& current_scheduler() {
  if (detail::worker* w = detail::scheduler::current_worker()) return w->sched;
  return default_runtime().impl();
}
void check_node(const detail::group_state* g, node_id n, bool none_allowed) {
  if (n.value < (none_allowed ? -1 : 0) || n.value >= g->sched->node_count())
    throw std::invalid_argument("rt::group '" + g->name + "': node " + std::to_string(n.value) +
                                " does not exist (the topology has " + std::to_string(g->sched->node_count()) +
                                " nodes)");
}
}  // namespace

group::group(std::string name) : state_(new detail::group_state(std::move(name), &current_scheduler())) {
  state_->sched->note_group(state_);
}
group::group(runtime& owner, std::string name) : state_(new detail::group_state(std::move(name), &owner.impl())) {
  state_->sched->note_group(state_);
}
group::group(group& parent, std::string name) {
  detail::group_state* p = parent.state_;
  if (p->parent != nullptr)
    throw std::invalid_argument("rt::group '" + name + "': its parent '" + p->name + "' is itself a member of '" +
                                p->parent->name + "' (member groups are one level deep)");
  state_ = new detail::group_state(std::move(name), p->sched, p);
  p->refs.fetch_add(1, detail::atomics::relaxed);  // I-GROUP-1: the member's reference on its parent
  parent_ = &parent;
  state_->sched->note_group(state_);
}
group::~group() {
  state_->sched->forget_group(state_);
  detail::release_group(state_);
}
group* group::parent() const { return parent_; }
const std::string& group::name() const { return state_->name; }
int group::home_worker() const { return state_->home_worker.load(detail::atomics::relaxed); }
node_id group::home_node() const {
  int w = home_worker();
  return w < 0 ? node_id{} : node_id{state_->sched->worker_node(w)};
}
node_id group::preferred_node() const { return node_id{state_->preferred_node.load(detail::atomics::relaxed)}; }
void group::set_preferred_node(node_id n) {
  check_node(state_, n, true);
  state_->sched->set_preferred_node(state_, n.value);
}
std::vector<node_id> group::active_nodes() const {
  std::lock_guard<std::mutex> lk(detail::group_active_lock());
  std::vector<node_id> out;
  for (int n : state_->active_nodes) out.emplace_back(n);
  return out;
}
void group::set_active_nodes(const std::vector<node_id>& nodes) {
  for (node_id n : nodes) check_node(state_, n, false);
  // Listed before the lock: without memory the group keeps its old list whole.
  std::vector<int> values;
  values.reserve(nodes.size());
  for (node_id n : nodes) values.push_back(n.value);
  std::lock_guard<std::mutex> lk(detail::group_active_lock());
  state_->active_nodes.swap(values);
}
runtime& group::owner() const { return *state_->sched->owner(); }

// ---------------------------------------------------------------------------------------------
// Node memory and regions (rt/numa.hpp)

void* numa_alloc(std::size_t bytes, node_id node) { return current_scheduler().arenas().alloc(bytes, node.value); }
void* runtime::numa_alloc(std::size_t bytes, node_id node) { return impl_->arenas().alloc(bytes, node.value); }
void numa_free(void* p) noexcept { memory::node_arenas::free(p); }

node_id node_of(const void* p) noexcept {
  if (const int n = numa::page_node(p); n != numa::kNotInRegion) return node_id{n};  // a region's page, as migrated
  return node_id{memory::node_arenas::node_of(p)};
}

node_id current_node() noexcept {
  const detail::worker* w = detail::scheduler::current_worker();
  return w != nullptr ? node_id{w->node} : node_id{};
}

void register_region(group& g, void* p, std::size_t bytes) {
  detail::group_state* s = g.state();
  s->sched->add_region(s, p, bytes);
}

void unregister_region(group& g, void* p) { g.state()->sched->regions().remove(g.state(), p); }

void note_access(const void* p) noexcept { static_cast<void>(numa::note_access(p)); }

// ---------------------------------------------------------------------------------------------
// stats

int stats::counter_index(const std::string& name) const {
  for (std::size_t i = 0; i < counter_names.size(); ++i)
    if (counter_names[i] == name) return static_cast<int>(i);
  return -1;
}
namespace {
std::size_t index_or_throw(const stats& s, const std::string& name) {
  int i = s.counter_index(name);
  if (i < 0) throw std::out_of_range("rt::stats: no counter named '" + name + "'");
  return static_cast<std::size_t>(i);
}
}  // namespace
std::uint64_t stats::total(const std::string& name) const {
  std::size_t i = index_or_throw(*this, name);
  std::uint64_t sum = outside.empty() ? 0 : outside[i];
  for (const auto& row : per_worker) sum += row[i];
  return sum;
}
std::uint64_t stats::worker(int w, const std::string& name) const {
  return per_worker.at(static_cast<std::size_t>(w))[index_or_throw(*this, name)];
}
std::uint64_t stats::node(int n, const std::string& name) const {
  std::size_t i = index_or_throw(*this, name);
  std::uint64_t sum = 0;
  for (std::size_t w = 0; w < per_worker.size(); ++w)
    if (worker_node[w] == n) sum += per_worker[w][i];
  return sum;
}
void stats::print(std::ostream& os) const {
  int nodes = 0;
  for (int n : worker_node) nodes = std::max(nodes, n + 1);
  os << std::left << std::setw(20) << "counter" << std::right << std::setw(14) << "total";
  for (int n = 0; n < nodes; ++n) os << std::setw(12) << ("node " + std::to_string(n));
  os << std::setw(12) << "outside" << "\n";
  for (std::size_t i = 0; i < counter_names.size(); ++i) {
    os << std::left << std::setw(20) << counter_names[i] << std::right << std::setw(14) << total(counter_names[i]);
    for (int n = 0; n < nodes; ++n) os << std::setw(12) << node(n, counter_names[i]);
    os << std::setw(12) << (outside.empty() ? 0 : outside[i]) << "\n";
  }
  os << std::left << std::setw(20) << "node memory" << std::right << std::setw(14) << "bytes";
  for (std::uint64_t b : node_memory_bytes) os << std::setw(12) << b;
  os << "\n";
  if (groups.empty()) return;
  os << "\n" << std::left << std::setw(24) << "group" << std::right << std::setw(6) << "pref" << std::setw(6) << "home"
     << std::setw(12) << "samples" << std::setw(8) << "local" << std::setw(7) << "moves" << std::setw(10) << "migrated"
     << std::setw(11) << "period ms" << "  active nodes\n";
  for (const group_row& g : groups) {
    std::string name = g.parent.empty() ? g.name : g.parent + "/" + g.name;
    if (name.size() > 23) name = name.substr(0, 22) + "~";
    os << std::left << std::setw(24) << name << std::right << std::setw(6) << g.preferred_node << std::setw(6)
       << g.home_node << std::setw(12) << g.samples << std::setw(7)
       << (g.samples == 0 ? 0 : 100 * g.local_samples / g.samples) << "%" << std::setw(7) << g.moves << std::setw(10)
       << g.pages_migrated << std::setw(11) << g.scan_period_ms << "  ";
    for (std::size_t i = 0; i < g.active_nodes.size(); ++i) os << (i ? "," : "") << g.active_nodes[i];
    os << "\n";
  }
}

// ---------------------------------------------------------------------------------------------
// The task ABI.

namespace detail {

namespace {
// The runtime named explicitly, else the task_group's, else the affinity group's, else the
// current one. scheduler::alloc refuses an affinity group of another runtime.
scheduler& target_scheduler(const spawn_target& target) {
  if (target.rt != nullptr) return target.rt->impl();
  if (target.members != nullptr) return *target.members->sched;
  if (target.affinity != nullptr) return *target.affinity->state()->sched;
  return current_scheduler();
}
}  // namespace

task* task_alloc(const spawn_target& target, const task_ops* ops, std::size_t size, std::size_t align) {
  return target_scheduler(target).alloc(target, ops, size, align);
}
void task_abandon(task* t) noexcept { t->sched->abandon(t); }
void task_submit(task* t) noexcept { t->sched->submit(t); }
void task_wait(task* t) { t->sched->wait(t); }
void task_release(task* t, bool joined) noexcept { t->sched->release(t, joined); }

static_assert(sizeof(task_group_state) <= kTaskGroupStateSize, "task_group_state must fit task_group's buffer");
static_assert(alignof(task_group_state) <= 64, "task_group's buffer is 64-aligned");

void task_group_init(task_group_state* s, runtime* rt) {
  scheduler& sch = rt != nullptr ? rt->impl() : current_scheduler();
  sch.group_init(s);
}
void task_group_destroy(task_group_state* s) noexcept { s->~task_group_state(); }
void task_group_wait(task_group_state* s) { s->sched->group_wait(s); }
void task_group_wait_noexcept(task_group_state* s) noexcept { s->sched->group_wait_noexcept(s); }
void task_group_fail(task_group_state* s, std::exception_ptr e) noexcept {
  // The first failure wins; error is written before error_set's release store is seen by wait().
  bool expected = false;
  if (s->error_claimed.compare_exchange_strong(expected, true, atomics::acq_rel)) {
    s->error = std::move(e);
    s->error_set.store(true, atomics::release);
  }
}

std::size_t parallel_for_grain(std::size_t n) {
  scheduler& s = current_scheduler();
  std::size_t chunks = static_cast<std::size_t>(s.worker_count()) *
                       static_cast<std::size_t>(s.settings().t.parallel_for_chunks_per_worker);
  std::size_t g = n / (chunks == 0 ? 1 : chunks);
  return g == 0 ? 1 : g;
}

}  // namespace detail
}  // namespace rt
