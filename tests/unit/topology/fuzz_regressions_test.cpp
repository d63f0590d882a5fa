// Defects found while fuzzing the topology layer (tests/fuzz/topology_source_fuzz.cpp and
// topology_xml_fuzz.cpp; their inputs are replayed from tests/fuzz/regressions/ by the tests
// fuzz.topology_source.replay and fuzz.topology_xml.replay).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_files.hpp"
#include "topology/topology.hpp"
#include "topology/xml_check.hpp"

namespace rt::topo {
namespace {

bool has_control_character(const std::string& s) {
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return true;
  }
  return false;
}

std::string parse_error(const std::string& spec) {
  try {
    source::parse(spec);
  } catch (const topology_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "parse accepted the spelling";
  return {};
}

std::string load_error(const source& src) {
  try {
    topology::load(src);
  } catch (const topology_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "load accepted " << src.describe();
  return {};
}

std::string synthetic_error(const std::string& description) { return load_error(source::parse("synthetic:" + description)); }

// RT_TOPOLOGY="host<LF>" (a stray newline from a shell script) was quoted raw: a two-line message.
TEST(fuzz_regressions, a_spelling_with_a_newline_is_quoted_escaped_on_one_line) {
  const std::string what = parse_error("host\n");
  EXPECT_FALSE(has_control_character(what)) << what;
  EXPECT_EQ(what.rfind("topology 'host\\n': unknown source", 0), 0u) << what;
}

// A path is taken verbatim and may hold any byte but NUL; the message escapes it.
TEST(fuzz_regressions, an_xml_path_with_control_characters_is_quoted_escaped) {
  const test_files::scratch_dir dir;
  const std::string what = load_error(source::parse("xml:" + dir.path() + "/no\x1b[31mfile\n.xml"));
  EXPECT_FALSE(has_control_character(what)) << what;
  EXPECT_NE(what.find("/no\\x1b[31mfile\\n.xml': cannot open the file"), std::string::npos) << what;
}

// The XML check quotes attribute values from the file: a newline inside a bitmap gave a
// two-line message.
TEST(fuzz_regressions, xml_check_details_quoting_the_file_stay_on_one_line) {
  const test_files::scratch_dir dir;
  const std::string xml =
      "<topology version=\"2.0\">\n"
      "  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\n2\" complete_cpuset=\"0x1\"/>\n"
      "</topology>\n";
  const std::string what = load_error(source::parse("xml:" + dir.write("nl.xml", xml)));
  EXPECT_FALSE(has_control_character(what)) << what;
  EXPECT_NE(what.find("inconsistent hwloc XML (line 2: <object> attribute cpuset=\"0x1\\n2\" is not an hwloc bitmap)"), std::string::npos) << what;
}

// An XML declaring encoding="EBCDIC" was checked as ASCII but decoded by libxml2 as EBCDIC: hwloc
// refused it with a bare "Invalid argument" and libxml2 leaked its converter once hwloc unloaded
// it. The declaration's encoding is now checked: only encodings whose markup is ASCII bytes.
TEST(fuzz_regressions, an_xml_declaring_a_non_ascii_encoding_is_refused_with_the_encoding) {
  const test_files::scratch_dir dir;
  std::string xml = test_files::read_file(std::string(NUMART_TOPOLOGY_DIR) + "/32em64t-2n8c2t-pci-noio.xml");
  const std::string utf8 = "encoding=\"UTF-8\"";
  ASSERT_NE(xml.find(utf8), std::string::npos);
  xml.replace(xml.find(utf8), utf8.size(), "encoding=\"EBCDIC\"");
  const std::string what = load_error(source::parse("xml:" + dir.write("ebcdic.xml", xml)));
  EXPECT_NE(what.find("not an hwloc XML (line 1: the XML declaration names encoding 'EBCDIC'; hwloc XML is UTF-8"), std::string::npos) << what;
}

TEST(fuzz_regressions, ascii_compatible_encodings_and_other_instructions_pass_the_xml_check) {
  for (const char* declaration : {"<?xml version=\"1.0\"?>", "<?xml version=\"1.0\" encoding=\"UTF-8\"?>", "<?xml version='1.0' encoding='utf-8'?>",
                                  "<?xml version=\"1.0\" encoding = \"US-ASCII\"?>", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>",
                                  "<?xml-stylesheet encoding=\"EBCDIC\"?>"}) {
    const xml_check_result r = check_hwloc_xml(std::string(declaration) + "\n<topology version=\"2.0\"/>\n", 2);
    EXPECT_EQ(r.verdict, xml_verdict::ok) << declaration << ": " << r.detail;
  }
  for (const char* declaration : {"<?xml version=\"1.0\" encoding=\"UTF-16\"?>", "<?xml version=\"1.0\" encoding=UTF-8?>"}) {
    const xml_check_result r = check_hwloc_xml(std::string(declaration) + "\n<topology version=\"2.0\"/>\n", 2);
    EXPECT_EQ(r.verdict, xml_verdict::malformed) << declaration;
  }
}

// hwloc's importer reads the file as a C string: a NUL inside <topology version="2.0\0..."> cut
// the document there and hwloc 2.9 died with SIGSEGV in strspn. The XML check refuses every
// control character XML forbids, naming the byte and its line; tab, newline and CR stay allowed.
TEST(fuzz_regressions, a_nul_or_other_forbidden_control_byte_is_refused_before_hwloc_reads_it) {
  const test_files::scratch_dir dir;
  const std::string nul_in_version = std::string("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<topology version=\"2.0") + '\0' +
                                     "\">\n  <object type=\"Machine\" os_index=\"0\"/>\n</topology>\n";
  const std::string what = load_error(source::parse("xml:" + dir.write("nul.xml", nul_in_version)));
  EXPECT_FALSE(has_control_character(what)) << what;
  EXPECT_NE(what.find("not an hwloc XML (line 2: byte 0x00 is not allowed in XML"), std::string::npos) << what;
  for (const char c : {'\x01', '\x08', '\x0b', '\x0c', '\x1f'}) {
    const xml_check_result r = check_hwloc_xml(std::string("<topology version=\"2.0\">\n\n  <object type=\"Machine\"") + c + "/>\n</topology>\n", 2);
    EXPECT_EQ(r.verdict, xml_verdict::malformed) << static_cast<int>(c);
    EXPECT_EQ(r.detail.rfind("line 3: byte 0x", 0), 0u) << r.detail;
  }
  EXPECT_EQ(check_hwloc_xml("<topology version=\"2.0\">\r\n\t<object type=\"Machine\"/>\r\n</topology>\r\n", 2).verdict, xml_verdict::ok);
}

// hwloc 2.9 aborts (an assertion in hwloc_bitmap_sscanf) on a bitmap that starts with a comma:
// it counts the words from the second character and then reads one more. The XML check refuses it.
TEST(fuzz_regressions, a_bitmap_with_a_leading_comma_is_refused_before_hwloc_aborts) {
  for (const char* bitmap : {",0x00000400", ",,0x1", ","}) {
    const std::string doc = std::string("<topology version=\"2.0\">\n  <object type=\"Machine\" cpuset=\"") + bitmap + "\" complete_cpuset=\"0x1\"/>\n</topology>\n";
    const xml_check_result r = check_hwloc_xml(doc, 2);
    EXPECT_EQ(r.verdict, xml_verdict::inconsistent) << bitmap;
    EXPECT_EQ(r.detail, std::string("line 2: <object> attribute cpuset=\"") + bitmap + "\" is not an hwloc bitmap");
  }
  const std::string interior = "<topology version=\"2.0\">\n  <object type=\"Machine\" cpuset=\"0x1,,0x0\" complete_cpuset=\"0xf...f,,0x1\"/>\n</topology>\n";
  EXPECT_EQ(check_hwloc_xml(interior, 2).verdict, xml_verdict::ok);
}

// hwloc loads a Core whose cpuset is wider than its PU children; a core's PUs were read from that
// cpuset, so the model named a PU 1 that does not exist (pus == 1, yet core 0 held PUs 0 and 1).
// A core's PUs are now its PU objects.
TEST(fuzz_regressions, a_core_holds_its_pu_objects_not_its_cpuset) {
  const test_files::scratch_dir dir;
  const std::string xml =
      "<topology version=\"2.0\">\n"
      "  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x3\" complete_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=\"0x1\">\n"
      "    <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x3\" complete_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=\"0x1\"/>\n"
      "    <object type=\"Core\" os_index=\"0\" cpuset=\"0x3\" complete_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=\"0x1\">\n"
      "      <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\"/>\n"
      "    </object>\n"
      "  </object>\n"
      "</topology>\n";
  const topology t = topology::load(source::parse("xml:" + dir.write("wide_core.xml", xml)));
  EXPECT_EQ(t.pus, 1);
  ASSERT_EQ(t.core_count(), 1);
  EXPECT_EQ(t.cores[0].pus, (std::vector<unsigned>{0}));
  EXPECT_EQ(t.nodes[0].pus, (std::vector<unsigned>{0}));
}

// hwloc 2.9 sizes a bitmap by a PU's or NUMA node's os_index, a missing one counting as 2^32-1:
// such a file cost it 8 s and 1 GB before it loaded. The XML check now wants a small index on
// every object hwloc reads as a PU or a NUMA node, however the type is spelled.
TEST(fuzz_regressions, pu_and_numa_objects_need_a_small_os_index) {
  const auto verdict_of = [](const std::string& object) {
    return check_hwloc_xml("<topology version=\"2.0\"><object type=\"Machine\">\n  " + object + "\n</object></topology>\n", 2);
  };
  const xml_check_result missing = verdict_of("<object type=\"PU\" cpuset=\"0x1\" complete_cpuset=\"0x1\"/>");
  EXPECT_EQ(missing.verdict, xml_verdict::inconsistent);
  EXPECT_EQ(missing.detail, "line 2: <object type=\"PU\"> without os_index");
  const xml_check_result huge = verdict_of("<object type=\"NUMANode\" os_index=\"4294967294\"/>");
  EXPECT_EQ(huge.verdict, xml_verdict::inconsistent);
  EXPECT_EQ(huge.detail, "line 2: <object type=\"NUMANode\"> os_index=\"4294967294\" is not a decimal index below 1048576");
  for (const char* spelling : {"pu", "Pu_x", "Nu", "numa", "node", "NODE"}) {
    EXPECT_EQ(verdict_of(std::string("<object type=\"") + spelling + "\"/>").verdict, xml_verdict::inconsistent) << spelling;
  }
  EXPECT_EQ(verdict_of("<object type=\"NUMANode\" os_index=\"-1\"/>").verdict, xml_verdict::inconsistent);
  EXPECT_EQ(verdict_of("<object type=\"PU\" os_index=\"1048575\"/>").verdict, xml_verdict::ok);
  // Other objects keep whatever index they have, or none (a Package's can be large: 983297).
  EXPECT_EQ(verdict_of("<object type=\"Package\" os_index=\"983297\"/>").verdict, xml_verdict::ok);
  EXPECT_EQ(verdict_of("<object type=\"L3Cache\"/>").verdict, xml_verdict::ok);
  EXPECT_EQ(verdict_of("<object type=\"NUMANodeX\"/>").verdict, xml_verdict::ok);
}

TEST(fuzz_regressions, a_pu_without_os_index_is_refused_by_load_in_one_line) {
  const test_files::scratch_dir dir;
  std::string xml = test_files::read_file(std::string(NUMART_TOPOLOGY_DIR) + "/32em64t-2n8c2t-pci-noio.xml");
  const std::string pu = "<object type=\"PU\" os_index=\"0\"";
  ASSERT_NE(xml.find(pu), std::string::npos);
  xml.replace(xml.find(pu), pu.size(), "<object type=\"PU\"");
  const std::string what = load_error(source::parse("xml:" + dir.write("pu.xml", xml)));
  EXPECT_NE(what.find("': inconsistent hwloc XML (line "), std::string::npos) << what;
  EXPECT_NE(what.find(": <object type=\"PU\"> without os_index)"), std::string::npos) << what;
}

// A machine (its cpusets: `machine_sets`) with one node and one Core holding two PU objects
// (their os_index and cpusets: `pu0`, `pu1`).
std::string two_pu_xml(const std::string& machine_sets, const std::string& pu0, const std::string& pu1) {
  const auto pu = [](const std::string& attrs) { return "      <object type=\"PU\" " + attrs + " nodeset=\"0x1\" complete_nodeset=\"0x1\"/>\n"; };
  return "<topology version=\"2.0\">\n"
         "  <object type=\"Machine\" os_index=\"0\" " + machine_sets + " nodeset=\"0x1\" complete_nodeset=\"0x1\">\n"
         "    <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x3\" complete_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=\"0x1\"/>\n"
         "    <object type=\"Core\" os_index=\"0\" cpuset=\"0x3\" complete_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=\"0x1\">\n" +
         pu(pu0) + pu(pu1) +
         "    </object>\n"
         "  </object>\n"
         "</topology>\n";
}
constexpr const char* kFiniteMachine = "cpuset=\"0x3\" complete_cpuset=\"0x3\"";

// hwloc loads a PU whose cpuset is not its own index (P#0 with cpuset {1} beside P#1), and two
// PUs with one index: the model held PU 1 twice (the fuzzer's input: P#96 with cpuset {97} in
// power8gpudistances). Both are refused, naming the PU.
TEST(fuzz_regressions, a_pu_whose_cpuset_is_not_its_index_is_refused) {
  const test_files::scratch_dir dir;
  const std::string shifted = two_pu_xml(kFiniteMachine, "os_index=\"0\" cpuset=\"0x2\" complete_cpuset=\"0x2\"", "os_index=\"1\" cpuset=\"0x2\" complete_cpuset=\"0x2\"");
  EXPECT_NE(load_error(source::parse("xml:" + dir.write("shifted.xml", shifted))).find("': inconsistent topology: the cpuset of PU P#0 is not just PU 0"), std::string::npos);
  const std::string twice = two_pu_xml(kFiniteMachine, "os_index=\"1\" cpuset=\"0x2\" complete_cpuset=\"0x2\"", "os_index=\"1\" cpuset=\"0x2\" complete_cpuset=\"0x2\"");
  EXPECT_NE(load_error(source::parse("xml:" + dir.write("twice.xml", twice))).find("': inconsistent topology: two PUs have the OS index 1"), std::string::npos);
  const std::string everything = two_pu_xml(kFiniteMachine, "os_index=\"0\" cpuset=\"0xf...f\" complete_cpuset=\"0xf...f\"", "os_index=\"1\" cpuset=\"0x2\" complete_cpuset=\"0x2\"");
  // hwloc trims an infinite PU cpuset to its parent's: here both PUs.
  EXPECT_NE(load_error(source::parse("xml:" + dir.write("infinite_pu.xml", everything))).find("the cpuset of PU P#0 is not just PU 0"), std::string::npos);
}

// hwloc loads a Package inside another Package: packages then sit at two depths, hwloc counted
// -1 of them and a core's package index named no package (a long local fuzz run found it; the
// input is in tests/fuzz/regressions/topology_xml). Refused, naming the nesting.
TEST(fuzz_regressions, a_package_inside_a_package_is_refused) {
  const std::string what = load_error(
      source::parse("xml:" + std::string(NUMART_SOURCE_DIR) +
                    "/tests/fuzz/regressions/topology_xml/package_inside_package_counted_minus_one_packages.xml"));
  EXPECT_NE(what.find("': a Package object inside another Package"), std::string::npos) << what;
}

// A machine whose cpusets are all "0xf...f" (infinite) made the list of allowed PUs endless: the
// load never returned. The allowed PUs are now taken among the PUs that exist.
TEST(fuzz_regressions, infinite_machine_cpusets_load_with_the_real_pus) {
  const test_files::scratch_dir dir;
  const std::string xml = two_pu_xml("cpuset=\"0xf...f\" complete_cpuset=\"0xf...f\" allowed_cpuset=\"0xf...f\"", "os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\"",
                                     "os_index=\"1\" cpuset=\"0x2\" complete_cpuset=\"0x2\"");
  const topology t = topology::load(source::parse("xml:" + dir.write("infinite.xml", xml)));
  EXPECT_EQ(t.allowed_pus, (std::vector<unsigned>{0, 1}));
  ASSERT_EQ(t.core_count(), 1);
  EXPECT_EQ(t.cores[0].pus, (std::vector<unsigned>{0, 1}));
}

// "indexes=" lists name PU and NUMA OS indexes; hwloc sizes bitmaps by the largest one
// ("indexes=...,644444444444444" kept it busy for more than 20 s).
TEST(fuzz_regressions, synthetic_indexes_are_bounded_like_xml_os_indexes) {
  EXPECT_NE(synthetic_error("pack:2 [numa] core:1 pu:2(indexes=0,2,1,644444444444444)").find("an indexes= attribute names index 644444444444444; numart accepts indexes below 1048576"),
            std::string::npos);
  EXPECT_NE(synthetic_error("pack:2 [numa(indexes=0,2000000)] core:1 pu:1").find("names index 2000000"), std::string::npos);
  const topology t = topology::load(source::parse("synthetic:pack:2 [numa(indexes=1,0)] core:1 pu:2(indexes=0,2,1,1048575)"));
  EXPECT_EQ(t.nodes[0].os_index, 1u);
  EXPECT_EQ(t.cores[1].pus, (std::vector<unsigned>{1, 1048575}));
}

// "pu:100000" kept hwloc 2.9 busy for minutes (its insertion of siblings is quadratic) and
// "pack:1000 core:1000 pu:1000" would have needed gigabytes: both are now refused before hwloc
// builds anything, with the PU count and the limit.
TEST(fuzz_regressions, a_synthetic_description_with_more_pus_than_linux_supports_is_refused) {
  EXPECT_NE(synthetic_error("pu:100000").find("the description has 100000 PUs; numart loads at most 8192"), std::string::npos);
  EXPECT_NE(synthetic_error("pack:1000 core:1000 pu:1000").find("has 1000000000 PUs"), std::string::npos);
  // Counts are read as hwloc reads them (strtoul, any base) and multiplied without overflow.
  EXPECT_NE(synthetic_error("pack:0x10 core:0x400 pu:1").find("has 16384 PUs"), std::string::npos);
  EXPECT_NE(synthetic_error("pack:4294967295 core:4294967295 pu:4294967295").find("has more than 2^64 PUs"), std::string::npos);
}

// Deep chains of levels multiply objects without adding PUs: 8192 PUs under 9 levels of 8192.
TEST(fuzz_regressions, a_synthetic_description_with_too_many_objects_is_refused) {
  const std::string what = synthetic_error("core:8192 l3:1 l2:1 l1:1 l1i:1 group:1 group:1 group:1 pu:1");
  EXPECT_NE(what.find("the description has 73729 objects; numart loads at most 65536"), std::string::npos) << what;
}

// A flat level of thousands of siblings is what makes hwloc slow ("pu:8192" took 12 s).
TEST(fuzz_regressions, a_synthetic_description_with_too_wide_levels_is_refused_with_a_hint) {
  const std::string what = synthetic_error("core:4096 pu:2");
  EXPECT_NE(what.find("its levels are too wide for hwloc to build in reasonable time (50348032 sibling visits"), std::string::npos) << what;
  EXPECT_NE(what.find("'pack:16 core:256 pu:2' rather than 'core:4096 pu:2'"), std::string::npos) << what;
}

// The bounds leave real machines alone: the hint's own example, 8192 PUs, loads.
TEST(fuzz_regressions, the_largest_accepted_synthetic_machine_loads) {
  const topology t = topology::load(source::parse("synthetic:pack:16 core:256 pu:2"));
  EXPECT_EQ(t.pus, 8192);
  EXPECT_EQ(t.core_count(), 4096);
}

// What hwloc refuses by itself is left to hwloc: a count above UINT_MAX, a level without a count.
TEST(fuzz_regressions, descriptions_hwloc_refuses_keep_hwlocs_reason) {
  EXPECT_NE(synthetic_error("pu:4294967296").find("hwloc rejected the synthetic description"), std::string::npos);
  EXPECT_NE(synthetic_error("pack:2 core: pu:1").find("hwloc rejected the synthetic description"), std::string::npos);
}

}  // namespace
}  // namespace rt::topo
