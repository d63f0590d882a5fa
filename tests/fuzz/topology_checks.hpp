// The topology data model's own promises (runtime/topology/topology.hpp, docs/design/topology.md
// I-TOPO-1..8), checked on whatever the fuzzers get topology::load to accept.
#pragma once

#include "topology/topology.hpp"

namespace numart_fuzz {

// Aborts through property_failed on the first broken invariant of `t`, loaded from `src`.
void check_topology(const rt::topo::topology& t, const rt::topo::source& src);

// Makes topology::load fast enough to fuzz, once per process: hides hwloc's stderr banner for
// inconsistent inputs (as the numart tool does) and keeps one hwloc topology alive for good.
// hwloc loads its components (plugins) when the first topology of a process is initialised and
// unloads them when the last one is destroyed: about 20 ms per load otherwise, 0.03 ms with them
// kept (Debian hwloc 2.9.0, a small synthetic topology).
void prepare_hwloc();

// topology::load(src): an accepted topology must pass check_topology; a refusal must be a
// topology_error whose message is one line starting "topology '"; any other exception fails.
void load_and_check(const rt::topo::source& src);

}  // namespace numart_fuzz
