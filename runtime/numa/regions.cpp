#include "numa/regions.hpp"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "core/assert.hpp"
#include "numa/context.hpp"
#include "numa/fault_sampler.hpp"
#include "sync/asym_fence.hpp"

namespace rt::numa {

namespace detail {

// A page's protection state (I-SAMPLE-4).
enum : std::uint8_t { kOpen = 0, kProtecting = 1, kProtected = 2, kRestoring = 3 };

struct region_state {
  const void* key;
  const region_registry* owner;
  std::uintptr_t start;  // the pointer given to add(): remove() finds the region by it
  std::uintptr_t lo;     // page-aligned bounds, [lo, hi)
  std::uintptr_t hi;
  std::size_t page;
  unsigned page_shift;  // log2(page): a lookup's page index is a shift, not a 64-bit division
  std::size_t pages;
  std::size_t block;  // pages per sampling block, from the owner (I-SAMPLE-13)
  // Per page. node: written by add() and set_node() (relaxed), read by handlers and
  // note_access (relaxed): a stale node in one sample is harmless. state: I-SAMPLE-4.
  std::unique_ptr<sync::native::atomic<std::int16_t>[]> node;
  std::unique_ptr<sync::native::atomic<std::uint8_t>[]> state;
};

}  // namespace detail

namespace {

using detail::region_state;
using sync::native;

// The immutable view the handler reads: every region of every registry, sorted by address.
struct snapshot {
  std::vector<const region_state*> by_lo;
};

// The directory of the process (I-SAMPLE-2). g_write_mu serialises the writers (add/remove of
// any registry). g_snap: written (exchange) by writers under g_write_mu, read by readers
// (handlers, note_access, page_node) inside a read section. g_epoch: written by writers under
// g_write_mu, read by readers as they enter. g_readers[e][k]: readers of epoch parity e on
// stripe k, RMW by readers (a thread always uses its own stripe), read by the writer waiting
// out a grace period. All seq_cst: the grace argument of I-SAMPLE-3 is about their single
// total order.
constinit std::mutex g_write_mu;
constinit native::atomic<const snapshot*> g_snap{nullptr};
constinit native::atomic<std::uint32_t> g_epoch{0};
// I-SAMPLE-14: one counter per stripe and cache line, a thread's stripe fixed at its first
// read section, so that readers on different threads (rt::node_of on every data access of a
// transaction, in examples/jbb) never write a line another thread writes. A power of two.
constexpr std::uint32_t kReaderStripes = 64;
struct alignas(sync::kCacheLine) reader_count {
  native::atomic<std::uint64_t> n{0};
};
constinit reader_count g_readers[2][kReaderStripes];
// The next stripe to hand out: RMW by each thread's first read section; no ordering.
constinit native::atomic<std::uint32_t> g_next_stripe{0};
// This thread's stripe + 1 (0: none yet). Initial-exec like the sampling context: safe in a
// handler (I-SAMPLE-8); a handler that takes the first stripe of its thread is harmless.
constinit thread_local std::uint32_t tls_stripe __attribute__((tls_model("initial-exec"))) = 0;
// Written by writers under g_write_mu, read relaxed by handlers (I-SAMPLE-10).
constinit native::atomic<std::uint64_t> g_generation{0};
// I-SAMPLE-10: runs of pages handlers restored, each counted after its mprotect and before
// its pages are marked open (relaxed; a handler that then reads such a page open with
// acquire sees the count). Read relaxed by handlers.
constinit native::atomic<std::uint64_t> g_restores{0};

// I-SAMPLE-15: reader slots a thread owns alone, so that its sections count with plain loads
// and stores (no locked instruction) and the writer's membarrier supplies the reader's fence.
// taken: CAS 0 -> 1 by the claiming thread, stored 0 (release) by its exit guard, with both
// counters at zero. n[e]: written by the owner only (and its own signal handlers, which finish
// before the interrupted code resumes), read by the writer waiting out a grace period.
constexpr std::uint32_t kOwnedReaders = 256;
struct alignas(sync::kCacheLine) owned_reader {
  native::atomic<std::uint32_t> taken{0};
  native::atomic<std::uint64_t> n[2] = {0, 0};
};
constinit owned_reader g_owned[kOwnedReaders];
// This thread's owned slot + 1; 0: not claimed yet; kNoOwnedSlot: none (every slot taken,
// no membarrier, or the thread is exiting). Initial-exec: read by handlers.
constexpr std::uint32_t kNoOwnedSlot = ~std::uint32_t{0};
constinit thread_local std::uint32_t tls_owned __attribute__((tls_model("initial-exec"))) = 0;
// page_node's hint: the index in by_lo of the thread's last hit, in whatever snapshot it was.
// Atomic (relaxed) only because a signal handler's page_node may write it in the middle of
// the thread's own.
constinit thread_local native::atomic<std::size_t> tls_last_region __attribute__((tls_model("initial-exec"))){0};

std::uint32_t my_stripe() noexcept {
  if (tls_stripe == 0) tls_stripe = (g_next_stripe.fetch_add(1, native::relaxed) & (kReaderStripes - 1)) + 1;
  return tls_stripe - 1;
}

// Gives the exiting thread's owned slot back: the destructor of owned_slot_key(), whose value
// is the slot + 1. A pthread key and not a C++ thread_local, whose destructors have all run
// when another library's key destructor makes the thread's first page_node: POSIX calls the
// destructor of a key set during that round in the next one (PTHREAD_DESTRUCTOR_ITERATIONS
// rounds, 4 on glibc; a thread whose first page_node comes in the last round keeps its slot).
void release_owned_slot(void* slot_plus_one) noexcept {
  tls_owned = kNoOwnedSlot;  // later sections of this thread (other destructors) use stripes
  const auto k = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(slot_plus_one));
  g_owned[k - 1].taken.store(0, native::release);
}

// The key, created at the first claim; `created` false when pthread_key_create failed (every
// key of the process taken): no thread owns a slot then.
struct slot_key {
  pthread_key_t key{};
  bool created = false;
};
const slot_key& owned_slot_key() noexcept {
  static const slot_key k = [] {
    slot_key s;
    s.created = ::pthread_key_create(&s.key, release_owned_slot) == 0;
    return s;
  }();
  return k;
}

// I-SAMPLE-15: the calling thread's first page_node claims a free owned slot when membarrier
// is available; not async-signal-safe (it sets the exit key), so handlers and note_access only
// use a slot their thread already owns.
void claim_owned_slot() noexcept {
  tls_owned = kNoOwnedSlot;
  if (!sync::asym_fence::available()) return;
  const slot_key& key = owned_slot_key();
  if (!key.created) return;
  for (std::uint32_t k = 0; k < kOwnedReaders; ++k) {
    std::uint32_t free = 0;
    if (g_owned[k].taken.load(native::relaxed) == 0 &&
        g_owned[k].taken.compare_exchange_strong(free, 1, native::acquire, native::relaxed)) {
      if (::pthread_setspecific(key.key, reinterpret_cast<void*>(std::uintptr_t{k} + 1)) != 0) {
        g_owned[k].taken.store(0, native::release);
        return;
      }
      tls_owned = k + 1;
      return;
    }
  }
}

// A reader's critical section (I-SAMPLE-3): between its constructor and destructor the
// snapshot it loaded, and every region in it, stay allocated. Async-signal-safe (plain stores
// on an owned slot, or lock-free RMWs on a stripe), and nestable (a handler interrupting a
// note_access on the same thread).
class read_section {
 public:
  read_section() noexcept {
    const std::uint32_t owned = tls_owned;
    if (owned != 0 && owned != kNoOwnedSlot) {
      enter_owned(g_owned[owned - 1]);
    } else {
      enter_stripe();
    }
  }
  ~read_section() {
    if (slot_ != nullptr) {
      native::atomic<std::uint64_t>& n = slot_->n[e_];
      n.store(n.load(native::relaxed) - 1, native::release);  // after every use of the snapshot
    } else {
      g_readers[e_][k_].n.fetch_sub(1, native::seq_cst);
    }
  }
  read_section(const read_section&) = delete;
  read_section& operator=(const read_section&) = delete;
  const snapshot* get() const noexcept { return snap_; }

 private:
  // I-SAMPLE-15: the count is a plain store, kept before the epoch re-check by a compiler
  // barrier only; publish()'s membarrier orders it against the writer (the asymmetric fence of
  // I-PARK-7). The re-check is acquire: a reader that sees the new epoch sees the new snapshot.
  void enter_owned(owned_reader& s) noexcept {
    slot_ = &s;
    for (;;) {
      e_ = g_epoch.load(native::relaxed) & 1u;
      native::atomic<std::uint64_t>& n = s.n[e_];
      n.store(n.load(native::relaxed) + 1, native::relaxed);
      sync::asym_fence::light();
      if ((g_epoch.load(native::acquire) & 1u) == e_) break;
      // A writer flipped meanwhile. Release, like the end of a section: this store may be the
      // one the writer reads zero from, after an earlier section of this thread (C++20 release
      // sequences no longer include the thread's later plain stores).
      n.store(n.load(native::relaxed) - 1, native::release);
    }
    snap_ = g_snap.load(native::acquire);
  }
  void enter_stripe() noexcept {
    k_ = my_stripe();
    for (;;) {
      e_ = g_epoch.load(native::seq_cst) & 1u;
      g_readers[e_][k_].n.fetch_add(1, native::seq_cst);
      if ((g_epoch.load(native::seq_cst) & 1u) == e_) break;
      g_readers[e_][k_].n.fetch_sub(1, native::seq_cst);  // a writer flipped meanwhile: join the new epoch
    }
    snap_ = g_snap.load(native::seq_cst);
  }

  owned_reader* slot_ = nullptr;
  std::uint32_t k_ = 0;
  std::uint32_t e_ = 0;
  const snapshot* snap_ = nullptr;
};

// Writer side, under g_write_mu: publishes `next` (null for "no regions"), waits until no
// reader can hold the previous snapshot or anything it points to, then frees it and `gone`.
void publish(std::unique_ptr<snapshot> next, std::vector<std::unique_ptr<region_state>> gone) {
  // I-SAMPLE-10: the generation first, so a handler that sees the new snapshot sees it too.
  g_generation.fetch_add(1, native::relaxed);
  const snapshot* old = g_snap.exchange(next.release(), native::seq_cst);
  const std::uint32_t e = g_epoch.load(native::relaxed);
  g_epoch.store(e + 1, native::seq_cst);
  // I-SAMPLE-3: readers that may hold `old` counted themselves in g_readers[e & 1][their
  // stripe] before the flip; later readers see the new epoch and the new snapshot. A reader
  // section is a few loads and at most one mprotect per page run of a block: yielding, not
  // sleeping, is enough.
  for (const reader_count& c : g_readers[e & 1u])
    while (c.n.load(native::seq_cst) != 0) std::this_thread::yield();
  // I-SAMPLE-15: every running thread executes a full barrier: an owned reader's count stored
  // before it is visible to the loads below; one stored after it is followed by a re-check
  // that sees the new epoch. Slots are handed out only when membarrier is available.
  if (sync::asym_fence::available()) {
    sync::asym_fence::heavy();
    for (const owned_reader& s : g_owned)
      while (s.n[e & 1u].load(native::acquire) != 0) std::this_thread::yield();
  }
  delete old;
  gone.clear();
}

// fork() (I-SAMPLE-16, docs/adr/0007-fork.md). The child has only the forking thread, which is
// in no read section (sections run no user code), so every reader count it inherits belongs
// to a thread that is gone and would hold its first publish for ever; so would a page a gone
// thread was protecting or restoring, which faults for ever; so would every registry lock a
// gone thread held (a scan, or a writer that held it while it waited for g_write_mu): the
// child frees them. The prepare handler holds the writers' lock across the fork, so the
// snapshot is whole and no publish is half done.
void before_fork() noexcept { g_write_mu.lock(); }

void after_fork_in_parent() noexcept { g_write_mu.unlock(); }

void after_fork_in_child() noexcept {
  for (auto& parity : g_readers)
    for (reader_count& c : parity) c.n.store(0, native::relaxed);
  const std::uint32_t mine = tls_owned;
  for (std::uint32_t k = 0; k < kOwnedReaders; ++k) {
    g_owned[k].n[0].store(0, native::relaxed);
    g_owned[k].n[1].store(0, native::relaxed);
    if (k + 1 != mine) g_owned[k].taken.store(0, native::relaxed);
  }
  if (const snapshot* s = g_snap.load(native::relaxed)) {
    for (const region_state* r : s->by_lo) {
      for (std::size_t i = 0; i < r->pages; ++i) {
        const std::uint8_t st = r->state[i].load(native::relaxed);
        if (st != detail::kProtecting && st != detail::kRestoring) continue;
        // Open in the books only once open in fact; a page whose mprotect fails stays marked
        // protected: if it is PROT_NONE its fault restores it, if the scanner never reached it
        // it is never sampled again (a lost sample, not a hang).
        if (::mprotect(reinterpret_cast<void*>(r->lo + (i << r->page_shift)), r->page, PROT_READ | PROT_WRITE) == 0)
          r->state[i].store(detail::kOpen, native::relaxed);
        else
          r->state[i].store(detail::kProtected, native::relaxed);
      }
    }
  }
  region_registry::release_locks_after_fork();
  g_write_mu.unlock();
}

// At load: threads may enter read sections (rt::node_of) before any registry exists.
const int g_fork_handlers = ::pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);

// The index in by_lo of the first region (by address) whose end is above addr; by_lo.size()
// when none. Async-signal-safe: no allocation.
std::size_t index_ending_above(const snapshot& s, std::uintptr_t addr) noexcept {
  return static_cast<std::size_t>(std::upper_bound(s.by_lo.begin(), s.by_lo.end(), addr,
                                                   [](std::uintptr_t a, const region_state* r) { return a < r->hi; }) -
                                  s.by_lo.begin());
}

// The first region (by address) whose end is above addr.
const region_state* first_ending_above(const snapshot* s, std::uintptr_t addr) noexcept {
  if (s == nullptr) return nullptr;
  const std::size_t i = index_ending_above(*s, addr);
  return i == s->by_lo.size() ? nullptr : s->by_lo[i];
}

// The index in by_lo of the region holding addr; by_lo.size() when none.
std::size_t index_holding(const snapshot& s, std::uintptr_t addr) noexcept {
  const std::size_t i = index_ending_above(s, addr);
  return i < s.by_lo.size() && s.by_lo[i]->lo <= addr ? i : s.by_lo.size();
}

// The region holding addr, or null.
const region_state* find(const snapshot* s, std::uintptr_t addr) noexcept {
  if (s == nullptr) return nullptr;
  const std::size_t i = index_holding(*s, addr);
  return i == s->by_lo.size() ? nullptr : s->by_lo[i];
}

// The index in `r` of the page holding addr (addr in r).
std::size_t page_index(const region_state& r, std::uintptr_t addr) noexcept { return (addr - r.lo) >> r.page_shift; }

std::string hex(std::uintptr_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string range(std::uintptr_t lo, std::uintptr_t hi) { return "[" + hex(lo) + ", " + hex(hi) + ")"; }

void check_node(const char* who, int node) {
  if (node < -1 || node > INT16_MAX)
    throw std::invalid_argument(std::string(who) + ": node " + std::to_string(node) + " is outside [-1, 32767]");
}

std::size_t system_page() {
  const long p = ::sysconf(_SC_PAGESIZE);
  RT_ASSERT(p > 0 && (p & (p - 1)) == 0, "I-SAMPLE-4", "sysconf(_SC_PAGESIZE) is not a power of two");
  return static_cast<std::size_t>(p);
}

// A copy of the current snapshot with `drop` removed and `add` inserted (either may be empty).
std::unique_ptr<snapshot> rebuilt(const std::vector<const region_state*>& drop, const region_state* add) {
  auto next = std::make_unique<snapshot>();
  if (const snapshot* cur = g_snap.load(native::relaxed); cur != nullptr) {  // writer: under g_write_mu
    next->by_lo.reserve(cur->by_lo.size() + 1);
    for (const region_state* r : cur->by_lo)
      if (std::find(drop.begin(), drop.end(), r) == drop.end()) next->by_lo.push_back(r);
  }
  if (add != nullptr) {
    const auto at = std::lower_bound(next->by_lo.begin(), next->by_lo.end(), add->lo,
                                     [](const region_state* r, std::uintptr_t lo) { return r->lo < lo; });
    next->by_lo.insert(at, add);
  }
  if (next->by_lo.empty()) return nullptr;
  return next;
}

std::size_t checked_block(std::size_t block_pages) {
  if (block_pages == 0)
    throw std::invalid_argument("numa::region_registry: block_pages is 0 (numa_sample_block_pages starts at 1)");
  return block_pages;
}

// The block of page i of r: [first, first + count), clipped to the region (I-SAMPLE-13).
struct block_span {
  std::size_t first;
  std::size_t count;
};

block_span block_of(const region_state& r, std::size_t i) noexcept {
  const std::size_t first = i - i % r.block;
  return {first, std::min(r.block, r.pages - first)};
}

// Claims the pages of [first, end) of r whose state is `from`, moving each to `to` by CAS, and
// hands each maximal run of claimed pages to done(begin, end). Page `held`, when inside, is
// already the caller's and counts as claimed. The scan (open -> protecting) and a fault's block
// restore (protected -> restoring) both walk this way (I-SAMPLE-4, I-SAMPLE-13). Async-signal-safe.
template <class Done>
void claim_runs(const region_state& r, std::size_t first, std::size_t end, std::uint8_t from, std::uint8_t to,
                std::size_t held, const Done& done) noexcept {
  std::size_t run = first;
  for (std::size_t j = first; j < end; ++j) {
    std::uint8_t seen = from;
    if (j == held || r.state[j].compare_exchange_strong(seen, to, native::acq_rel, native::relaxed)) continue;
    if (j > run) done(run, j);
    run = j + 1;
  }
  if (end > run) done(run, end);
}

sample block_sample(const thread_context& ctx, const region_state& r, std::size_t i) noexcept {
  const block_span b = block_of(r, i);
  return sample{ctx.running_group,
                r.key,
                r.lo + b.first * r.page,
                r.node[i].load(native::relaxed),
                static_cast<std::int16_t>(ctx.node),
                static_cast<std::uint32_t>(b.count)};
}

}  // namespace

region_registry::region_registry(sampling_mode mode, std::size_t block_pages)
    : mode_(mode), page_(system_page()), block_(checked_block(block_pages)) {
  if (g_fork_handlers != 0) throw std::runtime_error("numart: pthread_atfork failed for the region directory");
  std::lock_guard<std::mutex> w(g_write_mu);
  next_ = all_;
  if (next_ != nullptr) next_->prev_ = this;
  all_ = this;
}

region_registry::~region_registry() {
  {
    sync::exclusive_guard g(lock_);
    retire_locked([](const region_state&) { return true; });
  }
  std::lock_guard<std::mutex> w(g_write_mu);
  (prev_ != nullptr ? prev_->next_ : all_) = next_;
  if (next_ != nullptr) next_->prev_ = prev_;
}

constinit region_registry* region_registry::all_ = nullptr;

void region_registry::release_locks_after_fork() noexcept {
  for (region_registry* r = all_; r != nullptr; r = r->next_) r->lock_.reset_after_fork();
}

void region_registry::add(const void* key, void* p, std::size_t bytes, int node) {
  const auto start = reinterpret_cast<std::uintptr_t>(p);
  if (key == nullptr) throw std::invalid_argument("numa::region_registry::add: the group key is null");
  if (bytes == 0) throw std::invalid_argument("rt::register_region: empty range (0 bytes at " + hex(start) + ")");
  if (p == nullptr) throw std::invalid_argument("rt::register_region: null pointer");
  if (bytes > UINTPTR_MAX - page_ || start > UINTPTR_MAX - page_ - bytes)
    throw std::invalid_argument("rt::register_region: range at " + hex(start) + " of " + std::to_string(bytes) +
                                " bytes wraps around the address space");
  check_node("rt::register_region", node);
  auto r = std::make_unique<region_state>();
  r->key = key;
  r->owner = this;
  r->start = start;
  r->lo = start & ~(page_ - 1);
  r->hi = (start + bytes + page_ - 1) & ~(page_ - 1);
  r->page = page_;
  r->page_shift = static_cast<unsigned>(std::countr_zero(page_));
  r->pages = (r->hi - r->lo) / page_;
  r->block = block_;
  r->node = std::make_unique<sync::native::atomic<std::int16_t>[]>(r->pages);
  r->state = std::make_unique<sync::native::atomic<std::uint8_t>[]>(r->pages);
  for (std::size_t i = 0; i < r->pages; ++i) {
    r->node[i].store(static_cast<std::int16_t>(node), native::relaxed);
    r->state[i].store(detail::kOpen, native::relaxed);
  }

  sync::exclusive_guard g(lock_);
  std::lock_guard<std::mutex> w(g_write_mu);
  if (const region_state* other = first_ending_above(g_snap.load(native::relaxed), r->lo);
      other != nullptr && other->lo < r->hi)
    throw std::invalid_argument("rt::register_region: " + range(start, start + bytes) + " (pages " +
                                range(r->lo, r->hi) + ") overlaps the registered region " +
                                range(other->lo, other->hi) + (other->key == key ? " of the same group" : "") +
                                (other->owner == this ? "" : " of another runtime"));
  const region_state* added = r.get();
  regions_.reserve(regions_.size() + 1);  // the insert below cannot throw once published
  publish(rebuilt({}, added), {});
  const auto at = std::lower_bound(regions_.begin(), regions_.end(), added->lo,
                                   [](const auto& x, std::uintptr_t lo) { return x->lo < lo; });
  regions_.insert(at, std::move(r));
}

void region_registry::remove(const void* key, void* p) {
  const auto start = reinterpret_cast<std::uintptr_t>(p);
  sync::exclusive_guard g(lock_);
  const auto it = std::find_if(regions_.begin(), regions_.end(),
                               [&](const auto& r) { return r->key == key && r->start == start; });
  if (it == regions_.end())
    throw std::invalid_argument("rt::unregister_region: no region of this group starts at " + hex(start));
  const region_state* target = it->get();
  retire_locked([target](const region_state& r) { return &r == target; });
}

std::size_t region_registry::remove_all(const void* key) {
  sync::exclusive_guard g(lock_);
  return retire_locked([key](const region_state& r) { return r.key == key; });
}

// Under lock_ exclusively: restores access to the regions `pick` selects, then, under
// g_write_mu, takes them out of regions_ and the directory and frees them after the grace
// period (I-SAMPLE-3). Returns how many. regions_ changes only under g_write_mu, which the
// fork prepare handler holds: a child that inherits lock_ held finds regions_ whole
// (I-SAMPLE-16).
template <class Pick>
std::size_t region_registry::retire_locked(Pick pick) {
  // Every allocation comes before the first change: a bad_alloc leaves the registry and the
  // directory as they were (at worst with some pages already readable again).
  std::vector<const region_state*> drop;
  std::vector<std::unique_ptr<region_state>> gone;
  drop.reserve(regions_.size());
  gone.reserve(regions_.size());
  std::size_t n = 0;
  for (const auto& r : regions_) {
    if (!pick(*r)) continue;
    // Restore first: a thread that faults on one of these pages from now on either finds
    // the region (and the page restoring or open) or, after the publication below, a retry
    // that succeeds (I-SAMPLE-10). Fails only for memory freed while registered: ignored.
    ::mprotect(reinterpret_cast<void*>(r->lo), r->hi - r->lo, PROT_READ | PROT_WRITE);
    ++n;
  }
  if (n == 0) return 0;
  std::lock_guard<std::mutex> w(g_write_mu);
  for (const auto& r : regions_)
    if (pick(*r)) drop.push_back(r.get());
  std::unique_ptr<snapshot> next = rebuilt(drop, nullptr);
  for (auto& r : regions_)
    if (pick(*r)) gone.push_back(std::move(r));
  std::erase(regions_, nullptr);
  publish(std::move(next), std::move(gone));
  cursor_ = 0;
  return n;
}

scan_result region_registry::protect_next_window(std::size_t pages) {
  if (mode_ == sampling_mode::explicit_only) return {scan_outcome::disabled, 0, 0};
  // I-SAMPLE-1 (seed 000 patch 4, down_read_trylock in task_numa_work): never wait behind a
  // writer; the next period tries again.
  if (!lock_.try_lock_shared()) {
    periods_skipped_.fetch_add(1, native::relaxed);
    return {scan_outcome::skipped, 0, 0};
  }
  struct unlock_at_exit {
    sync::rwlock& l;
    ~unlock_at_exit() { l.unlock_shared(); }
  } unlock{lock_};
  periods_scanned_.fetch_add(1, native::relaxed);

  std::size_t total = 0;
  for (const auto& r : regions_) total += r->pages;
  std::size_t budget = std::min(pages, total);
  scan_result res{scan_outcome::scanned, 0, budget};
  if (budget == 0) return res;  // no region: the process keeps its own SIGSEGV handling
  install_fault_handler();  // I-SAMPLE-11: before the first page is protected; then keeps it first

  // The region holding the cursor, or the first one above it, or (wrap) the first.
  std::size_t idx = static_cast<std::size_t>(
      std::upper_bound(regions_.begin(), regions_.end(), cursor_,
                       [](std::uintptr_t a, const auto& r) { return a < r->hi; }) -
      regions_.begin());
  if (idx == regions_.size()) idx = 0;
  std::uintptr_t cursor = std::max(cursor_, regions_[idx]->lo);
  if (cursor >= regions_[idx]->hi) cursor = regions_[idx]->lo;

  while (budget > 0) {
    const region_state& r = *regions_[idx];
    const std::size_t first = (cursor - r.lo) / page_;
    const std::size_t n = std::min(budget, r.pages - first);
    // Mark, then protect each run of newly marked pages with one mprotect, then say so
    // (I-SAMPLE-4: the state says protecting before the page can fault, and protected only
    // once the mprotect is done, so a handler restoring a block never restores a page this
    // mprotect has yet to reach).
    // Pages not open (protected already, or a handler's) are left alone.
    claim_runs(r, first, first + n, detail::kOpen, detail::kProtecting, SIZE_MAX, [&](std::size_t lo, std::size_t hi) {
      const bool ok = ::mprotect(reinterpret_cast<void*>(r.lo + lo * page_), (hi - lo) * page_, PROT_NONE) == 0;
      if (ok)
        res.pages_protected += hi - lo;
      else
        protect_failures_.fetch_add(1, native::relaxed);
      for (std::size_t i = lo; i < hi; ++i) r.state[i].store(ok ? detail::kProtected : detail::kOpen, native::release);
    });
    budget -= n;
    if (first + n == r.pages) {
      idx = (idx + 1) % regions_.size();
      cursor = regions_[idx]->lo;
    } else {
      cursor = r.lo + (first + n) * page_;
    }
  }
  cursor_ = cursor;
  pages_protected_.fetch_add(res.pages_protected, native::relaxed);
  return res;
}

bool region_registry::set_node(const void* p, std::size_t pages, int node) {
  check_node("numa::region_registry::set_node", node);
  const read_section rs;
  const region_state* r = find(rs.get(), reinterpret_cast<std::uintptr_t>(p));
  if (r == nullptr || r->owner != this) return false;
  const std::size_t first = page_index(*r, reinterpret_cast<std::uintptr_t>(p));
  const std::size_t end = first + std::min(pages, r->pages - first);
  for (std::size_t i = first; i < end; ++i) r->node[i].store(static_cast<std::int16_t>(node), native::relaxed);
  return true;
}

registry_counters region_registry::counters() const {
  registry_counters c;
  c.periods_scanned = periods_scanned_.load(native::relaxed);
  c.periods_skipped = periods_skipped_.load(native::relaxed);
  c.pages_protected = pages_protected_.load(native::relaxed);
  c.protect_failures = protect_failures_.load(native::relaxed);
  const read_section rs;
  if (const snapshot* s = rs.get(); s != nullptr)
    for (const region_state* r : s->by_lo)
      if (r->owner == this) {
        ++c.regions;
        c.pages += r->pages;
      }
  return c;
}

access_result note_access(const void* p) noexcept {
  const thread_context ctx = current_context();
  if (ctx.ring == nullptr) return access_result::no_context;
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  const read_section rs;
  const region_state* r = find(rs.get(), addr);
  if (r == nullptr) return access_result::not_in_region;
  const sample s = block_sample(ctx, *r, page_index(*r, addr));
  return ctx.ring->push(s) == push_result::pushed ? access_result::sampled : access_result::dropped;
}

// The lookup returns a plain int: a std::optional<int> built inside the read section went
// through the stack as two partial stores read back as one 8-byte load (g++ 12), a failed
// store forward on every call (40 % of page_node's samples in examples/jbb).
// The thread's last hit is tried before the search (I-SAMPLE-17). The hint is only an
// index: whatever it holds (another snapshot's, or a nested call's from a signal handler), the
// region it names in the section's snapshot is alive, and regions do not overlap, so one that
// holds addr is the region the search would find.
int page_node(const void* p) noexcept {
  if (tls_owned == 0) [[unlikely]]
    claim_owned_slot();
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  const read_section rs;
  const snapshot* s = rs.get();
  if (s == nullptr) return kNotInRegion;
  const std::size_t hint = tls_last_region.load(native::relaxed);
  const region_state* r = hint < s->by_lo.size() ? s->by_lo[hint] : nullptr;
  if (r == nullptr || addr < r->lo || addr >= r->hi) {
    const std::size_t i = index_holding(*s, addr);
    if (i == s->by_lo.size()) return kNotInRegion;
    r = s->by_lo[i];
    tls_last_region.store(i, native::relaxed);
  }
  return r->node[page_index(*r, addr)].load(native::relaxed);
}

namespace detail {

fault_outcome take_fault(std::uintptr_t addr) noexcept {
  const read_section rs;
  const region_state* r = find(rs.get(), addr);
  if (r == nullptr) return fault_outcome::not_ours;
  const std::size_t i = page_index(*r, addr);
  // I-SAMPLE-4: exactly one faulting thread wins protected -> restoring for each page; the
  // fault is ours to sample only when this thread wins the page it faulted on.
  // A page still protecting faulted after the scanner's mprotect and before its store: the
  // scanner is about to say protected; return and retry like a loser.
  std::uint8_t seen = kProtected;
  if (!r->state[i].compare_exchange_strong(seen, kRestoring, native::acq_rel, native::acquire))
    return seen == kRestoring || seen == kProtecting ? fault_outcome::in_progress : fault_outcome::not_ours;
  // I-SAMPLE-13: the other protected pages of the block are restored with it, each run of pages
  // this thread wins with one mprotect. Pages it does not win are left alone: open ones,
  // another handler's, and protecting ones, whose scanner may still be about to mprotect them
  // (restoring those first would leave them PROT_NONE and marked open: a crash at the next
  // touch).
  const block_span b = block_of(*r, i);
  bool restored = true;
  claim_runs(*r, b.first, b.first + b.count, kProtected, kRestoring, i, [&](std::size_t lo, std::size_t hi) {
    // mprotect is not on POSIX's async-signal-safe list, but on Linux it is a plain system
    // call (no lock in user space, no allocation): safe in a handler in practice (I-SAMPLE-9).
    const bool ok = ::mprotect(reinterpret_cast<void*>(r->lo + lo * r->page), (hi - lo) * r->page,
                               PROT_READ | PROT_WRITE) == 0;
    if (!ok && lo <= i && i < hi) restored = false;
    // I-SAMPLE-10: counted once the run is read-write and before any of it reads open, so a
    // handler that reads a page of it open sees the count, and one that sees the count finds
    // those pages read-write.
    if (ok) g_restores.fetch_add(1, native::relaxed);
    // A neighbour whose restore failed is still PROT_NONE: it stays protected, and its own
    // fault judges it. The faulting page is open in our books either way: its repeat fault is
    // judged afresh (fault_sampler.cpp, restore_failed).
    for (std::size_t j = lo; j < hi; ++j) r->state[j].store(ok || j == i ? kOpen : kProtected, native::release);
  });
  if (!restored) return fault_outcome::restore_failed;
  const thread_context ctx = current_context();
  if (ctx.ring == nullptr) return fault_outcome::no_context;
  return ctx.ring->push(block_sample(ctx, *r, i)) == push_result::pushed ? fault_outcome::sampled
                                                                        : fault_outcome::dropped;
}

std::uint64_t retry_generation() noexcept {
  return g_generation.load(native::relaxed) + g_restores.load(native::relaxed);
}

bool owns_reader_slot() noexcept { return tls_owned != 0 && tls_owned != kNoOwnedSlot; }

}  // namespace detail

}  // namespace rt::numa
