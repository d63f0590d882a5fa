// The Relacy side of the sync seam (runtime/sync/atomics.hpp): the same names as rt::sync::native,
// mapped onto rl::atomic and rl::atomic_thread_fence, so that protocol templates written against
// the seam (deque/chase_lev.hpp, later sync/parker.hpp) are model-checked as they ship.
//
// Relacy wants a debug_info (`$`) on every access. Instead of the `$` macro, each wrapper takes a
// `site` argument defaulted at the call site (__builtin_FILE/LINE/FUNCTION: std::source_location
// is not usable with clang 14 + libstdc++ 12), so Relacy's failure histories name the line of the
// protocol (e.g. chase_lev.hpp:123) rather than this file.
//
// Include order matters: relacy.hpp redefines `new`, `delete`, `assert` and `malloc` for the rest
// of the translation unit, so every other header (the standard library, the code under test) goes
// BEFORE this one, and a model TU contains no GoogleTest code (tests/model/model_test.cpp calls
// the models through models.hpp). relacy_std.hpp is not used: it clashes with libstdc++ 12
// (DESIGN.md §8).
#pragma once

#include <string>

#include "models.hpp"

#include <relacy/relacy.hpp>

namespace rt::model {

// The caller's position, captured by default arguments.
struct site {
  const char* func = __builtin_FUNCTION();
  const char* file = __builtin_FILE();
  unsigned line = __builtin_LINE();
};

inline rl::debug_info here(const site& s) { return rl::debug_info(s.func, s.file, s.line); }

// Which deliberate defect the policy injects. `none` is the production mapping; the others
// exist only so that a model can show that Relacy catches the bug the invariant forbids
// (docs/design/deque.md, "What the model checks").
enum class defect {
  none,
  // fence(seq_cst) becomes fence(acq_rel): the store-buffering pattern of take/steal is allowed.
  weak_seq_cst_fence,
  // store(v, release) becomes store(v, relaxed): publication of slots and buffers is lost.
  relaxed_release_store,
  // load(seq_cst) becomes acquire and store(seq_cst) becomes release (read-modify-writes keep
  // their order): breaks the fence-free variant that the ThreadSanitizer build uses.
  weak_seq_cst_access,
  // fence(seq_cst) does nothing (other fences are kept): the parking model gives this policy's
  // fence to one side of I-PARK-1/I-PARK-2 only (docs/design/parking.md, "Parking model").
  dropped_seq_cst_fence,
  // fetch_add/fetch_sub become a load followed by a store (exchange and CAS stay atomic): a
  // concurrent write between the two is overwritten, which breaks the parker's token (I-PARK-3).
  split_rmw,
};

template <bool Tsan = false, defect Defect = defect::none>
struct relacy_policy_t {
  using memory_order = rl::memory_order;
  static constexpr memory_order relaxed = rl::mo_relaxed;
  static constexpr memory_order acquire = rl::mo_acquire;
  static constexpr memory_order release = rl::mo_release;
  static constexpr memory_order acq_rel = rl::mo_acq_rel;
  static constexpr memory_order seq_cst = rl::mo_seq_cst;
  static constexpr bool kTsan = Tsan;

  template <class T>
  class atomic {
   public:
    atomic() = default;
    explicit atomic(T v) : a_(v) {}

    T load(memory_order mo = seq_cst, site loc = {}) const {
      if constexpr (Defect == defect::weak_seq_cst_access) {
        if (mo == rl::mo_seq_cst) mo = rl::mo_acquire;
      }
      return a_.load(mo, here(loc));
    }
    void store(T v, memory_order mo = seq_cst, site loc = {}) {
      if constexpr (Defect == defect::relaxed_release_store) {
        if (mo == rl::mo_release) mo = rl::mo_relaxed;
      }
      if constexpr (Defect == defect::weak_seq_cst_access) {
        if (mo == rl::mo_seq_cst) mo = rl::mo_release;
      }
      a_.store(v, mo, here(loc));
    }
    T exchange(T v, memory_order mo = seq_cst, site loc = {}) {
      return a_.exchange(v, mo, here(loc));
    }
    bool compare_exchange_strong(T& expected, T desired, memory_order success, memory_order failure,
                                 site loc = {}) {
      return a_.compare_exchange_strong(expected, desired, success, here(loc), failure, here(loc));
    }
    bool compare_exchange_weak(T& expected, T desired, memory_order success, memory_order failure,
                               site loc = {}) {
      return a_.compare_exchange_weak(expected, desired, success, here(loc), failure, here(loc));
    }
    template <class D>
    T fetch_add(D delta, memory_order mo = seq_cst, site loc = {}) {
      if constexpr (Defect == defect::split_rmw) {
        const T v = a_.load(load_part(mo), here(loc));
        a_.store(static_cast<T>(v + delta), store_part(mo), here(loc));
        return v;
      } else {
        return a_.fetch_add(delta, mo, here(loc));
      }
    }
    template <class D>
    T fetch_sub(D delta, memory_order mo = seq_cst, site loc = {}) {
      if constexpr (Defect == defect::split_rmw) {
        const T v = a_.load(load_part(mo), here(loc));
        a_.store(static_cast<T>(v - delta), store_part(mo), here(loc));
        return v;
      } else {
        return a_.fetch_sub(delta, mo, here(loc));
      }
    }

    // The futex of runtime/sync/futex.hpp, for the parker's Fx (tests/model/parking_model.cpp).
    // This is Relacy's own futex emulation (rl_int_futex_impl in relacy/stdlib/pthread.hpp, which
    // only takes rl::atomic<int>) on this cell: a scheduling point and a seq_cst fence (the
    // kernel's futex_wait and futex_wake are full barriers, kernel/futex/waitwake.c barriers A
    // and B), then the comparison and the enqueue as one step (preemption disabled, as the kernel
    // compares under the hash-bucket lock), then a block on the cell's wait set. The block is
    // Relacy's own: a thread that is never woken is reported as DEADLOCK once no thread can run.
    // Under the random scheduler the wait may also return spuriously (EINTR), as FUTEX_WAIT may;
    // the context-bound scheduler gets none, as Relacy's condition variables do (it would branch
    // on a spurious return at every scheduling point, which multiplies the schedules past use).
    void futex_wait(T expected, site loc = {}) {
      rl::context& c = rl::ctx();
      c.sched();
      c.atomic_thread_fence_seq_cst();
      T v{};
      {
        rl::preemption_disabler off(c);
        v = a_.load(rl::mo_acquire, here(loc));
      }
      if (v != expected) return;  // EWOULDBLOCK
      a_.wait(c, false, c.is_random_sched(), here(loc));
    }
    // A deliberately wrong futex that sleeps without comparing the word (a wake that came before
    // the sleep is lost): only for the parker model's broken variant.
    void futex_wait_without_compare(site loc = {}) {
      rl::context& c = rl::ctx();
      c.sched();
      c.atomic_thread_fence_seq_cst();
      a_.wait(c, false, c.is_random_sched(), here(loc));
    }
    void futex_wake(unsigned count, site loc = {}) {
      rl::context& c = rl::ctx();
      c.sched();
      c.atomic_thread_fence_seq_cst();
      a_.wake(c, count, here(loc));
    }

   private:
    static memory_order load_part(memory_order mo) {
      return mo == rl::mo_release ? rl::mo_relaxed : mo == rl::mo_acq_rel ? rl::mo_acquire : mo;
    }
    static memory_order store_part(memory_order mo) {
      return (mo == rl::mo_acquire || mo == rl::mo_consume) ? rl::mo_relaxed
             : mo == rl::mo_acq_rel                         ? rl::mo_release
                                                            : mo;
    }

    rl::atomic<T> a_;
  };

  static void fence(memory_order mo, site loc = {}) {
    if constexpr (Defect == defect::weak_seq_cst_fence) {
      if (mo == rl::mo_seq_cst) mo = rl::mo_acq_rel;
    }
    if constexpr (Defect == defect::dropped_seq_cst_fence) {
      if (mo == rl::mo_seq_cst) return;
    }
    rl::atomic_thread_fence(mo, here(loc));
  }

  // A spin iteration is a scheduling point: without it Relacy reports a livelock.
  static void cpu_relax(site loc = {}) { rl::yield(1, here(loc)); }
};

using relacy_policy = relacy_policy_t<>;

// Runs the Relacy test suite `Test` as `s` says. The output goes to an rl::ostringstream, whose
// raw allocator bypasses the operator new that Relacy replaces: a std::ostringstream grown while
// a simulation runs would mix Relacy's heap with malloc's (seen as "double free" with g++ 12).
template <class Test>
model_run simulate(const search& s) {
  rl::test_params params;
  rl::ostringstream out;
  params.output_stream = &out;
  params.progress_stream = &out;
  if (s.how == search::kind::random) {
    params.search_type = rl::sched_random;
    params.iteration_count = s.iterations;
  } else {
    params.search_type = rl::sched_bound;
    params.context_bound = s.context_bound;
  }
  const bool passed = rl::simulate<Test>(params);
  const auto text = out.str();
  return model_run{passed, std::string(text.data(), text.size()), 0};
}

}  // namespace rt::model
