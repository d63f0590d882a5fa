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

}  // namespace rt::model
