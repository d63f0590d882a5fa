// DESIGN.md §8's sanity model: store buffering through the sync seam, to show that Relacy (with
// g++ 12 and clang 14) honours seq_cst fences and finds the outcome they forbid when they are
// missing or weakened. Every protocol model in this folder relies on that behaviour.
#include "models.hpp"
#include "relacy_policy.hpp"  // last: it includes <relacy/relacy.hpp>

namespace rt::model {
namespace {

template <class S, bool Fences>
struct store_buffering : rl::test_suite<store_buffering<S, Fences>, 2> {
  typename S::template atomic<int> x{0};
  typename S::template atomic<int> y{0};
  int seen[2] = {-1, -1};  // what thread i loaded; each written by one thread, read in after()

  void thread(unsigned id) {
    auto& mine = id == 0 ? x : y;
    auto& other = id == 0 ? y : x;
    mine.store(1, S::relaxed);
    if constexpr (Fences) {
      S::fence(S::seq_cst);
    }
    seen[id] = other.load(S::relaxed);
  }

  void after() { RL_ASSERT(seen[0] == 1 || seen[1] == 1); }
};

}  // namespace

model_run run_store_buffering(sb_variant v, const search& s) {
  switch (v) {
    case sb_variant::seq_cst_fences:
      return simulate<store_buffering<relacy_policy, true>>(s);
    case sb_variant::no_fences:
      return simulate<store_buffering<relacy_policy, false>>(s);
    case sb_variant::weakened_fences:
      return simulate<store_buffering<relacy_policy_t<false, defect::weak_seq_cst_fence>, true>>(s);
  }
  return model_run{false, "unknown sb_variant"};
}

}  // namespace rt::model
