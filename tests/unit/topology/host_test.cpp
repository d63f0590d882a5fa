// The host topology against what the kernel says, independently of hwloc: the PUs are the
// process's CPU affinity (I-TOPO-8), the nodes are /sys/devices/system/node/node*, and binding
// a thread to a core shows up in sched_getaffinity.
#include <gtest/gtest.h>
#include <hwloc.h>
#include <sched.h>

#include <filesystem>
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace rt::topo {
namespace {

std::vector<unsigned> affinity_of_this_thread() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(::sched_getaffinity(0, sizeof set, &set), 0);
  std::vector<unsigned> out;
  for (unsigned c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) out.push_back(c);
  }
  return out;
}

int online_nodes() {
  const std::filesystem::path sys = "/sys/devices/system/node";
  if (!std::filesystem::exists(sys)) return 1;  // no NUMA support in the kernel: one node
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(sys)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 4 && name.compare(0, 4, "node") == 0 && name.find_first_not_of("0123456789", 4) == std::string::npos) ++n;
  }
  return n;
}

TEST(host, is_this_machine_restricted_to_the_affinity) {
  const std::vector<unsigned> cpus = affinity_of_this_thread();
  const topology t = topology::load(source::parse("host"));
  EXPECT_TRUE(t.is_host);
  EXPECT_EQ(t.source_desc, "host");
  EXPECT_EQ(t.allowed_pus, cpus);
  EXPECT_EQ(t.pus, static_cast<int>(cpus.size()));
  EXPECT_EQ(t.node_count(), online_nodes());
  EXPECT_GE(t.core_count(), 1);
  for (const core& c : t.cores) EXPECT_TRUE(c.allowed);
  ASSERT_NE(t.native_handle(), nullptr);
  EXPECT_EQ(hwloc_topology_is_thissystem(t.native_handle()), 1);
}

TEST(host, binds_the_calling_thread_to_a_core) {
  const std::vector<unsigned> before = affinity_of_this_thread();
  const topology t = topology::load(source::parse("host"));
  const int last = t.core_count() - 1;
  ASSERT_TRUE(t.bind_current_thread(last));
  EXPECT_EQ(affinity_of_this_thread(), t.cores[static_cast<std::size_t>(last)].pus);
  EXPECT_FALSE(t.bind_current_thread(t.core_count()));
  EXPECT_FALSE(t.bind_current_thread(-1));
  // Give the thread its affinity back for the tests that follow.
  cpu_set_t set;
  CPU_ZERO(&set);
  for (const unsigned c : before) CPU_SET(c, &set);
  ASSERT_EQ(::sched_setaffinity(0, sizeof set, &set), 0);
}

TEST(host, a_file_topology_binds_nothing) {
  const topology t = topology::load(source::parse(std::string("xml:") + NUMART_TOPOLOGY_DIR + "/32em64t-2n8c2t-pci-noio.xml"));
  const std::vector<unsigned> before = affinity_of_this_thread();
  EXPECT_FALSE(t.bind_current_thread(0));
  EXPECT_EQ(affinity_of_this_thread(), before);
  ASSERT_NE(t.native_handle(), nullptr);
  EXPECT_EQ(hwloc_topology_is_thissystem(t.native_handle()), 0);
}

TEST(host, a_moved_topology_keeps_its_handle) {
  topology a = topology::load(source::parse("synthetic:pack:2 [numa] core:1 pu:1"));
  hwloc_topology* h = a.native_handle();
  topology b = std::move(a);
  EXPECT_EQ(b.native_handle(), h);
  EXPECT_EQ(b.node_count(), 2);
  EXPECT_EQ(topology().native_handle(), nullptr);
}

}  // namespace
}  // namespace rt::topo
