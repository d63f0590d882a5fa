// Checks the parts of tests/model/relacy_policy.hpp that the deque model does not reach, so the
// policy is trustworthy when the parking protocol (sync/parker.hpp) is modelled with it.
#include "models.hpp"
#include "relacy_policy.hpp"  // last: it includes <relacy/relacy.hpp>

namespace rt::model {
namespace {

struct seam : rl::test_suite<seam, 2> {
  using S = relacy_policy;
  S::atomic<int> data{0};  // published by thread 0 through `flag`
  S::atomic<int> flag{0};
  S::atomic<int> counter{0};

  void thread(unsigned id) {
    if (id == 0) {
      data.store(42, S::relaxed);
      RL_ASSERT(flag.exchange(1, S::release) == 0);
    } else {
      while (flag.load(S::acquire) == 0) S::cpu_relax();
      RL_ASSERT(data.load(S::relaxed) == 42);
    }
    counter.fetch_add(2, S::relaxed);
    int seen = counter.load(S::relaxed);
    while (!counter.compare_exchange_weak(seen, seen + 1, S::acq_rel, S::relaxed)) {
    }
    counter.fetch_sub(1, S::relaxed);
  }

  void after() { RL_ASSERT(counter.load(S::relaxed) == 4); }
};

}  // namespace

model_run run_seam(const search& s) { return simulate<seam>(s); }

}  // namespace rt::model
