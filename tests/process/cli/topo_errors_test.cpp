// Bad input to numart topo: exit status 2, nothing on stdout, exactly one line on stderr that
// names the input and the reason. Never a crash (a signal shows as status 128 + n).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <vector>

#include "run_tool.hpp"

namespace cli_test {
namespace {

void expect_refused(const std::vector<std::string>& args, const std::vector<std::string>& needles, const run_options& opt = {}) {
  const result r = run_numart(args, opt);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.back(), '\n');
  for (const std::string& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << "'" << n << "' not in: " << r.err;
}

std::string real_xml() { return scratch_file::read_file(topology_file("32em64t-2n8c2t-pci-noio.xml")); }

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const std::size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

class topo_bad_xml : public ::testing::Test {
 protected:
  scratch_dir dir_;
};

TEST_F(topo_bad_xml, missing_file) {
  const std::string f = dir_.path() + "/absent.xml";
  expect_refused({"topo", "--xml", f}, {"numart topo: topology 'xml:" + f + "': cannot open the file: No such file or directory"});
}

TEST_F(topo_bad_xml, unreadable_file) {
  expect_refused({"topo", "--xml", dir_.path()}, {"'xml:" + dir_.path() + "'", "it is a directory"});
  const std::string fifo = dir_.path() + "/fifo.xml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_refused({"topo", "--json", "--xml", fifo}, {"'xml:" + fifo + "'", "not a regular file"});
}

TEST_F(topo_bad_xml, empty_file) {
  const std::string f = dir_.write("empty.xml", "");
  expect_refused({"topo", "--json", "--xml", f}, {"'xml:" + f + "'", "the file is empty"});
}

TEST_F(topo_bad_xml, truncated_file) {
  const std::string f = dir_.write("cut.xml", real_xml().substr(0, 5000));
  expect_refused({"topo", "--json", "--xml", f}, {"'xml:" + f + "'", "truncated XML"});
}

TEST_F(topo_bad_xml, not_xml) {
  const std::string f = dir_.write("junk.xml", "\x7f" "ELF binary, not XML");
  expect_refused({"topo", "--xml", f}, {"'xml:" + f + "'", "not an hwloc XML"});
}

TEST_F(topo_bad_xml, version_3_format) {
  const std::string f = dir_.write("v3.xml", replaced(real_xml(), "<topology version=\"2.0\">", "<topology version=\"3.0\">"));
  expect_refused({"topo", "--json", "--xml", f}, {"'xml:" + f + "'", "unsupported XML format", "version 3.0"});
}

// hwloc 2.9 dies with SIGSEGV on this one when it gets it (xml_check_test.cpp).
TEST_F(topo_bad_xml, crash_pattern_is_refused) {
  const std::string f = dir_.write("crash.xml", replaced(real_xml(), " complete_cpuset=\"0x00000020\"", ""));
  expect_refused({"topo", "--json", "--xml", f}, {"'xml:" + f + "'", "has a cpuset but no complete_cpuset"});
}

TEST_F(topo_bad_xml, refused_by_hwloc) {
  const std::string f = dir_.write("blah.xml", replaced(real_xml(), "<object type=\"Core\"", "<object type=\"Blah\""));
  expect_refused({"topo", "--xml", f}, {"'xml:" + f + "'", "hwloc could not load it"});
}

// hwloc prints a banner for this one (an inconsistent complete_cpuset it repairs) and loads it;
// the tool stays quiet unless the user asks hwloc to speak.
TEST_F(topo_bad_xml, hwloc_banners_are_silenced_unless_asked_for) {
  const std::string f = dir_.write(
      "odd.xml", replaced(real_xml(), "cpuset=\"0x02000000\" complete_cpuset=\"0x02000000\"", "cpuset=\"0x02000000\" complete_cpuset=\"0x0200000b\""));
  const result quiet = run_numart({"topo", "--json", "--xml", f});
  EXPECT_EQ(quiet.status, 0);
  EXPECT_EQ(quiet.err, "");
  run_options loud;
  loud.env = {{"HWLOC_HIDE_ERRORS", "0"}};
  const result r = run_numart({"topo", "--json", "--xml", f}, loud);
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.err.find("hwloc"), std::string::npos);
}

TEST(topo_bad_synthetic, malformed_description) {
  expect_refused({"topo", "--synthetic", "pack:2 foo:3"}, {"'synthetic:pack:2 foo:3'", "rejected the synthetic description"});
  expect_refused({"topo", "--json", "--synthetic", ""}, {"'synthetic:'", "needs a description"});
}

TEST(topo_bad_synthetic, distances_of_the_wrong_length) {
  expect_refused({"topo", "--json", "--synthetic", "pack:2 [numa] core:1 pu:1", "--distances", "10,20,20"},
                 {"'synthetic:pack:2 [numa] core:1 pu:1;distances:10,20,20'", "3 distances given for 2 NUMA nodes (need 4"});
}

TEST(topo_bad_synthetic, non_positive_distances) {
  expect_refused({"topo", "--synthetic", "pack:2 [numa] core:1 pu:1", "--distances", "10,0,20,10"}, {"distances:10,0,20,10'", "entry 2 '0' is not positive"});
  expect_refused({"topo", "--synthetic", "pack:2 [numa] core:1 pu:1", "--distances=10,-3,20,10"}, {"entry 2 '-3' is not positive"});
  expect_refused({"topo", "--synthetic", "pack:2 [numa] core:1 pu:1", "--distances", "10,20,20,ten"}, {"entry 4 'ten' is not an integer"});
  expect_refused({"topo", "--synthetic", "pack:2 [numa] core:1 pu:1", "--distances", "10,20,20,12"}, {"distance[1][1] is 12"});
}

TEST(topo_bad_flags, each_names_the_flag) {
  expect_refused({"topo", "--jsn"}, {"numart topo: unknown option '--jsn'"});
  expect_refused({"topo", "-x"}, {"unknown option '-x'"});
  expect_refused({"topo", "extra"}, {"unexpected argument 'extra'"});
  expect_refused({"topo", "--xml"}, {"--xml needs a value"});
  expect_refused({"topo", "--xml", "a.xml", "--xml", "b.xml"}, {"--xml is given twice"});
  expect_refused({"topo", "--xml", "a.xml", "--synthetic", "pu:2"}, {"--xml and --synthetic are exclusive"});
  expect_refused({"topo", "--distances", "10"}, {"--distances applies to --synthetic only"});
  expect_refused({"topo", "--xml", "a.xml", "--distances", "10"}, {"--distances applies to --synthetic only"});
  expect_refused({"tpo"}, {"numart: unknown command 'tpo'"});
}

TEST(topo_bad_environment, rt_topology_is_named) {
  run_options opt;
  opt.env = {{"RT_TOPOLOGY", "numa:4"}};
  expect_refused({"topo", "--json"}, {"numart topo: RT_TOPOLOGY: topology 'numa:4': unknown source"}, opt);
  opt.env = {{"RT_TOPOLOGY", "xml:/nonexistent/numart.xml"}};
  expect_refused({"topo"}, {"'xml:/nonexistent/numart.xml'", "No such file or directory"}, opt);
}

TEST(topo_usage, help_and_no_command) {
  const result help = run_numart({"topo", "--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_EQ(help.out.rfind("usage: numart topo", 0), 0u);
  const result top = run_numart({"--help"});
  EXPECT_EQ(top.status, 0);
  EXPECT_NE(top.out.find("topo"), std::string::npos);
  const result none = run_numart({});
  EXPECT_EQ(none.status, 2);
  EXPECT_EQ(none.out, "");
  EXPECT_NE(none.err.find("usage: numart"), std::string::npos);
}

}  // namespace
}  // namespace cli_test
