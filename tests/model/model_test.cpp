// The model tier: each case runs one Relacy model (tests/model/models.hpp). Cases named
// ...IsCaught run a deliberately broken policy and pass only if Relacy reports the failure,
// which shows the corresponding passing model can fail.
#include <gtest/gtest.h>

#include "models.hpp"

namespace rt::model {
namespace {

// Exhaustive within the bound: every schedule with at most `bound` preemptions.
search bounded(unsigned bound) { return search{search::kind::context_bound, 0, bound}; }
search random_runs(std::uint64_t n) { return search{search::kind::random, n, 0}; }

void expect_caught(const model_run& r) {
  EXPECT_FALSE(r.passed) << "Relacy did not find the injected defect:\n" << r.report;
  // The ledger assertions, not an incidental failure, must be what fails.
  EXPECT_NE(r.report.find("USER ASSERT FAILED"), std::string::npos) << r.report;
}

TEST(StoreBuffering, SeqCstFencesForbidTheOutcome) {
  const model_run r = run_store_buffering(sb_variant::seq_cst_fences, bounded(2));
  EXPECT_TRUE(r.passed) << r.report;
}

TEST(StoreBuffering, MissingFencesAreCaught) {
  expect_caught(run_store_buffering(sb_variant::no_fences, bounded(2)));
}

TEST(StoreBuffering, WeakenedFencesAreCaught) {
  expect_caught(run_store_buffering(sb_variant::weakened_fences, bounded(2)));
}

TEST(Seam, ExchangeCasAndCountersKeepTheirOrders) {
  const model_run r = run_seam(bounded(2));
  EXPECT_TRUE(r.passed) << r.report;
}

TEST(ChaseLev, OneThiefEveryScheduleWithTwoPreemptions) {
  const model_run r = run_chase_lev(deque_policy::fences, 1, bounded(2));
  EXPECT_TRUE(r.passed) << r.report;
}

TEST(ChaseLev, TwoThievesEveryScheduleWithOnePreemption) {
  const model_run r = run_chase_lev(deque_policy::fences, 2, bounded(1));
  EXPECT_TRUE(r.passed) << r.report;
}

TEST(ChaseLev, TwoThievesRandomSchedules) {
  const model_run r = run_chase_lev(deque_policy::fences, 2, random_runs(200000));
  EXPECT_TRUE(r.passed) << r.report;
}

TEST(ChaseLev, TsanVariantOneThiefEveryScheduleWithTwoPreemptions) {
  const model_run r = run_chase_lev(deque_policy::tsan_variant, 1, bounded(2));
  EXPECT_TRUE(r.passed) << r.report;
}

TEST(ChaseLev, TsanVariantTwoThievesEveryScheduleWithOnePreemption) {
  const model_run r = run_chase_lev(deque_policy::tsan_variant, 2, bounded(1));
  EXPECT_TRUE(r.passed) << r.report;
}

TEST(ChaseLev, WeakSeqCstFenceIsCaught) {
  expect_caught(run_chase_lev(deque_policy::weak_seq_cst_fence, 1, bounded(1)));
}

TEST(ChaseLev, RelaxedReleaseStoreIsCaught) {
  expect_caught(run_chase_lev(deque_policy::relaxed_release_store, 1, bounded(1)));
}

TEST(ChaseLev, TsanVariantWithWeakSeqCstAccessesIsCaught) {
  expect_caught(run_chase_lev(deque_policy::tsan_weak_seq_cst, 1, bounded(1)));
}

}  // namespace
}  // namespace rt::model
