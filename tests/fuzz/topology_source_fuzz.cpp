// Fuzz harness: RT_TOPOLOGY source strings ("host", "xml:PATH", "synthetic:STR[;distances:...]",
// runtime/topology/source.cpp) and what topology::load makes of them. For any bytes:
//  * source::parse returns a source or throws topo::topology_error (one line, "topology '...");
//  * an accepted spelling round-trips: parse(describe(s)) == s, and it is what it says it is
//    (host only for "host", an xml path verbatim, a non-blank synthetic description with
//    distances in 1..255);
//  * a host or synthetic source loads into a model that passes check_topology, or is refused
//    with a one-line topology_error. xml: sources are only parsed, never loaded: the fuzzer must
//    not open paths it makes up (topology_xml_fuzz.cpp loads XML bytes from a scratch file).
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "topology/topology.hpp"
#include "topology_checks.hpp"

namespace {

using numart_fuzz::require;
using rt::topo::source;

std::optional<source> parse(const std::string& spec) {
  try {
    return source::parse(spec);
  } catch (const rt::topo::topology_error& e) {
    numart_fuzz::require_one_line_message(e.what(), "topology '");
  } catch (const std::exception& e) {
    numart_fuzz::property_failed("source::parse throws only topo::topology_error", e.what());
  }
  return std::nullopt;
}

bool same(const source& a, const source& b) { return a.what == b.what && a.text == b.text && a.distances == b.distances; }

void check_source(const std::string& spec, const source& s) {
  const std::string_view text(spec);
  switch (s.what) {
    case source::kind::host:
      require(spec == "host", "only \"host\" is the host source", spec);
      break;
    case source::kind::xml:
      require(text.substr(0, 4) == "xml:" && s.text == text.substr(4) && !s.text.empty(), "an xml: path is taken verbatim and is not empty", spec);
      require(s.distances.empty(), "an xml: source carries no distances", spec);
      break;
    case source::kind::synthetic:
      require(text.substr(0, 10) == "synthetic:", "a synthetic source is spelled synthetic:", spec);
      require(s.text.find_first_not_of(' ') != std::string::npos, "a synthetic description is not blank", spec);
      for (const int d : s.distances) require(d >= 1 && d <= rt::topo::kMaxDistance, "parsed distances are 1..255", spec);
      break;
  }
  const std::optional<source> again = parse(s.describe());
  require(again.has_value() && same(*again, s), "parse(describe(s)) == s", spec);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  numart_fuzz::prepare_hwloc();
  const std::string spec = numart_fuzz::as_string(data, size);
  const std::optional<source> s = parse(spec);
  if (!s) return 0;
  check_source(spec, *s);
  if (s->what != source::kind::xml) numart_fuzz::load_and_check(*s);
  return 0;
}
