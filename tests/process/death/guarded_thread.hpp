// Helpers for the stack guard's tests: a thread with a small stack that enters the stack guard
// as worker `id` (what a worker thread does as it starts), stack-hungry recursion, a write
// through a null pointer the compiler cannot see, and a stand-in "previous" fault handler.
#pragma once

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "worker/stack_guard.hpp"

namespace guard_test {

inline constexpr std::size_t kSmallStack = 256 * 1024;

// Address space kept PROT_NONE below a moat stack (see run_on_thread_with_moat).
inline constexpr std::size_t kMoatBytes = 256 * 1024;

// Runs fn() on a new thread with a stack of `stack_bytes`; the thread enters the stack guard
// as worker `worker_id` first unless worker_id is negative, and leaves it afterwards.
// `stack_at` non-null: the thread runs on that memory (pthread_attr_setstack) instead of a
// stack glibc maps with its guard page.
inline void run_on_thread(int worker_id, std::size_t stack_bytes, void (*fn)(), void* stack_at = nullptr) {
  struct args {
    int id;
    void (*fn)();
  } a{worker_id, fn};
  pthread_attr_t attr;
  if (::pthread_attr_init(&attr) != 0 ||
      (stack_at != nullptr ? ::pthread_attr_setstack(&attr, stack_at, stack_bytes)
                           : ::pthread_attr_setstacksize(&attr, stack_bytes)) != 0)
    throw std::runtime_error("pthread_attr setup failed");
  pthread_t th;
  const int rc = ::pthread_create(
      &th, &attr,
      [](void* p) -> void* {
        const auto* x = static_cast<const args*>(p);
        if (x->id >= 0) rt::detail::stack_guard::enter_worker(x->id);
        x->fn();
        if (x->id >= 0) rt::detail::stack_guard::leave_worker();
        return nullptr;
      },
      &a);
  ::pthread_attr_destroy(&attr);
  if (rc != 0) throw std::runtime_error("pthread_create failed");
  ::pthread_join(th, nullptr);
}

// run_on_thread on a stack of `stack_bytes` with kMoatBytes of PROT_NONE address space right
// below it, all in one mapping of ours. glibc maps a thread's stack wherever mmap finds room,
// sometimes right above a library's writable data (seen: libstdc++'s .bss right below the
// guard page, in about 1 run of 100): a frame that jumps over the guard then writes there
// instead of faulting, and no page below the guard faults. Below a moat stack, every page
// within kMoatBytes faults. glibc adds no guard page to a stack it did not map, but
// pthread_attr_getguardsize still reports the default one, so the stack guard takes the moat's
// top page for the guard.
inline void run_on_thread_with_moat(int worker_id, std::size_t stack_bytes, void (*fn)()) {
  const std::size_t total = kMoatBytes + stack_bytes;
  void* map = ::mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (map == MAP_FAILED) throw std::runtime_error("mmap of a moat stack failed");
  char* stack = static_cast<char*>(map) + kMoatBytes;
  if (::mprotect(stack, stack_bytes, PROT_READ | PROT_WRITE) != 0) throw std::runtime_error("mprotect failed");
  run_on_thread(worker_id, stack_bytes, fn, stack);
  ::munmap(map, total);
}

// The stack size, in KiB, that a thread started by run_on_thread(.., stack_bytes, ..) sees
// (what the guard reports): sanitizer runtimes enlarge thread stacks, so it is measured.
inline std::size_t thread_stack_kib(std::size_t stack_bytes) {
  static std::size_t measured = 0;
  measured = 0;
  run_on_thread(-1, stack_bytes, [] {
    pthread_attr_t attr;
    void* base = nullptr;
    std::size_t size = 0;
    if (::pthread_getattr_np(::pthread_self(), &attr) != 0) return;
    if (::pthread_attr_getstack(&attr, &base, &size) == 0) measured = size / 1024;
    ::pthread_attr_destroy(&attr);
  });
  if (measured == 0) throw std::runtime_error("cannot read a thread's stack size");
  return measured;
}

// The death tests start from the default dispositions, whatever a sanitizer runtime or an
// earlier test installed, so the stack guard's "previous disposition" is known.
inline void reset_fault_dispositions() {
  ::signal(SIGSEGV, SIG_DFL);
  ::signal(SIGBUS, SIG_DFL);
}

// A frame of a few hundred bytes per level, touched at both ends through volatile so that it
// is really there and the recursion cannot become a loop. dive(0, n) = n + n(n-1)/2 for n < 256. `limit` comes from a volatile, so the compiler
// cannot prove the recursion endless (nor warn that it is).
[[gnu::noinline]] inline std::uint64_t dive(std::uint64_t depth, std::uint64_t limit) {
  volatile unsigned char frame[384];
  frame[0] = static_cast<unsigned char>(depth);
  frame[sizeof frame - 1] = frame[0];
  if (depth >= limit) return frame[sizeof frame - 1];
  return dive(depth + 1, limit) + frame[(depth & 1) != 0 ? sizeof frame - 1 : 0];
}

inline void dive_forever() {
  volatile std::uint64_t limit = UINT64_MAX;
  static_cast<void>(dive(0, limit));
}

// The same with frames four times the size of a guard page, written at their low end first:
// without stack-clash probes the fault lands below the guard, not in it.
[[gnu::noinline]] inline std::uint64_t dive_in_big_frames(std::uint64_t depth, std::uint64_t limit) {
  volatile unsigned char frame[16 * 1024];
  frame[0] = static_cast<unsigned char>(depth);
  frame[sizeof frame - 1] = frame[0];
  if (depth >= limit) return frame[sizeof frame - 1];
  return dive_in_big_frames(depth + 1, limit) + frame[(depth & 1) != 0 ? sizeof frame - 1 : 0];
}

inline void dive_in_big_frames_forever() {
  volatile std::uint64_t limit = UINT64_MAX;
  static_cast<void>(dive_in_big_frames(0, limit));
}

// Writes, with the stack nearly empty, to the first page below the calling thread's guard
// (within 128 KiB) that is unmapped or mapped without access (an unlucky neighbour mapping, or
// the stack guard's own PROT_NONE pages): a fault next to the stack that is not an overflow.
// Exits 3 with a message if every such page is accessible (run it on a moat stack).
inline void write_just_below_the_guard() {
  pthread_attr_t attr;
  void* base = nullptr;
  std::size_t size = 0;
  std::size_t guard = 0;
  if (::pthread_getattr_np(::pthread_self(), &attr) != 0) std::abort();
  ::pthread_attr_getstack(&attr, &base, &size);
  ::pthread_attr_getguardsize(&attr, &guard);
  ::pthread_attr_destroy(&attr);
  struct mapping {
    std::uintptr_t lo, hi;
    bool accessible;
  };
  std::vector<mapping> maps;
  std::ifstream in("/proc/self/maps");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string range, perms;
    fields >> range >> perms;
    const auto dash = range.find('-');
    maps.push_back({std::stoull(range.substr(0, dash), nullptr, 16), std::stoull(range.substr(dash + 1), nullptr, 16),
                    perms.compare(0, 3, "---") != 0});
  }
  const auto guard_lo = reinterpret_cast<std::uintptr_t>(base) - guard;
  for (std::uintptr_t k = 1; k <= 32; ++k) {
    const std::uintptr_t a = guard_lo - k * 4096;
    bool accessible = false;
    for (const mapping& m : maps) accessible = accessible || (a >= m.lo && a < m.hi && m.accessible);
    if (!accessible) {
      *reinterpret_cast<volatile int*>(a) = 1;
      return;
    }
  }
  static const char msg[] = "every page within 128 KiB below the guard is accessible\n";
  static_cast<void>(::write(STDERR_FILENO, msg, sizeof msg - 1));
  ::_exit(3);
}

// Writes through a null pointer that went through a volatile variable, as a volatile store:
// the compiler can neither turn it into a trap instruction (SIGILL) nor drop it.
inline void write_through_null() {
  volatile int* volatile p = nullptr;
  *p = 1;
}

// Writes to a mapped page without access rights: a real segfault that no sanitizer reports as
// undefined behaviour first, and what a NUMA hinting fault outside any registered region
// looks like to the fault handlers.
inline void write_to_a_protected_page() {
  void* page = ::mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) std::abort();
  *static_cast<volatile int*>(page) = 1;
}

// UBSan reports a store through a null pointer itself (and exits 1) before any SIGSEGV, so the
// null-pointer tests are skipped where it runs (NUMART_SANITIZER with "undefined").
#if defined(NUMART_TEST_UBSAN)
inline constexpr bool kUbsanCatchesNullStores = true;
#else
inline constexpr bool kUbsanCatchesNullStores = false;
#endif

// A fault handler that the stack guard finds already installed: says so and exits with 42.
// SA_ONSTACK, so that it can run after a stack overflow too (on the guard's alternate stack).
inline void install_previous_handler() {
  struct sigaction sa {};
  sa.sa_sigaction = [](int, siginfo_t*, void*) {
    static const char msg[] = "previous handler ran\n";
    static_cast<void>(::write(STDERR_FILENO, msg, sizeof msg - 1));
    ::_exit(42);
  };
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGSEGV, &sa, nullptr);
  ::sigaction(SIGBUS, &sa, nullptr);
}

}  // namespace guard_test
