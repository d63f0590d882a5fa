// numart topo --json: exactly the fields, values checked against independent sources:
// the kernel (sched_getaffinity, /sys/devices/system/node) for the host, and lstopo's output
// transcribed by hand for the XML files (see tests/unit/topology/xml_bars_test.cpp for how).
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "json_reader.hpp"
#include "run_tool.hpp"

namespace cli_test {
namespace {

using json_test::value;

const std::vector<std::string> kTopLevelKeys = {"source", "is_host", "packages", "pus", "llc_domains", "numa_nodes",
                                                "distances", "distance_levels", "max_distance", "topology_class"};
const std::vector<std::string> kNodeKeys = {"logical", "os_index", "pus", "cpuless"};

// Runs the tool, checks it succeeded quietly with one JSON object and the exact field set.
value topo_json(const std::vector<std::string>& args, const run_options& opt = {}) {
  std::vector<std::string> full = {"topo", "--json"};
  full.insert(full.end(), args.begin(), args.end());
  const result r = run_numart(full, opt);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  const value v = json_test::parse(r.out);
  EXPECT_EQ(v.keys(), kTopLevelKeys);
  for (const value& n : v["numa_nodes"].items) EXPECT_EQ(n.keys(), kNodeKeys);
  return v;
}

std::vector<std::int64_t> affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(::sched_getaffinity(0, sizeof set, &set), 0);
  std::vector<std::int64_t> out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) out.push_back(c);
  }
  return out;
}

std::size_t online_nodes() {
  const std::filesystem::path sys = "/sys/devices/system/node";
  if (!std::filesystem::exists(sys)) return 1;
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(sys)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 4 && name.compare(0, 4, "node") == 0 && name.find_first_not_of("0123456789", 4) == std::string::npos) ++n;
  }
  return n;
}

std::vector<std::int64_t> all_node_pus(const value& v) {
  std::vector<std::int64_t> out;
  for (const value& n : v["numa_nodes"].items) {
    const auto p = n["pus"].ints();
    out.insert(out.end(), p.begin(), p.end());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The bar for this machine (1 node, 2 PUs here), derived from the kernel.
TEST(topo_json, host) {
  const value v = topo_json({});
  const std::vector<std::int64_t> cpus = affinity();
  EXPECT_EQ(v["source"].s, "host");
  EXPECT_TRUE(v["is_host"].b);
  EXPECT_EQ(v["is_host"].what, value::kind::boolean);
  EXPECT_EQ(v["pus"].n, static_cast<std::int64_t>(cpus.size()));
  EXPECT_EQ(v["numa_nodes"].items.size(), online_nodes());
  EXPECT_EQ(all_node_pus(v), cpus);
  EXPECT_EQ(v["distances"].items.size(), online_nodes());
  EXPECT_EQ(v["distances"][0][0].n, 10);
}

// What `taskset -c N numart topo` sees: one PU, the one it is bound to.
TEST(topo_json, a_process_bound_to_one_cpu_sees_one_pu) {
  const std::int64_t cpu = affinity().back();
  run_options opt;
  opt.cpus = {static_cast<int>(cpu)};
  const value v = topo_json({}, opt);
  EXPECT_TRUE(v["is_host"].b);
  EXPECT_EQ(v["pus"].n, 1);
  EXPECT_EQ(v["llc_domains"].n, 1);
  EXPECT_EQ(all_node_pus(v), (std::vector<std::int64_t>{cpu}));
}

// lstopo -i 64amd64-4p2n4ca2co.xml --distances (objects 0 1 4 5 6 7 2 3, re-ordered by hand);
// node OS indexes from lstopo -p: 0 1 6 7 2 3 4 5; 8 PUs each, in logical order.
TEST(topo_json, four_socket_opteron) {
  const std::string file = topology_file("64amd64-4p2n4ca2co.xml");
  const value v = topo_json({"--xml", file});
  EXPECT_EQ(v["source"].s, "xml:" + file);
  EXPECT_FALSE(v["is_host"].b);
  EXPECT_EQ(v["packages"].n, 4);
  EXPECT_EQ(v["pus"].n, 64);
  EXPECT_EQ(v["llc_domains"].n, 8);
  const std::vector<std::int64_t> os = {0, 1, 6, 7, 2, 3, 4, 5};
  ASSERT_EQ(v["numa_nodes"].items.size(), 8u);
  for (std::size_t n = 0; n < 8; ++n) {
    const value& node = v["numa_nodes"][n];
    EXPECT_EQ(node["logical"].n, static_cast<std::int64_t>(n));
    EXPECT_EQ(node["os_index"].n, os[n]);
    std::vector<std::int64_t> pus;
    for (std::int64_t p = 0; p < 8; ++p) pus.push_back(static_cast<std::int64_t>(8 * n) + p);
    EXPECT_EQ(node["pus"].ints(), pus);
    EXPECT_FALSE(node["cpuless"].b);
  }
  const std::vector<std::vector<std::int64_t>> m = {
      {10, 16, 16, 22, 16, 22, 16, 22}, {16, 10, 22, 16, 22, 16, 16, 22}, {16, 22, 10, 16, 16, 22, 16, 22},
      {22, 16, 16, 10, 16, 22, 22, 16}, {16, 22, 16, 16, 10, 16, 16, 16}, {22, 16, 22, 22, 16, 10, 16, 16},
      {16, 16, 16, 22, 16, 16, 10, 16}, {22, 22, 22, 16, 16, 16, 16, 10}};
  ASSERT_EQ(v["distances"].items.size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(v["distances"][i].ints(), m[i]) << "row " << i;
  EXPECT_EQ(v["distance_levels"].ints(), (std::vector<std::int64_t>{10, 16, 22}));
  EXPECT_EQ(v["max_distance"].n, 22);
  EXPECT_EQ(v["topology_class"].s, "glueless_mesh");
}

// Sparse PU OS indexes (lstopo -c: node 0 0x03030303, node 1 0x00000303,0x03030000,,0x0) and
// a GPU bandwidth matrix beside the NUMA one (10/40).
TEST(topo_json, power8_with_gpus) {
  const value v = topo_json({"--xml", topology_file("power8gpudistances.xml")});
  EXPECT_EQ(v["numa_nodes"][0]["pus"].ints(), (std::vector<std::int64_t>{0, 1, 8, 9, 16, 17, 24, 25}));
  EXPECT_EQ(v["numa_nodes"][1]["pus"].ints(), (std::vector<std::int64_t>{80, 81, 88, 89, 96, 97, 104, 105}));
  EXPECT_EQ(v["distances"][0].ints(), (std::vector<std::int64_t>{10, 40}));
  EXPECT_EQ(v["distance_levels"].ints(), (std::vector<std::int64_t>{10, 40}));
  EXPECT_EQ(v["topology_class"].s, "direct");
}

// No Package objects; node P#16 of 128ia64 has no CPU.
TEST(topo_json, no_packages_and_cpuless_nodes) {
  const value groups = topo_json({"--xml", topology_file("16-2gr2gr2n2c+misc.xml")});
  EXPECT_EQ(groups["packages"].n, 0);
  EXPECT_EQ(groups["llc_domains"].n, 8);
  EXPECT_EQ(groups["max_distance"].n, 20);
  const value ia64 = topo_json({"--xml", topology_file("128ia64-17n4s2c.xml")});
  ASSERT_EQ(ia64["numa_nodes"].items.size(), 17u);
  EXPECT_TRUE(ia64["numa_nodes"][16]["cpuless"].b);
  EXPECT_TRUE(ia64["numa_nodes"][16]["pus"].items.empty());
  EXPECT_FALSE(ia64["numa_nodes"][15]["cpuless"].b);
  EXPECT_EQ(ia64["distance_levels"].ints(), (std::vector<std::int64_t>{10, 14, 17, 20}));
  EXPECT_EQ(ia64["topology_class"].s, "backplane");
}

TEST(topo_json, synthetic_with_distances) {
  const value v = topo_json({"--synthetic", "pack:2 group:2 [numa] core:1 pu:1", "--distances=10,21,31,31,21,10,31,31,31,31,10,21,31,31,21,10"});
  EXPECT_EQ(v["source"].s, "synthetic:pack:2 group:2 [numa] core:1 pu:1;distances:10,21,31,31,21,10,31,31,31,31,10,21,31,31,21,10");
  EXPECT_FALSE(v["is_host"].b);
  EXPECT_EQ(v["pus"].n, 4);
  EXPECT_EQ(v["distances"][2].ints(), (std::vector<std::int64_t>{31, 31, 10, 21}));
  EXPECT_EQ(v["distance_levels"].ints(), (std::vector<std::int64_t>{10, 21, 31}));
  EXPECT_EQ(v["topology_class"].s, "backplane");
}

TEST(topo_json, rt_topology_is_the_default_source) {
  run_options opt;
  opt.env = {{"RT_TOPOLOGY", "synthetic:pack:2 [numa] core:1 pu:1;distances:10,30,30,10"}};
  const value v = topo_json({}, opt);
  EXPECT_EQ(v["source"].s, "synthetic:pack:2 [numa] core:1 pu:1;distances:10,30,30,10");
  EXPECT_EQ(v["max_distance"].n, 30);
  // A flag wins over the environment.
  const value x = topo_json({"--xml", topology_file("32em64t-2n8c2t-pci-noio.xml")}, opt);
  EXPECT_EQ(x["pus"].n, 32);
}

// Strings are escaped: a path with a quote, a backslash and a tab round-trips.
TEST(topo_json, odd_paths_are_escaped) {
  scratch_dir dir;
  const std::string path = dir.write("a\"b\\c\td.xml", scratch_file::read_file(topology_file("32em64t-2n8c2t-pci-noio.xml")));
  const value v = topo_json({"--xml", path});
  EXPECT_EQ(v["source"].s, "xml:" + path);
}

}  // namespace
}  // namespace cli_test
