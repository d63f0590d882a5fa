// `numart stats PID`: the tool finds RT_STATS in the process's environment, sends SIGUSR2, waits
// for the runtime's watcher to rewrite the file and prints it (docs/observability.md).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "rt/rt.hpp"
#include "support/scratch_dir.hpp"

extern char** environ;

namespace {

constexpr const char* kChildFlag = "NUMART_STATS_PID_CHILD";

bool wait_for_file(const std::string& path, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!std::filesystem::exists(path)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// The child: a runtime configured from its environment, which says where the stats go and that
// SIGUSR2 writes them; it runs some tasks, says it is ready, and lives until told to stop.
TEST(StatsPid, ChildProcess) {
  const char* dir = std::getenv(kChildFlag);
  if (dir == nullptr) GTEST_SKIP() << "the child of StatsPid.ToolRefreshesAndPrintsARunningProcess";
  rt::runtime r{rt::config::from_env()};
  for (int i = 0; i < 200; ++i) r.spawn([] {}).join();
  std::FILE* ready = std::fopen((std::string(dir) + "/ready").c_str(), "w");
  ASSERT_NE(ready, nullptr);
  std::fclose(ready);
  ASSERT_TRUE(wait_for_file(std::string(dir) + "/done", std::chrono::seconds(60)));
}

std::string run_tool(const std::string& args, int& status) {
  std::string out;
  std::FILE* p = ::popen((std::string(NUMART_CLI_PATH) + " " + args + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  status = ::pclose(p);
  return out;
}

TEST(StatsPid, ToolRefreshesAndPrintsARunningProcess) {
  numart_test::scratch_dir dir("stats_pid");
  std::vector<std::string> env_s;
  for (char** e = environ; *e != nullptr; ++e) env_s.emplace_back(*e);
  env_s.push_back(std::string(kChildFlag) + "=" + dir.path());
  env_s.push_back("RT_STATS=" + dir.path() + "/stats.json");
  env_s.push_back("RT_STATS_SIGNAL=1");
  env_s.push_back("RT_TOPOLOGY=synthetic:pack:2 [numa] core:2 pu:1");
  std::vector<char*> envp;
  for (std::string& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string self = "/proc/self/exe";
  std::string filter = "--gtest_filter=StatsPid.ChildProcess";
  std::vector<char*> argv{self.data(), filter.data(), nullptr};
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::execve("/proc/self/exe", argv.data(), envp.data());
    ::_exit(127);
  }
  const bool ready = wait_for_file(dir.path() + "/ready", std::chrono::seconds(60));
  int status = -1;
  const std::string out = ready ? run_tool("stats " + std::to_string(child), status) : "";
  std::FILE* done = std::fopen((dir.path() + "/done").c_str(), "w");
  if (done != nullptr) std::fclose(done);
  int child_status = -1;
  ::waitpid(child, &child_status, 0);
  ASSERT_TRUE(ready) << "the child never got ready";
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("tasks_run"), std::string::npos) << out;
  EXPECT_NE(out.find("4 on 2 nodes"), std::string::npos) << out;  // the child's RT_TOPOLOGY
  EXPECT_TRUE(WIFEXITED(child_status) && WEXITSTATUS(child_status) == 0) << "child status " << child_status;

  // A process that was not started that way: a one-line refusal, exit 2.
  const std::string refused = run_tool("stats " + std::to_string(::getpid()), status);
  EXPECT_EQ(WEXITSTATUS(status), 2) << refused;
  EXPECT_NE(refused.find("RT_STATS"), std::string::npos) << refused;
}

}  // namespace
