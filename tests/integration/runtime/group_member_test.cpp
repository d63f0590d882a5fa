// Member groups (rt::group(parent, name)) and the group home on its preferred node (I-WAKE-8).
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "rt/rt.hpp"

namespace {

rt::config two_nodes() {
  rt::config c;
  c.topology = rt::topology_source::synthetic("pack:2 [numa] core:2 pu:1");
  c.workers = 4;
  return c;
}

TEST(GroupMember, KnowsItsParentAndIsOneLevelDeep) {
  rt::runtime r{two_nodes()};
  rt::group jvm{r, "jvm"};
  rt::group wh{jvm, "wh-1"};
  EXPECT_EQ(jvm.parent(), nullptr);
  EXPECT_EQ(wh.parent(), &jvm);
  EXPECT_EQ(&wh.owner(), &r);
  try {
    rt::group nested{wh, "nested"};
    FAIL() << "a member of a member was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("one level deep"), std::string::npos) << e.what();
  }
}

TEST(GroupMember, TasksOfAMemberRunAndOutliveTheMemberObject) {
  rt::runtime r{two_nodes()};
  rt::group jvm{r, "jvm"};
  std::atomic<int> ran{0};
  std::vector<rt::join_handle<int>> hs;
  {
    rt::group wh{jvm, "wh"};
    for (int i = 0; i < 100; ++i) hs.push_back(r.spawn(wh, [&ran, i] { ran.fetch_add(1); return i; }));
  }  // the member object dies first; its frames hold the state (I-GROUP-1)
  int sum = 0;
  for (auto& h : hs) sum += h.join();
  EXPECT_EQ(ran.load(), 100);
  EXPECT_EQ(sum, 99 * 100 / 2);
}

// I-WAKE-8: with a preferred node, the home moves onto that node at the next spawn and a run
// elsewhere (a thief) never drags it away.
TEST(GroupMember, HomeFollowsThePreferredNode) {
  rt::runtime r{two_nodes()};
  for (int node = 0; node < 2; ++node) {
    rt::group g{r, "placed"};
    g.set_preferred_node(rt::node_id{node});
    for (int round = 0; round < 50; ++round) {
      std::vector<rt::join_handle<void>> hs;
      for (int i = 0; i < 8; ++i) hs.push_back(r.spawn(g, [] {}));
      for (auto& h : hs) h.join();
      ASSERT_EQ(g.home_node().value, node) << "round " << round;
    }
  }
}

}  // namespace
