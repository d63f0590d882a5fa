// The Chase-Lev deque of runtime/deque/chase_lev.hpp, model-checked under Relacy: the same
// template the runtime uses, instantiated on tests/model/relacy_policy.hpp. What it checks and
// why is in docs/design/deque.md ("What the model checks").
#include <cstdint>
#include <memory>

#include "deque/chase_lev.hpp"
#include "models.hpp"
#include "relacy_policy.hpp"  // last: it includes <relacy/relacy.hpp>

namespace rt::model {
namespace {

using item = std::uintptr_t;  // item{} (0) is the deque's "no item"; items are 1..kItems
constexpr item kItems = 5;

template <class S, unsigned Thieves>
struct chase_lev_model : rl::test_suite<chase_lev_model<S, Thieves>, 1 + Thieves> {
  using deque_t = deque::chase_lev<item, S>;
  // Held by pointer: Relacy mallocs the test object, which would not honour the deque's
  // cache-line alignment. Initial capacity 2^1 = 2, so the third push resizes (I-DEQ-9).
  std::unique_ptr<deque_t> dq = std::make_unique<deque_t>(1);
  // taken[thread][item]: how often that thread took that item. Each row is written by one
  // thread only; after() reads them once every thread has finished.
  int taken[1 + Thieves][kItems + 1] = {};

  void record(unsigned thread, item x) {
    RL_ASSERT(x >= 1 && x <= kItems);  // a value that was pushed, never a stale or empty slot
    ++taken[thread][x];
  }

  void take() {
    if (const item x = dq->pop(); x != item{}) {
      record(0, x);
    }
  }

  void thread(unsigned id) {
    if (id == 0) {
      // The owner: 2 -> 4 on the third push, 4 -> 8 on the fifth when no thief got in between;
      // the final pops race the thieves for the last elements (I-DEQ-5).
      dq->push(1);
      dq->push(2);
      dq->push(3);
      take();
      dq->push(4);
      dq->push(5);
      for (int i = 0; i < 4; ++i) {
        take();
      }
    } else {
      for (int attempt = 0; attempt < 2; ++attempt) {
        item x{};
        if (dq->steal(x) == deque::steal_result::success) {
          record(id, x);
        }
      }
    }
  }

  void after() {
    // Every thread has finished: drain what is left, then every item must have been taken
    // exactly once (never lost, never duplicated).
    for (item x = dq->pop(); x != item{}; x = dq->pop()) {
      record(0, x);
    }
    for (item i = 1; i <= kItems; ++i) {
      int total = 0;
      for (const auto& row : taken) {
        total += row[i];
      }
      RL_ASSERT(total == 1);
    }
  }
};

template <class S>
model_run run_with(unsigned thieves, const search& s) {
  if (thieves == 1) {
    return simulate<chase_lev_model<S, 1>>(s);
  }
  if (thieves == 2) {
    return simulate<chase_lev_model<S, 2>>(s);
  }
  return model_run{false, "run_chase_lev: thieves must be 1 or 2"};
}

}  // namespace

model_run run_chase_lev(deque_policy p, unsigned thieves, const search& s) {
  switch (p) {
    case deque_policy::fences:
      return run_with<relacy_policy>(thieves, s);
    case deque_policy::tsan_variant:
      return run_with<relacy_policy_t<true>>(thieves, s);
    case deque_policy::weak_seq_cst_fence:
      return run_with<relacy_policy_t<false, defect::weak_seq_cst_fence>>(thieves, s);
    case deque_policy::relaxed_release_store:
      return run_with<relacy_policy_t<false, defect::relaxed_release_store>>(thieves, s);
    case deque_policy::tsan_weak_seq_cst:
      return run_with<relacy_policy_t<true, defect::weak_seq_cst_access>>(thieves, s);
  }
  return model_run{false, "run_chase_lev: unknown deque_policy"};
}

}  // namespace rt::model
