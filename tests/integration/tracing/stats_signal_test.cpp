// RT_STATS_SIGNAL / config::stats_on_signal: SIGUSR2 writes the stats file while the runtime
// runs (docs/observability.md); without stats_path it is a configuration error.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "rt/rt.hpp"
#include "support/scratch_dir.hpp"
#include "trace/stats_file.hpp"

namespace {

// A virtual two-node runtime's configuration that writes `path` on SIGUSR2.
rt::config on_signal(const std::string& path) {
  rt::config c;
  c.topology = rt::topology_source::synthetic("pack:2 [numa] core:2 pu:1");
  c.stats_path = path;
  c.stats_on_signal = true;
  return c;
}

// Polls until `path` exists; the deadline turns a lost signal into a failure, not a hang.
bool appears(const std::string& path, std::chrono::steady_clock::time_point deadline) {
  while (!std::filesystem::exists(path) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return std::filesystem::exists(path);
}

TEST(StatsSignal, Sigusr2WritesTheStatsFileWhileTheRuntimeRuns) {
  numart_test::scratch_dir dir("stats_signal");
  const std::string path = dir.path() + "/stats.json";
  rt::runtime r{on_signal(path)};
  for (int i = 0; i < 100; ++i) r.spawn([] {}).join();
  ASSERT_FALSE(std::filesystem::exists(path));
  ASSERT_EQ(::raise(SIGUSR2), 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  ASSERT_TRUE(appears(path, deadline));
  // The writer may still be writing: read until the document parses and shows the tasks.
  std::uint64_t run = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    try {
      const rt::trace::stats_document d = rt::trace::read_stats_file(path);
      run = d.stats.total("tasks_run");
      break;
    } catch (const std::exception&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  EXPECT_GE(run, 100u);
}

// A signal right after the runtime started, before its watcher thread may have run at all,
// is still written (the watcher's starting counts are read by its constructor).
TEST(StatsSignal, ASignalRightAfterTheStartIsNotLost) {
  numart_test::scratch_dir dir("stats_signal_early");
  const std::string path = dir.path() + "/stats.json";
  rt::runtime r{on_signal(path)};
  ASSERT_EQ(::raise(SIGUSR2), 0);
  EXPECT_TRUE(appears(path, std::chrono::steady_clock::now() + std::chrono::seconds(60)))
      << "the SIGUSR2 raised right after the start was lost";
}

TEST(StatsSignal, WithoutAStatsPathItIsAConfigurationError) {
  rt::config c;
  c.topology = rt::topology_source::synthetic("pack:1 [numa] core:2 pu:1");
  c.stats_on_signal = true;
  try {
    rt::runtime r{c};
    FAIL() << "stats_on_signal without stats_path was accepted";
  } catch (const rt::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("stats_path"), std::string::npos) << e.what();
  }
}

}  // namespace
