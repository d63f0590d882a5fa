// The stats file: rt::stats -> JSON -> rt::stats, and the refusals of damaged or foreign files.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>

#include "stats/counters.hpp"
#include "support/scratch_dir.hpp"
#include "trace/json.hpp"
#include "trace/stats_file.hpp"

namespace {

// A fixed counter list (the runtime's table grows; the file format does not depend on it).
rt::stats sample_stats() {
  rt::stats s;
  s.counter_names = {"tasks_spawned", "tasks_run", "tasks_inline", "spawns_outside", "steals", "not_in_the_table"};
  s.counter_units = {"tasks", "tasks", "tasks", "tasks", "tasks", "widgets"};
  const std::size_t n = s.counter_names.size();
  for (std::size_t w = 0; w < 3; ++w) {
    std::vector<std::uint64_t> row(n);
    for (std::size_t i = 0; i < n; ++i) row[i] = 1000 * (w + 1) + i;
    s.per_worker.push_back(row);
  }
  s.outside.assign(n, 0);
  s.outside[0] = 42;
  s.outside[1] = std::uint64_t{1} << 63;
  s.worker_node = {0, 0, 1};
  s.tunables = "imbalance_pct = 117 (%)\nNUMA_WAKE_AFFINE = on\n";
  s.topology = "xml:/tmp/\"quoted\" topo.xml";
  s.virtual_topology = true;
  return s;
}

std::string error_of(const std::string& text) {
  try {
    rt::trace::parse_stats(text);
  } catch (const rt::trace::format_error& e) {
    return e.what();
  }
  return "";
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const std::size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

TEST(stats_file, round_trips_every_field) {
  const rt::stats s = sample_stats();
  const rt::trace::stats_document d = rt::trace::parse_stats(rt::trace::stats_json(s));
  EXPECT_EQ(d.stats.counter_names, s.counter_names);
  EXPECT_EQ(d.stats.counter_units, s.counter_units);
  EXPECT_EQ(d.stats.per_worker, s.per_worker);
  EXPECT_EQ(d.stats.outside, s.outside);
  EXPECT_EQ(d.stats.worker_node, s.worker_node);
  EXPECT_EQ(d.stats.tunables, s.tunables);
  EXPECT_EQ(d.stats.topology, s.topology);
  EXPECT_TRUE(d.stats.virtual_topology);
  // Docs come from runtime/stats/counters.def; a name the table lacks has an empty doc.
  ASSERT_EQ(d.counter_docs.size(), s.counter_names.size());
  for (const auto& c : rt::ctr::kCounterInfo) {
    if (std::string(c.name) == "tasks_run") {
      EXPECT_EQ(d.counter_docs[1], c.doc);
    }
  }
  EXPECT_FALSE(d.counter_docs[1].empty());
  EXPECT_EQ(d.counter_docs[5], "");
}

TEST(stats_file, rows_are_looked_up_by_name) {
  // Reordering the members of a row changes nothing.
  const rt::stats s = sample_stats();
  std::string json = rt::trace::stats_json(s);
  const std::string a = "\"tasks_spawned\":1000,\"tasks_run\":1001";
  json = replaced(json, a, "\"tasks_run\":1001,\"tasks_spawned\":1000");
  EXPECT_EQ(rt::trace::parse_stats(json).stats.per_worker, s.per_worker);
}

TEST(stats_file, refuses_rows_that_do_not_match_the_counter_list) {
  const std::string json = rt::trace::stats_json(sample_stats());
  EXPECT_EQ(error_of(replaced(json, "\"steals\":2004,", "")), "damaged stats file: workers[1].counters: no counter 'steals'");
  EXPECT_EQ(error_of(replaced(json, "\"steals\":2004,", "\"steals\":2004,\"bogus\":1,")),
            "damaged stats file: workers[1].counters: counter 'bogus' is not in the counter list");
  EXPECT_EQ(error_of(replaced(json, "\"steals\":2004,", "\"steals\":-1,")),
            "damaged stats file: workers[1].counters.steals is not a non-negative integer");
  EXPECT_EQ(error_of(replaced(json, "\"worker\":2", "\"worker\":5")), "damaged stats file: workers[2]: 'worker' is not 2");
  EXPECT_EQ(error_of(replaced(json, "\"worker\":2,\"node\":1", "\"worker\":2,\"node\":70000")),
            "damaged stats file: workers[2]: 'node' is out of range (0-65535)");
  EXPECT_EQ(error_of(replaced(json, "{\"name\":\"tasks_run\"", "{\"name\":\"tasks_spawned\"")),
            "damaged stats file: counters[1]: counter 'tasks_spawned' is listed twice");
}

TEST(stats_file, refuses_foreign_and_future_documents) {
  EXPECT_EQ(error_of("[]"), "not a numart stats file: the document is not a JSON object");
  EXPECT_EQ(error_of("{\"traceEvents\": []}"), "not a numart stats file: no \"format\": \"numart-stats\"");
  const std::string json = rt::trace::stats_json(sample_stats());
  EXPECT_EQ(error_of(replaced(json, "\"version\":1", "\"version\":2")),
            "unsupported stats file version 2 (this numart reads version 1)");
  EXPECT_EQ(error_of(json.substr(0, json.size() / 2)).rfind("truncated JSON:", 0), 0u);
}

class stats_file_io : public ::testing::Test {
 protected:
  numart_test::scratch_dir dir_;
};

TEST_F(stats_file_io, writes_through_a_rename_and_reads_back) {
  const std::string path = dir_.path() + "/stats.json";
  std::ostringstream err;
  ASSERT_TRUE(rt::trace::write_stats_file(sample_stats(), path, err)) << err.str();
  EXPECT_EQ(err.str(), "");
  EXPECT_EQ(rt::trace::read_stats_file(path).stats.per_worker, sample_stats().per_worker);
  const auto entries = std::distance(std::filesystem::directory_iterator(dir_.path()), std::filesystem::directory_iterator{});
  EXPECT_EQ(entries, 1) << "no temporary file is left behind";
}

TEST_F(stats_file_io, an_unwritable_path_is_one_line) {
  const std::string path = dir_.path() + "/missing/stats.json";
  std::ostringstream err;
  EXPECT_FALSE(rt::trace::write_stats_file(sample_stats(), path, err));
  const std::string line = err.str();
  EXPECT_EQ(line.rfind("numart: stats file '" + path + "': cannot create '", 0), 0u) << line;
  EXPECT_NE(line.find("No such file or directory"), std::string::npos) << line;
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1);
}

}  // namespace
