// numart topo: loads a topology the way the runtime does (RT_TOPOLOGY when no flag names one)
// and prints it, as JSON (--json, a fixed set of fields) or as a readable summary.
#include <cstdint>
#include <cstdlib>
#include <iomanip>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.hpp"
#include "rt/error.hpp"
#include "topology/topology.hpp"
#include "trace/json.hpp"

namespace rt::cli {
namespace {

constexpr std::string_view kUsage =
    "usage: numart topo [--xml FILE | --synthetic STR [--distances LIST]] [--json]\n"
    "\n"
    "Prints the topology as the runtime sees it: NUMA nodes by logical index with OS index and\n"
    "PUs, packages, LLC domains, the NUMA distance matrix in logical node order, the distance\n"
    "levels and the topology class (uma, direct, glueless_mesh, backplane).\n"
    "\n"
    "  --xml FILE        an hwloc XML file (lstopo --of xml)\n"
    "  --synthetic STR   an hwloc synthetic description, e.g. 'pack:2 [numa] core:4 pu:1'\n"
    "  --distances LIST  for --synthetic: nodes x nodes distances, row-major, comma-separated,\n"
    "                    10 on the diagonal, e.g. 10,20,20,10\n"
    "  --json            one JSON object instead of the summary\n"
    "\n"
    "Without --xml or --synthetic: RT_TOPOLOGY (host, xml:PATH, synthetic:STR[;distances:LIST])\n"
    "when set, else this machine.\n";

struct options {
  std::optional<std::string> xml;
  std::optional<std::string> synthetic;
  std::optional<std::string> distances;
  bool json = false;
  bool help = false;
};

struct usage_error {
  std::string message;
};

// Accepts "--name VALUE" and "--name=VALUE".
bool take_value(const std::vector<std::string>& args, std::size_t& i, std::string_view name, std::optional<std::string>& slot) {
  const std::string& a = args[i];
  std::string value;
  if (a == name) {
    if (i + 1 >= args.size()) throw usage_error{std::string(name) + " needs a value"};
    value = args[++i];
  } else if (a.size() > name.size() && a.compare(0, name.size(), name) == 0 && a[name.size()] == '=') {
    value = a.substr(name.size() + 1);
  } else {
    return false;
  }
  if (slot) throw usage_error{std::string(name) + " is given twice"};
  slot = value;
  return true;
}

options parse(const std::vector<std::string>& args) {
  options o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") {
      o.json = true;
    } else if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (take_value(args, i, "--xml", o.xml) || take_value(args, i, "--synthetic", o.synthetic) ||
               take_value(args, i, "--distances", o.distances)) {
      continue;
    } else if (!a.empty() && a[0] == '-') {
      throw usage_error{"unknown option '" + a + "'"};
    } else {
      throw usage_error{"unexpected argument '" + a + "'"};
    }
  }
  if (o.xml && o.synthetic) throw usage_error{"--xml and --synthetic are exclusive"};
  if (o.distances && !o.synthetic) throw usage_error{"--distances applies to --synthetic only"};
  return o;
}

// Throws rt::topo::topology_error, whose message names the source and the reason.
topo::source source_of(const options& o) {
  if (o.xml) return topo::source::parse("xml:" + *o.xml);
  if (o.synthetic) {
    std::string spec = "synthetic:" + *o.synthetic;
    if (o.distances) spec += ";distances:" + *o.distances;
    return topo::source::parse(spec);
  }
  const char* env = std::getenv("RT_TOPOLOGY");
  if (env != nullptr && *env != '\0') {
    try {
      return topo::source::parse(env);
    } catch (const topo::topology_error& e) {
      throw topo::topology_error(std::string("RT_TOPOLOGY: ") + e.what());
    }
  }
  return topo::source::parse("host");
}

std::string json_of(const topo::topology& t) {
  std::ostringstream doc;  // built whole, so that an error leaves no partial output
  trace::json_out w(doc);
  w.begin_object();
  w.key("source").value(t.source_desc);
  w.key("is_host").value(t.is_host);
  w.key("packages").value(t.packages);
  w.key("pus").value(t.pus);
  w.key("llc_domains").value(static_cast<int>(t.llcs.size()));
  w.key("numa_nodes").begin_array();
  for (const topo::numa_node& n : t.nodes) {
    w.begin_object();
    w.key("logical").value(n.logical);
    w.key("os_index").value(n.os_index);
    w.key("pus").begin_array();
    for (const unsigned pu : n.pus) w.value(pu);
    w.end_array();
    w.key("cpuless").value(n.cpuless);
    w.end_object();
  }
  w.end_array();
  w.key("distances").begin_array();
  for (const auto& row : t.distance) {
    w.begin_array();
    for (const int d : row) w.value(d);
    w.end_array();
  }
  w.end_array();
  w.key("distance_levels").begin_array();
  for (const int d : t.distance_levels) w.value(d);
  w.end_array();
  w.key("max_distance").value(t.max_distance);
  w.key("topology_class").value(topo::to_string(t.klass));
  w.end_object();
  w.finish();
  return doc.str();  // finish() ends the document with a newline
}

// "0-7,16-23" for an ascending list.
std::string ranges(const std::vector<unsigned>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(v[i]);
    if (j > i) out += '-' + std::to_string(v[j]);
    i = j + 1;
  }
  return out.empty() ? "-" : out;
}

std::string memory(std::uint64_t bytes) {
  if (bytes == 0) return "?";
  constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
  constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
  if (bytes >= 10 * kGiB) return std::to_string(bytes / kGiB) + " GiB";
  return std::to_string(bytes / kMiB) + " MiB";
}

std::string text_of(const topo::topology& t) {
  std::ostringstream os;
  os << "source:          " << t.source_desc << "\n";
  os << "this machine:    " << (t.is_host ? "yes" : "no (virtual topology: nothing is bound)") << "\n";
  os << "packages:        " << t.packages << "\n";
  os << "PUs:             " << t.pus << " (" << t.allowed_pus.size() << " allowed)\n";
  os << "cores:           " << t.core_count() << "\n";
  os << "LLC domains:     " << t.llcs.size() << "\n";
  os << "NUMA nodes:      " << t.node_count() << "\n";
  for (const topo::numa_node& n : t.nodes) {
    os << "  L#" << std::left << std::setw(4) << n.logical << "P#" << std::setw(5) << n.os_index << std::right << std::setw(9)
       << memory(n.memory_bytes) << "  ";
    if (n.cpuless) {
      os << "no CPU (memory only)\n";
    } else {
      os << n.cores.size() << " cores, PUs " << ranges(n.pus) << "\n";
    }
  }
  os << "distances:       " << (t.has_distance_matrix ? "from the topology" : "none in the topology: 10 local, 20 remote")
     << " (logical node order)\n";
  os << "      ";
  for (int j = 0; j < t.node_count(); ++j) os << std::setw(4) << j;
  os << "\n";
  for (int i = 0; i < t.node_count(); ++i) {
    os << "  " << std::setw(4) << i;
    for (int j = 0; j < t.node_count(); ++j) os << std::setw(4) << t.node_distance(i, j);
    os << "\n";
  }
  os << "distance levels:";
  for (const int d : t.distance_levels) os << " " << d;
  os << "\n";
  os << "max distance:    " << t.max_distance << "\n";
  os << "topology class:  " << topo::to_string(t.klass) << "\n";
  bool any_nearby = false;
  for (const auto& list : t.nearby) any_nearby = any_nearby || !list.empty();
  if (!any_nearby) {
    os << "nearby nodes:    none (every remote node is at the maximum distance)\n";
  } else {
    os << "nearby nodes:    node: neighbour(distance, weight/" << topo::kNearbyScale << ")\n";
    for (int n = 0; n < t.node_count(); ++n) {
      os << "  " << std::setw(4) << n << ":";
      for (const topo::nearby_node& m : t.nearby[static_cast<std::size_t>(n)]) os << " " << m.node << "(" << m.distance << "," << m.weight << ")";
      os << "\n";
    }
  }
  for (const std::string& note : t.notes) os << "note: " << note << "\n";
  return os.str();
}

}  // namespace

int topo_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  options o;
  try {
    o = parse(args);
  } catch (const usage_error& e) {
    err << "numart topo: " << e.message << " (see numart topo --help)\n";
    return kExitUsage;
  }
  if (o.help) {
    out << kUsage;
    return kExitOk;
  }
  std::string rendered;
  try {
    const topo::topology t = topo::topology::load(source_of(o));
    rendered = o.json ? json_of(t) : text_of(t);
  } catch (const rt::config_error& e) {
    err << "numart topo: " << e.what() << "\n";
    return kExitUsage;
  }
  out << rendered << std::flush;
  return out ? kExitOk : kExitFailure;
}

}  // namespace rt::cli
