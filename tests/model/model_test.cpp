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

// The parking protocol (docs/design/parking.md, "Parking model"). A lost wake-up leaves a worker
// blocked in the parker's futex wait for good, which Relacy reports as a deadlock; the cases
// named ...IsCaught pass only if Relacy reports that deadlock for the injected defect.
void expect_deadlock(const model_run& r) {
  EXPECT_FALSE(r.passed) << "Relacy did not find the injected defect:\n" << r.report;
  EXPECT_NE(r.report.find("DEADLOCK"), std::string::npos) << r.report;
}

TEST(Parker, UnparkRacingParkEveryScheduleWithTwoPreemptions) {
  const model_run r = run_parker(parker_variant::correct, bounded(2));
  EXPECT_TRUE(r.passed) << r.report;
  EXPECT_GT(r.path_hits, 0u) << "no schedule ran unpark() before park() (I-PARK-3)";
}

TEST(Parker, UnparkRacingParkRandomSchedules) {
  // The random scheduler also makes the futex wait return spuriously (I-PARK-4).
  const model_run r = run_parker(parker_variant::correct, random_runs(200000));
  EXPECT_TRUE(r.passed) << r.report;
}

TEST(Parker, SplitReadModifyWriteIsCaught) {
  expect_deadlock(run_parker(parker_variant::split_rmw, bounded(2)));
}

TEST(Parker, FutexWaitWithoutCompareIsCaught) {
  expect_deadlock(run_parker(parker_variant::futex_without_compare, bounded(2)));
}

TEST(Parking, OneWorkerEveryScheduleWithThreePreemptions) {
  const model_run r = run_parking(parking_variant::correct, 1, bounded(3));
  EXPECT_TRUE(r.passed) << r.report;
}

TEST(Parking, OneWorkerRandomSchedules) {
  const model_run r = run_parking(parking_variant::correct, 1, random_runs(100000));
  EXPECT_TRUE(r.passed) << r.report;
}

TEST(Parking, OneWorkerSleeperFenceDroppedIsCaught) {
  expect_deadlock(run_parking(parking_variant::sleeper_fence_dropped, 1, bounded(2)));
}

TEST(Parking, OneWorkerNotifierFenceDroppedIsCaught) {
  expect_deadlock(run_parking(parking_variant::notifier_fence_dropped, 1, bounded(2)));
}

TEST(Parking, OneWorkerRecheckSkippedIsCaught) {
  expect_deadlock(run_parking(parking_variant::recheck_skipped, 1, bounded(2)));
}

TEST(Parking, TwoWorkersEveryScheduleWithTwoPreemptions) {
  const model_run r = run_parking(parking_variant::correct, 2, bounded(2));
  EXPECT_TRUE(r.passed) << r.report;
  // I-PARK-5's path (a cancelled wait that a notifier had already taken off the list) is reached.
  EXPECT_GT(r.path_hits, 0u);
}

TEST(Parking, TwoWorkersRandomSchedules) {
  const model_run r = run_parking(parking_variant::correct, 2, random_runs(200000));
  EXPECT_TRUE(r.passed) << r.report;
  EXPECT_GT(r.path_hits, 0u);
}

TEST(Parking, TwoWorkersCancelResultIgnoredIsCaught) {
  expect_deadlock(run_parking(parking_variant::cancel_result_ignored, 2, bounded(2)));
}

TEST(Parking, TwoWorkersSleeperFenceDroppedIsCaught) {
  expect_deadlock(run_parking(parking_variant::sleeper_fence_dropped, 2, bounded(2)));
}

// Every schedule with three preemptions (about 8 s), then 100,000 random ones.
TEST(Parking, ADeepJoinerBesideAWorkerIsNeverMadeASearcher) {
  for (const search& s : {bounded(3), random_runs(100000)}) {
    const model_run r = run_parking_with_joiner(parking_variant::correct, s);
    EXPECT_TRUE(r.passed) << r.report;
    EXPECT_EQ(r.path_hits, 0u) << "the idle set made a joiner that cannot search a searcher";
  }
}

TEST(Parking, ADeepJoinerRegisteredAbleToSearchIsCaught) {
  expect_deadlock(run_parking_with_joiner(parking_variant::joiner_registered_searchable, bounded(2)));
}

}  // namespace
}  // namespace rt::model
