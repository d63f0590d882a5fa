// The jbb example (examples/jbb, docs/jbb.md) as its users run it: `numart_jbb --runtime both
// --json` on the virtual Opteron (16 workers, 8 nodes over this machine's cores), short runs.
// Checked: both runtimes ran the same deck and served every warehouse of every instance, and
// the JSON's figures agree with each other (the local share with its chunk counts, the ratio
// with the two totals, the data placed with the warehouses' size). No figure is compared with
// a threshold of speed: that is the benchmarks' business (scripts/report/jbb_bars.py).
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "process/cli/run_tool.hpp"
#include "trace/json.hpp"

namespace {

using cli_test::result;
using cli_test::run_tool;
using rt::trace::json_value;

const std::string kOpteron = std::string(NUMART_TOPOLOGY_DIR) + "/64amd64-4p2n4ca2co.xml";
constexpr int kWorkers = 16;
constexpr int kNodes = 8;
constexpr int kInstances = 2;
constexpr std::int64_t kWarehouseKib = 256;

result run_jbb(const std::vector<std::string>& args) { return run_tool(NUMART_JBB_PATH, args); }

const json_value& member(const json_value& v, std::string_view key) {
  const json_value* m = v.find(key);
  if (m == nullptr) throw std::runtime_error("missing member '" + std::string(key) + "'");
  return *m;
}
double number(const json_value& v, std::string_view key) {
  const json_value& m = member(v, key);
  if (!m.is_number()) throw std::runtime_error("'" + std::string(key) + "' is not a number");
  return std::stod(m.text);
}
std::int64_t integer(const json_value& v, std::string_view key) {
  const std::optional<std::int64_t> n = member(v, key).as_int();
  if (!n) throw std::runtime_error("'" + std::string(key) + "' is not an integer");
  return *n;
}

// One run of one runtime: every instance served every warehouse, and its figures agree.
void check_run(const json_value& run, const std::string& rt_name, std::int64_t warehouses) {
  SCOPED_TRACE(rt_name);
  EXPECT_EQ(member(run, "runtime").text, rt_name);
  EXPECT_GT(number(run, "bops_total"), 0.0);
  EXPECT_EQ(integer(run, "unknown_chunks"), 0) << "chunks whose node the run could not tell";
  const json_value& instances = member(run, "instances");
  ASSERT_TRUE(instances.is_array());
  ASSERT_EQ(instances.items.size(), static_cast<std::size_t>(kInstances));
  double bops_sum = 0;
  for (const json_value& in : instances.items) {
    const double bops = number(in, "bops");
    EXPECT_GT(bops, 0.0);
    bops_sum += bops;
    EXPECT_GT(integer(in, "warehouse_txns_min"), 0) << "a warehouse ran no transaction";
    const std::int64_t local = integer(in, "local_chunks");
    const std::int64_t remote = integer(in, "remote_chunks");
    ASSERT_GT(local + remote, 0);
    const double share = number(in, "local_share");
    EXPECT_NEAR(share, static_cast<double>(local) / static_cast<double>(local + remote), 0.001);
    const json_value& per_node = member(in, "memory_bytes_per_node");
    ASSERT_TRUE(per_node.is_array());
    ASSERT_EQ(per_node.items.size(), static_cast<std::size_t>(kNodes));
    std::int64_t placed = 0;
    for (const json_value& b : per_node.items) placed += b.as_int().value_or(-1);
    EXPECT_GE(placed, warehouses * kWarehouseKib * 1024) << "less data placed than the warehouses hold";
  }
  // The total is the instances' sum (each rounded to 3 decimals in the JSON).
  EXPECT_NEAR(number(run, "bops_total"), bops_sum, 0.01 * kInstances);
  const json_value& new_order = member(member(run, "latency"), "new_order");
  EXPECT_GT(integer(new_order, "count"), 0);
}

TEST(JbbSmoke, BothRuntimesServeEveryWarehouseOnTheVirtualOpteron) {
  const result r = run_jbb({"--runtime", "both", "--topology", "xml:" + kOpteron, "--workers", std::to_string(kWorkers),
                            "--warehouse-kib", std::to_string(kWarehouseKib), "--placement", "scatter", "--warmup",
                            "0.2", "--seconds", "0.3", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  rt::trace::json_reader reader(r.out);
  const json_value doc = reader.parse_value();
  reader.finish();
  EXPECT_EQ(integer(doc, "workers"), kWorkers);
  EXPECT_EQ(integer(doc, "nodes"), kNodes);
  EXPECT_EQ(member(doc, "virtual_topology").b, true);
  EXPECT_EQ(member(doc, "emulated_remote_cost").b, true);
  EXPECT_EQ(integer(doc, "instances_count"), kInstances);
  const std::int64_t warehouses = integer(doc, "warehouses_per_instance");
  EXPECT_EQ(warehouses, kWorkers / kInstances);  // the default: workers / instances
  const json_value& runtimes = member(doc, "runtime");
  for (const char* name : {"numart", "onetbb"}) {
    const json_value& side = member(runtimes, name);
    const json_value& runs = member(side, "runs");
    ASSERT_TRUE(runs.is_array());
    ASSERT_EQ(runs.items.size(), 2u) << name << ": --runtime both runs each runtime twice";
    for (const json_value& run : runs.items) check_run(run, name, warehouses);
  }
  const double ratio = number(runtimes, "ratio_bops");
  const double numart = number(member(runtimes, "numart"), "bops_total");
  const double onetbb = number(member(runtimes, "onetbb"), "bops_total");
  EXPECT_NEAR(ratio, numart / onetbb, 0.001 + 0.001 * ratio);
}

TEST(JbbSmoke, BadOptionsAreRefusedWithTheirReason) {
  struct refusal {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<refusal> cases = {
      {{"--placement", "nowhere"}, "--placement 'nowhere': expected one of local, interleave, scatter"},
      {{"--runtime", "x"}, "--runtime 'x': expected one of numart, onetbb, both"},
      {{"--seconds", "0"}, "--seconds '0': expected seconds from 0.1 to 86400"},
      {{"--warehouse-kib", "1"}, "--warehouse-kib '1': expected a whole number from 64 to 1048576"},
      {{"--topology", "xml:/nonexistent/machine.xml"}, "cannot open the file"},
      {{"--bogus"}, "unknown option '--bogus'"},
  };
  for (const refusal& c : cases) {
    const result r = run_jbb(c.args);
    EXPECT_EQ(r.status, 2) << c.args.front();
    EXPECT_NE(r.err.find(c.says), std::string::npos) << "stderr: " << r.err;
    EXPECT_EQ(r.out, "") << c.args.front();
  }
}

}  // namespace
