// rt::config and rt::topology_source: how a runtime is set up (DESIGN.md §2).
#pragma once

#include <string>
#include <vector>

namespace rt {

// Where the runtime learns the machine from. Kept as the RT_TOPOLOGY spelling
// ("host", "xml:PATH", "synthetic:STR[;distances:a,b,...]"); parsed when the runtime starts.
class topology_source {
 public:
  static topology_source host() { return topology_source{"host"}; }
  static topology_source xml(const std::string& path) { return topology_source{"xml:" + path}; }
  // `distances`: optional nodes x nodes matrix in row-major logical order.
  static topology_source synthetic(const std::string& description, const std::vector<int>& distances = {});
  static topology_source parse(const std::string& spec) { return topology_source{spec}; }
  const std::string& spec() const { return spec_; }

 private:
  explicit topology_source(std::string spec) : spec_(std::move(spec)) {}
  std::string spec_;
};

struct config {
  // Number of workers; 0 = one per allowed core of the topology, socket by socket.
  int workers = 0;
  topology_source topology = topology_source::host();
  // RT_TUNE syntax: "name=value,NO_FEATURE,FEATURE" (docs/design/tunables.md).
  std::string tune;
  // Name used in thread names and diagnostics.
  std::string name = "numart";
  // RT_TRACE: record the scheduler's events and write them as a Chrome trace here at shutdown
  // and on runtime::dump_trace() (docs/observability.md). Empty: no tracing. A path that cannot
  // be written is reported on stderr at start and the runtime runs without tracing.
  std::string trace_path;
  // RT_STATS: write the counters here at shutdown, for `numart stats FILE`. Empty: none.
  std::string stats_path;
  // RT_STATS_SIGNAL=1: also write them whenever the process gets SIGUSR2 (off by default; needs
  // stats_path; a SIGUSR2 handler installed before is still called).
  bool stats_on_signal = false;

  // Reads RT_TOPOLOGY, RT_WORKERS, RT_TUNE, RT_TRACE, RT_STATS and RT_STATS_SIGNAL. Throws rt::config_error on a malformed value;
  // the values themselves are validated when the runtime starts.
  static config from_env();
};

}  // namespace rt
