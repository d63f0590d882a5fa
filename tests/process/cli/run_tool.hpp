// Runs a built tool in a child process and captures its exit status, stdout and stderr:
// run_tool(path, ...) for any, run_numart(...) for the numart tool (NUMART_CLI_PATH). The child
// gets a copy of this environment with RT_TOPOLOGY removed unless the test sets it, and
// optionally a CPU affinity (what `taskset -c` does).
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "test_support.hpp"

extern char** environ;

namespace cli_test {

struct result {
  int status = -1;  // exit status; 128 + signal when killed by a signal
  std::string out;
  std::string err;
};

struct run_options {
  std::vector<std::pair<std::string, std::string>> env;  // variables to set in the child
  std::vector<int> cpus;                                   // empty: inherit the affinity
};

inline result run_tool(const std::string& path, const std::vector<std::string>& args, const run_options& opt = {}) {
  // Everything the child needs is built before fork(): after it, only async-signal-safe calls.
  std::vector<std::string> argv_s = {path};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::vector<std::string> env_s;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = name == "RT_TOPOLOGY";
    for (const auto& kv : opt.env) replaced = replaced || kv.first == name;
    if (!replaced) env_s.push_back(entry);
  }
  for (const auto& kv : opt.env) env_s.push_back(kv.first + "=" + kv.second);
  std::vector<char*> envp;
  for (std::string& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  for (const int c : opt.cpus) CPU_SET(c, &cpus);

  scratch_file out_file("out");
  scratch_file err_file("err");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    if (::dup2(out_file.fd(), STDOUT_FILENO) < 0 || ::dup2(err_file.fd(), STDERR_FILENO) < 0) ::_exit(126);
    if (!opt.cpus.empty() && ::sched_setaffinity(0, sizeof cpus, &cpus) != 0) ::_exit(126);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("waitpid failed");
  }
  result r;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = out_file.contents();
  r.err = err_file.contents();
  return r;
}

#ifdef NUMART_CLI_PATH
inline result run_numart(const std::vector<std::string>& args, const run_options& opt = {}) {
  return run_tool(NUMART_CLI_PATH, args, opt);
}
#endif

}  // namespace cli_test
