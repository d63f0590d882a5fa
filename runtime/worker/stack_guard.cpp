// Stack-overflow reporting for worker threads: see stack_guard.hpp and
// docs/adr/0008-stack-overflow.md.
//
// The handler chain. The first enter_worker() installs on_fault() for SIGSEGV and SIGBUS and
// keeps whatever disposition was there before (a user's handler, a sanitizer's, or SIG_DFL).
// on_fault() never recovers from a fault: it reports an overflow of the current worker's stack
// if that is what the fault is, puts the previous disposition back and returns, so that the
// faulting instruction faults again and meets the previous disposition as if numart had never
// been there (SIG_DFL: the process dies with the original signal, and a core if enabled).
//
// The NUMA sampling handler of issue 6 (mprotect hinting faults, DESIGN.md §6) sits in this
// chain above us: it must be installed after the stack guard, handle the faults on its own
// protected pages, and hand every other fault to this handler (the disposition it found). A
// handler installed *before* the first worker that recovers from faults would be put back on
// the first fault that reaches us and would take this handler out of the chain (the ADR).
#include "worker/stack_guard.hpp"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace rt::detail::stack_guard {

namespace {

// What counts as an overflow of the current worker's stack:
// * a fault inside its guard (the PROT_NONE pages glibc puts directly below the stack: nothing
//   else can live there), or
// * a fault at most kOverflowWindow below the low end of the stack while the stack pointer is
//   itself at most kStackPointerSlack above that end: a frame larger than the guard skips over
//   it, and code built without -fstack-clash-protection probes nothing on the way down. The
//   stack pointer test keeps a fault in some other mapping that happens to lie just below the
//   guard (an mmap placed there) from being called an overflow while the stack is shallow.
//   The slack covers the x86-64 red zone (128 bytes below the stack pointer, used without
//   moving it) and a push at the very end, with room to spare.
constexpr std::size_t kOverflowWindow = 128 * 1024;
constexpr std::uintptr_t kStackPointerSlack = 4096;
// The alternate signal stack: the kernel's signal frame (up to a few KiB with AVX-512 state),
// this handler (a few hundred bytes), and a previous handler that also asked for SA_ONSTACK.
constexpr std::size_t kAltStackSize = 64 * 1024;
// PROT_NONE above the alternate stack. mmap places the alternate stack right below the
// thread's own stack more often than not (both are mapped as the thread starts), and a
// recursion whose frames jump over the thread's guard page would otherwise run on into the
// alternate stack, overwrite it, and take the handler down with it: frames smaller than this
// fault here instead, inside the overflow window, and the handler runs on an intact stack.
constexpr std::size_t kAltStackHighGuard = 64 * 1024;

// What the handler knows about the calling thread. Written only by the thread itself (in
// enter_worker/leave_worker), read by the handler on the same thread: `entered` is set last
// and cleared first, with a signal fence, so a handler that sees it set sees the bounds.
// constinit and initial-exec: no lazy TLS initialisation and no __tls_get_addr call, both of
// which are unsafe inside a signal handler (libnumart is a static library, ADR 0001).
struct thread_state {
  int id;
  std::uintptr_t stack_lo;   // lowest address of the usable stack
  std::size_t stack_size;
  std::uintptr_t guard_lo;   // [guard_lo, stack_lo): the guard pages
  std::uintptr_t window_lo;  // [window_lo, guard_lo): an overflow if the stack pointer is low
  void* alt_map;             // the alternate stack mapping this thread owns, or null
  std::size_t alt_map_len;
  void* alt_sp;              // its usable part, as given to sigaltstack
  volatile sig_atomic_t entered;
};

[[gnu::tls_model("initial-exec")]] constinit thread_local thread_state tls_state{};

// The dispositions found when the handler was installed. Written once, by the first
// enter_worker (a thread-safe static initialisation), before on_fault is installed for the
// signal; only read afterwards.
struct sigaction g_prev_segv;
struct sigaction g_prev_bus;

// Appends `s` to buf[len..cap); returns the new length. Async-signal-safe.
std::size_t append(char* buf, std::size_t len, std::size_t cap, const char* s) noexcept {
  for (; *s != '\0' && len < cap; ++s) buf[len++] = *s;
  return len;
}

std::size_t append_number(char* buf, std::size_t len, std::size_t cap, std::uint64_t v) noexcept {
  char digits[24];
  std::size_t d = 0;
  do {
    digits[d++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (d > 0 && len < cap) buf[len++] = digits[--d];
  return len;
}

// One line on stderr, with write(2) from a stack buffer: no lock, no allocation.
void report_overflow(const thread_state& s) noexcept {
  constexpr std::size_t kCap = 320;
  char buf[kCap];
  std::size_t n = 0;
  n = append(buf, n, kCap, "numart: worker ");
  n = append_number(buf, n, kCap, static_cast<std::uint64_t>(s.id < 0 ? 0 : s.id));
  n = append(buf, n, kCap, " overflowed its stack of ");
  n = append_number(buf, n, kCap, s.stack_size / 1024);
  n = append(buf, n, kCap,
             " KiB (deep recursion in a task?); make the recursion shallower or iterative, or raise the "
             "stack size (worker stacks follow ulimit -s); the fault is passed on\n");
  std::size_t off = 0;
  while (off < n) {
    const ssize_t w = ::write(STDERR_FILENO, buf + off, n - off);
    if (w <= 0) break;
    off += static_cast<std::size_t>(w);
  }
}

// The stack pointer at the fault, or 0 where this file does not know the machine context.
std::uintptr_t fault_stack_pointer(const void* ctx) noexcept {
  if (ctx == nullptr) return 0;
  [[maybe_unused]] const auto* uc = static_cast<const ucontext_t*>(ctx);
#if defined(__x86_64__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
#elif defined(__aarch64__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.sp);
#else
  return 0;
#endif
}

bool is_overflow(const thread_state& s, std::uintptr_t addr, std::uintptr_t sp) noexcept {
  if (addr >= s.stack_lo) return false;
  if (addr >= s.guard_lo) return true;
  return addr >= s.window_lo && sp != 0 && sp < s.stack_lo + kStackPointerSlack;
}

void on_fault(int sig, siginfo_t* info, void* ctx) {
  const int saved_errno = errno;
  const thread_state& s = tls_state;
  // si_code > 0: raised by the hardware fault itself (SEGV_MAPERR, SEGV_ACCERR, BUS_*,
  // SI_KERNEL); <= 0: sent by kill/raise/sigqueue, whose si_addr means nothing.
  const bool from_fault = info != nullptr && info->si_code > 0;
  if (s.entered != 0 && from_fault &&
      is_overflow(s, reinterpret_cast<std::uintptr_t>(info->si_addr), fault_stack_pointer(ctx)))
    report_overflow(s);
  // Put the previous disposition back (SIG_DFL if there was none) and return: the faulting
  // instruction faults again and meets it. A signal sent by kill() is not repeated by
  // returning, so it is raised again; it stays pending until this handler returns.
  ::sigaction(sig, sig == SIGBUS ? &g_prev_bus : &g_prev_segv, nullptr);
  if (!from_fault) ::raise(sig);
  errno = saved_errno;
}

bool install_handler() noexcept {
  // Read the previous dispositions first, then install: a fault on another thread between the
  // two finds g_prev_* already written.
  ::sigaction(SIGSEGV, nullptr, &g_prev_segv);
  ::sigaction(SIGBUS, nullptr, &g_prev_bus);
  struct sigaction sa {};
  sa.sa_sigaction = &on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGSEGV, &sa, nullptr);
  ::sigaction(SIGBUS, &sa, nullptr);
  return true;
}

// Gives the calling thread an alternate signal stack, between a PROT_NONE page below (a
// handler that overflows it faults instead of writing over a neighbour) and kAltStackHighGuard
// of PROT_NONE above. A thread that already has one (its owner's, a sanitizer's) keeps it.
// False if none could be had.
bool give_alt_stack(thread_state& s) noexcept {
  stack_t current{};
  if (::sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE) == 0) return true;
  const long page_l = ::sysconf(_SC_PAGESIZE);
  const std::size_t page = page_l > 0 ? static_cast<std::size_t>(page_l) : 4096;
  const long min_l = ::sysconf(_SC_SIGSTKSZ);
  std::size_t size = min_l > 0 && static_cast<std::size_t>(min_l) > kAltStackSize ? static_cast<std::size_t>(min_l)
                                                                                   : kAltStackSize;
  size = (size + page - 1) / page * page;
  const std::size_t high = (kAltStackHighGuard + page - 1) / page * page;
  const std::size_t len = page + size + high;
  void* map = ::mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (map == MAP_FAILED) return false;
  char* sp = static_cast<char*>(map) + page;
  stack_t ss{};
  ss.ss_sp = sp;
  ss.ss_size = size;
  ss.ss_flags = 0;
  if (::mprotect(sp, size, PROT_READ | PROT_WRITE) != 0 || ::sigaltstack(&ss, nullptr) != 0) {
    ::munmap(map, len);
    return false;
  }
  s.alt_map = map;
  s.alt_map_len = len;
  s.alt_sp = sp;
  return true;
}

}  // namespace

void enter_worker(int worker_id) noexcept {
  thread_state& s = tls_state;
  if (s.entered != 0) {
    s.id = worker_id;
    return;
  }
  pthread_attr_t attr;
  if (::pthread_getattr_np(::pthread_self(), &attr) != 0) return;
  void* base = nullptr;
  std::size_t size = 0;
  std::size_t guard = 0;
  const bool have_stack = ::pthread_attr_getstack(&attr, &base, &size) == 0;
  if (::pthread_attr_getguardsize(&attr, &guard) != 0) guard = 0;
  ::pthread_attr_destroy(&attr);
  if (!have_stack) return;

  [[maybe_unused]] static const bool installed = install_handler();  // once per process
  if (!give_alt_stack(s)) return;

  // glibc puts a thread's guard directly below the stack that pthread_attr_getstack reports.
  const auto lo = reinterpret_cast<std::uintptr_t>(base);
  const std::size_t window = guard > kOverflowWindow ? guard : kOverflowWindow;
  s.id = worker_id;
  s.stack_lo = lo;
  s.stack_size = size;
  s.guard_lo = lo > guard ? lo - guard : 0;
  s.window_lo = lo > window ? lo - window : 0;
  std::atomic_signal_fence(std::memory_order_seq_cst);  // the bounds before `entered`
  s.entered = 1;
}

void leave_worker() noexcept {
  thread_state& s = tls_state;
  s.entered = 0;
  std::atomic_signal_fence(std::memory_order_seq_cst);  // `entered` off before the stack goes
  if (s.alt_map == nullptr) return;
  stack_t current{};
  const bool ours_in_use = ::sigaltstack(nullptr, &current) == 0 && current.ss_sp == s.alt_sp &&
                           (current.ss_flags & SS_DISABLE) == 0;
  if (ours_in_use) {
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    if (::sigaltstack(&off, nullptr) != 0) return;  // still in use: keep the mapping
  }
  ::munmap(s.alt_map, s.alt_map_len);
  s.alt_map = nullptr;
  s.alt_map_len = 0;
  s.alt_sp = nullptr;
}

}  // namespace rt::detail::stack_guard
