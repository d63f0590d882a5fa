// The parking protocol under Relacy (docs/design/parking.md, "Parking model"): the production
// templates sync::parker<S, Fx> and sync::idle_set<S>, instantiated on tests/model/relacy_policy.hpp,
// driven by workers and a notifier that follow runtime/worker/scheduler.cpp step by step
// (run_worker/find_work/park on the worker side, push_local/notify_one on the notifier side).
// scheduler.cpp itself is not a template, so those steps are restated here; the numbered
// invariants they carry are cited where they occur.
//
// A lost wake-up shows as Relacy's DEADLOCK: every worker blocks in the parker's futex wait
// (tests/model/relacy_policy.hpp, futex_wait: a block on Relacy's wait set, not a spin) while
// published work is left unclaimed, and no thread can run any more.
#include <cstdint>
#include <memory>
#include <type_traits>

#include "models.hpp"
#include "sync/idle.hpp"
#include "sync/parker.hpp"
#include "relacy_policy.hpp"  // last: it includes <relacy/relacy.hpp>

namespace rt::model {
namespace {

// How many iterations reached the path a model targets (see model_run::path_hits). Plain
// variables: Relacy runs its threads as fibers of one OS thread and does not instrument them.
std::uint64_t g_path_hits = 0;
bool g_unparked = false;  // parker model: the unparker has returned from unpark()
std::uint64_t g_joiner_searches = 0;  // model 4: wake-ups that made the joiner a searcher

// The parker's Fx over Relacy's futex emulation (relacy_policy.hpp, futex_wait/futex_wake).
template <class S>
struct relacy_futex {
  static void wait(typename S::template atomic<std::uint32_t>& word, std::uint32_t expected, site loc = {}) {
    word.futex_wait(expected, loc);
  }
  static void wake_one(typename S::template atomic<std::uint32_t>& word, site loc = {}) {
    word.futex_wake(1, loc);
  }
};

// Broken Fx: sleeps without comparing the word, so a wake_one() that lands between the parker's
// "I am parked" write and the sleep is lost.
template <class S>
struct futex_without_compare {
  static void wait(typename S::template atomic<std::uint32_t>& word, std::uint32_t, site loc = {}) {
    word.futex_wait_without_compare(loc);
  }
  static void wake_one(typename S::template atomic<std::uint32_t>& word, site loc = {}) {
    word.futex_wake(1, loc);
  }
};

// ---------------------------------------------------------------------------------------------
// Model 2 (I-PARK-3, I-PARK-4): one parker, one unpark racing one park, in every order (the
// schedule that runs the unparker to completion first is the "unpark before park" case). park()
// must return (else DEADLOCK), and only through the token: what the unparker wrote before
// unpark() is visible after park() returns (a plain rl::var, so a spurious return without the
// token is a DATA RACE or a failed assertion). Relacy's futex wait returns spuriously too.

template <class S, class Fx>
struct parker_model : rl::test_suite<parker_model<S, Fx>, 2> {
  // Held by pointer: Relacy mallocs the test object, which would not honour alignas(64).
  std::unique_ptr<sync::parker<S, Fx>> p = std::make_unique<sync::parker<S, Fx>>();
  rl::var<int> payload;

  void before() {
    payload(RL_INFO) = 0;
    g_unparked = false;
  }

  void thread(unsigned id) {
    if (id == 0) {
      payload(RL_INFO) = 1;
      p->unpark();
      g_unparked = true;
    } else {
      if (g_unparked) ++g_path_hits;  // this schedule is "unpark before park"
      p->park();
      RL_ASSERT(payload(RL_INFO) == 1);
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Models 1, 3 and 4: `Workers` workers and one notifier that publishes `Units` units of work one
// at a time. The run ends when the worker that claims the last unit stops the others (the
// terminated_ path of scheduler.cpp: a flag, then an unpark of every parker); work that nobody is
// woken for leaves every worker parked and the notifier finished: DEADLOCK.
// Model 4 adds `Joiners` joiners past their help floor (I-PARK-12, scheduler::block_joiner):
// each blocks until the run ends (its awaited task is the last unit) and takes no work. It
// registers unable to search; should the idle set ever make it a searcher anyway, it could not
// search, so the searcher count would stay taken and the units unclaimed: DEADLOCK.

template <class S, parking_variant V, int Workers, int Units, int Joiners = 0>
struct parking_model : rl::test_suite<parking_model<S, V, Workers, Units, Joiners>, Workers + Joiners + 1> {
  using idle_t = sync::idle_set<S>;
  using parker_t = sync::parker<S, relacy_futex<S>>;
  using dropped = relacy_policy_t<false, defect::dropped_seq_cst_fence>;
  // The two seq_cst points of the protocol. A broken variant gives one side the policy whose
  // fence(seq_cst) does nothing; the idle set and the parkers keep the production mapping.
  using sleeper_fence = std::conditional_t<V == parking_variant::sleeper_fence_dropped, dropped, S>;
  using notifier_fence = std::conditional_t<V == parking_variant::notifier_fence_dropped, dropped, S>;

  // Production: max(1, workers * searching_max_pct / 100) with 50 %.
  std::unique_ptr<idle_t> idle = std::make_unique<idle_t>(Workers + Joiners, Workers / 2);
  std::unique_ptr<parker_t> parkers[Workers + Joiners];
  // The queue: the notifier stores how many units it has published (release, as a deque push
  // publishes bottom); workers claim them with a CAS on `claimed` (as a steal moves top).
  typename S::template atomic<int> pushed{0};
  typename S::template atomic<int> claimed{0};
  // terminated_: set by the worker that claims the last unit.
  typename S::template atomic<int> done{0};
  int taken[Workers] = {};  // units claimed by each worker; each written by its worker only

  parking_model() {
    for (auto& p : parkers) p = std::make_unique<parker_t>();
  }

  // Claims one published unit: returns its number (1..Units), or 0 when none is left.
  int try_take() {
    int c = claimed.load(S::relaxed);
    while (c < pushed.load(S::acquire)) {
      if (claimed.compare_exchange_strong(c, c + 1, S::acq_rel, S::relaxed)) return c + 1;
    }
    return 0;
  }
  // scheduler::work_visible: an emptiness estimate, read after the I-PARK-2 fence.
  bool work_visible() { return pushed.load(S::relaxed) > claimed.load(S::relaxed); }

  // scheduler::notify_one
  void notify_one() {
    const int s = idle->take_sleeper_to_search();
    if (s >= 0) parkers[s]->unpark();
  }

  // scheduler::find_work: local queues first (the shared queue stands for the node's injection
  // queue, which find_local polls); then, as a searcher, one round of the steal ladder.
  int find_work(bool& searching) {
    if (const int u = try_take()) return u;  // find_local: a searcher that finds local work stays one
    if (!searching && idle->try_start_searching()) searching = true;
    if (!searching) return 0;
    if (const int u = try_take()) {
      searching = false;
      if (idle->stop_searching()) notify_one();  // I-SEARCH-1
      return u;
    }
    return 0;
  }

  // scheduler::park (the mailbox, draining and pool steps have no counterpart here).
  void park(int w, bool& searching) {
    const bool was_searching = searching;
    searching = false;
    idle->prepare_park(w, was_searching);
    sleeper_fence::fence(S::seq_cst);  // I-PARK-2: registration before the re-check
    if (V != parking_variant::recheck_skipped && work_visible()) {
      if (idle->cancel_park(w) == idle_t::cancel_result::already_woken) {
        ++g_path_hits;  // I-PARK-5: a notifier took us off the list as we found the work
        if constexpr (V != parking_variant::cancel_result_ignored) {
          searching = idle->after_wake(w) == idle_t::wake_kind::as_searcher;
        }
      }
      return;
    }
    for (;;) {
      parkers[w]->park();
      if (done.load(S::acquire) != 0) return;
      const auto kind = idle->after_wake(w);
      if (kind == idle_t::wake_kind::still_parked) continue;  // I-PARK-4
      searching = kind == idle_t::wake_kind::as_searcher;
      return;
    }
  }

  void finish(int self) {
    done.store(1, S::release);
    for (int v = 0; v < Workers + Joiners; ++v) {
      if (v != self) parkers[v]->unpark();
    }
  }

  // scheduler::block_joiner for a joiner past its help floor, until its join is over (`done`:
  // the completion that unparks it, I-TASK-5, stands in finish()). I-PARK-4's spurious and
  // stale wake-ups send it round again.
  void block_deep(int j) {
    constexpr bool can_search = V == parking_variant::joiner_registered_searchable;
    for (;;) {
      idle->prepare_park(j, false, true, can_search);
      S::fence(S::seq_cst);  // I-PARK-2
      if (done.load(S::acquire) == 0) parkers[j]->park();
      if (idle->cancel_park(j, true) == idle_t::cancel_result::already_woken &&
          idle->after_wake(j) == idle_t::wake_kind::as_searcher)
        ++g_joiner_searches;  // made a searcher it cannot be: the searcher count stays taken
      if (done.load(S::acquire) != 0) return;
    }
  }

  void thread(unsigned id) {
    if (id >= Workers && id < Workers + Joiners) {
      block_deep(static_cast<int>(id));
      return;
    }
    if (id == Workers + Joiners) {
      // The notifier: scheduler::push_local for each unit.
      for (int i = 1; i <= Units; ++i) {
        pushed.store(i, S::release);
        notifier_fence::fence(S::seq_cst);  // I-PARK-1: the push before reading the idle state
        if (idle->should_wake()) notify_one();
      }
      return;
    }
    const int w = static_cast<int>(id);
    bool searching = false;
    for (;;) {
      if (const int u = find_work(searching)) {
        ++taken[w];
        if (u == Units) {  // the last unit: stop the others
          finish(w);
          return;
        }
        continue;
      }
      if (done.load(S::acquire) != 0) return;
      park(w, searching);
      if (done.load(S::acquire) != 0) return;
    }
  }

  void after() {
    int total = 0;
    for (int t : taken) total += t;
    RL_ASSERT(total == Units);
    RL_ASSERT(claimed.load(S::relaxed) == Units);
  }
};

}  // namespace

model_run run_parker(parker_variant v, const search& s) {
  using split = relacy_policy_t<false, defect::split_rmw>;
  g_path_hits = 0;
  model_run r{false, "run_parker: unknown parker_variant", 0};
  switch (v) {
    case parker_variant::correct:
      r = simulate<parker_model<relacy_policy, relacy_futex<relacy_policy>>>(s);
      break;
    case parker_variant::split_rmw:
      r = simulate<parker_model<split, relacy_futex<split>>>(s);
      break;
    case parker_variant::futex_without_compare:
      r = simulate<parker_model<relacy_policy, futex_without_compare<relacy_policy>>>(s);
      break;
  }
  r.path_hits = g_path_hits;
  return r;
}

template <parking_variant V>
model_run run_parking_as(unsigned workers, const search& s) {
  g_path_hits = 0;
  model_run r{false, "run_parking: workers must be 1 (one unit) or 2 (two units)", 0};
  if (workers == 1) r = simulate<parking_model<relacy_policy, V, 1, 1>>(s);
  if (workers == 2) r = simulate<parking_model<relacy_policy, V, 2, 2>>(s);
  r.path_hits = g_path_hits;
  return r;
}

model_run run_parking_with_joiner(parking_variant v, const search& s) {
  g_joiner_searches = 0;
  model_run r{false, "run_parking_with_joiner: only correct and joiner_registered_searchable", 0};
  if (v == parking_variant::correct)
    r = simulate<parking_model<relacy_policy, parking_variant::correct, 1, 1, 1>>(s);
  if (v == parking_variant::joiner_registered_searchable)
    r = simulate<parking_model<relacy_policy, parking_variant::joiner_registered_searchable, 1, 1, 1>>(s);
  r.path_hits = g_joiner_searches;
  return r;
}

model_run run_parking(parking_variant v, unsigned workers, const search& s) {
  switch (v) {
    case parking_variant::correct:
      return run_parking_as<parking_variant::correct>(workers, s);
    case parking_variant::sleeper_fence_dropped:
      return run_parking_as<parking_variant::sleeper_fence_dropped>(workers, s);
    case parking_variant::notifier_fence_dropped:
      return run_parking_as<parking_variant::notifier_fence_dropped>(workers, s);
    case parking_variant::recheck_skipped:
      return run_parking_as<parking_variant::recheck_skipped>(workers, s);
    case parking_variant::cancel_result_ignored:
      return run_parking_as<parking_variant::cancel_result_ignored>(workers, s);
    case parking_variant::joiner_registered_searchable:
      break;  // a joiner's defect: run_parking_with_joiner
  }
  return model_run{false, "run_parking: unknown parking_variant", 0};
}

}  // namespace rt::model
