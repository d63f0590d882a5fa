// Containers (issue 8, item 6): a runtime started inside a restricted CPU set (taskset, and a
// real cgroup cpuset as a container runtime makes one) has one worker per allowed core, binds every worker
// inside the allowed set (never onto PU 0 when PU 0 is excluded), and, idle, burns no CPU.
// The probe (probe/probe.cpp) reports; these tests decide. The one threshold is the issue's:
// an idle pool uses less than 5% of a core over 200 ms.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "process/cli/json_reader.hpp"
#include "process/cli/test_support.hpp"

extern char** environ;

namespace {

using cpu_set = std::set<int>;

cpu_set allowed_cpus() {
  cpu_set_t s;
  CPU_ZERO(&s);
  cpu_set out;
  if (::sched_getaffinity(0, sizeof s, &s) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &s)) out.insert(c);
  return out;
}

std::string list_of(const cpu_set& s) {
  std::string out;
  for (int c : s) out += (out.empty() ? "" : ",") + std::to_string(c);
  return out;
}

// The executable `name` on PATH, or "" when there is none.
std::string on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string p = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

// The core a PU belongs to, as the kernel groups them: its list of sibling PUs; "" if unknown.
std::string core_of(int cpu) {
  const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
  for (const char* f : {"core_cpus_list", "thread_siblings_list"}) {
    std::ifstream in(base + f);
    std::string line;
    if (std::getline(in, line) && !line.empty()) return line;
  }
  return "";
}

struct probe_result {
  int status = -1;  // exit status; 128 + signal when killed
  std::string out;
  std::string err;
};

// Runs argv with the probe's environment (RT_TOPOLOGY, RT_WORKERS and RT_TUNE removed: the
// runtime sees the host as it is), killed after 60 s so that a hung probe fails instead of
// hanging the test.
probe_result run(const std::vector<std::string>& args, const std::string& cgroup_procs = "") {
  std::vector<std::string> argv_s = args;
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (name != "RT_TOPOLOGY" && name != "RT_WORKERS" && name != "RT_TUNE") env_s.push_back(entry);
  }
  std::vector<char*> envp;
  for (std::string& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  cli_test::scratch_file out_file("probe-out");
  cli_test::scratch_file err_file("probe-err");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    if (::dup2(out_file.fd(), STDOUT_FILENO) < 0 || ::dup2(err_file.fd(), STDERR_FILENO) < 0) ::_exit(126);
    // Join the cgroup before exec: the probe starts inside its cpuset (0 is this process).
    if (!cgroup_procs.empty()) {
      const int fd = ::open(cgroup_procs.c_str(), O_WRONLY);
      if (fd < 0 || ::write(fd, "0", 1) != 1) ::_exit(125);
      ::close(fd);
    }
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw std::runtime_error("waitpid failed");
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  probe_result r;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = out_file.contents();
  r.err = err_file.contents();
  return r;
}

cpu_set as_set(const json_test::value& v) {
  cpu_set s;
  for (std::int64_t c : v.ints()) s.insert(static_cast<int>(c));
  return s;
}

bool subset(const cpu_set& a, const cpu_set& b) {
  for (int c : a)
    if (b.count(c) == 0) return false;
  return true;
}

// Runs the probe (under `taskset -c <cpus>` unless cpus is empty) and checks its report against
// the CPU set it was given.
void check_probe(const cpu_set& cpus, const std::string& taskset, const std::string& cgroup_procs = "") {
  const cpu_set expected_allowed = cpus.empty() ? allowed_cpus() : cpus;
  std::set<std::string> cores;
  for (int c : expected_allowed) {
    const std::string core = core_of(c);
    if (core.empty()) GTEST_SKIP() << "no /sys/devices/system/cpu/cpu" << c << "/topology: cannot count cores";
    cores.insert(core);
  }
  std::vector<std::string> args;
  if (!cpus.empty() && cgroup_procs.empty()) args = {taskset, "-c", list_of(cpus)};
  args.push_back(NUMART_PROBE_PATH);
  const probe_result r = run(args, cgroup_procs);
  ASSERT_NE(r.status, 125) << "the probe could not join the cgroup through " << cgroup_procs;
  ASSERT_EQ(r.status, 0) << "stdout:\n" << r.out << "stderr:\n" << r.err;

  int workers = -1;
  cpu_set reported_allowed;
  cpu_set bound_so_far;
  std::set<std::int64_t> worker_ids;
  std::int64_t idle_us = -1;
  std::int64_t window_us = -1;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    const json_test::value v = json_test::reader(line).document();
    const std::string key = v.keys().at(0);
    if (key == "allowed") {
      reported_allowed = as_set(v["allowed"]);
    } else if (key == "workers") {
      workers = static_cast<int>(v["workers"].n);
    } else if (key == "worker") {
      const std::int64_t id = v["worker"].n;
      const cpu_set affinity = as_set(v["affinity"]);
      const int cpu = static_cast<int>(v["cpu"].n);
      worker_ids.insert(id);
      EXPECT_FALSE(affinity.empty()) << "worker " << id;
      EXPECT_TRUE(subset(affinity, expected_allowed))
          << "worker " << id << " is bound to {" << list_of(affinity) << "}, outside the allowed {"
          << list_of(expected_allowed) << "}";
      EXPECT_EQ(affinity.count(cpu), 1u) << "worker " << id << " ran on CPU " << cpu << ", outside its own mask";
      // One worker per core: no two workers share a PU.
      for (int c : affinity) EXPECT_EQ(bound_so_far.count(c), 0u) << "CPU " << c << " is bound to two workers";
      bound_so_far.insert(affinity.begin(), affinity.end());
    } else if (key == "idle_cpu_us") {
      idle_us = v["idle_cpu_us"].n;
      window_us = v["idle_window_us"].n;
    } else {
      ADD_FAILURE() << "unexpected probe line: " << line;
    }
  }
  EXPECT_EQ(reported_allowed, expected_allowed) << "the probe ran with another CPU set than asked";
  EXPECT_EQ(workers, static_cast<int>(cores.size()))
      << "one worker per allowed core expected; allowed PUs {" << list_of(expected_allowed) << "}";
  EXPECT_EQ(static_cast<int>(worker_ids.size()), workers) << "not every worker reported its binding";
  ASSERT_GE(window_us, 200000) << "the probe did not report its idle window";
  // The bar: an idle pool uses less than 5% of a core.
  EXPECT_LT(idle_us * 20, window_us) << "idle pool used " << idle_us << " us of CPU in " << window_us << " us";
}

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

// A real cgroup cpuset, the way a container runtime restricts a process: a child of the root
// of the cgroup v1 cpuset hierarchy, or of the cgroup v2 root with the cpuset controller
// enabled, made for one test and removed after. make() says why when this machine does not
// allow it (not root, no cpuset controller), and the test skips with that reason.
class cpuset_cgroup {
 public:
  static std::optional<cpuset_cgroup> make(const cpu_set& cpus, std::string& why) {
    const std::string name = "numart-containers-" + std::to_string(::getpid());
    const std::string v1 = "/sys/fs/cgroup/cpuset";
    if (::access((v1 + "/cpuset.cpus").c_str(), F_OK) == 0) {
      cpuset_cgroup g(v1 + "/" + name);
      if (::mkdir(g.dir_.c_str(), 0755) != 0) {
        why = "cannot create " + g.dir_ + ": " + std::strerror(errno);
        return std::nullopt;
      }
      g.made_ = true;
      // v1 needs the memory nodes set before a task may join.
      if (!write_file(g.dir_ + "/cpuset.mems", read_line(v1 + "/cpuset.mems")) ||
          !write_file(g.dir_ + "/cpuset.cpus", list_of(cpus))) {
        why = "cannot configure " + g.dir_;
        return std::nullopt;
      }
      return g;
    }
    for (const std::string root : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
      if (read_line(root + "/cgroup.controllers").find("cpuset") == std::string::npos) continue;
      if (read_line(root + "/cgroup.subtree_control").find("cpuset") == std::string::npos &&
          !write_file(root + "/cgroup.subtree_control", "+cpuset")) {
        why = "cannot enable the cpuset controller in " + root;
        return std::nullopt;
      }
      cpuset_cgroup g(root + "/" + name);
      if (::mkdir(g.dir_.c_str(), 0755) != 0) {
        why = "cannot create " + g.dir_ + ": " + std::strerror(errno);
        return std::nullopt;
      }
      g.made_ = true;
      if (!write_file(g.dir_ + "/cpuset.cpus", list_of(cpus))) {
        why = "cannot configure " + g.dir_;
        return std::nullopt;
      }
      return g;
    }
    why = "no cgroup cpuset controller is mounted (v1 " + v1 + " or v2 with cpuset)";
    return std::nullopt;
  }
  cpuset_cgroup(cpuset_cgroup&& o) noexcept : dir_(std::move(o.dir_)), made_(o.made_) { o.made_ = false; }
  cpuset_cgroup(const cpuset_cgroup&) = delete;
  cpuset_cgroup& operator=(const cpuset_cgroup&) = delete;
  cpuset_cgroup& operator=(cpuset_cgroup&&) = delete;
  ~cpuset_cgroup() {
    if (made_) ::rmdir(dir_.c_str());  // empty again: the probe has exited
  }
  std::string procs() const { return dir_ + "/cgroup.procs"; }

 private:
  explicit cpuset_cgroup(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
  bool made_ = false;
};

class Containers : public testing::Test {
 protected:
  void SetUp() override {
    allowed_ = allowed_cpus();
    if (allowed_.size() < 2)
      GTEST_SKIP() << "needs at least 2 PUs to restrict the probe to fewer than the machine has (has "
                   << allowed_.size() << ")";
    taskset_ = on_path("taskset");
  }
  cpu_set allowed_;
  std::string taskset_;
};

TEST_F(Containers, WithoutTasksetEveryAllowedCoreGetsAWorker) { check_probe({}, ""); }

TEST_F(Containers, ACpuSetThatExcludesPu0) {
  if (taskset_.empty()) GTEST_SKIP() << "taskset is not installed (util-linux)";
  cpu_set without0 = allowed_;
  without0.erase(0);
  // Fewer CPUs than the machine: drop one more when PU 0 was not allowed to begin with.
  if (without0.size() == allowed_.size()) without0.erase(without0.begin());
  check_probe(without0, taskset_);
}

TEST_F(Containers, ACpuSetOfOnePu) {
  if (taskset_.empty()) GTEST_SKIP() << "taskset is not installed (util-linux)";
  check_probe({*allowed_.begin()}, taskset_);
}

// The same checks inside a real cgroup cpuset that excludes PU 0: the kernel narrows the
// process's affinity and hwloc reads the cgroup's cpuset; the runtime must agree with both.
TEST_F(Containers, ACgroupCpusetThatExcludesPu0) {
  cpu_set without0 = allowed_;
  without0.erase(0);
  if (without0.size() == allowed_.size()) without0.erase(without0.begin());
  std::string why;
  std::optional<cpuset_cgroup> g = cpuset_cgroup::make(without0, why);
  if (!g) GTEST_SKIP() << why;
  check_probe(without0, "", g->procs());
}

}  // namespace
