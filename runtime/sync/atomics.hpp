// The sync seam: the only place that names std::atomic and fences (DESIGN.md §3, §8).
// Protocol code (deque/, sync/parker, worker/) is written against an atomics *policy* `S`
// so that tests/model can instantiate the same code with Relacy's rl::atomic and check it.
//
//   S::atomic<T>             an atomic cell with load/store/exchange/compare_exchange_*/fetch_add
//   S::fence(order)          a standalone fence
//   S::relaxed/acquire/release/acq_rel/seq_cst   memory orders
//   S::kTsan                 true in the ThreadSanitizer build: TSan does not model standalone
//                            fences, so protocols use the release/acquire-store variant there
//                            (docs/design/deque.md I-DEQ-8).
// Production code uses `native`. Relacy needs a `$` debug-info argument on every access, which
// is why the model policy lives in tests/model and wraps rl::atomic behind the same names.
#pragma once

#include <atomic>
#include <cstddef>

namespace rt::sync {

struct native {
  template <class T>
  using atomic = std::atomic<T>;
  static constexpr std::memory_order relaxed = std::memory_order_relaxed;
  static constexpr std::memory_order acquire = std::memory_order_acquire;
  static constexpr std::memory_order release = std::memory_order_release;
  static constexpr std::memory_order acq_rel = std::memory_order_acq_rel;
  static constexpr std::memory_order seq_cst = std::memory_order_seq_cst;
#if defined(RT_TSAN)
  static constexpr bool kTsan = true;
#else
  static constexpr bool kTsan = false;
#endif
  static void fence(std::memory_order mo) noexcept { std::atomic_thread_fence(mo); }
  static void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
  }
};

// Padding to keep independently written atomics on separate cache lines.
inline constexpr std::size_t kCacheLine = 64;

}  // namespace rt::sync
