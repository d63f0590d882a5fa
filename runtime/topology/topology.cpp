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
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/printable.hpp"
#include "core/satmath.hpp"
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

// Bounds on a synthetic description, so that "pu:100000" is refused in one line instead of keeping
// hwloc busy for minutes and gigabytes (found by tests/fuzz/topology_source_fuzz.cpp). hwloc 2.9
// builds every object and inserts it by walking down from the root, comparing cpusets with the
// siblings met at each level: its time grows with those sibling visits. Debian's hwloc 2.9.0 on
// the 2-core CI machine: "pack:32 [numa] l3:4 l2:32 l1:1 core:1 pu:2" (8192 PUs, 1.4M visits)
// loads in 0.6 s, "pu:4096" (16.8M) in 1.4 s, "pack:8 l3:1024 l2:1 l1:1 core:1 pu:1" (42M) in
// 7.7 s, "pu:8192" (67M) in 12 s, "pu:100000" did not finish in 60 s.
constexpr std::uint64_t kMaxSyntheticPus = 8192;                             // Linux's largest NR_CPUS (x86 MAXSMP)
constexpr std::uint64_t kMaxSyntheticObjects = 65536;                        // 8 per PU at the PU limit
constexpr std::uint64_t kMaxSyntheticSiblingVisits = std::uint64_t{1} << 24;  // "pu:4096": 1.4 s
// hwloc sizes cpusets and nodesets by the largest index of an "indexes=" attribute
// ("pu:2(indexes=0,644444444444444)" kept it busy for more than 20 s); the same bound as the
// XML check's on PU and NUMANode os_index.
constexpr std::uint64_t kMaxSyntheticIndex = std::uint64_t{1} << 20;

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

// What a synthetic description asks hwloc to build (see the bounds above).
struct synthetic_size {
  std::uint64_t pus = 1;             // objects of the last level
  std::uint64_t objects = 1;         // every object, the root and attached memory included
  std::uint64_t sibling_visits = 0;  // over every object: the arities on its path from the root
  std::uint64_t max_index = 0;       // the largest number in an "indexes=" attribute
};

// Measures `text` the way hwloc 2.9 reads it: an optional "(attributes)" for the root, then
// levels separated by spaces or newlines, each "[type(attributes)]" (memory attached to every
// object of the level above) or "[type:]count[(attributes)]", count read by strtoul in any base,
// 1..UINT_MAX. It only measures: hwloc still parses the text and refuses what it does not accept,
// so a level that hwloc would refuse ends the measurement.
synthetic_size measure_synthetic(const std::string& text) {
  const char* const d = text.c_str();  // hwloc stops at the first NUL too
  synthetic_size s;
  std::uint64_t width = 1;  // objects in the last level read
  std::uint64_t path = 0;   // siblings met from the root down to that level
  std::size_t pos = 0;
  // Skips past the next `close`, noting the numbers of any "indexes=" list on the way (a list
  // ends at a space or ')'; an interleaving spec such as "indexes=L2:core" has no large number).
  const auto skip_past = [&](char close) {
    const char* const c = std::strchr(d + pos, close);
    if (c == nullptr) return false;
    const std::string_view block(d + pos, static_cast<std::size_t>(c - d) - pos + 1);
    for (std::size_t at = block.find("indexes="); at != std::string_view::npos; at = block.find("indexes=", at + 1)) {
      std::uint64_t value = 0;
      for (std::size_t i = at + 8; i < block.size() && block[i] != ' ' && block[i] != ')'; ++i) {
        const bool digit = block[i] >= '0' && block[i] <= '9';
        value = digit ? rt::core::sat_add(rt::core::sat_mul(value, std::uint64_t{10}), static_cast<std::uint64_t>(block[i] - '0')) : 0;
        s.max_index = std::max(s.max_index, value);
      }
    }
    pos = static_cast<std::size_t>(c - d) + 1;
    return true;
  };
  if (d[0] == '(' && !skip_past(')')) return s;
  while (true) {
    while (d[pos] == ' ' || d[pos] == '\n') ++pos;
    if (d[pos] == '\0') break;
    if (d[pos] == '[') {
      if (!skip_past(']')) break;
      s.objects = rt::core::sat_add(s.objects, width);
      continue;
    }
    if ((d[pos] < '0' || d[pos] > '9') && !skip_past(':')) break;
    char* after = nullptr;
    const unsigned long long count = std::strtoull(d + pos, &after, 0);
    if (after == d + pos || count == 0 || count > UINT_MAX) break;
    width = rt::core::sat_mul(width, std::uint64_t{count});
    path = rt::core::sat_add(path, std::uint64_t{count});
    s.pus = width;
    s.objects = rt::core::sat_add(s.objects, width);
    s.sibling_visits = rt::core::sat_add(s.sibling_visits, rt::core::sat_mul(width, path));
    pos = static_cast<std::size_t>(after - d);
    if (d[pos] == '(' && !skip_past(')')) break;
  }
  return s;
}

std::string count_text(std::uint64_t n) { return n == UINT64_MAX ? std::string("more than 2^64") : std::to_string(n); }

// The source and the XML check's details quote outside text (a path, attribute values): control
// characters are escaped so that the message stays one line.
[[noreturn]] void fail_for(const std::string& desc, const std::string& reason) {
  throw topology_error(rt::core::printable("topology '" + desc + "': " + reason));
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
        check_synthetic_size();
        if (hwloc_topology_set_synthetic(h_, src_.text.c_str()) != 0) {
          fail("hwloc rejected the synthetic description (expected space-separated levels such as 'pack:2 [numa] core:2 pu:1')");
        }
        return;
    }
  }

  void check_synthetic_size() const {
    const synthetic_size size = measure_synthetic(src_.text);
    if (size.pus > kMaxSyntheticPus) {
      fail("the description has " + count_text(size.pus) + " PUs; numart loads at most " + std::to_string(kMaxSyntheticPus) + " (Linux's largest NR_CPUS)");
    }
    if (size.objects > kMaxSyntheticObjects) {
      fail("the description has " + count_text(size.objects) + " objects; numart loads at most " + std::to_string(kMaxSyntheticObjects));
    }
    if (size.max_index >= kMaxSyntheticIndex) {
      fail("an indexes= attribute names index " + count_text(size.max_index) + "; numart accepts indexes below " + std::to_string(kMaxSyntheticIndex));
    }
    if (size.sibling_visits > kMaxSyntheticSiblingVisits) {
      fail("its levels are too wide for hwloc to build in reasonable time (" + count_text(size.sibling_visits) + " sibling visits, at most " +
           std::to_string(kMaxSyntheticSiblingVisits) + "): nest wide levels, e.g. 'pack:16 core:256 pu:2' rather than 'core:4096 pu:2'");
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
    // A package inside another (an XML can say so; hwloc keeps it): packages then sit at two
    // depths, hwloc counts them as -1 and logical indexes restart at each depth, so a core's
    // package index would name no package.
    if (hwloc_get_type_depth(h_, HWLOC_OBJ_PACKAGE) == HWLOC_TYPE_DEPTH_MULTIPLE)
      fail("a Package object inside another Package: packages at several depths are not a machine");
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

  // A PU is its OS index: its cpuset must be exactly that index. hwloc loads XMLs that break it
  // (a PU P#96 whose cpuset is PU 97, beside P#97; a PU with the infinite cpuset "0xf...f"), and
  // the model would then hold one PU twice (found by tests/fuzz/topology_xml_fuzz.cpp).
  unsigned pu_index(hwloc_obj_t pu) const {
    if (hwloc_bitmap_weight(pu->cpuset) != 1 || static_cast<unsigned>(hwloc_bitmap_first(pu->cpuset)) != pu->os_index) {
      const std::string index = std::to_string(pu->os_index);
      fail("inconsistent topology: the cpuset of PU P#" + index + " is not just PU " + index);
    }
    return pu->os_index;
  }

  void build_cores(topology& t) const {
    const std::vector<hwloc_obj_t> nodes = numa_objects();
    // Cores in logical order: walking the PUs in logical order meets the cores in logical order.
    // A PU without a Core ancestor is a core of its own (synthetic "pack:2 pu:4", some XMLs).
    // A core's PUs are the PU objects below it, not its cpuset: an inconsistent XML may give a
    // Core a cpuset wider than its PUs (hwloc loads it), which named PUs that do not exist
    // (found by tests/fuzz/topology_xml_fuzz.cpp).
    std::map<hwloc_obj_t, int> core_index;
    std::vector<hwloc_obj_t> core_objs;
    std::vector<std::vector<unsigned>> core_pus;
    bitmap all_pus;
    const int npus = hwloc_get_nbobjs_by_type(h_, HWLOC_OBJ_PU);
    for (int i = 0; i < npus; ++i) {
      hwloc_obj_t pu = hwloc_get_obj_by_type(h_, HWLOC_OBJ_PU, static_cast<unsigned>(i));
      if (pu == nullptr) continue;
      const unsigned index = pu_index(pu);
      if (hwloc_bitmap_isset(all_pus.get(), index)) fail("inconsistent topology: two PUs have the OS index " + std::to_string(index));
      hwloc_bitmap_set(all_pus.get(), index);
      hwloc_obj_t owner = ancestor(pu, HWLOC_OBJ_CORE);
      if (owner == nullptr) owner = pu;
      const auto [it, fresh] = core_index.emplace(owner, static_cast<int>(core_objs.size()));
      if (fresh) {
        core_objs.push_back(owner);
        core_pus.emplace_back();
      }
      core_pus[at(it->second)].push_back(index);
    }
    if (core_objs.empty()) fail("hwloc reports no PU");
    // Within the PUs that exist: hwloc's allowed and topology cpusets may both be infinite in an
    // XML ("0xf...f"), and listing an infinite set never ends.
    bitmap allowed;
    hwloc_bitmap_and(allowed.get(), hwloc_topology_get_allowed_cpuset(h_), all_pus.get());
    t.allowed_pus = members(allowed.get());
    bool shared_noted = false;
    std::map<std::pair<hwloc_obj_t, int>, int> llc_index;  // I-TOPO-3: (cache or package, node)
    for (std::size_t c = 0; c < core_objs.size(); ++c) {
      hwloc_obj_t obj = core_objs[c];
      core k;
      k.index = static_cast<int>(c);
      k.pus = std::move(core_pus[c]);
      std::sort(k.pus.begin(), k.pus.end());
      bitmap cpuset;
      for (const unsigned pu : k.pus) hwloc_bitmap_set(cpuset.get(), pu);
      hwloc_obj_t package = ancestor(obj, HWLOC_OBJ_PACKAGE);
      k.package = package != nullptr ? static_cast<int>(package->logical_index) : 0;
      k.node = node_of(cpuset.get(), nodes, t, shared_noted);
      k.allowed = hwloc_bitmap_intersects(cpuset.get(), allowed.get()) != 0;
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

bool topology::migrate_area(void* addr, std::size_t bytes, int node) const {
  if (!is_host || !impl_ || impl_->handle == nullptr || node < 0 || node >= node_count()) return false;
  bitmap set;
  hwloc_bitmap_set(set.get(), nodes[static_cast<std::size_t>(node)].os_index);
  return hwloc_set_area_membind(impl_->handle, addr, bytes, set.get(), HWLOC_MEMBIND_BIND,
                                HWLOC_MEMBIND_MIGRATE | HWLOC_MEMBIND_BYNODESET) == 0;
}

}  // namespace rt::topo
