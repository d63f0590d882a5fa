// RT_TOPOLOGY / CLI spelling: source::parse and source::describe.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace rt::topo {
namespace {

TEST(source_parse, host) {
  const source s = source::parse("host");
  EXPECT_EQ(s.what, source::kind::host);
  EXPECT_TRUE(s.text.empty());
  EXPECT_EQ(s.describe(), "host");
}

TEST(source_parse, xml_path_is_taken_verbatim) {
  const source s = source::parse("xml:/tmp/a;distances:1,2.xml");
  EXPECT_EQ(s.what, source::kind::xml);
  EXPECT_EQ(s.text, "/tmp/a;distances:1,2.xml");
  EXPECT_TRUE(s.distances.empty());
  EXPECT_EQ(s.describe(), "xml:/tmp/a;distances:1,2.xml");
}

TEST(source_parse, synthetic_without_distances) {
  const source s = source::parse("synthetic:pack:2 [numa] core:2 pu:1");
  EXPECT_EQ(s.what, source::kind::synthetic);
  EXPECT_EQ(s.text, "pack:2 [numa] core:2 pu:1");
  EXPECT_TRUE(s.distances.empty());
  EXPECT_EQ(s.describe(), "synthetic:pack:2 [numa] core:2 pu:1");
}

TEST(source_parse, synthetic_with_distances_round_trips) {
  const std::string spec = "synthetic:pack:2 [numa] core:1 pu:1;distances:10,21,21,10";
  const source s = source::parse(spec);
  EXPECT_EQ(s.text, "pack:2 [numa] core:1 pu:1");
  EXPECT_EQ(s.distances, (std::vector<int>{10, 21, 21, 10}));
  EXPECT_EQ(s.describe(), spec);
  EXPECT_EQ(source::parse(s.describe()).distances, s.distances);
  // Leading zeros and a plus sign are integers too; describe() writes them plainly.
  EXPECT_EQ(source::parse("synthetic:pu:2;distances:+010,020").distances, (std::vector<int>{10, 20}));
}

// Each bad spelling: topology_error (a config_error), one line naming the input and the reason.
struct bad_spec {
  const char* spec;
  const char* reason;
};

class source_parse_rejects : public ::testing::TestWithParam<bad_spec> {};

TEST_P(source_parse_rejects, with_a_one_line_reason) {
  const bad_spec& b = GetParam();
  try {
    source::parse(b.spec);
    FAIL() << "accepted '" << b.spec << "'";
  } catch (const topology_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(std::string("'") + b.spec + "'"), std::string::npos) << what;
    EXPECT_NE(what.find(b.reason), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

// Callers that only know rt::config (RT_TOPOLOGY) catch the public error type.
TEST(source_parse, errors_are_config_errors) { EXPECT_THROW(source::parse("numa:4"), rt::config_error); }

INSTANTIATE_TEST_SUITE_P(cases, source_parse_rejects,
                         ::testing::Values(bad_spec{"", "empty specification"}, bad_spec{"Host", "unknown source"},
                                           bad_spec{"file:/x.xml", "unknown source"}, bad_spec{"xml:", "needs a file path"},
                                           bad_spec{"synthetic:", "needs a description"}, bad_spec{"synthetic:   ", "needs a description"},
                                           bad_spec{"synthetic:pu:2;distances:", "distance list is empty"},
                                           bad_spec{"synthetic:pu:2;distances:10,,20,10", "entry 2 is empty"},
                                           bad_spec{"synthetic:pu:2;distances:10,0,20,10", "entry 2 '0' is not positive"},
                                           bad_spec{"synthetic:pu:2;distances:10,-20,20,10", "entry 2 '-20' is not positive"},
                                           bad_spec{"synthetic:pu:2;distances:10,20x,20,10", "entry 2 '20x' is not an integer"},
                                           bad_spec{"synthetic:pu:2;distances:10, 20", "entry 2 ' 20' is not an integer"},
                                           bad_spec{"synthetic:pu:2;distances:10,256,20,10", "entry 2 '256' exceeds 255"},
                                           bad_spec{"synthetic:pu:2;distances:10,99999999999999999999", "exceeds 255"},
                                           bad_spec{"synthetic:pu:2;distances:-", "entry 1 '-' is not an integer"}));

TEST(topology_class_names, are_stable) {
  EXPECT_STREQ(to_string(topology_class::uma), "uma");
  EXPECT_STREQ(to_string(topology_class::direct), "direct");
  EXPECT_STREQ(to_string(topology_class::glueless_mesh), "glueless_mesh");
  EXPECT_STREQ(to_string(topology_class::backplane), "backplane");
}

}  // namespace
}  // namespace rt::topo
