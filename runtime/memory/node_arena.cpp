// Node arenas: see node_arena.hpp and docs/design/memory.md (I-MEM-N cited below).
#include "memory/node_arena.hpp"

#include <hwloc.h>
#include <jemalloc/jemalloc.h>
#include <linux/mempolicy.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "core/assert.hpp"
#include "rt/error.hpp"
#include "sync/atomics.hpp"
#include "topology/topology.hpp"

namespace rt::memory {

using atomics = sync::native;

namespace detail {

// The extent_hooks_t jemalloc is given for one arena. jemalloc passes this pointer back as the
// first argument of every hook, so the hook finds its arena without a lookup and without knowing
// the arena index (the first hook calls happen inside arenas.create, before the index exists).
struct hook_block {
  extent_hooks_t hooks;
  arena_state* self;
};
static_assert(std::is_standard_layout_v<hook_block>, "hook_block must be pointer-interconvertible with its hooks");

struct arena_state {
  hook_block block{};
  int tag = -1;                 // logical node reported by node_of()
  bool host = false;            // bind extents (host) or only tag them (virtual, I-MEM-7)
  bool can_bind = false;        // host and hwloc reports area membind support
  unsigned os_index = 0;        // host: the OS node the extents are bound to
  unsigned index = 0;           // jemalloc arena index, set after arenas.create (I-MEM-1)
  // The mbind mask, built at creation so that the alloc hook allocates nothing (I-MEM-3).
  std::vector<unsigned long> mask;
  unsigned long mask_bits = 0;
  // Extents bound / left unbound by the alloc hook. Written (relaxed increments) by whichever
  // thread runs the hook, read (relaxed) by bound() and binding_totals(): counters, no data
  // is published through them.
  atomics::atomic<std::uint64_t> bound_extents{0};
  atomics::atomic<std::uint64_t> unbound_extents{0};
  // Live usable bytes (I-MEM-6). Incremented by allocate(), decremented by deallocate(), from any
  // thread (relaxed RMWs); read relaxed by bytes(). The allocation that a free returns
  // happens-before that free through the caller's own hand-off, so the counter never goes
  // below zero. Own cache line: every allocation on the node writes it.
  alignas(sync::kCacheLine) atomics::atomic<std::uint64_t> live_bytes{0};
};

}  // namespace detail

using detail::arena_state;

namespace {

// ---- The extent range registry (I-MEM-4) ----------------------------------------------------
// Every extent a node arena's alloc hook obtains is recorded as [begin, end) -> arena. Ranges
// are never removed: node-arena address space is never returned to the OS (I-MEM-4), so a
// recorded range stays the arena's for the life of the process. Appends come from inside
// jemalloc, so the registry takes no lock and allocates with mmap only. Segment k holds
// kFirstSegment << k slots; 40 segments outnumber any address space.
struct range_slot {
  atomics::atomic<std::uintptr_t> begin{0};
  atomics::atomic<std::uintptr_t> end{0};
  // Published last (release) by the recording hook; read with acquire by lookups, which then
  // read begin/end. Null: claimed but not yet published (the memory of such a slot has not
  // been handed out by jemalloc yet, so no caller can hold a pointer into it).
  atomics::atomic<arena_state*> owner{nullptr};
};
constexpr std::size_t kFirstSegment = 64;
constexpr int kSegments = 40;

struct range_registry {
  // Slots claimed so far. fetch_add (relaxed) by recorders; loaded relaxed by lookups: a lookup
  // of a pointer that an allocation returned happens-after that allocation's hook, whose
  // fetch_add is sequenced before its owner store, so coherence makes the count cover it.
  atomics::atomic<std::size_t> claimed{0};
  // Segment pointers, installed once by CAS (acq_rel: the slots' construction is published
  // with the pointer); loaded with acquire by recorders and lookups.
  atomics::atomic<range_slot*> segments[kSegments]{};
};
constinit range_registry g_ranges{};

std::size_t segment_slots(int k) noexcept { return kFirstSegment << k; }

// Slot i lives in segment k = floor(log2(i / kFirstSegment + 1)).
std::pair<int, std::size_t> slot_position(std::size_t i) noexcept {
  const std::size_t q = i / kFirstSegment + 1;
  const int k = static_cast<int>(std::bit_width(q)) - 1;
  return {k, i - kFirstSegment * ((std::size_t{1} << k) - 1)};
}

range_slot* segment(int k) noexcept {
  range_slot* seg = g_ranges.segments[k].load(atomics::acquire);
  if (seg != nullptr) return seg;
  const std::size_t len = segment_slots(k) * sizeof(range_slot);
  void* mem = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return nullptr;
  auto* fresh = static_cast<range_slot*>(mem);
  for (std::size_t j = 0; j < segment_slots(k); ++j) ::new (fresh + j) range_slot();
  if (g_ranges.segments[k].compare_exchange_strong(seg, fresh, atomics::acq_rel, atomics::acquire)) return fresh;
  ::munmap(mem, len);  // another recorder installed it first; `seg` is theirs
  return seg;
}

// Allocation-free and lock-free: callable from inside a jemalloc hook. False when mmap fails.
bool record_range(const void* p, std::size_t size, arena_state* owner) noexcept {
  const std::size_t i = g_ranges.claimed.fetch_add(1, atomics::relaxed);
  const auto [k, off] = slot_position(i);
  if (k >= kSegments) return false;
  range_slot* seg = segment(k);
  if (seg == nullptr) return false;
  const auto b = reinterpret_cast<std::uintptr_t>(p);
  seg[off].begin.store(b, atomics::relaxed);
  seg[off].end.store(b + size, atomics::relaxed);
  seg[off].owner.store(owner, atomics::release);  // pairs with owner_of()'s acquire
  return true;
}

arena_state* owner_of(const void* p) noexcept {
  if (p == nullptr) return nullptr;
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  const std::size_t n = g_ranges.claimed.load(atomics::relaxed);
  std::size_t seen = 0;
  for (int k = 0; k < kSegments && seen < n; ++k) {
    range_slot* seg = g_ranges.segments[k].load(atomics::acquire);
    const std::size_t cnt = segment_slots(k);
    if (seg != nullptr) {
      for (std::size_t j = 0; j < cnt && seen + j < n; ++j) {
        arena_state* o = seg[j].owner.load(atomics::acquire);
        if (o != nullptr && a >= seg[j].begin.load(atomics::relaxed) && a < seg[j].end.load(atomics::relaxed))
          return o;
      }
    }
    seen += cnt;
  }
  return nullptr;
}

// ---- Extent hooks (I-MEM-3) ----------------------------------------------------------------
// jemalloc's default hooks, read from "arena.0.extent_hooks" under the table lock before the
// first node arena is created; constant afterwards (hooks run only for arenas created later).
extent_hooks_t* g_defaults = nullptr;

// Host arenas' binding outcome, process-wide (relaxed counters, like the per-arena ones).
atomics::atomic<std::uint64_t> g_bound_total{0};
atomics::atomic<std::uint64_t> g_unbound_total{0};
// Set (relaxed exchange) by the first hook that leaves an extent unbound, so the fallback is
// reported once per process; nothing else is ordered by it.
atomics::atomic<bool> g_warned{false};

arena_state* state_of(extent_hooks_t* h) noexcept { return reinterpret_cast<detail::hook_block*>(h)->self; }

// One line on stderr with write(2) from a stack buffer: no allocation inside jemalloc.
void warn_unbound_once(const arena_state* s, int err) noexcept {
  if (g_warned.exchange(true, atomics::relaxed)) return;
  char buf[256];
  const char* name = err == 0 ? "no membind support" : strerrorname_np(err);
  const int n = std::snprintf(buf, sizeof buf,
                              "numart: memory: cannot bind node-arena memory to OS node %u (%s); node arenas on "
                              "this process keep their memory unbound (docs/adr/0010-node-arenas.md)\n",
                              s->os_index, name != nullptr ? name : "unknown error");
  if (n > 0) {
    const std::size_t len = static_cast<std::size_t>(n) < sizeof buf ? static_cast<std::size_t>(n) : sizeof buf - 1;
    [[maybe_unused]] const ssize_t w = ::write(STDERR_FILENO, buf, len);
  }
}

void bind_extent(arena_state* s, void* p, std::size_t size) noexcept {
  int err = 0;
  if (s->can_bind) {
    // The raw syscall: hwloc_set_area_membind callocs its Linux mask on every call (measured
    // with hwloc 2.9), and a hook must not allocate (I-MEM-3). MPOL_BIND without MPOL_MF_MOVE:
    // the extent is fresh, its pages fault in on the node.
    if (::syscall(SYS_mbind, p, size, MPOL_BIND, s->mask.data(), s->mask_bits + 1, 0) == 0) {
      s->bound_extents.fetch_add(1, atomics::relaxed);
      g_bound_total.fetch_add(1, atomics::relaxed);
      return;
    }
    err = errno;
  }
  s->unbound_extents.fetch_add(1, atomics::relaxed);
  g_unbound_total.fetch_add(1, atomics::relaxed);
  warn_unbound_once(s, err);
}

void* hook_alloc(extent_hooks_t* h, void* new_addr, std::size_t size, std::size_t alignment, bool* zero,
                 bool* commit, unsigned arena_ind) {
  arena_state* s = state_of(h);
  void* p = g_defaults->alloc(g_defaults, new_addr, size, alignment, zero, commit, arena_ind);
  if (p == nullptr) return nullptr;
  if (!record_range(p, size, s)) {
    // Unrecorded memory would break I-MEM-4: give it back and fail this extent allocation.
    g_defaults->destroy(g_defaults, p, size, *commit, arena_ind);
    return nullptr;
  }
  if (s->host) bind_extent(s, p, size);
  return p;
}

// I-MEM-4: node-arena address space is never unmapped. Opting out of dalloc is what jemalloc's
// default does with opt.retain (the Linux default): the extent is purged and retained.
bool hook_dalloc(extent_hooks_t*, void*, std::size_t, bool, unsigned) { return true; }
// Only an arena destroy calls it, and node arenas are never destroyed (I-MEM-1); should anyone
// destroy one through mallctl, its address space stays mapped so that node_of stays right.
void hook_destroy(extent_hooks_t*, void*, std::size_t, bool, unsigned) {}

bool hook_commit(extent_hooks_t*, void* a, std::size_t s, std::size_t o, std::size_t l, unsigned i) {
  return g_defaults->commit(g_defaults, a, s, o, l, i);
}
bool hook_decommit(extent_hooks_t*, void* a, std::size_t s, std::size_t o, std::size_t l, unsigned i) {
  return g_defaults->decommit(g_defaults, a, s, o, l, i);
}
bool hook_purge_lazy(extent_hooks_t*, void* a, std::size_t s, std::size_t o, std::size_t l, unsigned i) {
  return g_defaults->purge_lazy(g_defaults, a, s, o, l, i);
}
bool hook_purge_forced(extent_hooks_t*, void* a, std::size_t s, std::size_t o, std::size_t l, unsigned i) {
  return g_defaults->purge_forced(g_defaults, a, s, o, l, i);
}
bool hook_split(extent_hooks_t*, void* a, std::size_t s, std::size_t sa, std::size_t sb, bool c, unsigned i) {
  return g_defaults->split(g_defaults, a, s, sa, sb, c, i);
}
bool hook_merge(extent_hooks_t*, void* a, std::size_t sa, void* b, std::size_t sb, bool c, unsigned i) {
  return g_defaults->merge(g_defaults, a, sa, b, sb, c, i);
}

// Our hooks, with jemalloc's own opt-outs kept: a null default (e.g. purge_lazy where the OS
// has no lazy purge) stays null.
extent_hooks_t make_hooks() noexcept {
  extent_hooks_t h{};
  h.alloc = hook_alloc;
  h.dalloc = hook_dalloc;
  h.destroy = hook_destroy;
  h.commit = g_defaults->commit != nullptr ? hook_commit : nullptr;
  h.decommit = g_defaults->decommit != nullptr ? hook_decommit : nullptr;
  h.purge_lazy = g_defaults->purge_lazy != nullptr ? hook_purge_lazy : nullptr;
  h.purge_forced = g_defaults->purge_forced != nullptr ? hook_purge_forced : nullptr;
  h.split = g_defaults->split != nullptr ? hook_split : nullptr;
  h.merge = g_defaults->merge != nullptr ? hook_merge : nullptr;
  return h;
}

// ---- The process-wide arena table (I-MEM-1) ------------------------------------------------
struct arena_table {
  std::mutex lock;
  // (host ? 1 : 0, host ? OS node index : virtual logical index) -> arena. Guarded by lock.
  std::map<std::pair<int, unsigned>, arena_state*> by_key;
};
// Never destroyed: numa_free may run during static destruction, after any runtime is gone.
arena_table& table() {
  static arena_table* t = new arena_table;
  return *t;
}

// I-SHUT-6: the table's lock is held across fork(), so that a child building a runtime does not
// wait for a parent thread that was building one at the fork. Registered at load, after
// jemalloc's own handlers (its constructor runs first), so this prepare runs before jemalloc's
// and a holder inside mallctl() still finishes.
void lock_table_for_fork() noexcept { table().lock.lock(); }
void unlock_table_after_fork() noexcept { table().lock.unlock(); }
const int g_table_fork_handlers = ::pthread_atfork(lock_table_for_fork, unlock_table_after_fork, unlock_table_after_fork);

arena_state* create_arena(bool host, unsigned key, int tag, bool can_bind) {
  if (g_defaults == nullptr) {
    std::size_t sz = sizeof g_defaults;
    const int rc = mallctl("arena.0.extent_hooks", static_cast<void*>(&g_defaults), &sz, nullptr, 0);
    if (rc != 0 || g_defaults == nullptr) {
      g_defaults = nullptr;
      throw rt::startup_error(std::string("numart: memory: cannot read jemalloc's default extent hooks "
                                          "(mallctl arena.0.extent_hooks: ") +
                              std::strerror(rc) + ")");
    }
  }
  // Never freed (I-MEM-1), even when arenas.create fails: its hooks may have recorded ranges.
  auto* s = new arena_state;
  s->block.hooks = make_hooks();
  s->block.self = s;
  s->tag = tag;
  s->host = host;
  s->can_bind = can_bind;
  s->os_index = host ? key : 0;
  if (host) {
    constexpr unsigned kWordBits = sizeof(unsigned long) * CHAR_BIT;
    s->mask.assign(key / kWordBits + 1, 0UL);
    s->mask[key / kWordBits] = 1UL << (key % kWordBits);
    s->mask_bits = static_cast<unsigned long>(s->mask.size()) * kWordBits;
  }
  extent_hooks_t* hooks = &s->block.hooks;
  unsigned index = 0;
  std::size_t sz = sizeof index;
  const int rc = mallctl("arenas.create", &index, &sz, &hooks, sizeof hooks);
  if (rc != 0) {
    throw rt::startup_error(std::string("numart: memory: jemalloc cannot create the arena for ") +
                            (host ? "OS node " : "virtual node ") + std::to_string(key) +
                            " (mallctl arenas.create: " + std::strerror(rc) + ")");
  }
  s->index = index;
  return s;
}

}  // namespace

// ---- arena_ref -------------------------------------------------------------------------------

void* arena_ref::allocate(std::size_t bytes, std::size_t align) const noexcept {
  const int flags = MALLOCX_ARENA(s_->index) | MALLOCX_TCACHE_NONE | MALLOCX_ALIGN(align);  // I-MEM-2
  void* p = mallocx(bytes, flags);
  if (p != nullptr) s_->live_bytes.fetch_add(sallocx(p, 0), atomics::relaxed);  // I-MEM-6
  return p;
}

void arena_ref::deallocate(void* p) const noexcept {
  RT_DEBUG_ASSERT(owner_of(p) == s_, "I-MEM-5", "memory freed into an arena that did not give it");
  s_->live_bytes.fetch_sub(sallocx(p, 0), atomics::relaxed);  // I-MEM-6
  dallocx(p, MALLOCX_TCACHE_NONE);                               // I-MEM-2
}

int arena_ref::node() const noexcept { return s_->tag; }
unsigned arena_ref::jemalloc_index() const noexcept { return s_->index; }

// ---- node_arenas -----------------------------------------------------------------------------

node_arenas::node_arenas(const topo::topology& topo) : host_(topo.is_host) {
  bool can_bind = false;
  if (host_ && topo.native_handle() != nullptr) {
    const hwloc_topology_support* sup = hwloc_topology_get_support(topo.native_handle());
    can_bind = sup != nullptr && sup->membind != nullptr && sup->membind->set_area_membind != 0 &&
               sup->membind->bind_membind != 0;
  }
  RT_ASSERT(g_table_fork_handlers == 0, "I-SHUT-6", "pthread_atfork failed for the arena table's lock");
  arena_table& t = table();
  std::lock_guard<std::mutex> lk(t.lock);
  arenas_.reserve(topo.nodes.size());
  for (const topo::numa_node& n : topo.nodes) {
    // I-MEM-7: host memory is keyed by the OS node it is bound to, virtual memory by its tag.
    const unsigned key = host_ ? n.os_index : static_cast<unsigned>(n.logical);
    auto [it, fresh] = t.by_key.try_emplace({host_ ? 1 : 0, key}, nullptr);
    if (fresh) {
      try {
        it->second = create_arena(host_, key, n.logical, can_bind);
      } catch (...) {
        t.by_key.erase(it);
        throw;
      }
    }
    arenas_.push_back(it->second);
  }
}

arena_state* node_arenas::at(int logical_node) const {
  if (logical_node < 0 || logical_node >= node_count()) {
    throw std::invalid_argument("numart: node " + std::to_string(logical_node) + " does not exist: the topology has " +
                                std::to_string(node_count()) + " nodes (0.." + std::to_string(node_count() - 1) + ")");
  }
  return arenas_[static_cast<std::size_t>(logical_node)];
}

arena_ref node_arenas::arena(int logical_node) const { return arena_ref(at(logical_node)); }

void* node_arenas::alloc(std::size_t bytes, int logical_node) const {
  arena_state* s = at(logical_node);
  static const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  // jemalloc's 8-byte class is only 8-aligned: ask for max_align_t below a page, a page above.
  const std::size_t align = bytes >= page ? page : alignof(std::max_align_t);
  void* p = arena_ref(s).allocate(bytes == 0 ? 1 : bytes, align);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

bool node_arenas::free_if_owned(void* p) noexcept {
  arena_state* s = owner_of(p);
  if (s == nullptr) return false;
  arena_ref(s).deallocate(p);
  return true;
}

void node_arenas::free(void* p) noexcept {
  if (p == nullptr) return;
  const bool owned = free_if_owned(p);
  RT_ASSERT(owned, "I-MEM-5", "rt::memory::node_arenas::free of memory no node arena gave");
}

int node_arenas::node_of(const void* p) noexcept {
  const arena_state* s = owner_of(p);
  return s != nullptr ? s->tag : -1;
}

std::uint64_t node_arenas::bytes(int logical_node) const { return at(logical_node)->live_bytes.load(atomics::relaxed); }

bool node_arenas::bound(int logical_node) const {
  const arena_state* s = at(logical_node);
  return s->host && s->bound_extents.load(atomics::relaxed) > 0 && s->unbound_extents.load(atomics::relaxed) == 0;
}

binding_counts binding_totals() noexcept {
  return {g_bound_total.load(atomics::relaxed), g_unbound_total.load(atomics::relaxed)};
}

}  // namespace rt::memory
