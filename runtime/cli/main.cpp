// numart: the command-line tool shipped with the library (DESIGN.md §2). One subcommand per
// entry of kCommands; `topo` prints the topology as the runtime sees it.
#include <cstdlib>
#include <exception>
#include <iomanip>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.hpp"

namespace {

struct command {
  std::string_view name;
  std::string_view summary;
  int (*run)(const std::vector<std::string>&, std::ostream&, std::ostream&);
};

constexpr command kCommands[] = {
    {"topo", "print the machine topology as the runtime sees it", rt::cli::topo_command},
    {"trace", "summarize a trace the runtime wrote (RT_TRACE)", rt::cli::trace_command},
    {"stats", "print a stats file the runtime wrote on exit", rt::cli::stats_command},
};

void usage(std::ostream& os) {
  os << "usage: numart <command> [options]\n\ncommands:\n";
  for (const command& c : kCommands) os << "  " << std::left << std::setw(7) << c.name << c.summary << "\n";
  os << "\n'numart <command> --help' describes a command's options.\n";
}

}  // namespace

int main(int argc, char** argv) {
  // hwloc prints a banner to stderr for some damaged XML files that it still loads; the tool
  // reports in one line instead. A user who wants hwloc's diagnostics sets the variable.
  ::setenv("HWLOC_HIDE_ERRORS", "2", 0);
  const std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + (argc > 0 ? argc : 0));
  if (args.empty()) {
    usage(std::cerr);
    return rt::cli::kExitUsage;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    usage(std::cout);
    return rt::cli::kExitOk;
  }
  for (const command& c : kCommands) {
    if (args[0] != c.name) continue;
    try {
      return c.run(std::vector<std::string>(args.begin() + 1, args.end()), std::cout, std::cerr);
    } catch (const std::exception& e) {
      std::cerr << "numart " << c.name << ": internal error: " << e.what() << "\n";
      return rt::cli::kExitFailure;
    }
  }
  std::cerr << "numart: unknown command '" << args[0] << "' (see numart --help)\n";
  return rt::cli::kExitUsage;
}
