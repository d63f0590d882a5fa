// The XML pre-check (I-TOPO-9) on small documents, and the hwloc 2.9 crash patterns it keeps
// away from hwloc, through topology::load on mutated copies of a real file.
#include <gtest/gtest.h>

#include <string>

#include "test_files.hpp"
#include "topology/topology.hpp"
#include "topology/xml_check.hpp"

namespace rt::topo {
namespace {

constexpr int kHwloc2 = 2;

const std::string kHead = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n";
const std::string kMachine = "  <object type=\"Machine\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\" nodeset=\"0x1\" complete_nodeset=\"0x1\"/>\n";

std::string doc(const std::string& root_attrs, const std::string& body) {
  return kHead + "<topology" + root_attrs + ">\n" + body + "</topology>\n";
}

xml_check_result check(const std::string& text) { return check_hwloc_xml(text, kHwloc2); }

TEST(xml_check, accepts_well_formed_hwloc_documents) {
  EXPECT_EQ(check(doc(" version=\"2.0\"", kMachine)).verdict, xml_verdict::ok);
  EXPECT_EQ(check(doc("", kMachine)).verdict, xml_verdict::ok);  // hwloc 1.x: no version
  EXPECT_EQ(check(doc(" version='1.0'", "<!-- a comment with <object> inside -->\n" + kMachine)).verdict, xml_verdict::ok);
  // Bitmap syntax: an infinite prefix, empty words (each set inside its complete set).
  EXPECT_EQ(check(doc("", "<object type=\"Machine\" cpuset=\"0xf...f,0x00000001\" complete_cpuset=\"0xf...f\"/>")).verdict,
            xml_verdict::ok);
  EXPECT_EQ(check(doc("", "<object type=\"Machine\" os_index=\"0\" cpuset=\"0xff,,\" complete_cpuset=\"0x00ff00ff,,0x0\"/>")).verdict,
            xml_verdict::ok);
}

// The top object is the machine: a PU there made hwloc 2.9 abort (an assertion in
// hwloc__find_insert_memory_parent).
TEST(xml_check, the_top_object_is_the_machine) {
  const std::string pu = "<object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\"";
  const xml_check_result top_pu = check(doc("", pu + "/>"));
  EXPECT_EQ(top_pu.verdict, xml_verdict::inconsistent);
  EXPECT_EQ(top_pu.detail, "line 4: the top <object> is a PU, not the Machine");
  EXPECT_EQ(check(doc("", "<object type=\"Machine\" cpuset=\"0x1\" complete_cpuset=\"0x1\">" + pu + "/></object>")).verdict,
            xml_verdict::ok);
  EXPECT_EQ(check(doc("", "<object type=\"System\" cpuset=\"0x1\" complete_cpuset=\"0x1\">" + pu + "/></object>")).verdict,
            xml_verdict::ok);
}

TEST(xml_check, empty) {
  EXPECT_EQ(check("").verdict, xml_verdict::empty);
  EXPECT_EQ(check(" \n\t").verdict, xml_verdict::empty);
}

TEST(xml_check, truncated_documents) {
  const std::string full = doc(" version=\"2.0\"", kMachine);
  const xml_check_result in_tag = check(full.substr(0, full.find("complete_cpuset") + 5));
  EXPECT_EQ(in_tag.verdict, xml_verdict::truncated);
  EXPECT_EQ(in_tag.detail, "line 4: the document ends inside the tag <object>");
  const xml_check_result open_root = check(full.substr(0, full.find("</topology>")));
  EXPECT_EQ(open_root.verdict, xml_verdict::truncated);
  EXPECT_EQ(open_root.detail, "line 5: the document ends inside <topology> opened at line 3");
  EXPECT_EQ(check(full.substr(0, full.find("<!DOCTYPE") + 4)).verdict, xml_verdict::truncated);
  EXPECT_EQ(check(doc("", "<!-- never closed")).verdict, xml_verdict::truncated);
}

TEST(xml_check, malformed_documents) {
  EXPECT_EQ(check("garbage").verdict, xml_verdict::malformed);
  EXPECT_EQ(check(kHead + "<machine/>").verdict, xml_verdict::malformed);
  EXPECT_EQ(check(doc("", "<object type=\"Machine\"></objec>")).detail, "line 4: </objec> closes <object> opened at line 4");
  EXPECT_EQ(check(doc("", kMachine) + "<topology/>").verdict, xml_verdict::malformed);
  EXPECT_EQ(check(doc("", "<object type=Machine/>")).verdict, xml_verdict::malformed);
  EXPECT_EQ(check(doc("", "<object type=\"a\" type=\"b\"/>")).verdict, xml_verdict::malformed);
  EXPECT_EQ(check(doc("", "<object type=\"a\"cpuset=\"0x1\"/>")).verdict, xml_verdict::malformed);
  EXPECT_EQ(check(doc(" version=\"two\"", kMachine)).verdict, xml_verdict::malformed);
  EXPECT_EQ(check(doc("", kMachine) + "trailing text").verdict, xml_verdict::malformed);
  EXPECT_EQ(check(kHead).verdict, xml_verdict::malformed);
  // hwloc's importer skips a line that starts with "<?xml " or "<!DOCTYPE " whole and reads on
  // from the next: a header must fill its line (both were hiding objects hwloc crashed on).
  const std::string body = "<topology>\n" + kMachine + "</topology>\n";
  const std::string over_lines = "line 1: a header (<?xml or <!DOCTYPE) over several lines: hwloc reads it line by line";
  // CI's fuzz find: the declaration's "?>" lines down, a crashing object between.
  EXPECT_EQ(check("<?xml version=\"2.0oc2.dtd\">\n" + body + "<!-- ?>\n" + body).detail, over_lines);
  EXPECT_EQ(check("<!DOCTYPE topology\n SYSTEM \"hwloc2.dtd\">\n" + body).detail, over_lines);
  // A '>' in a quoted literal does not end the DOCTYPE (libxml2 reads on to the quote).
  EXPECT_EQ(check("<!DOCTYPE topology SYSTEM 'x>\n" + body + "'>\n" + body).detail, over_lines);
  EXPECT_EQ(check("<!DOCTYPE topology SYSTEM \"a>b.dtd\">\n" + body).verdict, xml_verdict::ok);
  EXPECT_EQ(check("<!DOCTYPE topology [\n" + body + "]>\n" + body).detail,
            "line 1: a DOCTYPE with an internal subset ('['): hwloc never writes one");
  EXPECT_EQ(check("<!DOCTYPE topology [ <!ENTITY e 'x'> ]>\n" + body).verdict, xml_verdict::malformed);
  const xml_check_result after = check("<?xml version=\"1.0\"?><!-- x\n" + body + "-->\n" + body);
  EXPECT_EQ(after.verdict, xml_verdict::malformed);
  EXPECT_EQ(after.detail, "line 1: markup after a header (<?xml or <!DOCTYPE) on its line: hwloc skips the rest of that line");
  EXPECT_EQ(check("<?xml version=\"1.0\"?> \t\r\n" + body).verdict, xml_verdict::ok);
  // The same importer ends a tag at its first '>', even inside a quoted value.
  EXPECT_EQ(check(doc("", "<info name=\"a\" value=\"x>y\"/>\n" + kMachine)).detail,
            "line 4: '>' inside attribute value of <info> (hwloc writes &gt;)");
  EXPECT_EQ(check(doc("", "<info name=\"a\" value=\"x&gt;y\"/>\n" + kMachine)).verdict, xml_verdict::ok);
  // No root, and the header itself may end the text.
  EXPECT_EQ(check("<?xml version=\"1.0\"?>" + std::string("\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">")).detail,
            "line 2: no <topology> element");
}

// Below the root, attributes as hwloc 2.9's own importer reads them (it stops at anything else
// and loads the object with the attributes read so far: a review's find, SIGSEGV in hwloc).
TEST(xml_check, attributes_below_the_root_are_written_as_hwloc_reads_them) {
  const std::string pu = "<object type=\"Machine\" os_index=\"0\" ";
  const auto detail = [&](const std::string& attrs) { return check(doc(" version=\"2.0\"", pu + attrs + "/>\n")).detail; };
  const std::string sets = "cpuset=\"0x1\" complete_cpuset=\"0x1\"";
  EXPECT_EQ(check(doc(" version=\"2.0\"", pu + sets + " name=\"a&amp;b&lt;&gt;&quot;&#10;&#13;&#9;\"/>\n")).verdict, xml_verdict::ok);
  const std::string stops = ": hwloc's importer would drop it and every attribute after it";
  EXPECT_EQ(detail("cpuset=\"0x1\" complete_cpuset='0x1'"),
            "line 4: attribute complete_cpuset of <object> is not written name=\"value\"" + stops);
  EXPECT_EQ(detail("cpuset=\"0x1\" complete_cpuset = \"0x1\""),
            "line 4: attribute complete_cpuset of <object> is not written name=\"value\"" + stops);
  EXPECT_EQ(detail("cpuset=\"0x1\"\r\ncomplete_cpuset=\"0x1\""), "line 4: a carriage return between attributes of <object>" + stops);
  EXPECT_EQ(detail("Name=\"x\" " + sets), "line 4: attribute name Name of <object> is not [a-z_]" + stops);
  EXPECT_EQ(detail("x1=\"x\" " + sets), "line 4: attribute name x1 of <object> is not [a-z_]" + stops);
  EXPECT_EQ(detail("a:cpuset=\"0x2\" " + sets), "line 4: attribute name a:cpuset of <object> is not [a-z_]" + stops);
  for (const std::string v : {"&#62;", "&#x3e;", "&apos;", "a&b"})
    EXPECT_EQ(detail("name=\"" + v + "\" " + sets), "line 4: an '&' in attribute name of <object> that is not one of hwloc's escapes" + stops) << v;
  // libxml2's importer drops an empty value: a cpuset without its complete_cpuset again.
  EXPECT_EQ(detail("cpuset=\"0x1\" complete_cpuset=\"\""),
            "line 4: <object> attribute complete_cpuset=\"\" is not an hwloc bitmap");
  // The root's attributes are read by sscanf, and hwloc 1.x documents quote them either way.
  EXPECT_EQ(check(doc(" version='1.0'", kMachine)).verdict, xml_verdict::ok);
}

TEST(xml_check, refuses_a_newer_format) {
  const xml_check_result r = check(doc(" version=\"3.0\"", kMachine));
  EXPECT_EQ(r.verdict, xml_verdict::unsupported_version);
  EXPECT_EQ(r.detail, "line 3: XML format version 3.0 is newer than this hwloc reads (format 2.x and older)");
  EXPECT_EQ(check_hwloc_xml(doc(" version=\"3.0\"", kMachine), 3).verdict, xml_verdict::ok);
}

// The fuzzer's find (tests/fuzz/corpus/topology_xml/bad_allowed_cpuset_outside_cpuset.xml): a root
// whose allowed_cpuset shares no PU with its complete_cpuset, with a nodeset, crashed hwloc 2.9.
TEST(xml_check, an_allowed_cpuset_outside_the_complete_cpuset_is_refused) {
  const std::string machine =
      "<object type=\"Machine\" os_index=\"0\" cpuset=\"0x0000000f\" complete_cpuset=\"0x0000000f\" "
      "allowed_cpuset=\"0x000000f0\" nodeset=\"0x00000003\" complete_nodeset=\"0x00000001\"/>";
  const xml_check_result r = check(doc(" version=\"2.0\"", machine));
  EXPECT_EQ(r.verdict, xml_verdict::inconsistent);
  EXPECT_NE(r.detail.find("allowed_cpuset=\"0x000000f0\" shares no PU with complete_cpuset=\"0x0000000f\""),
            std::string::npos)
      << r.detail;
  // Overlapping sets, several words, and the infinite tail are fine.
  for (const char* allowed : {"0x00000003", "0x00000001,0x0000000f", "0xf...f", "0xffffffff"}) {
    const std::string ok = "<object type=\"Machine\" cpuset=\"0x0000000f\" complete_cpuset=\"0x0000000f\" "
                           "allowed_cpuset=\"" + std::string(allowed) + "\"/>";
    EXPECT_EQ(check(doc("", ok)).verdict, xml_verdict::ok) << allowed;
  }
  // Words run from the most significant: 0x0000000f,0x00000000 is PUs 32-35, none of 0-3.
  const std::string far = "<object type=\"Machine\" cpuset=\"0x0000000f\" complete_cpuset=\"0x0000000f\" "
                          "allowed_cpuset=\"0x0000000f,0x00000000\"/>";
  EXPECT_EQ(check(doc("", far)).verdict, xml_verdict::inconsistent);
}

// The fuzzer's second find (tests/fuzz/regressions/topology_xml/allowed_cpuset_outside_cpuset_
// inside_complete.xml): the allowed set overlaps the complete_cpuset but not the cpuset, which
// is what hwloc keeps; hwloc 2.9 emptied the topology and crashed.
TEST(xml_check, an_allowed_cpuset_outside_the_cpuset_is_refused) {
  const std::string machine =
      "<object type=\"Machine\" os_index=\"0\" cpuset=\"0x0000000f\" complete_cpuset=\"0x0000005f\" "
      "allowed_cpuset=\"0x000000f0\" nodeset=\"0x00000003\" complete_nodeset=\"0x00000001\"/>";
  const xml_check_result r = check(doc(" version=\"2.0\"", machine));
  EXPECT_EQ(r.verdict, xml_verdict::inconsistent);
  EXPECT_NE(r.detail.find("allowed_cpuset=\"0x000000f0\" shares no PU with cpuset=\"0x0000000f\""), std::string::npos)
      << r.detail;
  const std::string overlapping = "<object type=\"Machine\" cpuset=\"0x0000000f\" complete_cpuset=\"0x0000005f\" "
                                  "allowed_cpuset=\"0x000000f1\"/>";
  EXPECT_EQ(check(doc("", overlapping)).verdict, xml_verdict::ok);
}

TEST(xml_check, objects_hwloc_would_crash_on_or_misread) {
  EXPECT_EQ(check(doc("", "<object cpuset=\"0x1\" complete_cpuset=\"0x1\"/>")).verdict, xml_verdict::inconsistent);
  const xml_check_result no_complete = check(doc("", "<object type=\"PU\" cpuset=\"0x1\"/>"));
  EXPECT_EQ(no_complete.verdict, xml_verdict::inconsistent);
  EXPECT_EQ(no_complete.detail, "line 4: <object> has a cpuset but no complete_cpuset");
  EXPECT_EQ(check(doc("", "<object type=\"PU\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\"/>")).verdict,
            xml_verdict::inconsistent);
  const xml_check_result outside = check(doc("", "<object type=\"Machine\" cpuset=\"0x2f\" complete_cpuset=\"0x5f\" allowed_cpuset=\"0xf0\"/>"));
  EXPECT_EQ(outside.verdict, xml_verdict::inconsistent);
  EXPECT_EQ(outside.detail,
            "line 4: <object> cpuset=\"0x2f\" has PUs outside complete_cpuset=\"0x5f\"");
  // cpuset 0x2f sharing no PU with complete 0x0 or 0x10, with a nodeset: hwloc 2.9 died with
  // SIGSEGV (tests/fuzz/regressions/topology_xml/cpuset_disjoint_from_complete_cpuset_crashed_hwloc.xml).
  for (const char* complete : {"0x0", "0x10", "0x1"}) {
    const std::string body = std::string("<object type=\"Machine\" cpuset=\"0x2f\" complete_cpuset=\"") + complete +
                             "\" nodeset=\"0x1\" complete_nodeset=\"0x1\"/>";
    const xml_check_result r = check(doc("", body));
    EXPECT_EQ(r.verdict, xml_verdict::inconsistent) << complete;
    EXPECT_EQ(r.detail, "line 4: <object> cpuset=\"0x2f\" has PUs outside complete_cpuset=\"" + std::string(complete) + "\"");
  }
  EXPECT_EQ(check(doc("", "<object type=\"Machine\" cpuset=\"0x2f\" complete_cpuset=\"0xf...f\"/>")).verdict, xml_verdict::ok);
  EXPECT_EQ(check(doc("", "<object type=\"Machine\" cpuset=\"0xf...f\" complete_cpuset=\"0xff\"/>")).verdict,
            xml_verdict::inconsistent);
  EXPECT_EQ(check(doc("", "<object type=\"Machine\" cpuset=\"0x2f\" complete_cpuset=\"0xff\" allowed_cpuset=\"0xf0\"/>")).verdict,
            xml_verdict::ok);
  for (const char* bad : {"zz", "0xx1", "0x123456789", "0x1 ", "0xf...f0x1", "-1"}) {
    const std::string body = std::string("<object type=\"PU\" cpuset=\"") + bad + "\" complete_cpuset=\"0x1\"/>";
    EXPECT_EQ(check(doc("", body)).verdict, xml_verdict::inconsistent) << bad;
  }
}

// Mutations of a real file that crashed hwloc 2.9 (SIGSEGV in hwloc_topology_load) before the
// check existed: now a topology_error that names the reason.
class xml_crash_patterns : public ::testing::Test {
 protected:
  std::string original() const {
      return test_files::read_file(std::string(NUMART_TOPOLOGY_DIR) + "/32em64t-2n8c2t-pci-noio.xml");
  }
  std::string error_of(const std::string& text) {
    const std::string path = dir_.write("mutated.xml", text);
    try {
      topology::load(source::parse("xml:" + path));
    } catch (const topology_error& e) {
      return e.what();
    }
    return "loaded";
  }
  test_files::scratch_dir dir_;
};

TEST_F(xml_crash_patterns, missing_complete_cpuset) {
  std::string s = original();
  const std::string attr = " complete_cpuset=\"0x00000020\"";
  ASSERT_NE(s.find(attr), std::string::npos);
  s.erase(s.find(attr), attr.size());
  EXPECT_NE(error_of(s).find("inconsistent hwloc XML (line 76: <object> has a cpuset but no complete_cpuset)"), std::string::npos)
      << error_of(s);
}

TEST_F(xml_crash_patterns, missing_complete_nodeset) {
  std::string s = original();
  const std::string attr = " complete_nodeset=\"0x00000001\"";
  ASSERT_NE(s.find(attr), std::string::npos);
  s.erase(s.find(attr), attr.size());
  EXPECT_NE(error_of(s).find("has a nodeset but no complete_nodeset"), std::string::npos) << error_of(s);
}

TEST_F(xml_crash_patterns, unparsable_cpuset) {
  std::string s = original();
  const std::string attr = " cpuset=\"0x00000020\"";
  ASSERT_NE(s.find(attr), std::string::npos);
  s.replace(s.find(attr), attr.size(), " cpuset=\"zz\"");
  EXPECT_NE(error_of(s).find("cpuset=\"zz\" is not an hwloc bitmap"), std::string::npos) << error_of(s);
}

}  // namespace
}  // namespace rt::topo
