// Bad topology input through topology::load: each is a topology_error whose one-line message
// names the input ("topology '<source>'") and the reason. No crash, no hang.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "test_files.hpp"
#include "topology/topology.hpp"

namespace rt::topo {
namespace {

std::string real_xml() {
  return test_files::read_file(std::string(NUMART_TOPOLOGY_DIR) + "/32em64t-2n8c2t-pci-noio.xml");
}

// Loads `spec` and returns the error message; fails the test when it loads.
std::string error_of(const std::string& spec) {
  try {
    topology::load(source::parse(spec));
  } catch (const topology_error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("topology '" + spec + "': ", 0), 0u) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    return what;
  }
  ADD_FAILURE() << "loaded " << spec;
  return {};
}

void expect_reason(const std::string& spec, const std::string& reason) {
  const std::string what = error_of(spec);
  EXPECT_NE(what.find(reason), std::string::npos) << what;
}

class bad_xml : public ::testing::Test {
 protected:
  test_files::scratch_dir dir_;
};

TEST_F(bad_xml, missing_file) { expect_reason("xml:" + dir_.path() + "/absent.xml", "cannot open the file: No such file or directory"); }

TEST_F(bad_xml, directory) { expect_reason("xml:" + dir_.path(), "cannot read the file: it is a directory"); }

TEST_F(bad_xml, fifo_is_refused_without_blocking) {
  const std::string fifo = dir_.path() + "/pipe.xml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_reason("xml:" + fifo, "cannot read the file: not a regular file");
}

TEST_F(bad_xml, empty_file) { expect_reason("xml:" + dir_.write("empty.xml", ""), "the file is empty, not an hwloc XML"); }

TEST_F(bad_xml, truncated_file) {
  expect_reason("xml:" + dir_.write("cut.xml", real_xml().substr(0, 5000)), "truncated XML (line ");
  const std::string whole = real_xml();
  expect_reason("xml:" + dir_.write("cut2.xml", whole.substr(0, whole.rfind("</topology>"))), "truncated XML (line ");
}

TEST_F(bad_xml, not_xml) { expect_reason("xml:" + dir_.write("junk.xml", "garbage\n"), "not an hwloc XML (line 1: text outside the <topology> element)"); }

TEST_F(bad_xml, version_3_format) {
  std::string s = real_xml();
  const std::string v2 = "<topology version=\"2.0\">";
  ASSERT_NE(s.find(v2), std::string::npos);
  s.replace(s.find(v2), v2.size(), "<topology version=\"3.0\">");
  expect_reason("xml:" + dir_.write("v3.xml", s), "unsupported XML format (line 3: XML format version 3.0 is newer than this hwloc reads");
}

TEST_F(bad_xml, well_formed_but_refused_by_hwloc) {
  std::string s = real_xml();
  const std::string core = "<object type=\"Core\"";
  ASSERT_NE(s.find(core), std::string::npos);
  s.replace(s.find(core), core.size(), "<object type=\"Blah\"");
  expect_reason("xml:" + dir_.write("blah.xml", s), "hwloc could not load it: Invalid argument");
}

// Not "pack:2 [numa] pu:1 core:2": hwloc 2.9 leaks 32 bytes refusing it, which fails the asan
// preset (docs/design/topology.md, "hwloc 2.9 defects").
TEST(bad_synthetic, malformed_descriptions) {
  for (const char* d : {"pack:2 foo:3", "pack:0 pu:1", "pack:2 core:2", "core:x pu:1", "pack:2 pu:1 core:2", "pack:2 [numa] core:2 pu:1 extra"}) {
    expect_reason(std::string("synthetic:") + d, "hwloc rejected the synthetic description");
  }
}

TEST(bad_synthetic, distances_of_the_wrong_length) {
  expect_reason("synthetic:pack:2 [numa] core:1 pu:1;distances:10,20,20", "3 distances given for 2 NUMA nodes (need 4, row-major)");
  expect_reason("synthetic:pack:2 [numa] core:1 pu:1;distances:10", "1 distances given for 2 NUMA nodes (need 4, row-major)");
  expect_reason("synthetic:pack:1 core:1 pu:1;distances:10,20,20,10", "4 distances given for 1 NUMA nodes (need 1, row-major)");
}

TEST(bad_synthetic, distances_that_are_not_a_slit) {
  expect_reason("synthetic:pack:2 [numa] core:1 pu:1;distances:10,20,20,11",
                "bad distances: distance[1][1] is 11, the local distance must be 10");
  expect_reason("synthetic:pack:2 [numa] core:1 pu:1;distances:10,5,20,10",
                "bad distances: distance[0][1] is 5, remote distances must be 11..255");
  expect_reason("synthetic:pack:1 core:1 pu:1;distances:20", "distance[0][0] is 20");
}

}  // namespace
}  // namespace rt::topo
