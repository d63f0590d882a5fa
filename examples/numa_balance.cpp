// Two groups whose data sits on chosen nodes, and tasks that touch it: watch the NUMA balancer
// learn where each group's memory is and move the group's work there, period by period.
//
//   numart_example_numa_balance [--balancer on|off] [--periods N] [--nodes A,B] [--workers N]
//                               [--topology SPEC]
//
// Default topology: the 4-socket, 8-node Opteron of tests/data/topologies (virtual-topology
// mode on this machine: the runtime schedules as on that machine and tags memory with its
// virtual node; nothing is bound, and no remote-access cost is emulated here: locality is what
// this example measures). A line per balancer period: the share of the period's accesses that
// were node-local, per group, and where each group's home and preferred node are.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "rt/rt.hpp"

namespace {

struct options {
  bool balancer = true;
  int periods = 30;
  int workers = 16;
  int node_a = 1;
  int node_b = 6;
  std::string topology;
};

[[noreturn]] void usage(const char* argv0, const std::string& why) {
  std::fprintf(stderr, "numart_example_numa_balance: %s\nusage: %s [--balancer on|off] [--periods N] [--nodes A,B] "
               "[--workers N] [--topology SPEC]\n", why.c_str(), argv0);
  std::exit(2);
}

int to_int(const char* argv0, const std::string& what, const std::string& s, int lo, int hi) {
  std::size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || v < lo || v > hi)
    usage(argv0, what + " '" + s + "': expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
  return v;
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(argv[0], a + " needs a value");
      return argv[++i];
    };
    if (a == "--balancer") {
      const std::string v = value();
      if (v != "on" && v != "off") usage(argv[0], "--balancer '" + v + "': expected on or off");
      o.balancer = v == "on";
    } else if (a == "--periods") {
      o.periods = to_int(argv[0], a, value(), 1, 100000);
    } else if (a == "--workers") {
      o.workers = to_int(argv[0], a, value(), 0, 4096);
    } else if (a == "--nodes") {
      const std::string v = value();
      const std::size_t comma = v.find(',');
      if (comma == std::string::npos) usage(argv[0], "--nodes '" + v + "': expected A,B");
      o.node_a = to_int(argv[0], a, v.substr(0, comma), 0, 4095);
      o.node_b = to_int(argv[0], a, v.substr(comma + 1), 0, 4095);
    } else if (a == "--topology") {
      o.topology = value();
    } else {
      usage(argv[0], "unknown option '" + a + "'");
    }
  }
  return o;
}

// One group's data and its access counts. The counts are written by the tasks (relaxed: the
// main thread reads them once per period for a printed figure, a torn period costs nothing).
struct dataset {
  rt::group group;
  unsigned char* data = nullptr;
  std::size_t bytes = 0;
  std::atomic<std::uint64_t> local{0};
  std::atomic<std::uint64_t> remote{0};
  dataset(rt::runtime& r, const char* name) : group(r, name) {}
};

constexpr std::size_t kDataBytes = 4u << 20;   // 1024 pages per group
constexpr int kTouchesPerTask = 256;           // 64-byte lines read and written by one task
constexpr int kChainsPerGroup = 2;             // tasks of a group in flight at once: its node's workers

// A task touches random lines of its group's data, counts each access as local or remote by
// the node the page is on now (rt::node_of) against the node of the running worker, then
// spawns its successor into the group until `stop`.
void touch_chain(rt::runtime& r, dataset& d, std::uint64_t seed, const std::atomic<bool>& stop,
                 std::atomic<int>& live) {
  if (stop.load(std::memory_order_relaxed)) {
    live.fetch_sub(1, std::memory_order_release);
    return;
  }
  const rt::node_id here = rt::current_node();
  std::uint64_t x = seed;
  std::uint64_t local = 0;
  std::uint64_t remote = 0;
  for (int i = 0; i < kTouchesPerTask; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    unsigned char* p = d.data + (x % (d.bytes / 64)) * 64;
    std::atomic_ref<unsigned char>(p[0]).fetch_add(1, std::memory_order_relaxed);  // the chains share the data
    if (rt::node_of(p) == here)
      ++local;
    else
      ++remote;
  }
  d.local.fetch_add(local, std::memory_order_relaxed);
  d.remote.fetch_add(remote, std::memory_order_relaxed);
  r.spawn(d.group, [&r, &d, x, &stop, &live] { touch_chain(r, d, x, stop, live); }).detach();
}

std::uint64_t total(const rt::stats& s, const char* name) {
  return s.counter_index(name) < 0 ? 0 : s.total(name);
}

}  // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  try {
    rt::config cfg = rt::config::from_env();
    if (!o.topology.empty())
      cfg.topology = rt::topology_source::parse(o.topology);
    else if (std::getenv("RT_TOPOLOGY") == nullptr)
      cfg.topology = rt::topology_source::xml(std::string(NUMART_TOPOLOGY_DIR) + "/64amd64-4p2n4ca2co.xml");
    cfg.workers = o.workers;
    if (!o.balancer) cfg.tune += std::string(cfg.tune.empty() ? "" : ",") + "NO_NUMA_BALANCING";
    rt::runtime runtime{cfg};
    if (o.node_a >= runtime.nodes() || o.node_b >= runtime.nodes())
      usage(argv[0], "--nodes: the topology has " + std::to_string(runtime.nodes()) + " nodes");

    std::printf("numart numa_balance: %d workers on %d nodes%s, balancer %s\n", runtime.workers(), runtime.nodes(),
                runtime.virtual_topology() ? " (virtual topology: memory tagged with virtual nodes, nothing bound)" : "",
                o.balancer ? "on" : "off");
    dataset a(runtime, "data-on-A");
    dataset b(runtime, "data-on-B");
    const int where[2] = {o.node_a, o.node_b};
    dataset* sets[2] = {&a, &b};
    for (int g = 0; g < 2; ++g) {
      dataset& d = *sets[g];
      d.bytes = kDataBytes;
      d.data = static_cast<unsigned char*>(runtime.numa_alloc(d.bytes, rt::node_id{where[g]}));
      std::memset(d.data, 0, d.bytes);
      rt::register_region(d.group, d.data, d.bytes);
      std::printf("group %s: %zu MiB on node %d\n", d.group.name().c_str(), d.bytes >> 20, where[g]);
    }

    std::atomic<bool> stop{false};
    std::atomic<int> live{2 * kChainsPerGroup};
    for (int g = 0; g < 2; ++g)
      for (int c = 0; c < kChainsPerGroup; ++c) {
        dataset& d = *sets[g];
        const std::uint64_t seed = 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(1 + g * kChainsPerGroup + c);
        runtime.spawn(d.group, [&runtime, &d, seed, &stop, &live] { touch_chain(runtime, d, seed, stop, live); }).detach();
      }

    // One line per balancer period (the pass counter advances); with the balancer off, periods
    // of numa_scan_period_min_ms.
    std::printf("%6s %8s | %-24s | %-24s\n", "period", "ms", "A: local  home pref", "B: local  home pref");
    const auto t0 = std::chrono::steady_clock::now();
    std::uint64_t last_pass = total(runtime.stats(), "numa_passes");
    std::uint64_t seen[2][2] = {};
    int settled_from = -1;  // the first period from which every period was >= 90% local, both groups
    double late_sum = 0.0;  // the local share over the second half of the periods, both groups
    int late_n = 0;
    for (int period = 1; period <= o.periods;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      const std::uint64_t pass = total(runtime.stats(), "numa_passes");
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (o.balancer ? pass == last_pass : ms < 50.0 * period) continue;
      last_pass = pass;
      std::printf("%6d %8.0f", period, ms);
      bool both_local = true;
      for (int g = 0; g < 2; ++g) {
        dataset& d = *sets[g];
        const std::uint64_t l = d.local.load(std::memory_order_relaxed);
        const std::uint64_t r = d.remote.load(std::memory_order_relaxed);
        const std::uint64_t dl = l - seen[g][0];
        const std::uint64_t dr = r - seen[g][1];
        seen[g][0] = l;
        seen[g][1] = r;
        const double share = dl + dr == 0 ? 0.0 : 100.0 * static_cast<double>(dl) / static_cast<double>(dl + dr);
        std::printf(" | %6.1f%%  %4d %4d      ", share, d.group.home_node().value, d.group.preferred_node().value);
        both_local = both_local && share >= 90.0;
        if (2 * period > o.periods) {
          late_sum += share;
          ++late_n;
        }
      }
      std::printf("\n");
      if (!both_local)
        settled_from = -1;
      else if (settled_from < 0)
        settled_from = period;
      ++period;
    }
    std::printf("local share over periods %d-%d: %.1f%%; every period >= 90%% local from period %s (balancer %s)\n",
                o.periods / 2 + 1, o.periods, late_n == 0 ? 0.0 : late_sum / late_n,
                settled_from < 0 ? "never" : std::to_string(settled_from).c_str(), o.balancer ? "on" : "off");
    stop.store(true, std::memory_order_relaxed);
    while (live.load(std::memory_order_acquire) > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    runtime.shutdown();
    for (dataset* d : sets) {
      rt::unregister_region(d->group, d->data);
      rt::numa_free(d->data);
    }
    const rt::stats s = runtime.stats();
    std::printf("balancer: %llu periods, %llu skipped (registry contended), %llu samples, %llu dropped\n",
                static_cast<unsigned long long>(total(s, "numa_passes")),
                static_cast<unsigned long long>(total(s, "numa_periods_skipped")),
                static_cast<unsigned long long>(total(s, "numa_samples")),
                static_cast<unsigned long long>(total(s, "numa_samples_dropped")));
    std::printf("steal filter: %llu remote steals given back to the preferred node, %llu kept after numa_steal_refusals\n",
                static_cast<unsigned long long>(total(s, "steals_refused")),
                static_cast<unsigned long long>(total(s, "steals_overridden")));
    return 0;
  } catch (const rt::config_error& e) {
    std::fprintf(stderr, "numart: %s\n", e.what());
    return 2;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "numart: %s\n", e.what());
    return 2;
  }
}
