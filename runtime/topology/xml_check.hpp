// A structural check of an hwloc XML document before hwloc sees it (docs/design/topology.md,
// I-TOPO-9). hwloc 2.9 answers most bad files with a bare EINVAL, crashes (SIGSEGV in
// hwloc_topology_load) on some well-formed ones (an <object> with a cpuset but no
// complete_cpuset), and reads unparsable bitmaps as garbage. This check gives each refusal a
// reason and keeps those files from hwloc.
// It is not a full XML parser: it checks what the hwloc importer relies on.
#pragma once

#include <string>
#include <string_view>

namespace rt::topo {

enum class xml_verdict {
  ok,
  empty,                // no content at all
  truncated,            // the document ends inside a tag or with elements still open
  malformed,            // not well-formed XML, or not an hwloc <topology> document
  unsupported_version,  // <topology version="X.Y"> with X newer than hwloc 2.x reads
  inconsistent,         // well-formed, but an <object> lacks what hwloc's importer needs
};

struct xml_check_result {
  xml_verdict verdict = xml_verdict::ok;
  std::string detail;  // one phrase with the line number, empty when ok
};

// `newest_format_major`: the newest XML format the linked hwloc imports (2 for hwloc 2.x).
xml_check_result check_hwloc_xml(std::string_view text, int newest_format_major);

}  // namespace rt::topo
