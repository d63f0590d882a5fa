// The numart tool's subcommands. Each takes the arguments after its name, writes its result to
// `out` only when it succeeded (no partial output), and returns the process exit status:
// kExitOk, or kExitUsage for bad input (one line on `err` naming the input and the reason).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace rt::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // an internal failure, not the user's input
inline constexpr int kExitUsage = 2;    // bad flag, bad topology input

// numart topo [--xml FILE | --synthetic STR [--distances LIST]] [--json]
int topo_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// numart trace summarize FILE [--windows N] [--top K]; a truncated or foreign file is bad input
int trace_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// numart stats FILE
int stats_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace rt::cli
