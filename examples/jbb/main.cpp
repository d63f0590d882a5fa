// numart_jbb: a SPECjbb2005-like server on numart and on oneTBB, identical work (docs/jbb.md).
//   numart_jbb [--runtime numart|onetbb|both] [--instances J] [--warehouses W] [--json] ...
// Options, the run sequence and the report (text or one JSON object).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "drivers.hpp"
#include "rt/rt.hpp"
#include "workload.hpp"

namespace {

using namespace jbb;

constexpr int kFingerprintPasses = 3;

const char* const kUsage =
    "usage: numart_jbb [options]\n"
    "  --runtime numart|onetbb|both   both: numart, onetbb, numart, onetbb; medians and their ratio (numart)\n"
    "  --instances J                  \"JVM\" instances (2)\n"
    "  --warehouses W                 per instance; 0 = max(1, workers / J) (0)\n"
    "  --warehouse-kib K              data per warehouse, 64..1048576 (2048)\n"
    "  --placement local|interleave|scatter   where warehouse data is allocated (local)\n"
    "  --topology SPEC                host | xml:PATH | synthetic:... (RT_TOPOLOGY syntax; default: environment)\n"
    "  --workers N                    0 = one per core of the topology (0)\n"
    "  --balancer on|off              numart's NUMA balancer (on; off = RT_TUNE NO_NUMA_BALANCING)\n"
    "  --tbb-arenas default|per-node  oneTBB: one arena, or one per node (default)\n"
    "  --local-cost N                 virtual topology: emulated cost of every touched 4 KiB chunk (a local\n"
    "                                 memory access), in dependent multiply-adds (64)\n"
    "  --remote-cost N                virtual topology: emulated extra cost of a remote chunk at distance 20,\n"
    "                                 scaled by (distance - 10) / 10 (64)\n"
    "  --warmup S  --seconds S        warm-up and measured seconds (1, 3)\n"
    "  --seed N                       deck, inputs and scatter placement (1)\n"
    "  --json                         print one JSON object on stdout\n"
    "  --periods-log                  per second: each instance's local share and home node\n";

struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

long long parse_int(const std::string& opt, const std::string& v, long long lo, long long hi) {
  std::size_t used = 0;
  long long x = 0;
  try {
    x = std::stoll(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (v.empty() || used != v.size() || x < lo || x > hi)
    throw usage_error(opt + " '" + v + "': expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
  return x;
}

double parse_seconds(const std::string& opt, const std::string& v, double lo) {
  std::size_t used = 0;
  double x = -1;
  try {
    x = std::stod(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (v.empty() || used != v.size() || !std::isfinite(x) || x < lo || x > 86400)
    throw usage_error(opt + " '" + v + "': expected seconds from " + (lo > 0 ? std::string("0.1") : std::string("0")) + " to 86400");
  return x;
}

template <class E>
E parse_choice(const std::string& opt, const std::string& v, std::initializer_list<std::pair<const char*, E>> choices) {
  std::string valid;
  for (const auto& [name, value] : choices) {
    if (v == name) return value;
    valid += (valid.empty() ? "" : ", ") + std::string(name);
  }
  throw usage_error(opt + " '" + v + "': expected one of " + valid);
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (arg == "--json") {
      o.json = true;
      continue;
    }
    if (arg == "--periods-log") {
      o.periods_log = true;
      continue;
    }
    static const char* const kValued[] = {"--runtime", "--instances", "--warehouses", "--warehouse-kib", "--placement",
                                          "--topology", "--workers", "--balancer", "--tbb-arenas", "--local-cost", "--remote-cost",
                                          "--warmup", "--seconds", "--seed"};
    const auto eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    if (std::find(std::begin(kValued), std::end(kValued), name) == std::end(kValued))
      throw usage_error("unknown option '" + name + "' (see --help)");
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = name;
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      throw usage_error(arg + ": missing value (see --help)");
    }
    if (arg == "--runtime")
      o.runtime = parse_choice<runtime_choice>(arg, value, {{"numart", runtime_choice::numart}, {"onetbb", runtime_choice::onetbb}, {"both", runtime_choice::both}});
    else if (arg == "--instances") o.instances = static_cast<int>(parse_int(arg, value, 1, 1024));
    else if (arg == "--warehouses") o.warehouses = static_cast<int>(parse_int(arg, value, 0, 4096));
    else if (arg == "--warehouse-kib") o.warehouse_kib = static_cast<int>(parse_int(arg, value, 64, 1048576));
    else if (arg == "--placement")
      o.place = parse_choice<placement>(arg, value, {{"local", placement::local}, {"interleave", placement::interleave}, {"scatter", placement::scatter}});
    else if (arg == "--topology") {
      if (value.empty()) throw usage_error("--topology '': expected host, xml:PATH or synthetic:DESCRIPTION");
      o.topology = value;
    } else if (arg == "--workers") o.workers = static_cast<int>(parse_int(arg, value, 0, 4096));
    else if (arg == "--balancer") o.balancer = parse_choice<bool>(arg, value, {{"on", true}, {"off", false}});
    else if (arg == "--tbb-arenas")
      o.arenas = parse_choice<tbb_arenas>(arg, value, {{"default", tbb_arenas::single}, {"per-node", tbb_arenas::per_node}});
    else if (arg == "--local-cost") o.local_cost = static_cast<int>(parse_int(arg, value, 0, 1000000));
    else if (arg == "--remote-cost") o.remote_cost = static_cast<int>(parse_int(arg, value, 0, 1000000));
    else if (arg == "--warmup") o.warmup_s = parse_seconds(arg, value, 0);
    else if (arg == "--seconds") o.seconds = parse_seconds(arg, value, 0.1);
    else if (arg == "--seed") o.seed = static_cast<std::uint64_t>(parse_int(arg, value, 0, 1LL << 62));
    else throw usage_error("unknown option '" + arg + "' (see --help)");
  }
  return o;
}

const char* name_of(placement p) {
  switch (p) {
    case placement::local: return "local";
    case placement::interleave: return "interleave";
    case placement::scatter: return "scatter";
  }
  return "?";
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// ---- text ----

std::string nodes_list(const std::vector<int>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}
std::string node_or_dash(int n) { return n < 0 ? "-" : std::to_string(n); }

void print_text(const run_result& r, std::ostream& os) {
  os << std::fixed << std::setprecision(1);
  os << "== " << r.runtime << " (" << r.detail << ")\n";
  os << "bops_total: " << r.bops_total << " over " << std::setprecision(2) << r.seconds << " s\n" << std::setprecision(1);
  for (std::size_t i = 0; i < r.instances.size(); ++i) {
    const instance_result& ir = r.instances[i];
    os << "instance " << i << ": bops " << ir.bops << ", local_share " << std::setprecision(3) << ir.local_share
       << std::setprecision(1) << " (" << ir.local << " local, " << ir.remote << " remote chunks)";
    if (ir.view.known)
      os << ", home node " << node_or_dash(ir.view.home) << ", preferred " << node_or_dash(ir.view.preferred) << ", active nodes "
         << nodes_list(ir.view.active);
    else
      os << ", home node -, active nodes -";
    os << ", memory on nodes {";
    bool first = true;
    for (std::size_t n = 0; n < ir.memory_bytes.size(); ++n)
      if (ir.memory_bytes[n] != 0) {
        os << (first ? "" : ", ") << n << ": " << static_cast<double>(ir.memory_bytes[n]) / (1 << 20) << " MiB";
        first = false;
      }
    os << "}, warehouse spread " << ir.warehouse_min << ".." << ir.warehouse_max << " txns, p99 " << ir.all.p99_us << " us\n";
  }
  os << "  " << std::left << std::setw(16) << "transaction" << std::right << std::setw(10) << "count" << std::setw(10) << "min_us"
     << std::setw(10) << "max_us" << std::setw(10) << "mean_us" << std::setw(11) << "stddev_us" << std::setw(10) << "p50_us"
     << std::setw(10) << "p99_us" << '\n';
  for (int t = 0; t < kTxnTypes; ++t) {
    const latency_summary& s = r.per_type[static_cast<std::size_t>(t)];
    os << "  " << std::left << std::setw(16) << txn_name(static_cast<txn>(t)) << std::right << std::setw(10) << s.count << std::setw(10)
       << s.min_us << std::setw(10) << s.max_us << std::setw(10) << s.mean_us << std::setw(11) << s.stddev_us << std::setw(10) << s.p50_us
       << std::setw(10) << s.p99_us << '\n';
  }
  if (r.unknown_chunks != 0) os << "chunks without a node (not counted as local or remote): " << r.unknown_chunks << '\n';
}

void print_periods(const run_result& r, std::ostream& os) {
  os << "periods (" << r.runtime << "): t_s, then per instance local_share/home_node/bops\n" << std::fixed;
  for (const period& p : r.periods) {
    os << std::setprecision(2) << p.t;
    for (std::size_t i = 0; i < p.local_share.size(); ++i)
      os << "  jvm-" << i << " " << std::setprecision(3) << p.local_share[i] << "/" << node_or_dash(p.home[i]) << "/"
         << std::setprecision(0) << p.bops[i];
    os << '\n';
  }
}

// ---- JSON ----

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}
std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", std::isfinite(x) ? x : 0.0);
  return buf;
}
std::string ints(const std::vector<int>& v) { return nodes_list(v); }

std::string json_latency(const latency_summary& s) {
  return "{\"count\":" + std::to_string(s.count) + ",\"min_us\":" + num(s.min_us) + ",\"max_us\":" + num(s.max_us) +
         ",\"mean_us\":" + num(s.mean_us) + ",\"stddev_us\":" + num(s.stddev_us) + ",\"p50_us\":" + num(s.p50_us) +
         ",\"p99_us\":" + num(s.p99_us) + "}";
}

std::string json_run(const run_result& r, bool periods) {
  std::string s = "{\"runtime\":" + quote(r.runtime) + ",\"detail\":" + quote(r.detail) + ",\"balancer\":" +
                  (r.balancer ? "true" : "false") + ",\"seconds\":" + num(r.seconds) + ",\"bops_total\":" + num(r.bops_total) +
                  ",\"unknown_chunks\":" + std::to_string(r.unknown_chunks) + ",\"instances\":[";
  for (std::size_t i = 0; i < r.instances.size(); ++i) {
    const instance_result& ir = r.instances[i];
    s += std::string(i ? "," : "") + "{\"bops\":" + num(ir.bops) + ",\"local_share\":" + num(ir.local_share) +
         ",\"local_chunks\":" + std::to_string(ir.local) + ",\"remote_chunks\":" + std::to_string(ir.remote);
    if (ir.view.known)
      s += ",\"home_node\":" + std::to_string(ir.view.home) + ",\"preferred_node\":" + std::to_string(ir.view.preferred) +
           ",\"active_nodes\":" + ints(ir.view.active);
    else
      s += ",\"home_node\":null,\"preferred_node\":null,\"active_nodes\":null";
    s += ",\"memory_bytes_per_node\":[";
    for (std::size_t n = 0; n < ir.memory_bytes.size(); ++n) s += (n ? "," : "") + std::to_string(ir.memory_bytes[n]);
    s += "],\"warehouse_txns_min\":" + std::to_string(ir.warehouse_min) + ",\"warehouse_txns_max\":" +
         std::to_string(ir.warehouse_max) + ",\"p99_us\":" + num(ir.all.p99_us) + "}";
  }
  s += "],\"latency\":{";
  for (int t = 0; t < kTxnTypes; ++t)
    s += std::string(t ? "," : "") + quote(txn_name(static_cast<txn>(t))) + ":" + json_latency(r.per_type[static_cast<std::size_t>(t)]);
  s += "}";
  if (periods) {
    s += ",\"periods\":[";
    for (std::size_t k = 0; k < r.periods.size(); ++k) {
      const period& p = r.periods[k];
      s += std::string(k ? "," : "") + "{\"t\":" + num(p.t) + ",\"local_share\":[";
      for (std::size_t i = 0; i < p.local_share.size(); ++i) s += (i ? "," : "") + num(p.local_share[i]);
      s += "],\"home_node\":" + ints(p.home) + ",\"bops\":[";
      for (std::size_t i = 0; i < p.bops.size(); ++i) s += (i ? "," : "") + num(p.bops[i]);
      s += "]}";
    }
    s += "]";
  }
  return s + "}";
}

int run(const options& o) {
  rt::config cfg = rt::config::from_env();
  if (!o.topology.empty()) cfg.topology = rt::topology_source::parse(o.topology);
  cfg.workers = o.workers;
  if (!o.balancer) cfg.tune += std::string(cfg.tune.empty() ? "" : ",") + "NO_NUMA_BALANCING";
  cfg.name = "jbb";
  rt::runtime runtime{cfg};

  std::ostream& out = std::cout;
  const machine probe = [&] {
    machine m;
    m.nodes = runtime.nodes();
    m.virtual_topology = runtime.virtual_topology();
    m.emulate = m.virtual_topology && m.nodes > 1;
    m.topology = runtime.stats().topology;
    return m;
  }();
  const int per_instance = o.warehouses > 0 ? o.warehouses : std::max(1, runtime.workers() / o.instances);
  const std::uint64_t fingerprint = deck_fingerprint(o.seed, o.instances, per_instance, kFingerprintPasses);
  const bool tbb_single = o.arenas == tbb_arenas::single;
  const bool uses_tbb = o.runtime != runtime_choice::numart;

  if (!o.json) {
    out << "numart_jbb: " << o.instances << " instance(s) x " << per_instance << " warehouse(s), " << o.warehouse_kib
        << " KiB each, placement " << name_of(o.place) << ", seed " << o.seed << ", " << runtime.workers() << " workers\n";
    out << "topology: " << probe.topology << ", " << probe.nodes << " node(s), virtual: " << (probe.virtual_topology ? "yes" : "no")
        << " (distance matrix: numart topo)\n";
    out << "emulated_remote_cost: " << (probe.emulate ? "true" : "false") << '\n';
    if (probe.emulate)
      out << "NOTE: memory cost is EMULATED (virtual topology): each touched 4 KiB chunk runs " << o.local_cost
          << " + (distance - 10) x " << o.remote_cost << " / " << kRemoteCostScale
          << " dependent multiply-adds on the accessing thread\n";
    if (uses_tbb && tbb_single && probe.nodes > 1)
      out << "NOTE: oneTBB does not know virtual nodes: in its one arena a thread counts as node (slot index mod "
          << probe.nodes << ")\n";
    out << "deck_fingerprint: " << std::hex << fingerprint << std::dec << " (first " << kFingerprintPasses
        << " passes of every warehouse's deck)\n";
  }

  std::vector<runtime_choice> sequence;
  if (o.runtime == runtime_choice::both)
    sequence = {runtime_choice::numart, runtime_choice::onetbb, runtime_choice::numart, runtime_choice::onetbb};
  else
    sequence = {o.runtime};
  std::vector<run_result> results;
  for (runtime_choice which : sequence) {
    std::cerr << "numart_jbb: running " << (which == runtime_choice::numart ? "numart" : "onetbb") << '\n';
    workload w(o, runtime);
    results.push_back(which == runtime_choice::numart ? run_numart(w, o, runtime, std::cerr)
                                                      : run_onetbb(w, o, runtime, std::cerr));
    if (!o.json) {
      print_text(results.back(), out);
      if (o.periods_log) print_periods(results.back(), out);
    }
  }

  std::vector<double> nb, tb;
  for (const run_result& r : results) (r.runtime == "numart" ? nb : tb).push_back(r.bops_total);
  const bool both = o.runtime == runtime_choice::both;
  const double ratio = both && median(tb) > 0 ? median(nb) / median(tb) : 0;

  if (o.json) {
    std::string s = "{\"topology\":" + quote(probe.topology) + ",\"nodes\":" + std::to_string(probe.nodes) +
                    ",\"virtual_topology\":" + (probe.virtual_topology ? "true" : "false") +
                    ",\"emulated_remote_cost\":" + (probe.emulate ? "true" : "false") +
                    ",\"local_cost\":" + std::to_string(probe.emulate ? o.local_cost : 0) +
                    ",\"remote_cost\":" + std::to_string(probe.emulate ? o.remote_cost : 0) +
                    ",\"workers\":" +
                    std::to_string(runtime.workers()) + ",\"instances_count\":" + std::to_string(o.instances) +
                    ",\"warehouses_per_instance\":" + std::to_string(per_instance) + ",\"warehouse_kib\":" +
                    std::to_string(o.warehouse_kib) + ",\"placement\":" + quote(name_of(o.place)) + ",\"seed\":" +
                    std::to_string(o.seed) + ",\"tbb_arenas\":" + quote(tbb_single ? "default" : "per-node") +
                    ",\"deck_fingerprint\":" + quote([&] {
                      std::ostringstream h;
                      h << std::hex << fingerprint;
                      return h.str();
                    }()) +
                    ",\"tunables\":" + quote(runtime.describe());
    if (both) {
      std::string nr, trs;
      for (const run_result& r : results) {
        std::string& runs = r.runtime == "numart" ? nr : trs;
        runs += (runs.empty() ? "" : ",") + json_run(r, o.periods_log);
      }
      s += ",\"runtime\":{\"numart\":{\"bops_total\":" + num(median(nb)) + ",\"runs\":[" + nr + "]},\"onetbb\":{\"bops_total\":" +
           num(median(tb)) + ",\"runs\":[" + trs + "]},\"ratio_bops\":" + num(ratio) + "}";
      s += ",\"bops_total\":{\"numart\":" + num(median(nb)) + ",\"onetbb\":" + num(median(tb)) + "}";
      s += std::string(",\"balancer\":") + (balancing_on(runtime) ? "true" : "false");  // numart's runs
    } else {
      const std::string run = json_run(results.front(), o.periods_log);
      s += "," + run.substr(1, run.size() - 2);  // the run's fields at the top level
    }
    out << s << "}\n";
  } else {
    if (both) {
      out << std::fixed << std::setprecision(1) << "\n== numart vs onetbb (bops_total)\n";
      out << "  run    " << std::setw(12) << "numart" << std::setw(12) << "onetbb" << '\n';
      for (std::size_t k = 0; k < nb.size() && k < tb.size(); ++k)
        out << "  " << k + 1 << "      " << std::setw(12) << nb[k] << std::setw(12) << tb[k] << '\n';
      out << "  median " << std::setw(12) << median(nb) << std::setw(12) << median(tb) << '\n';
      out << "  ratio numart/onetbb: " << std::setprecision(3) << ratio << '\n';
    }
    out << "\n" << runtime.describe();
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const usage_error& e) {
    std::fprintf(stderr, "numart_jbb: %s\n", e.what());
    return 2;
  } catch (const rt::config_error& e) {
    std::fprintf(stderr, "numart_jbb: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "numart_jbb: %s\n", e.what());
    return 1;
  }
}
