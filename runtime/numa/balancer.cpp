// The NUMA balancer thread: docs/design/numa-balancer.md (I-BAL-N).
#include "numa/balancer.hpp"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <new>

#include "sync/clock.hpp"
#include "sync/futex.hpp"

namespace rt::numa {

namespace {

// Holds the group table shared for one period, when the try-lock got it (I-BAL-1).
class period_lock {
 public:
  explicit period_lock(sync::rwlock& l) noexcept : l_(l), held_(l.try_lock_shared()) {}
  ~period_lock() {
    if (held_) l_.unlock_shared();
  }
  period_lock(const period_lock&) = delete;
  period_lock& operator=(const period_lock&) = delete;
  bool held() const noexcept { return held_; }

 private:
  sync::rwlock& l_;
  bool held_;
};

std::size_t page_size() {
  static const std::size_t size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

}  // namespace

balancer::balancer(const topo::topology& topo, std::span<const std::uint32_t> capacity, int workers,
                   const tun::settings& settings, region_registry& regions, balancer_host& host)
    : topo_(topo), settings_(settings), regions_(regions), host_(host), scorer_(topo, capacity),
      period_ms_(settings.t.numa_scan_period_min_ms) {
  rings_.reserve(static_cast<std::size_t>(workers));
  for (int w = 0; w < workers; ++w)
    rings_.push_back(std::make_unique<sample_ring>(static_cast<std::size_t>(settings.t.numa_sample_ring_capacity)));
}

balancer::~balancer() { stop(); }

void balancer::add_group(const void* key, const void* parent_key) {
  auto e = std::make_unique<group_entry>();
  e->key = key;
  e->parent_key = parent_key;
  e->faults = policy::numa_faults(topo_.node_count());
  e->period = policy::numa_faults(topo_.node_count());
  sync::exclusive_guard lk(groups_lock_);
  by_key_[key] = e.get();
  groups_.push_back(std::move(e));
}

void balancer::remove_group(const void* key) {
  sync::exclusive_guard lk(groups_lock_);
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return;
  by_key_.erase(it);
  std::erase_if(groups_, [key](const std::unique_ptr<group_entry>& e) { return e->key == key; });
}

// I-BAL-7: the flag of the group's top-level entry (its parent's, for a member whose parent
// lives) is exchanged, so one registration per top-level group kicks the thread. The member's
// own flag is set too, for the day its parent dies and it is scored alone.
void balancer::note_region(const void* key) {
  {
    sync::shared_guard lk(groups_lock_);
    const auto it = by_key_.find(key);
    if (it == by_key_.end()) return;
    group_entry* top = it->second;
    if (const auto p = top->parent_key != nullptr ? by_key_.find(top->parent_key) : by_key_.end(); p != by_key_.end()) {
      top->has_region.store(true, sync::native::relaxed);
      top = p->second;
    }
    if (top->has_region.exchange(true, sync::native::relaxed)) return;
  }
  wake_.fetch_add(1, sync::native::release);
  sync::native_futex::wake_all(wake_);
}

void balancer::start(const std::string& thread_name) {
  if (thread_.joinable()) return;
  stop_.store(0, sync::native::release);
  thread_ = std::thread([this, tname = thread_name.substr(0, 15)] {
    pthread_setname_np(pthread_self(), tname.c_str());
    run();
  });
}

void balancer::stop() noexcept {
  if (!thread_.joinable()) return;
  stop_.store(1, sync::native::release);
  wake_.fetch_add(1, sync::native::release);  // after stop_: a waiter that read the old value sleeps on it
  sync::native_futex::wake_all(wake_);
  thread_.join();
}

// I-BAL-7. Every wait reads wake_ before it tests stop_ and then waits for wake_ to change from
// the value read, so neither a stop nor a kick that lands in between is slept through.
void balancer::run() {
  const auto ms_to_ns = [](std::int64_t ms) { return static_cast<std::uint64_t>(ms) * 1000000u; };
  const auto stopping = [this] { return stop_.load(sync::native::acquire) != 0; };
  const std::uint64_t min_gap = ms_to_ns(settings_.t.numa_scan_period_min_ms);
  std::uint32_t served = wake_.load(sync::native::acquire);  // kicks the last pass that ran has seen
  std::uint64_t kicked = 0;                                   // when a kick last ended a sleep
  // Sleeps until `end`; false when asked to stop. With `kicks`, a pending kick (wake_ moved
  // past `served`) ends the sleep, at most once every numa_scan_period_min_ms.
  const auto sleep_until = [&](std::uint64_t end, bool kicks) {
    for (std::uint64_t now = sync::now_ns(); now < end; now = sync::now_ns()) {
      const std::uint32_t v = wake_.load(sync::native::acquire);
      if (stopping()) return false;
      const bool pending = kicks && v != served;
      const std::uint64_t allowed = kicked == 0 ? now : kicked + min_gap;
      if (pending && now >= allowed) {
        kicked = now;
        return true;
      }
      sync::native_futex::wait_for(wake_, v, (pending ? std::min(allowed, end) : end) - now);
    }
    return !stopping();
  };
  // The scan delay is waited out whole: kicks end only the periods after it.
  if (!sleep_until(sync::now_ns() + ms_to_ns(settings_.t.numa_scan_delay_ms), false)) return;
  served = wake_.load(sync::native::acquire);
  for (;;) {
    const std::uint32_t seen = wake_.load(sync::native::acquire);
    const std::uint64_t began = sync::now_ns();
    // I-BAL-8: a pass that cannot allocate is abandoned and counted as skipped (once a
    // period, whatever else skipped part of it), like a pass skipped by I-BAL-1 (its kicks stay
    // pending); the thread lives on.
    bool ran = false;
    skip_counted_ = false;
    try {
      ran = pass();
    } catch (const std::bad_alloc&) {
      if (!skip_counted_) host_.count(balancer_event::period_skipped, 1);
    }
    if (ran) served = seen;  // a skipped pass (I-BAL-1) leaves its kicks pending
    if (!sleep_until(began + ms_to_ns(period_ms_.load(sync::native::relaxed)), true)) return;
  }
}

// One period (DESIGN.md §6 steps 1-5).
bool balancer::pass() {
  period_lock lk(groups_lock_);
  if (!lk.held()) {  // I-BAL-1: a writer holds or waits for the table: skip, never queue
    host_.count(balancer_event::period_skipped, 1);
    return false;
  }
  // Step 2: the next window of hinting faults (none with FAULT_SAMPLING off: the registry is
  // explicit-only). A contended registry skips the window only; the samples already queued
  // are still scored.
  const scan_result w = regions_.protect_next_window(static_cast<std::size_t>(settings_.t.numa_scan_size_pages));
  if (w.outcome == scan_outcome::skipped) {
    host_.count(balancer_event::period_skipped, 1);
    skip_counted_ = true;
  } else if (w.pages_protected > 0) {
    host_.count(balancer_event::pages_protected, w.pages_protected);
  }
  // Step 3: drain the rings into the groups' period counts.
  std::uint64_t drained = 0;
  std::uint64_t dropped = 0;
  for (auto& r : rings_) {
    drained += r->drain([this](const sample& s) { note_sample(s); });
    const ring_counters c = r->counters();
    dropped += c.dropped_full + c.dropped_reentrant;
  }
  if (drained > 0) host_.count(balancer_event::samples, drained);
  if (dropped > dropped_seen_) host_.count(balancer_event::samples_dropped, dropped - dropped_seen_);
  dropped_seen_ = dropped;

  // Step 4: fold, then score every group (members under their parents). Once folded, the
  // period is spent however the pass ends: a pass abandoned for memory (I-BAL-8) must not leave
  // it to be folded again.
  struct spend_period {
    std::vector<std::unique_ptr<group_entry>>& groups;
    ~spend_period() {
      for (auto& e : groups) {
        e->period.clear();
        e->counts = {};
      }
    }
  } spent{groups_};
  std::uint64_t all_samples = 0;
  for (auto& e : groups_) {
    all_samples += e->period.total_mem;
    policy::numa_fold_period(e->faults, e->period, settings_);
  }
  std::vector<std::uint64_t> node_load;
  host_.node_loads(node_load);
  node_load.resize(static_cast<std::size_t>(topo_.node_count()), 0);
  std::uint64_t total_load = 0;
  for (std::uint64_t l : node_load) total_load += l;

  std::vector<group_entry*> tops;
  std::unordered_map<const void*, std::vector<group_entry*>> members;
  for (auto& e : groups_) {
    if (e->parent_key != nullptr && by_key_.contains(e->parent_key))
      members[e->parent_key].push_back(e.get());
    else
      tops.push_back(e.get());
  }
  std::vector<policy::numa_member_input> member_inputs;
  std::vector<std::size_t> member_begin;
  for (group_entry* t : tops) {
    member_begin.push_back(member_inputs.size());
    // I-BAL-3: a member that has samples is one busy chain of tasks: a worker's load.
    for (group_entry* m : members[t->key])
      member_inputs.push_back({&m->faults, m->node, m->faults.total_mem > 0 ? policy::kCapacityScale : 0});
  }
  std::vector<policy::numa_group_input> inputs;
  inputs.reserve(tops.size());
  for (std::size_t i = 0; i < tops.size(); ++i) {
    group_entry* t = tops[i];
    policy::numa_group_input in;
    in.faults = &t->faults;
    const std::size_t b = member_begin[i];
    const std::size_t n = members[t->key].size();
    in.members = std::span<const policy::numa_member_input>(member_inputs).subspan(b, n);
    in.node = t->node;
    in.preferred = t->preferred;
    in.period = t->counts;
    std::uint64_t samples = t->period.total_mem;
    for (group_entry* m : members[t->key]) {
      in.period += m->counts;
      samples += m->period.total_mem;
    }
    // I-BAL-3: a group's load is its share of the period's samples of the load running now.
    in.load = all_samples == 0 ? 0 : total_load * samples / all_samples;
    // I-NUMA-15: the group's period starts at the minimum with its (or a member's) first region
    // (note_region() marks the top-level entry).
    in.scan_period_ms = t->totals.scan_period_ms.load(sync::native::relaxed);
    if (in.scan_period_ms == 0 && t->has_region.load(sync::native::relaxed))
      in.scan_period_ms = settings_.t.numa_scan_period_min_ms;
    inputs.push_back(in);
  }
  policy::numa_pass_input pin;
  pin.groups = inputs;
  pin.node_load = node_load;
  pin.scan_period_ms = period_ms_.load(sync::native::relaxed);
  const policy::numa_pass_result res = policy::balance_pass(scorer_, pin, settings_);

  // Step 5: apply. Members take their nodes; every home that changes node is counted.
  std::uint64_t moved = 0;
  for (std::size_t i = 0; i < tops.size(); ++i) {
    group_entry* t = tops[i];
    const policy::numa_group_decision& d = res.groups[i];
    // The scheduler's hints first (I-BAL-8: apply changes nothing when it cannot allocate),
    // then this entry's record of them, so that the two never disagree.
    if (d.preferred >= 0 && host_.apply(t->key, d.preferred, decision_score(*t, d.preferred), &d.active)) {
      ++moved;
      group_entry::live_counters::bump(t->totals.moves);
    }
    t->active = d.active;
    t->preferred = d.preferred >= 0 ? d.best : t->preferred;
    t->totals.scan_period_ms.store(d.scan_period_ms, sync::native::relaxed);
    if (d.preferred >= 0) t->node = d.preferred;
    const auto& ms = members[t->key];
    for (std::size_t k = 0; k < ms.size(); ++k) {
      const int node = res.member_nodes[d.members_begin + k];
      ms[k]->active = d.active;
      ms[k]->totals.scan_period_ms.store(d.scan_period_ms, sync::native::relaxed);  // its parent's
      if (node < 0) continue;
      if (host_.apply(ms[k]->key, node, decision_score(*ms[k], node), nullptr)) {
        ++moved;
        group_entry::live_counters::bump(ms[k]->totals.moves);
      }
      ms[k]->node = node;
      ms[k]->preferred = node;
    }
  }
  if (moved > 0) host_.count(balancer_event::home_moved, moved);
  if (res.member_swaps > 0) host_.count(balancer_event::member_swapped, res.member_swaps);
  period_ms_.store(res.scan_period_ms, sync::native::relaxed);
  host_.count(balancer_event::pass, 1);
  try {
    host_.balance_nodes();
  } catch (const std::bad_alloc&) {
    // I-BAL-8: the node balance allocates before it pops, so it moved nothing this period;
    // the pass itself is done.
  }
  return true;
}

void balancer::note_sample(const sample& s) {
  const void* key = s.group != nullptr ? s.group : s.region_group;
  auto it = by_key_.find(key);
  if (it == by_key_.end() || s.mem_node < 0 || s.cpu_node < 0 || s.mem_node >= topo_.node_count() ||
      s.cpu_node >= topo_.node_count())
    return;
  group_entry& g = *it->second;
  g.period.add_sample(s.mem_node, s.cpu_node);
  group_entry::live_counters::bump(g.totals.samples);
  if (s.mem_node == s.cpu_node) {
    ++g.counts.local;
    group_entry::live_counters::bump(g.totals.local_samples);
  } else {
    ++g.counts.remote;
  }
  // I-BAL-8: the ring's drain moves its index after the whole batch, so a throw here would
  // leave every sample of the batch to be drained, and counted, again. Without memory for the
  // filter's page table (or for hwloc's bitmap of a migration) the sample skips the filter.
  try {
    migrate_if_settled(s, g);
  } catch (const std::bad_alloc&) {
  }
}

// The kernel's two-stage filter (should_numa_migrate_memory): a sample's block of pages (one
// transparent huge page, in the kernel) moves toward the node of the worker that touched it
// only when numa_migrate_min_samples consecutive samples of it came
// from that node, and only onto a node the group works on (its active nodes, once known), so
// that a thief's occasional touch never drags memory away (I-BAL-4).
void balancer::migrate_if_settled(const sample& s, group_entry& g) {
  if (!settings_.f.PAGE_MIGRATION) return;
  auto& run = last_node_[s.page];
  if (run.node != s.cpu_node) {
    run = {s.cpu_node, 1};
    return;
  }
  if (run.count < settings_.t.numa_migrate_min_samples) ++run.count;
  if (s.cpu_node == s.mem_node || run.count < settings_.t.numa_migrate_min_samples) return;
  if (g.active.count() > 0 && !g.active.test(static_cast<std::size_t>(s.cpu_node))) return;
  // The group test of should_numa_migrate_memory(), with the group whose region it is: a page
  // follows that group's CPU use. Another group's touches (jbb: a peer's order line writing this
  // warehouse's stock while the owner waits for a core) no longer pull it away.
  if (const auto owner = by_key_.find(s.region_group);
      owner != by_key_.end() && !policy::numa_should_migrate(owner->second->faults, s.mem_node, s.cpu_node, settings_))
    return;
  if (topo_.is_host && !host_.migrate_pages(s.page, s.pages * page_size(), s.cpu_node)) return;
  if (regions_.set_node(reinterpret_cast<const void*>(s.page), s.pages, s.cpu_node)) {
    host_.count(balancer_event::page_migrated, s.pages);
    host_.migrated(g.key, s.mem_node, s.cpu_node, s.pages);
    group_entry::live_counters::bump(g.totals.pages_migrated, s.pages);
  }
}

// The raw score (own faults and nearby bonus) of the node the pass chose for a group, as the
// trace's balancer_move reports it.
std::int64_t balancer::decision_score(const group_entry& g, int node) const {
  if (node < 0 || node >= topo_.node_count()) return 0;
  return static_cast<std::int64_t>(scorer_.raw_score(g.faults.mem, node));
}

}  // namespace rt::numa
