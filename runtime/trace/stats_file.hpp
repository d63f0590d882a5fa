// The stats file: rt::stats as a JSON document that the runtime writes on exit when asked to
// (off by default) and that `numart stats FILE` prints (docs/observability.md, "The stats
// file"). Version 1:
//
//   {"format": "numart-stats", "version": 1,
//    "topology": "host", "virtual_topology": false,
//    "counters": [{"name": "tasks_spawned", "unit": "tasks", "doc": "..."}, ...],
//    "workers":  [{"worker": 0, "node": 0, "counters": {"tasks_spawned": 12, ...}}, ...],
//    "outside":  {"tasks_spawned": 3, ...},
//    "tunables": "<tun::describe() text>"}
//
// Counters are named, never positional: a reader looks them up by name, and every row names
// exactly the counters of the "counters" list.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "rt/stats.hpp"

namespace rt::trace {

struct stats_document {
  rt::stats stats;
  std::vector<std::string> counter_docs;  // parallel to stats.counter_names
};

// The document for `s` (counter docs from runtime/stats/counters.def).
std::string stats_json(const rt::stats& s);

// Writes stats_json(s) to `path` through a temporary file in the same directory and a rename,
// so that a reader never sees half a file. On failure writes one line to `err` and returns false.
bool write_stats_file(const rt::stats& s, const std::string& path, std::ostream& err);

// Throws format_error (one line): invalid or truncated JSON, not a stats file, an unsupported
// version, or a row that does not match the counter list.
stats_document parse_stats(std::string_view text);
// read_text_file + parse_stats; file errors are format_errors too.
stats_document read_stats_file(const std::string& path);

}  // namespace rt::trace
