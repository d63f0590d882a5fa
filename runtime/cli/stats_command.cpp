// numart stats FILE: prints a stats file the runtime wrote (docs/observability.md, "The stats
// file"): the counters per node and per worker, the worker -> node map and the tunables.
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <optional>
#include <thread>
#include <iomanip>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.hpp"
#include "trace/json.hpp"
#include "trace/stats_file.hpp"

namespace rt::cli {
namespace {

constexpr std::string_view kUsage =
    "usage: numart stats FILE | PID\n"
    "\n"
    "Prints a stats file written by the runtime on exit: every counter per node (with the\n"
    "total and the spawns of threads that are not workers), then per worker, the worker -> node\n"
    "map and the tunables the runtime ran with.\n"
    "\n"
    "With the PID of a running process started with RT_STATS=PATH and RT_STATS_SIGNAL=1, sends\n"
    "it SIGUSR2, waits (up to 10 s) for it to rewrite PATH, and prints that.\n";

// A running process's stats file, refreshed by SIGUSR2 (docs/observability.md). Reads
// RT_STATS and RT_STATS_SIGNAL from /proc/PID/environ, so a runtime configured in code rather
// than by the environment is not found; the error says so.
struct pid_error {
  std::string message;
};

std::optional<std::string> environ_value(const std::string& environ, const std::string& key) {
  std::size_t at = 0;
  while (at < environ.size()) {
    const std::size_t end = environ.find('\0', at);
    const std::string entry = environ.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (entry.compare(0, key.size() + 1, key + "=") == 0) return entry.substr(key.size() + 1);
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return std::nullopt;
}

std::string refresh_from_pid(const std::string& pid_text) {
  const int pid = std::stoi(pid_text);
  std::ifstream env("/proc/" + pid_text + "/environ", std::ios::binary);
  if (!env) throw pid_error{"no process " + pid_text + " (or its environment is not readable)"};
  std::ostringstream whole;
  whole << env.rdbuf();
  const std::string environ = whole.str();
  const std::optional<std::string> path = environ_value(environ, "RT_STATS");
  if (!path || path->empty())
    throw pid_error{"process " + pid_text + " has no RT_STATS in its environment: start it with RT_STATS=PATH RT_STATS_SIGNAL=1"};
  if (environ_value(environ, "RT_STATS_SIGNAL").value_or("") != "1")
    throw pid_error{"process " + pid_text + " was not started with RT_STATS_SIGNAL=1: SIGUSR2 would not write " + *path};
  const std::string file = (*path)[0] == '/' ? *path : "/proc/" + pid_text + "/cwd/" + *path;
  const auto stamp = [&]() -> std::optional<std::pair<long, long>> {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) return std::nullopt;
    return std::make_pair(static_cast<long>(st.st_mtim.tv_sec), st.st_mtim.tv_nsec);
  };
  const auto before = stamp();
  if (::kill(pid, SIGUSR2) != 0) throw pid_error{"cannot signal process " + pid_text + " (SIGUSR2)"};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    const auto now = stamp();
    if (now && now != before) return file;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw pid_error{"process " + pid_text + " did not rewrite " + *path + " within 10 s of SIGUSR2"};
}

bool is_pid(const std::string& s) {
  return !s.empty() && s.size() < 10 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

constexpr std::size_t kWorkersPerBlock = 8;

std::string text_of(const trace::stats_document& d, const std::string& file) {
  const rt::stats& s = d.stats;
  // Columns for the nodes that have workers (a 64-node machine running 4 workers shows <= 4).
  std::vector<int> nodes(s.worker_node.begin(), s.worker_node.end());
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  const std::size_t counters = s.counter_names.size();
  const auto at = [](const std::vector<std::uint64_t>& row, std::size_t i) -> std::uint64_t { return i < row.size() ? row[i] : 0; };
  std::size_t name_width = 8;
  for (const std::string& n : s.counter_names) name_width = std::max(name_width, n.size() + 2);

  std::ostringstream os;
  os << "stats:     " << file << "\n";
  os << "topology:  " << s.topology << (s.virtual_topology ? " (virtual topology)" : " (this machine)") << "\n";
  os << "workers:   " << s.workers() << " on " << nodes.size() << " nodes; worker -> node:";
  for (std::size_t w = 0; w < s.worker_node.size(); ++w) os << " " << w << ":" << s.worker_node[w];
  os << "\n";

  os << "\ncounters per node\n";
  os << std::left << std::setw(static_cast<int>(name_width)) << "counter" << std::setw(11) << "unit" << std::right << std::setw(14)
     << "total";
  for (const int n : nodes) os << std::setw(12) << ("node " + std::to_string(n));
  os << std::setw(12) << "outside" << "\n";
  for (std::size_t i = 0; i < counters; ++i) {
    std::uint64_t total = at(s.outside, i);
    std::vector<std::uint64_t> per_node(nodes.size(), 0);
    for (std::size_t w = 0; w < s.per_worker.size(); ++w) {
      total += at(s.per_worker[w], i);
      const auto column = std::lower_bound(nodes.begin(), nodes.end(), s.worker_node[w]) - nodes.begin();
      per_node[static_cast<std::size_t>(column)] += at(s.per_worker[w], i);
    }
    os << std::left << std::setw(static_cast<int>(name_width)) << s.counter_names[i] << std::setw(11) << s.counter_units[i]
       << std::right << std::setw(14) << total;
    for (const std::uint64_t v : per_node) os << std::setw(12) << v;
    os << std::setw(12) << at(s.outside, i) << "\n";
  }

  for (std::size_t first = 0; first < s.per_worker.size(); first += kWorkersPerBlock) {
    const std::size_t last = std::min(first + kWorkersPerBlock, s.per_worker.size());
    os << "\ncounters per worker";
    if (s.per_worker.size() > kWorkersPerBlock) os << " (workers " << first << "-" << last - 1 << ")";
    os << "\n" << std::left << std::setw(static_cast<int>(name_width)) << "counter" << std::right;
    for (std::size_t w = first; w < last; ++w) os << std::setw(12) << ("w" + std::to_string(w) + "/n" + std::to_string(s.worker_node[w]));
    os << "\n";
    for (std::size_t i = 0; i < counters; ++i) {
      os << std::left << std::setw(static_cast<int>(name_width)) << s.counter_names[i] << std::right;
      for (std::size_t w = first; w < last; ++w) os << std::setw(12) << at(s.per_worker[w], i);
      os << "\n";
    }
  }

  os << "\ntunables\n";
  std::istringstream lines(s.tunables);
  for (std::string line; std::getline(lines, line);) os << "  " << line << "\n";
  return os.str();
}

}  // namespace

int stats_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    out << kUsage;
    return kExitOk;
  }
  if (args.size() != 1 || (!args[0].empty() && args[0][0] == '-')) {
    const std::string why = args.empty() ? "a stats FILE is needed"
                            : args.size() > 1 ? "one stats FILE, not " + std::to_string(args.size()) + " arguments"
                                              : "unknown option '" + args[0] + "'";
    err << "numart stats: " << why << " (see numart stats --help)\n";
    return kExitUsage;
  }
  std::string file = args[0];
  struct stat st {};
  if (is_pid(args[0]) && ::stat(args[0].c_str(), &st) != 0) {
    try {
      file = refresh_from_pid(args[0]);
    } catch (const pid_error& e) {
      err << "numart stats: " << e.message << "\n";
      return kExitUsage;
    }
  }
  try {
    out << text_of(trace::read_stats_file(file), file);
  } catch (const trace::format_error& e) {
    err << "numart stats: '" << file << "': " << e.what() << "\n";
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace rt::cli
