// The fault handler and its place in the SIGSEGV chain: see fault_sampler.hpp and
// docs/design/sampling.md (I-SAMPLE-9..12).
#include "numa/fault_sampler.hpp"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <mutex>
#include <new>

#include "core/assert.hpp"
#include "numa/regions.hpp"
#include "sync/atomics.hpp"

namespace rt::numa {

namespace {

using sync::native;

// The chain as the handler sees it (I-SAMPLE-12): `below` is the disposition found when ours
// was first installed; `above` a handler installed over ours later (found by
// keep_fault_handler_first(), which put ours back in front). Immutable once published;
// never freed (a handler may hold one at any time), reachable through `older` so that leak
// checkers see them. One is created per change of the chain, which happens a handful of times
// per process.
struct chain {
  struct sigaction below;
  struct sigaction above;
  bool has_above;
  const chain* older;
};

// Written by install/keep_first under g_install_mu (release), read by the handler (acquire).
constinit native::atomic<const chain*> g_chain{nullptr};
constinit std::mutex g_install_mu;
// I-SAMPLE-16: a fork() child must not inherit g_install_mu held by a parent thread (the
// balancer takes it every period), or its own runtime's workers would block at their start
// (keep_fault_handler_first). Held across the fork; registered when the library loads.
void lock_install_for_fork() noexcept { g_install_mu.lock(); }
void unlock_install_after_fork() noexcept { g_install_mu.unlock(); }
const int g_install_fork_handlers = ::pthread_atfork(lock_install_for_fork, unlock_install_after_fork, unlock_install_after_fork);

// Statistics: RMW by handlers on any thread, read relaxed by fault_stats().
struct counters {
  native::atomic<std::uint64_t> sampled{0}, dropped{0}, without_context{0}, restore_failed{0}, in_progress{0},
      retried{0}, passed_on{0};
};
constinit counters g_counters;
void bump(native::atomic<std::uint64_t>& c) noexcept { c.fetch_add(1, native::relaxed); }

// Per-thread handler state, touched only by this thread's handler (and the handlers it calls
// directly): plain variables, constinit and initial-exec like the context (I-SAMPLE-8).
struct handler_tls {
  std::uintptr_t last_addr;   // I-SAMPLE-10: the last fault returned for a retry ...
  std::uint64_t last_gen;     // ... and detail::retry_generation() then
  bool calling_above;         // I-SAMPLE-12: we are inside chain::above
  bool below_done;            // chain::above called us back and we ran `below`
};
constinit thread_local handler_tls tls_handler __attribute__((tls_model("initial-exec"))) = {0, 0, false, false};

bool is_handler(const struct sigaction& sa) noexcept {
  return (sa.sa_flags & SA_SIGINFO) != 0 || (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN);
}

void on_segv(int sig, siginfo_t* info, void* uctx);

// Whether two dispositions deliver a signal to the same place the same way.
bool same_action(const struct sigaction& a, const struct sigaction& b) noexcept {
  if ((a.sa_flags & SA_SIGINFO) != (b.sa_flags & SA_SIGINFO)) return false;
  return (a.sa_flags & SA_SIGINFO) != 0 ? a.sa_sigaction == b.sa_sigaction : a.sa_handler == b.sa_handler;
}

bool is_ours(const struct sigaction& sa) noexcept {
  return (sa.sa_flags & SA_SIGINFO) != 0 && sa.sa_sigaction == &on_segv;
}

// Calls a disposition the way the kernel would have delivered to it.
void call(const struct sigaction& sa, int sig, siginfo_t* info, void* uctx) noexcept {
  if ((sa.sa_flags & SA_RESETHAND) != 0) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(sig, &dfl, nullptr);
  }
  if ((sa.sa_flags & SA_SIGINFO) != 0)
    sa.sa_sigaction(sig, info, uctx);
  else
    sa.sa_handler(sig);
}

// The disposition found first: a handler is called; SIG_DFL/SIG_IGN becomes SIG_DFL and the
// fault repeats (or, for a signal sent with kill(), is raised again) into it.
void pass_below(const chain& c, int sig, siginfo_t* info, void* uctx, bool from_fault) noexcept {
  if (is_handler(c.below)) {
    call(c.below, sig, info, uctx);
    return;
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(sig, &dfl, nullptr);
  if (!from_fault) ::raise(sig);  // pending until we return: SIGSEGV is blocked in here
}

void pass_on(int sig, siginfo_t* info, void* uctx, bool from_fault) noexcept {
  bump(g_counters.passed_on);
  const chain* c = g_chain.load(native::acquire);
  if (c == nullptr) return;  // cannot happen: published before the handler is installed
  handler_tls& t = tls_handler;
  if (c->has_above) {
    // I-SAMPLE-12: the handler installed over ours sees every fault that is not ours first.
    // It found ours as its predecessor: if it calls it directly, we run `below` then (and
    // note it); if it resets the disposition to it and returns (the stack guard's way), we
    // run `below` after it.
    t.calling_above = true;
    t.below_done = false;
    call(c->above, sig, info, uctx);
    t.calling_above = false;
    if (t.below_done) return;
  }
  pass_below(*c, sig, info, uctx, from_fault);
}

void on_segv(int sig, siginfo_t* info, void* uctx) {
  const int saved_errno = errno;
  handler_tls& t = tls_handler;
  // si_code > 0: raised by a fault (SEGV_MAPERR, SEGV_ACCERR, ...); <= 0: kill/raise/sigqueue.
  const bool from_fault = info != nullptr && info->si_code > 0;
  if (t.calling_above) {
    // chain::above called its predecessor (us) directly: continue below it.
    const chain* c = g_chain.load(native::acquire);
    if (c != nullptr) pass_below(*c, sig, info, uctx, from_fault);
    t.below_done = true;
    errno = saved_errno;
    return;
  }
  if (from_fault) {
    const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
    switch (detail::take_fault(addr)) {
      case detail::fault_outcome::sampled:
        bump(g_counters.sampled);
        t.last_addr = 0;
        errno = saved_errno;
        return;
      case detail::fault_outcome::dropped:
        bump(g_counters.dropped);
        t.last_addr = 0;
        errno = saved_errno;
        return;
      case detail::fault_outcome::no_context:
        bump(g_counters.without_context);
        t.last_addr = 0;
        errno = saved_errno;
        return;
      case detail::fault_outcome::restore_failed:
        bump(g_counters.restore_failed);
        errno = saved_errno;
        return;  // the page is open again in our books: the repeat fault is judged afresh
      case detail::fault_outcome::in_progress:
        // Another thread is restoring the page (or the scanner is about to mark it
        // protected): the retry finds it open. Yield first (I-SAMPLE-4): that thread may be
        // preempted, and spinning through faults until it runs again cost examples/jbb, 16
        // workers on 2 cores, 84 thousand faults and a quarter of its throughput in 7 s.
        bump(g_counters.in_progress);
        ::sched_yield();
        errno = saved_errno;
        return;
      case detail::fault_outcome::not_ours: {
        // I-SAMPLE-10: return for a retry. A fault that raced a restore by another thread or
        // a region's removal succeeds on the retry, or faults again after another protect and
        // restore; a real fault repeats at the same address with no publication and no
        // restore anywhere in between, and is passed on (while other threads keep restoring
        // pages, after a few more faults).
        const std::uint64_t gen = detail::retry_generation();
        if (t.last_addr != addr || t.last_gen != gen) {
          t.last_addr = addr;
          t.last_gen = gen;
          bump(g_counters.retried);
          errno = saved_errno;
          return;
        }
        t.last_addr = 0;
        break;
      }
    }
  }
  pass_on(sig, info, uctx, from_fault);
  errno = saved_errno;
}

struct sigaction our_action() noexcept {
  struct sigaction sa {};
  sa.sa_sigaction = &on_segv;
  // SA_ONSTACK: a stack overflow must still reach the stack guard through us, on the
  // alternate stack. No SA_NODEFER: SIGSEGV stays blocked inside the handler, so a fault in
  // the handler itself kills the process at once (the kernel's rule for a blocked
  // synchronous signal) instead of recursing on the alternate stack.
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  return sa;
}

// Never freed (see chain). Under g_install_mu.
const chain* make_chain(const struct sigaction& below, const struct sigaction* above, const chain* older) noexcept {
  auto* c = new (std::nothrow) chain{below, {}, above != nullptr, older};
  if (c != nullptr && above != nullptr) c->above = *above;
  return c;
}

// I-SAMPLE-11: the disposition our sigaction() replaced is the one the chain must lead to.
// Another installer (the stack guard at the first worker's start) may have set its handler
// between our look and our install, after reading ours as absent: it would then be lost from
// both chains and an overflow would die without its report. Under g_install_mu; the
// swap's `replaced` is exact, so a changed disposition becomes `above` (a handler) or
// `below` (SIG_DFL/SIG_IGN) of a new chain.
void adopt_replaced(const struct sigaction& found, const struct sigaction& replaced) noexcept {
  if (same_action(found, replaced) || is_ours(replaced)) return;
  const chain* cur = g_chain.load(native::relaxed);
  const chain* next = is_handler(replaced) ? make_chain(cur->below, &replaced, cur) : make_chain(replaced, nullptr, cur);
  if (next != nullptr) g_chain.store(next, native::release);
}

}  // namespace

void install_fault_handler() noexcept {
  RT_ASSERT(g_install_fork_handlers == 0, "I-SAMPLE-16", "pthread_atfork failed for the NUMA fault handler's install lock");
  std::lock_guard<std::mutex> lk(g_install_mu);
  const chain* cur = g_chain.load(native::relaxed);
  struct sigaction found {};
  ::sigaction(SIGSEGV, nullptr, &found);
  if (cur != nullptr) {
    if (is_ours(found)) return;
    // Someone installed over us (or reset SIGSEGV): put ours back in front (I-SAMPLE-12).
    // A real handler found there keeps being called, before `below`; SIG_DFL/SIG_IGN found
    // there replaces `below`. Ours goes in first, then the chain that knows about it: a fault
    // in between skips the new handler once, it never calls it twice.
    const chain* next = is_handler(found) ? make_chain(cur->below, &found, cur) : make_chain(found, nullptr, cur);
    if (next == nullptr) return;  // out of memory: leave the chain as it is
    const struct sigaction ours = our_action();
    struct sigaction replaced {};
    ::sigaction(SIGSEGV, &ours, &replaced);
    g_chain.store(next, native::release);
    adopt_replaced(found, replaced);
    return;
  }
  // First install: publish the chain before the handler can run.
  const chain* first = make_chain(found, nullptr, nullptr);
  RT_ASSERT(first != nullptr, "I-SAMPLE-11", "out of memory installing the NUMA fault handler");
  g_chain.store(first, native::release);
  const struct sigaction ours = our_action();
  struct sigaction replaced {};
  const int rc = ::sigaction(SIGSEGV, &ours, &replaced);
  RT_ASSERT(rc == 0, "I-SAMPLE-11", "sigaction(SIGSEGV) refused the NUMA fault handler");
  adopt_replaced(found, replaced);
}

void keep_fault_handler_first() noexcept {
  if (g_chain.load(native::acquire) == nullptr) return;
  install_fault_handler();
}

bool fault_handler_installed() noexcept { return g_chain.load(native::acquire) != nullptr; }

fault_counters fault_stats() noexcept {
  fault_counters c;
  c.sampled = g_counters.sampled.load(native::relaxed);
  c.dropped = g_counters.dropped.load(native::relaxed);
  c.without_context = g_counters.without_context.load(native::relaxed);
  c.restore_failed = g_counters.restore_failed.load(native::relaxed);
  c.in_progress = g_counters.in_progress.load(native::relaxed);
  c.retried = g_counters.retried.load(native::relaxed);
  c.passed_on = g_counters.passed_on.load(native::relaxed);
  return c;
}

}  // namespace rt::numa
