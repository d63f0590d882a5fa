// Reading a numart trace back (the Chrome JSON that recorder::write_chrome_json writes) and
// summarizing it for `numart trace summarize`: wake-path outcomes, steal tiers, per-group
// locality over time, and the time workers spent parked while tasks waited to start.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace rt::trace {

// The numart events of a trace, times in nanoseconds since the trace's origin.
struct parsed_trace {
  struct track {
    std::string name;
    int worker = -1;  // -1: the balancer or the outside-threads track
    int node = -1;
    int tid = 0;
    std::uint64_t written = 0;
    std::uint64_t kept = 0;
    std::uint64_t dropped = 0;
    std::uint64_t unmatched = 0;
  };
  struct task {
    std::uint64_t ts = 0;
    std::uint64_t dur = 0;
    int worker = -1;
    std::uint64_t id = 0;
    std::uint64_t group = 0;
    int group_node = -1;
    bool open = false;
  };
  struct spawn {
    std::uint64_t ts = 0;
    std::uint64_t id = 0;
    std::string affine;
    std::string path;
    int scan = 0;
  };
  struct park {
    std::uint64_t ts = 0;
    std::uint64_t dur = 0;
    int worker = -1;
    // The end of the slice during which the worker was woken but not yet running (the slice's
    // "runnable" arg: its waker's wake to its unpark; 0 when the trace has no stamp; summarize
    // clamps it to dur).
    std::uint64_t runnable = 0;
    bool join = false;  // a joiner's block (reason "join"), not an idle park
  };

  std::string runtime;
  std::uint64_t span_ns = 0;  // end_ns - origin_ns
  std::uint64_t dropped = 0;
  int nodes = 0;
  std::vector<track> tracks;
  std::map<std::uint64_t, std::string> group_names;
  std::vector<task> tasks;
  std::vector<spawn> spawns;
  std::vector<std::string> steal_tiers;  // one entry per steal
  std::vector<park> parks;
  std::uint64_t handoffs = 0;
  std::uint64_t balancer_moves = 0;
  std::uint64_t pages_migrated = 0;

  int workers() const;
};

// Throws format_error (one line): invalid or truncated JSON, or a document that is not a numart
// trace ("not a numart trace: ..."), or a numart trace whose events lack their fields.
parsed_trace parse_trace(std::string_view text);

struct trace_summary {
  struct outcome {
    std::string affine;
    std::string path;
    std::uint64_t spawns = 0;
  };
  struct tier {
    std::string name;
    std::uint64_t steals = 0;
  };
  struct window {
    std::uint64_t local = 0;  // starts on a worker of the group's node
    std::uint64_t starts = 0;  // starts whose group had a node (group_node >= 0)
  };
  struct group {
    std::uint64_t id = 0;
    std::string name;
    std::uint64_t starts = 0;   // all starts of the group's tasks
    window overall;
    std::vector<window> windows;
  };
  struct idle {
    int worker = -1;
    std::uint64_t parked_ns = 0;    // parked and not yet woken
    std::uint64_t runnable_ns = 0;  // woken, not yet running: the OS's part of the park slices
    std::uint64_t parked_while_queued_ns = 0;
  };

  std::uint64_t span_ns = 0;
  int workers = 0;
  int nodes = 0;
  std::uint64_t tasks = 0;
  std::uint64_t dropped = 0;

  std::uint64_t spawns = 0;
  std::vector<outcome> outcomes;  // most frequent first
  std::uint64_t scans = 0;        // spawns whose idle scan examined at least one worker
  std::uint64_t scanned = 0;      // workers examined, summed
  int max_scan = 0;
  std::uint64_t handoffs = 0;

  std::uint64_t steals = 0;
  std::vector<tier> tiers;  // most frequent first

  std::uint64_t window_ns = 0;
  std::vector<group> groups;  // most starts first

  std::uint64_t queued_ns = 0;  // time with at least one spawned task not started
  // Park slices end when the worker runs again; a slice whose waker stamped its wake counts as
  // parked up to the wake and as runnable after it (the OS had to run the worker: with more
  // workers than cores, as in virtual-topology mode, that can take long).
  std::uint64_t parked_ns = 0;
  std::uint64_t runnable_ns = 0;
  std::uint64_t parked_while_queued_ns = 0;  // each parked worker, while any task waited
  // One parked worker per waiting task: the integral of min(workers parked, tasks waiting less
  // the workers woken from an idle park that the OS has not run yet), the parked time the
  // waiting tasks could have used (ADR 0016). Never above parked_while_queued_ns.
  std::uint64_t parked_for_waiting_ns = 0;
  std::vector<idle> per_worker;
};

// `windows` (>= 1) equal time windows over the trace's span for the locality table.
trace_summary summarize(const parsed_trace& t, int windows);

}  // namespace rt::trace
