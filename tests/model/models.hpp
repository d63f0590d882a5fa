// The Relacy models of tests/model, callable from GoogleTest code. The models themselves live in
// translation units that include <relacy/relacy.hpp> (which redefines new/delete/assert for the
// rest of the TU); this header keeps GoogleTest and Relacy apart.
#pragma once

#include <cstdint>
#include <string>

namespace rt::model {

// What one rl::simulate run found. `report` is Relacy's output: on failure, the kind of failure
// ("USER ASSERT FAILED", "DATA RACE", ...) and the execution history that shows it.
struct model_run {
  bool passed = false;
  std::string report;
  // How many iterations reached the path the model targets (the parker model counts the
  // schedules where unpark() returned before park() began, the parking model the cancelled
  // waits that absorbed a notifier's wake-up, I-PARK-5); 0 where a model does not count.
  std::uint64_t path_hits = 0;
};

// How Relacy explores the interleavings: a random scheduler for `iterations` runs (seeded per
// iteration, so reproducible), or the context-bound scheduler, which enumerates every schedule
// with at most `context_bound` preemptions (exhaustive within the bound; `iterations` is ignored).
struct search {
  enum class kind { random, context_bound };
  kind how = kind::random;
  std::uint64_t iterations = 0;
  unsigned context_bound = 0;
};

// DESIGN.md §8: the store-buffering litmus test written through the sync seam. Each of two
// threads stores 1 to its own variable and loads the other's; both loads returning 0 is the
// forbidden outcome.
enum class sb_variant {
  seq_cst_fences,      // store; fence(seq_cst); load  -> the outcome is impossible
  no_fences,           // store; load                  -> Relacy must find it
  weakened_fences,     // seq_cst fences downgraded to acq_rel by the policy -> must be found
};
model_run run_store_buffering(sb_variant v, const search& s);

// The rest of the seam as the policy maps it (exchange, weak CAS, fetch_add/fetch_sub, cpu_relax
// in a spin-wait), which the deque does not use but the parking protocol will: a release
// exchange publishes a plain value to an acquire spin-wait, and two threads' read-modify-writes
// on one counter all land (2 fetch_add + 1 weak-CAS increment + 1 fetch_sub each).
model_run run_seam(const search& s);

// The Chase-Lev deque of runtime/deque/chase_lev.hpp, instantiated on Relacy's atomics.
// One owner pushes and pops across a resize (initial capacity 2), `thieves` threads steal;
// every item must be taken exactly once and every taken value must be a pushed one.
enum class deque_policy {
  fences,                  // production mapping, S::kTsan == false
  tsan_variant,            // S::kTsan == true: seq_cst accesses instead of fences (I-DEQ-8)
  weak_seq_cst_fence,      // defect: the fences of I-DEQ-4 downgraded to acq_rel
  relaxed_release_store,   // defect: the release stores of I-DEQ-3/9 downgraded to relaxed
  tsan_weak_seq_cst,       // defect: the TSan variant with its seq_cst accesses weakened
};
model_run run_chase_lev(deque_policy p, unsigned thieves, const search& s);

// The parker of runtime/sync/parker.hpp on Relacy's futex emulation (docs/design/parking.md,
// "Parking model"): one unpark() racing one park(), in every order. park() must return
// (I-PARK-3: an unpark before the park is not lost) and only through the token (I-PARK-4: the
// futex wait may return spuriously); the unparker's earlier write must be visible after it.
enum class parker_variant {
  correct,
  split_rmw,               // defect: fetch_sub/fetch_add as load + store (the token is overwritten)
  futex_without_compare,   // defect: a futex wait that sleeps without comparing the word
};
model_run run_parker(parker_variant v, const search& s);

// The parking protocol: sync::idle_set and sync::parker driven as runtime/worker/scheduler.cpp
// drives them (find_work, park, push_local, notify_one). One notifier publishes `workers` units
// one at a time (1 worker and 1 unit, or 2 workers and 2 units; max_searching 1); every unit must
// be claimed, and a worker left parked with work unclaimed is Relacy's DEADLOCK.
enum class parking_variant {
  correct,
  sleeper_fence_dropped,   // defect: I-PARK-2's fence does nothing
  notifier_fence_dropped,  // defect: I-PARK-1's fence does nothing
  recheck_skipped,         // defect: the sleeper parks without re-checking the work after its fence
  cancel_result_ignored,   // defect: a cancelled park does not adopt the notifier's intent (I-PARK-5)
  joiner_registered_searchable,  // defect: a joiner past its help floor registers able to search
};
model_run run_parking(parking_variant v, unsigned workers, const search& s);
// The same with 1 worker, 1 unit and 1 joiner past its help floor (I-PARK-12) that blocks until
// the run ends and never takes work: `correct` or `joiner_registered_searchable`. path_hits
// counts the wake-ups that made the joiner a searcher.
model_run run_parking_with_joiner(parking_variant v, const search& s);

}  // namespace rt::model
