// numart topo without --json: the readable summary, with the matrix in logical order.
#include <gtest/gtest.h>

#include <string>

#include "run_tool.hpp"

namespace cli_test {
namespace {

TEST(topo_text, summary_of_an_sgi_uv) {
  const result r = run_numart({"topo", "--xml", topology_file("192em64t-24n8c2t.xml")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  for (const char* line : {"this machine:    no", "packages:        24\n", "PUs:             384 (384 allowed)\n",
                           "NUMA nodes:      24\n", "distance levels: 10 50 65 79\n", "max distance:    79\n",
                           "topology class:  glueless_mesh\n"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line;
  }
  // Row 0 of lstopo's matrix; node 0 is near node 1 at 50: ((79 - 50) << 10) / 69 = 430.
  EXPECT_NE(r.out.find("\n     0  10  50  65  65  65  65  65  65  65  65  79  79  65  65  79  79  65  65  79  79  79  79  79  79\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n     0: 1(50,430) 2(65,207)"), std::string::npos) << r.out;
}

TEST(topo_text, a_machine_without_a_matrix_says_so) {
  const result r = run_numart({"topo", "--xml", topology_file("AMD-17h-Zen-2xEpyc-7451.xml")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("none in the topology: 10 local, 20 remote"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nearby nodes:    none"), std::string::npos) << r.out;
}

TEST(topo_text, knl_hybrid_notes_its_memory_only_nodes) {
  const result r = run_numart({"topo", "--xml", topology_file("64intel64-fakeKNL-SNC4-hybrid.xml")});
  ASSERT_EQ(r.status, 0) << r.err;
  // lstopo -p: logical node 1 is MCDRAM P#7 (2048MB), sharing node 0's cpuset.
  const std::size_t at = r.out.find("  L#1 ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  for (const char* part : {"P#7 ", " 2048 MiB ", " no CPU (memory only)"}) EXPECT_NE(line.find(part), std::string::npos) << line;
  EXPECT_NE(r.out.find("note: several NUMA nodes contain the same CPUs"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace cli_test
