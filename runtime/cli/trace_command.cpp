// numart trace summarize FILE: reads a trace the runtime wrote (RT_TRACE, dump_trace()) and
// prints what the scheduler decided: wake-path outcomes, steal tiers, per-group locality over
// time, and the time workers were parked while tasks waited (docs/observability.md).
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <iomanip>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.hpp"
#include "trace/json.hpp"
#include "trace/summary.hpp"

namespace rt::cli {
namespace {

constexpr std::string_view kUsage =
    "usage: numart trace summarize FILE [--windows N] [--top K]\n"
    "\n"
    "Summarizes a trace written by the runtime (RT_TRACE=FILE, or rt::runtime::dump_trace()):\n"
    "the most frequent wake-path outcomes, steals by tier, per-group locality over time (the\n"
    "share of a group's task starts on a worker of the group's node, per time window), and the\n"
    "time workers spent parked while spawned tasks waited to start.\n"
    "\n"
    "  --windows N   time windows of the locality table, 1 to 50 (default 10)\n"
    "  --top K       wake-path outcomes to list, at least 1 (default 10)\n";

constexpr int kMaxWindows = 50;

struct usage_error {
  std::string message;
};

struct options {
  std::string file;
  int windows = 10;
  int top = 10;
  bool help = false;
};

int parse_count(const std::string& flag, const std::string& text, int lo, int hi) {
  int v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc{} || r.ptr != text.data() + text.size() || v < lo || v > hi) {
    throw usage_error{flag + " takes a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) + ", not '" + text + "'"};
  }
  return v;
}

options parse(const std::vector<std::string>& args) {
  options o;
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    o.help = true;
    return o;
  }
  if (args.empty()) throw usage_error{"a subcommand is needed: summarize"};
  if (args[0] != "summarize") throw usage_error{"unknown subcommand '" + args[0] + "' (expected summarize)"};
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--windows" || a == "--top") {
      if (i + 1 >= args.size()) throw usage_error{a + " needs a value"};
      if (a == "--windows") {
        o.windows = parse_count(a, args[++i], 1, kMaxWindows);
      } else {
        o.top = parse_count(a, args[++i], 1, 1'000'000);
      }
    } else if (!a.empty() && a[0] == '-') {
      throw usage_error{"unknown option '" + a + "'"};
    } else if (o.file.empty()) {
      o.file = a;
    } else {
      throw usage_error{"unexpected argument '" + a + "'"};
    }
  }
  if (o.file.empty() && !o.help) throw usage_error{"summarize needs a trace FILE"};
  return o;
}

std::string percent(std::uint64_t part, std::uint64_t whole) {
  if (whole == 0) return "-";
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << 100.0 * static_cast<double>(part) / static_cast<double>(whole) << "%";
  return os.str();
}

std::string ratio(std::uint64_t num, std::uint64_t den) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << static_cast<double>(num) / static_cast<double>(den);
  return os.str();
}

// A duration in the largest unit that keeps three significant digits before the point:
// "850 ns", "12.345 us", "3.210 ms", "42.000 s".
std::string duration(std::uint64_t ns) {
  if (ns < 10'000) return std::to_string(ns) + " ns";
  std::ostringstream os;
  os << std::fixed << std::setprecision(3);
  if (ns < 10'000'000) {
    os << static_cast<double>(ns) / 1e3 << " us";
  } else if (ns < 10'000'000'000) {
    os << static_cast<double>(ns) / 1e6 << " ms";
  } else {
    os << static_cast<double>(ns) / 1e9 << " s";
  }
  return os.str();
}

std::string text_of(const trace::trace_summary& s, const options& o) {
  std::ostringstream os;
  os << "trace:      " << o.file << "\n";
  os << "span:       " << duration(s.span_ns) << ", " << s.workers << " workers on " << s.nodes << " nodes, " << s.tasks
     << " task slices\n";
  os << "dropped:    " << s.dropped
     << (s.dropped > 0 ? " events (each ring kept its newest events; older activity is missing)\n" : " events\n");

  os << "\nwake path: " << s.spawns << " spawns";
  if (s.spawns > 0) {
    os << "; idle scans on " << s.scans << " (" << percent(s.scans, s.spawns) << "), mean length "
       << (s.scans > 0 ? ratio(s.scanned, s.scans) : std::string("-")) << ", max " << s.max_scan;
  }
  os << "; mailbox hand-offs " << s.handoffs << "\n";
  if (!s.outcomes.empty()) {
    os << "  " << std::left << std::setw(14) << "affine" << std::setw(14) << "path" << std::right << std::setw(10) << "spawns"
       << std::setw(9) << "share" << "\n";
    const std::size_t shown = std::min(s.outcomes.size(), static_cast<std::size_t>(o.top));
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& x = s.outcomes[i];
      os << "  " << std::left << std::setw(14) << x.affine << std::setw(14) << x.path << std::right << std::setw(10) << x.spawns
         << std::setw(9) << percent(x.spawns, s.spawns) << "\n";
    }
    if (shown < s.outcomes.size()) os << "  (" << s.outcomes.size() - shown << " more outcomes; --top to list them)\n";
  }

  os << "\nsteals: " << s.steals << "\n";
  for (const auto& t : s.tiers) {
    os << "  " << std::left << std::setw(12) << t.name << std::right << std::setw(10) << t.steals << std::setw(9)
       << percent(t.steals, s.steals) << "\n";
  }

  os << "\ngroup locality: task starts on the group's node, per window of " << duration(s.window_ns) << "\n";
  if (s.groups.empty()) {
    os << "  no task of a group in the trace\n";
  } else {
    os << "  " << std::left << std::setw(16) << "group" << std::right << std::setw(9) << "starts" << std::setw(9) << "overall";
    for (std::size_t w = 0; w < s.groups.front().windows.size(); ++w) os << std::setw(7) << ("w" + std::to_string(w));
    os << "\n";
    for (const auto& g : s.groups) {
      std::string name = g.name.empty() ? "(unnamed)" : g.name;
      if (name.size() > 15) name = name.substr(0, 14) + "~";
      os << "  " << std::left << std::setw(16) << name << std::right << std::setw(9) << g.starts << std::setw(9)
         << percent(g.overall.local, g.overall.starts);
      for (const auto& w : g.windows) {
        std::string cell = w.starts == 0 ? "-" : std::to_string((w.local * 100 + w.starts / 2) / w.starts) + "%";
        os << std::setw(7) << cell;
      }
      os << "\n";
    }
    os << "  ('-': no start with a home node in that window)\n";
  }

  os << "\nidle while work waits: workers parked " << duration(s.parked_ns) << " in total, " << duration(s.parked_while_queued_ns)
     << " of it (" << percent(s.parked_while_queued_ns, s.parked_ns) << ") while a spawned task waited to start\n";
  os << "  tasks were waiting during " << duration(s.queued_ns) << " of the " << duration(s.span_ns) << " span\n";
  if (s.runnable_ns != 0)
    os << "  not counted as parked: " << duration(s.runnable_ns) << " between a wake and the woken worker running\n";
  os << "  one parked worker per waiting task: " << duration(s.parked_for_waiting_ns) << " ("
     << percent(s.parked_for_waiting_ns, s.span_ns * static_cast<std::uint64_t>(s.workers))
     << " of worker time), the parked time the waiting tasks could have used\n";
  for (const auto& w : s.per_worker) {
    os << "  worker " << std::left << std::setw(4) << w.worker << std::right << " parked " << std::setw(14) << duration(w.parked_ns)
       << "   while work waited " << std::setw(14) << duration(w.parked_while_queued_ns) << "\n";
  }
  return os.str();
}

}  // namespace

int trace_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  options o;
  try {
    o = parse(args);
  } catch (const usage_error& e) {
    err << "numart trace: " << e.message << " (see numart trace --help)\n";
    return kExitUsage;
  }
  if (o.help) {
    out << kUsage;
    return kExitOk;
  }
  try {
    const trace::parsed_trace t = trace::parse_trace(trace::read_text_file(o.file));
    out << text_of(trace::summarize(t, o.windows), o);
  } catch (const trace::format_error& e) {
    err << "numart trace: '" << o.file << "': " << e.what() << "\n";
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace rt::cli
