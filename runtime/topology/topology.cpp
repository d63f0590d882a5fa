// topology::load: the one place that talks to hwloc to build the data model (DESIGN.md §7,
// docs/design/topology.md). Everything after load is plain data; only binding keeps the handle.
#include "topology/topology.hpp"

#include <fcntl.h>
#include <hwloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "topology/distances.hpp"
#include "topology/xml_check.hpp"

namespace rt::topo {

struct topology::impl {
  hwloc_topology_t handle = nullptr;
  impl() = default;
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;
  ~impl() {
    if (handle != nullptr) hwloc_topology_destroy(handle);
  }
};

topology::topology() = default;
topology::~topology() = default;
topology::topology(topology&&) noexcept = default;
topology& topology::operator=(topology&&) noexcept = default;

hwloc_topology* topology::native_handle() const { return impl_ ? impl_->handle : nullptr; }

namespace {

// The largest XML file read: far above any machine's (the 384-PU SGI UV file is 326 KB), low
// enough that a wrong path to a huge file fails fast instead of filling memory.
constexpr off_t kMaxXmlBytes = off_t{64} << 20;

// hwloc's subtype for the MCDRAM-as-L3 objects of KNL XMLs written before hwloc had MemCache
// objects (64intel64-fakeKNL-SNC4-hybrid.xml): a memory-side cache, not the CPUs' LLC.
constexpr const char* kMemorySideCacheSubtype = "MemorySideCache";

std::size_t at(int i) { return static_cast<std::size_t>(i); }

class bitmap {
 public:
  bitmap() : b_(hwloc_bitmap_alloc()) {
    if (b_ == nullptr) throw std::bad_alloc();
  }
  bitmap(const bitmap&) = delete;
  bitmap& operator=(const bitmap&) = delete;
  ~bitmap() { hwloc_bitmap_free(b_); }
  hwloc_bitmap_t get() const { return b_; }

 private:
  hwloc_bitmap_t b_;
};

// The nearest proper ancestor of `obj` of type `type`, or null.
hwloc_obj_t ancestor(hwloc_obj_t obj, hwloc_obj_type_t type) {
  for (hwloc_obj_t a = obj == nullptr ? nullptr : obj->parent; a != nullptr; a = a->parent) {
    if (a->type == type) return a;
  }
  return nullptr;
}

std::vector<unsigned> members(hwloc_const_bitmap_t set) {
  std::vector<unsigned> out;
  for (int i = hwloc_bitmap_first(set); i >= 0; i = hwloc_bitmap_next(set, i)) out.push_back(static_cast<unsigned>(i));
  return out;
}

[[noreturn]] void fail_for(const std::string& desc, const std::string& reason) {
  throw topology_error("topology '" + desc + "': " + reason);
}

class loader {
 public:
  // `handle`: initialised, not loaded yet; owned by the topology being built.
  loader(const source& src, hwloc_topology_t handle) : src_(src), desc_(src.describe()), h_(handle) {}

  void run(topology& t) {
    select_backend();
    if (hwloc_topology_load(h_) != 0) fail("hwloc could not load it: " + std::string(std::strerror(errno)));
    t.source_desc = desc_;
    t.is_host = hwloc_topology_is_thissystem(h_) != 0;
    if (t.is_host) restrict_to_binding(t);
    if (src_.what == source::kind::synthetic && !src_.distances.empty()) add_user_distances();
    build_nodes(t);
    build_cores(t);
    build_distances(t);
  }

 private:
  const source& src_;
  std::string desc_;
  hwloc_topology_t h_ = nullptr;
  std::string xml_;  // the XML text while loading (hwloc reads it from memory)

  [[noreturn]] void fail(const std::string& reason) const { fail_for(desc_, reason); }

  void select_backend() {
    switch (src_.what) {
      case source::kind::host:
        return;
      case source::kind::xml:
        read_xml();
        // hwloc reads the buffer with its terminating NUL counted, as its own export writes it.
        if (hwloc_topology_set_xmlbuffer(h_, xml_.c_str(), static_cast<int>(xml_.size() + 1)) != 0) {
          fail("hwloc refused the XML: " + std::string(std::strerror(errno)));
        }
        return;
      case source::kind::synthetic:
        if (hwloc_topology_set_synthetic(h_, src_.text.c_str()) != 0) {
          fail("hwloc rejected the synthetic description (expected space-separated levels such as 'pack:2 [numa] core:2 pu:1')");
        }
        return;
    }
  }

  void read_xml() {
    // O_NONBLOCK: a FIFO without a writer must not hang the open; it is refused below anyway.
    const int fd = ::open(src_.text.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) fail("cannot open the file: " + std::string(std::strerror(errno)));
    struct fd_closer {
      int fd;
      ~fd_closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) fail("cannot stat the file: " + std::string(std::strerror(errno)));
    if (S_ISDIR(st.st_mode)) fail("cannot read the file: it is a directory");
    if (!S_ISREG(st.st_mode)) fail("cannot read the file: not a regular file");
    if (st.st_size > kMaxXmlBytes) fail("the file is " + std::to_string(st.st_size) + " bytes, larger than any hwloc XML");
    xml_.resize(static_cast<std::size_t>(st.st_size));
    std::size_t done = 0;
    while (done < xml_.size()) {
      const ssize_t n = ::read(fd, xml_.data() + done, xml_.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("cannot read the file: " + std::string(std::strerror(errno)));
      if (n == 0) break;
      done += static_cast<std::size_t>(n);
    }
    xml_.resize(done);
    const xml_check_result check = check_hwloc_xml(xml_, static_cast<int>(HWLOC_API_VERSION >> 16));
    switch (check.verdict) {
      case xml_verdict::ok:
        return;
      case xml_verdict::empty:
        fail("the file is empty, not an hwloc XML");
      case xml_verdict::truncated:
        fail("truncated XML (" + check.detail + ")");
      case xml_verdict::malformed:
        fail("not an hwloc XML (" + check.detail + ")");
      case xml_verdict::unsupported_version:
        fail("unsupported XML format (" + check.detail + ")");
      case xml_verdict::inconsistent:
        fail("inconsistent hwloc XML (" + check.detail + ")");
    }
  }

  // I-TOPO-8: hwloc already drops the PUs the process may not use (cgroup cpuset); a CPU
  // binding (taskset, numactl -C, a parent's sched_setaffinity) is not in that set, so the
  // topology is restricted to it here. Memory-only leftovers (a node whose CPUs all fell
  // outside the binding) are kept: their memory is still usable.
  void restrict_to_binding(topology& t) {
    bitmap binding;
    if (hwloc_get_cpubind(h_, binding.get(), HWLOC_CPUBIND_PROCESS) != 0) {
      t.notes.push_back("the process's CPU binding is unreadable (" + std::string(std::strerror(errno)) + "): all allowed PUs are used");
      return;
    }
    if (hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(h_), binding.get())) return;
    if (hwloc_topology_restrict(h_, binding.get(), 0) == 0) return;
    if (errno == ENOMEM) fail("hwloc_topology_restrict ran out of memory");
    t.notes.push_back("restricting to the process's CPU binding failed (" + std::string(std::strerror(errno)) + "): all allowed PUs are used");
  }

  std::vector<hwloc_obj_t> numa_objects() const {
    std::vector<hwloc_obj_t> out;
    const int n = hwloc_get_nbobjs_by_type(h_, HWLOC_OBJ_NUMANODE);
    for (int i = 0; i < n; ++i) {
      hwloc_obj_t o = hwloc_get_obj_by_type(h_, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
      if (o != nullptr) out.push_back(o);
    }
    return out;
  }

  // The user's matrix for a synthetic topology goes into hwloc like a firmware one would, and is
  // read back by build_distances through the same path as an XML's (I-TOPO-1).
  void add_user_distances() {
    const std::vector<hwloc_obj_t> objs = numa_objects();
    const std::size_t n = objs.size();
    if (src_.distances.size() != n * n) {
      fail(std::to_string(src_.distances.size()) + " distances given for " + std::to_string(n) + " NUMA nodes (need " + std::to_string(n * n) + ", row-major)");
    }
    distance_matrix d(n);
    for (std::size_t i = 0; i < n; ++i) d[i].assign(src_.distances.begin() + static_cast<std::ptrdiff_t>(i * n), src_.distances.begin() + static_cast<std::ptrdiff_t>((i + 1) * n));
    const matrix_check check = check_matrix(d);
    if (check.verdict != matrix_verdict::ok) fail("bad distances: " + check.reason());
    if (n < 2) return;  // hwloc stores no 1x1 matrix; the default for one node is the same {10}
    std::vector<hwloc_uint64_t> values(src_.distances.begin(), src_.distances.end());
    std::vector<hwloc_obj_t> nodes = objs;
    hwloc_distances_add_handle_t add =
        hwloc_distances_add_create(h_, "NUMALatency", HWLOC_DISTANCES_KIND_FROM_USER | HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0);
    if (add == nullptr || hwloc_distances_add_values(h_, add, static_cast<unsigned>(n), nodes.data(), values.data(), 0) != 0 ||
        hwloc_distances_add_commit(h_, add, 0) != 0) {
      fail("hwloc refused the distance matrix: " + std::string(std::strerror(errno)));
    }
  }

  void build_nodes(topology& t) const {
    const std::vector<hwloc_obj_t> objs = numa_objects();
    if (objs.empty()) fail("hwloc reports no NUMA node");
    for (std::size_t i = 0; i < objs.size(); ++i) {
      numa_node n;
      n.logical = static_cast<int>(i);
      n.os_index = objs[i]->os_index;
      n.memory_bytes = objs[i]->attr->numanode.local_memory;
      t.nodes.push_back(std::move(n));
    }
    t.packages = hwloc_get_nbobjs_by_type(h_, HWLOC_OBJ_PACKAGE);
    t.pus = hwloc_get_nbobjs_by_type(h_, HWLOC_OBJ_PU);
  }

  // I-TOPO-2: a core's node is a node whose cpuset contains the core. Several may: memory
  // attached higher up (a machine-wide pool: its cpuset is every PU), or nodes sharing a cpuset
  // (KNL hybrid: DDR and MCDRAM per cluster; Sapphire Rapids HBM). Prefer ordinary memory (no
  // subtype, or "DRAM"), then the most local node (smallest cpuset), then the lowest logical
  // index; the others are memory-only, as Linux reports them (an MCDRAM node's cpulist is empty).
  int node_of(hwloc_const_bitmap_t cpuset, const std::vector<hwloc_obj_t>& nodes, topology& t, bool& shared_noted) const {
    int best = -1;
    int candidates = 0;
    const auto plain = [](hwloc_obj_t n) { return n->subtype == nullptr || std::strcmp(n->subtype, "DRAM") == 0; };
    const auto better = [&](hwloc_obj_t a, hwloc_obj_t b) {
      if (plain(a) != plain(b)) return plain(a);
      return hwloc_bitmap_weight(a->cpuset) < hwloc_bitmap_weight(b->cpuset);
    };
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (!hwloc_bitmap_isincluded(cpuset, nodes[i]->cpuset)) continue;
      ++candidates;
      if (best < 0 || better(nodes[i], nodes[at(best)])) best = static_cast<int>(i);
    }
    if (candidates > 1 && !shared_noted) {
      shared_noted = true;
      t.notes.push_back("several NUMA nodes contain the same CPUs; each core belongs to the most local plain-memory one, the others are memory-only");
    }
    if (best >= 0) return best;
    // No node covers the whole core: the one holding most of its PUs.
    int most = 0;
    bitmap both;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      hwloc_bitmap_and(both.get(), cpuset, nodes[i]->cpuset);
      const int w = hwloc_bitmap_weight(both.get());
      if (w > most) {
        most = w;
        best = static_cast<int>(i);
      }
    }
    if (best >= 0) return best;
    t.notes.push_back("a core is in no NUMA node's cpuset; it was given node 0");
    return 0;
  }

  // The CPUs' last-level cache above `obj`: the data/unified cache ancestor of the highest
  // level, memory-side caches excluded; else the package; else null (the node is the domain).
  static hwloc_obj_t llc_of(hwloc_obj_t obj) {
    hwloc_obj_t best = nullptr;
    for (hwloc_obj_t a = obj; a != nullptr; a = a->parent) {
      if (!hwloc_obj_type_is_dcache(a->type)) continue;
      if (a->subtype != nullptr && std::strcmp(a->subtype, kMemorySideCacheSubtype) == 0) continue;
      if (best == nullptr || a->attr->cache.depth > best->attr->cache.depth) best = a;
    }
    if (best != nullptr) return best;
    return ancestor(obj, HWLOC_OBJ_PACKAGE);
  }

  void build_cores(topology& t) const {
    const std::vector<hwloc_obj_t> nodes = numa_objects();
    bitmap allowed;
    hwloc_bitmap_and(allowed.get(), hwloc_topology_get_allowed_cpuset(h_), hwloc_topology_get_topology_cpuset(h_));
    t.allowed_pus = members(allowed.get());
    // Cores in logical order: walking the PUs in logical order meets the cores in logical order.
    // A PU without a Core ancestor is a core of its own (synthetic "pack:2 pu:4", some XMLs).
    std::map<hwloc_obj_t, int> core_index;
    std::vector<hwloc_obj_t> core_objs;
    const int npus = hwloc_get_nbobjs_by_type(h_, HWLOC_OBJ_PU);
    for (int i = 0; i < npus; ++i) {
      hwloc_obj_t pu = hwloc_get_obj_by_type(h_, HWLOC_OBJ_PU, static_cast<unsigned>(i));
      if (pu == nullptr) continue;
      hwloc_obj_t owner = ancestor(pu, HWLOC_OBJ_CORE);
      if (owner == nullptr) owner = pu;
      if (core_index.emplace(owner, static_cast<int>(core_objs.size())).second) core_objs.push_back(owner);
    }
    if (core_objs.empty()) fail("hwloc reports no PU");
    bool shared_noted = false;
    std::map<std::pair<hwloc_obj_t, int>, int> llc_index;  // I-TOPO-3: (cache or package, node)
    for (std::size_t c = 0; c < core_objs.size(); ++c) {
      hwloc_obj_t obj = core_objs[c];
      core k;
      k.index = static_cast<int>(c);
      k.pus = members(obj->cpuset);
      hwloc_obj_t package = ancestor(obj, HWLOC_OBJ_PACKAGE);
      k.package = package != nullptr ? static_cast<int>(package->logical_index) : 0;
      k.node = node_of(obj->cpuset, nodes, t, shared_noted);
      k.allowed = hwloc_bitmap_intersects(obj->cpuset, allowed.get()) != 0;
      const auto key = std::make_pair(llc_of(obj), k.node);
      const auto [it, fresh] = llc_index.emplace(key, static_cast<int>(t.llcs.size()));
      if (fresh) {
        llc_domain d;
        d.index = it->second;
        d.node = k.node;
        t.llcs.push_back(std::move(d));
      }
      k.llc = it->second;
      t.llcs[at(k.llc)].cores.push_back(k.index);
      numa_node& home = t.nodes[at(k.node)];
      home.cores.push_back(k.index);
      home.pus.insert(home.pus.end(), k.pus.begin(), k.pus.end());
      t.cores.push_back(std::move(k));
    }
    for (numa_node& n : t.nodes) {
      std::sort(n.pus.begin(), n.pus.end());
      n.cpuless = n.cores.empty();
    }
  }

  // I-TOPO-1: the NUMA latency matrix in logical node order. hwloc may hold several matrices:
  // only a latency one over NUMA nodes counts (not the NVLink bandwidth of power8gpudistances,
  // not 16amd64-4distances's Package/Core/PU ones); "NUMALatency" (firmware SLIT) first, else
  // the first that covers every node (28intel64's is unnamed). Its objects need not be in
  // logical order (64amd64-4p2n4ca2co: 0 1 4 5 6 7 2 3), hence hwloc_distances_obj_index.
  void build_distances(topology& t) const {
    const int n = t.node_count();
    const std::vector<hwloc_obj_t> nodes = numa_objects();
    unsigned count = 0;
    hwloc_distances_get_by_type(h_, HWLOC_OBJ_NUMANODE, &count, nullptr, HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0);
    std::vector<hwloc_distances_s*> found(count, nullptr);
    if (count > 0 && hwloc_distances_get_by_type(h_, HWLOC_OBJ_NUMANODE, &count, found.data(), HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) != 0) {
      found.clear();
    }
    found.resize(std::min<std::size_t>(found.size(), count));
    hwloc_distances_s* chosen = nullptr;
    bool partial = false;
    for (hwloc_distances_s* m : found) {
      bool covers = m->nbobjs == static_cast<unsigned>(n);
      for (int i = 0; covers && i < n; ++i) covers = hwloc_distances_obj_index(m, nodes[at(i)]) >= 0;
      if (!covers) {
        partial = true;
        continue;
      }
      const char* name = hwloc_distances_get_name(h_, m);
      if (name != nullptr && std::strcmp(name, "NUMALatency") == 0) {
        chosen = m;
        break;
      }
      if (chosen == nullptr) chosen = m;
    }
    distance_matrix d;
    if (chosen != nullptr) {
      d.assign(at(n), std::vector<int>(at(n), 0));
      for (int i = 0; i < n; ++i) {
        const int ri = hwloc_distances_obj_index(chosen, nodes[at(i)]);
        for (int j = 0; j < n; ++j) {
          const int rj = hwloc_distances_obj_index(chosen, nodes[at(j)]);
          const hwloc_uint64_t v = chosen->values[static_cast<std::size_t>(ri) * chosen->nbobjs + static_cast<std::size_t>(rj)];
          d[at(i)][at(j)] = v > static_cast<hwloc_uint64_t>(INT_MAX) ? INT_MAX : static_cast<int>(v);
        }
      }
      const matrix_check check = check_matrix(d);
      if (check.verdict != matrix_verdict::ok) {
        t.notes.push_back("ignored the NUMA latency matrix (" + check.reason() + "); using 10 local, 20 remote");
        d.clear();
      }
    } else if (partial) {
      t.notes.push_back("ignored a NUMA latency matrix that does not cover every node; using 10 local, 20 remote");
    }
    for (hwloc_distances_s* m : found) hwloc_distances_release(h_, m);
    t.has_distance_matrix = !d.empty();
    if (d.empty()) d = default_matrix(n);
    t.distance = std::move(d);
    t.distance_levels = distinct_levels(t.distance);
    t.max_distance = t.distance_levels.back();
    t.hops = hop_counts(t.distance, t.distance_levels);
    std::vector<bool> has_cores;
    for (const numa_node& node : t.nodes) has_cores.push_back(!node.cpuless);
    t.klass = classify(t.distance, has_cores);
    t.nearby = nearby_lists(t.distance, t.max_distance);
  }
};

}  // namespace

topology topology::load(const source& src) {
  topology t;
  t.impl_ = std::make_unique<impl>();
  if (hwloc_topology_init(&t.impl_->handle) != 0) {
    t.impl_->handle = nullptr;
    fail_for(src.describe(), "hwloc_topology_init failed: " + std::string(std::strerror(errno)));
  }
  loader(src, t.impl_->handle).run(t);
  return t;
}

bool topology::bind_current_thread(int core_index) const {
  if (!is_host || !impl_ || impl_->handle == nullptr || core_index < 0 || core_index >= core_count()) return false;
  bitmap set;
  for (const unsigned pu : cores[at(core_index)].pus) {
    if (std::binary_search(allowed_pus.begin(), allowed_pus.end(), pu)) hwloc_bitmap_set(set.get(), pu);
  }
  if (hwloc_bitmap_iszero(set.get())) return false;
  return hwloc_set_cpubind(impl_->handle, set.get(), HWLOC_CPUBIND_THREAD) == 0;
}

}  // namespace rt::topo
