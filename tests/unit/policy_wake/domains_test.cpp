// The smallest domain spanning two workers and its imbalance_pct (sd_init(): SMT 110, LLC 117,
// wider 125), over the hand-built topology with two workers sharing core 0.
#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "policy/domains.hpp"

namespace rt::policy::test {
namespace {

struct domain_row {
  int a;
  int b;
  domain_level level;
  std::uint64_t pct;
};

TEST(Domains, LevelAndImbalancePctBetweenWorkers) {
  // Workers: 0, 1 on core 0; 2 on core 1 (LLC 0, node 0); 3 on core 4 (LLC 1, node 1);
  // 4 on core 6 (LLC 2, node 1).
  const layout l = make_layout(hand_built(), {0, 0, 1, 4, 6});
  const tun::settings s;
  const domain_row rows[] = {
      {0, 0, domain_level::smt, 110},  {0, 1, domain_level::smt, 110},  {1, 2, domain_level::llc, 117},
      {2, 0, domain_level::llc, 117},  {2, 3, domain_level::numa, 125}, {3, 4, domain_level::numa, 125},
      {0, 4, domain_level::numa, 125},
  };
  for (const domain_row& r : rows) {
    EXPECT_EQ(domain_between(l, r.a, r.b), r.level) << r.a << "," << r.b;
    EXPECT_EQ(imbalance_pct_between(l, r.a, r.b, s), r.pct) << r.a << "," << r.b;
  }
}

TEST(Domains, PctComesFromTheTunablesAndNeverDropsBelowOneHundred) {
  tun::settings s;
  s.t.imbalance_pct_smt = 101;
  s.t.imbalance_pct_llc = 150;
  s.t.imbalance_pct_numa = 90;  // outside the tunables range: clamped to 100
  EXPECT_EQ(imbalance_pct(domain_level::smt, s), 101u);
  EXPECT_EQ(imbalance_pct(domain_level::llc, s), 150u);
  EXPECT_EQ(imbalance_pct(domain_level::numa, s), 100u);
}

TEST(Domains, HalfImbalanceScale) {
  // 100 + (pct - 100) / 2, integer division as in 000 patch 7.
  EXPECT_EQ(half_imbalance_scale(125), 112u);
  EXPECT_EQ(half_imbalance_scale(117), 108u);
  EXPECT_EQ(half_imbalance_scale(110), 105u);
  EXPECT_EQ(half_imbalance_scale(100), 100u);
  EXPECT_EQ(half_imbalance_scale(99), 100u);
}

}  // namespace
}  // namespace rt::policy::test
