// numart stats FILE: prints a stats file the runtime wrote (docs/observability.md, "The stats
// file"): the counters per node and per worker, the worker -> node map and the tunables.
#include <algorithm>
#include <cstdint>
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
    "usage: numart stats FILE\n"
    "\n"
    "Prints a stats file written by the runtime on exit: every counter per node (with the\n"
    "total and the spawns of threads that are not workers), then per worker, the worker -> node\n"
    "map and the tunables the runtime ran with.\n";

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
  try {
    out << text_of(trace::read_stats_file(args[0]), args[0]);
  } catch (const trace::format_error& e) {
    err << "numart stats: '" << args[0] << "': " << e.what() << "\n";
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace rt::cli
