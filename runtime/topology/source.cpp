// RT_TOPOLOGY / CLI spelling of a topology source: "host", "xml:PATH", "synthetic:STR" with an
// optional ";distances:a,b,..." suffix (docs/design/topology.md, "Sources").
#include <cerrno>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/printable.hpp"
#include "topology/topology.hpp"

namespace rt::topo {
namespace {

constexpr std::string_view kHost = "host";
constexpr std::string_view kXmlPrefix = "xml:";
constexpr std::string_view kSyntheticPrefix = "synthetic:";
constexpr std::string_view kDistancesSuffix = ";distances:";

// The spelling is quoted with its control characters escaped: the message stays one line.
[[noreturn]] void fail(const std::string& spec, const std::string& reason) {
  throw topology_error(rt::core::printable("topology '" + spec + "': " + reason));
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// One comma-separated entry of a distance list: an optional sign and decimal digits only.
int parse_distance_entry(const std::string& spec, std::string_view entry, std::size_t position) {
  const std::string where = "distance entry " + std::to_string(position + 1);
  if (entry.empty()) fail(spec, where + " is empty");
  std::size_t i = 0;
  if (entry[0] == '-' || entry[0] == '+') i = 1;
  if (i == entry.size()) fail(spec, where + " '" + std::string(entry) + "' is not an integer");
  for (std::size_t k = i; k < entry.size(); ++k) {
    if (entry[k] < '0' || entry[k] > '9') fail(spec, where + " '" + std::string(entry) + "' is not an integer");
  }
  const std::string text(entry);
  if (text[0] == '-' || text.find_first_not_of("+0") == std::string::npos) fail(spec, where + " '" + text + "' is not positive");
  errno = 0;
  const long long value = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE || value > kMaxDistance) {
    fail(spec, where + " '" + text + "' exceeds " + std::to_string(kMaxDistance) + " (SLIT distances are one byte)");
  }
  return static_cast<int>(value);
}

std::vector<int> parse_distance_list(const std::string& spec, std::string_view list) {
  if (list.empty()) fail(spec, "the distance list is empty");
  std::vector<int> values;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = list.find(',', start);
    const std::string_view entry = list.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    values.push_back(parse_distance_entry(spec, entry, values.size()));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return values;
}

}  // namespace

source source::parse(const std::string& spec) {
  const std::string_view s(spec);
  source out;
  if (s == kHost) {
    out.what = kind::host;
    return out;
  }
  if (starts_with(s, kXmlPrefix)) {
    out.what = kind::xml;
    out.text = std::string(s.substr(kXmlPrefix.size()));
    if (out.text.empty()) fail(spec, "xml: needs a file path");
    return out;
  }
  if (starts_with(s, kSyntheticPrefix)) {
    out.what = kind::synthetic;
    std::string_view rest = s.substr(kSyntheticPrefix.size());
    const std::size_t suffix = rest.find(kDistancesSuffix);
    if (suffix != std::string_view::npos) {
      out.distances = parse_distance_list(spec, rest.substr(suffix + kDistancesSuffix.size()));
      rest = rest.substr(0, suffix);
    }
    out.text = std::string(rest);
    if (out.text.find_first_not_of(' ') == std::string::npos) fail(spec, "synthetic: needs a description such as 'pack:2 [numa] core:2 pu:1'");
    return out;
  }
  if (spec.empty()) fail(spec, "empty specification (expected host, xml:PATH or synthetic:STR)");
  fail(spec, "unknown source (expected host, xml:PATH or synthetic:STR[;distances:a,b,...])");
}

std::string source::describe() const {
  switch (what) {
    case kind::host:
      return std::string(kHost);
    case kind::xml:
      return std::string(kXmlPrefix) + text;
    case kind::synthetic: {
      std::string out = std::string(kSyntheticPrefix) + text;
      if (!distances.empty()) {
        out += kDistancesSuffix;
        for (std::size_t i = 0; i < distances.size(); ++i) {
          if (i != 0) out += ',';
          out += std::to_string(distances[i]);
        }
      }
      return out;
    }
  }
  return std::string(kHost);
}

const char* to_string(topology_class c) {
  switch (c) {
    case topology_class::uma:
      return "uma";
    case topology_class::direct:
      return "direct";
    case topology_class::glueless_mesh:
      return "glueless_mesh";
    case topology_class::backplane:
      return "backplane";
  }
  return "uma";
}

}  // namespace rt::topo
