// Node arenas (docs/design/memory.md): tags on a virtual 8-node topology, binding on the host,
// accounting under concurrency, the frame pool on a node arena, and bad input.
#include <gtest/gtest.h>
#include <jemalloc/jemalloc.h>
#include <linux/mempolicy.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "memory/frame_pool.hpp"
#include "memory/node_arena.hpp"
#include "topology/topology.hpp"

namespace {

using rt::memory::node_arenas;

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;

const rt::topo::topology& virtual8() {
  static const rt::topo::topology t = rt::topo::topology::load(
      rt::topo::source::parse(std::string("xml:") + NUMART_TOPOLOGY_DIR + "/64amd64-4p2n4ca2co.xml"));
  return t;
}

std::size_t page_size() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }
std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

TEST(NodeArena, VirtualTopologyTagsEveryNodeForEverySize) {
  const auto& topo = virtual8();
  ASSERT_FALSE(topo.is_host);
  node_arenas arenas(topo);
  ASSERT_EQ(arenas.node_count(), 8);
  EXPECT_FALSE(arenas.is_host());
  for (int n = 0; n < arenas.node_count(); ++n) {
    for (std::size_t size : {std::size_t{64}, 10 * kKiB, 8 * kMiB}) {
      SCOPED_TRACE("node " + std::to_string(n) + ", " + std::to_string(size) + " bytes");
      const std::uint64_t before = arenas.bytes(n);
      auto* p = static_cast<unsigned char*>(arenas.alloc(size, n));
      ASSERT_NE(p, nullptr);
      std::memset(p, 0xab, size);
      EXPECT_EQ(node_arenas::node_of(p), n);
      // Interior pointers answer too, large allocations included (I-MEM-4).
      EXPECT_EQ(node_arenas::node_of(p + size / 2), n);
      EXPECT_EQ(node_arenas::node_of(p + size - 1), n);
      EXPECT_EQ(addr(p) % alignof(std::max_align_t), 0u);
      if (size >= page_size()) {
        EXPECT_EQ(addr(p) % page_size(), 0u);
      }
      EXPECT_EQ(arenas.bytes(n), before + sallocx(p, 0));
      EXPECT_GE(arenas.bytes(n), before + size);
      node_arenas::free(p);
      EXPECT_EQ(arenas.bytes(n), before);
    }
    EXPECT_FALSE(arenas.bound(n));  // virtual mode: tags only (I-MEM-7)
  }
}

TEST(NodeArena, ZeroBytesGivesUniqueNonNullPointers) {
  node_arenas arenas(virtual8());
  void* a = arenas.alloc(0, 5);
  void* b = arenas.alloc(0, 5);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  EXPECT_EQ(node_arenas::node_of(a), 5);
  EXPECT_EQ(node_arenas::node_of(b), 5);
  node_arenas::free(a);
  node_arenas::free(b);
}

TEST(NodeArena, ArenasAreProcessWideAndOutliveTheirRuntimeObject) {
  const auto& topo = virtual8();
  node_arenas keeper(topo);
  void* p = nullptr;
  const std::uint64_t before = keeper.bytes(2);
  {
    node_arenas scoped(topo);
    EXPECT_EQ(scoped.arena(2).jemalloc_index(), keeper.arena(2).jemalloc_index());
    p = scoped.alloc(3000, 2);
  }
  // The node_arenas object that allocated is gone; the memory and its tag are not (I-MEM-1).
  EXPECT_EQ(node_arenas::node_of(p), 2);
  EXPECT_GT(keeper.bytes(2), before);
  node_arenas::free(p);
  EXPECT_EQ(keeper.bytes(2), before);
}

TEST(NodeArena, HostTopologyAllocatesAndReportsBinding) {
  const rt::topo::topology topo = rt::topo::topology::load(rt::topo::source::parse("host"));
  ASSERT_TRUE(topo.is_host);
  node_arenas arenas(topo);
  ASSERT_EQ(arenas.node_count(), topo.node_count());
  for (int n = 0; n < arenas.node_count(); ++n) {
    const std::uint64_t before = arenas.bytes(n);
    auto* p = static_cast<unsigned char*>(arenas.alloc(4 * kMiB, n));
    std::memset(p, 1, 4 * kMiB);
    EXPECT_EQ(node_arenas::node_of(p), n);
    EXPECT_GT(arenas.bytes(n), before);
    // What the kernel says about the page's policy must agree with bound() (I-MEM-3).
    int mode = -1;
    unsigned long mask[16] = {};
    const long rc = ::syscall(SYS_get_mempolicy, &mode, mask, sizeof(mask) * 8, p, MPOL_F_ADDR);
    const unsigned os = topo.nodes[static_cast<std::size_t>(n)].os_index;
    const rt::memory::binding_counts totals = rt::memory::binding_totals();
    if (arenas.bound(n)) {
      ASSERT_EQ(rc, 0) << std::strerror(errno);
      EXPECT_EQ(mode, MPOL_BIND);
      EXPECT_NE(mask[os / 64] & (1UL << (os % 64)), 0UL);
      std::printf("host node %d (OS %u): bound with MPOL_BIND; %llu extents bound process-wide\n", n, os,
                  static_cast<unsigned long long>(totals.bound_extents));
    } else {
      EXPECT_GT(totals.unbound_extents, 0u) << "not bound, yet no extent was counted unbound";
      if (rc == 0) {
        EXPECT_NE(mode, MPOL_BIND);
      }
      std::printf("host node %d (OS %u): unbound fallback; %llu extents unbound\n", n, os,
                  static_cast<unsigned long long>(totals.unbound_extents));
    }
    node_arenas::free(p);
    EXPECT_EQ(arenas.bytes(n), before);
  }
}

TEST(NodeArena, ConcurrentAllocFreeAcrossNodesLosesNothing) {
  node_arenas arenas(virtual8());
  const int nodes = arenas.node_count();
  std::vector<std::uint64_t> start(static_cast<std::size_t>(nodes));
  for (int n = 0; n < nodes; ++n) start[static_cast<std::size_t>(n)] = arenas.bytes(n);

  constexpr int kThreads = 4;
  constexpr int kOps = 5000;
  constexpr std::size_t kLive = 64;
  struct live {
    void* p;
    int node;
    std::size_t size;
  };
  std::vector<std::vector<live>> kept(kThreads);
  std::vector<int> errors(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(1234 + t));
      const std::size_t sizes[] = {16, 200, 3000, 20 * kKiB, 300 * kKiB};
      std::vector<live> mine;
      for (int i = 0; i < kOps; ++i) {
        if (mine.size() < kLive && (rng() % 3 != 0 || mine.empty())) {
          const int n = static_cast<int>(rng() % static_cast<unsigned>(nodes));
          const std::size_t size = sizes[rng() % 5];
          auto* p = static_cast<unsigned char*>(arenas.alloc(size, n));
          p[0] = static_cast<unsigned char>(n);
          p[size - 1] = static_cast<unsigned char>(n);
          mine.push_back({p, n, size});
        } else {
          const std::size_t k = rng() % mine.size();
          node_arenas::free(mine[k].p);
          mine[k] = mine.back();
          mine.pop_back();
        }
        if (i % 256 == 0) {
          for (const live& l : mine) {
            const auto* b = static_cast<const unsigned char*>(l.p);
            if (node_arenas::node_of(l.p) != l.node || b[0] != l.node || b[l.size - 1] != l.node) ++errors[t];
          }
        }
      }
      kept[static_cast<std::size_t>(t)] = std::move(mine);
    });
  }
  for (auto& th : threads) th.join();
  threads.clear();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], 0) << "thread " << t;
  // Each thread frees what its neighbour kept: cross-thread frees.
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (const live& l : kept[static_cast<std::size_t>((t + 1) % kThreads)]) {
        if (node_arenas::node_of(l.p) != l.node) ++errors[t];
        node_arenas::free(l.p);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], 0) << "thread " << t;
  for (int n = 0; n < nodes; ++n) EXPECT_EQ(arenas.bytes(n), start[static_cast<std::size_t>(n)]) << "node " << n;
}

// What rt::node_allocator does: allocate() -> alloc(n * sizeof(T), node), deallocate() -> free.
template <class T>
struct on_node {
  using value_type = T;
  const node_arenas* arenas;
  int node;
  on_node(const node_arenas* a, int n) noexcept : arenas(a), node(n) {}
  template <class U>
  on_node(const on_node<U>& o) noexcept : arenas(o.arenas), node(o.node) {}
  T* allocate(std::size_t n) { return static_cast<T*>(arenas->alloc(n * sizeof(T), node)); }
  void deallocate(T* p, std::size_t) noexcept { node_arenas::free(p); }
  template <class U>
  friend bool operator==(const on_node& a, const on_node<U>& b) noexcept {
    return a.node == b.node;
  }
};

TEST(NodeArena, VectorWithANodeAllocator) {
  node_arenas arenas(virtual8());
  const std::uint64_t before = arenas.bytes(6);
  {
    std::vector<std::uint64_t, on_node<std::uint64_t>> v(on_node<std::uint64_t>(&arenas, 6));
    for (std::uint64_t i = 0; i < 100000; ++i) v.push_back(i);
    EXPECT_EQ(node_arenas::node_of(v.data()), 6);
    EXPECT_EQ(node_arenas::node_of(&v.back()), 6);
    EXPECT_GE(arenas.bytes(6), before + v.size() * sizeof(std::uint64_t));
    std::uint64_t sum = 0;
    for (std::uint64_t x : v) sum += x;
    EXPECT_EQ(sum, 99999ull * 100000ull / 2);
  }
  EXPECT_EQ(arenas.bytes(6), before);
}

int g_static_int = 0;

TEST(NodeArena, ForeignPointersAreNotNodeMemory) {
  node_arenas arenas(virtual8());  // arenas exist, so the registry is not empty
  void* keep = arenas.alloc(64, 0);
  void* m = std::malloc(100);
  void* big = std::malloc(8 * kMiB);
  int on_stack = 0;
  EXPECT_EQ(node_arenas::node_of(m), -1);
  EXPECT_EQ(node_arenas::node_of(big), -1);
  EXPECT_EQ(node_arenas::node_of(&on_stack), -1);
  EXPECT_EQ(node_arenas::node_of(&g_static_int), -1);
  EXPECT_EQ(node_arenas::node_of(nullptr), -1);
  EXPECT_FALSE(node_arenas::free_if_owned(m));
  EXPECT_FALSE(node_arenas::free_if_owned(nullptr));
  node_arenas::free(nullptr);
  std::free(m);
  std::free(big);
  node_arenas::free(keep);
}

TEST(NodeArena, BadNodeIndexNamesTheNodeAndTheCount) {
  node_arenas arenas(virtual8());
  for (int bad : {8, -1, 1000}) {
    try {
      (void)arenas.alloc(64, bad);
      ADD_FAILURE() << "no exception for node " << bad;
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("node " + std::to_string(bad)), std::string::npos) << what;
      EXPECT_NE(what.find("8 nodes"), std::string::npos) << what;
    }
  }
  EXPECT_THROW((void)arenas.bytes(8), std::invalid_argument);
  EXPECT_THROW((void)arenas.bound(-2), std::invalid_argument);
  EXPECT_THROW((void)arenas.arena(9), std::invalid_argument);
}

TEST(NodeArena, HugeRequestThrowsBadAlloc) {
  node_arenas arenas(virtual8());
  EXPECT_THROW((void)arenas.alloc(std::size_t{1} << 62, 1), std::bad_alloc);
}

TEST(NodeArenaDeathTest, FreeOfForeignMemoryNamesTheInvariant) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  static int not_node_memory = 0;
  EXPECT_DEATH(node_arenas::free(&not_node_memory), "I-MEM-5");
}

TEST(FramePool, MissesComeFromTheNodeArenaAndReturnToIt) {
  node_arenas arenas(virtual8());
  const std::uint64_t before = arenas.bytes(3);
  {
    rt::memory::frame_pool pool(128, arenas.arena(3));
    EXPECT_EQ(pool.arena_node(), 3);
    bool from_pool = true;
    void* a = pool.take(from_pool);
    EXPECT_FALSE(from_pool);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(addr(a) % rt::memory::frame_pool::kFrameAlign, 0u);
    EXPECT_EQ(node_arenas::node_of(a), 3);
    EXPECT_GT(arenas.bytes(3), before);
    pool.give(a);
    void* b = pool.take(from_pool);
    EXPECT_TRUE(from_pool);
    EXPECT_EQ(a, b);
    // A remote give from another thread comes back through the remote list.
    std::thread([&] { pool.give_remote(b); }).join();
    void* c = pool.take(from_pool);
    EXPECT_TRUE(from_pool);
    EXPECT_EQ(c, b);
    pool.give(c);
    pool.trim(0, 0);
    EXPECT_EQ(arenas.bytes(3), before);
    // Oversized frames: allocate_local() from the node arena, allocate() from the process
    // allocator; release() frees both.
    void* big = pool.allocate_local(1000);
    void* outside = rt::memory::frame_pool::allocate(1000);
    EXPECT_EQ(node_arenas::node_of(big), 3);
    EXPECT_EQ(node_arenas::node_of(outside), -1);
    rt::memory::frame_pool::release(big);
    rt::memory::frame_pool::release(outside);
    EXPECT_EQ(arenas.bytes(3), before);
    // Frames left in the pool go back at destruction.
    void* d = pool.take(from_pool);
    pool.give(d);
    EXPECT_GT(arenas.bytes(3), before);
  }
  EXPECT_EQ(arenas.bytes(3), before);
}

// I-POOL-2: another thread's frees of a pool's frames wait in its batch until the batch holds
// `limit` of them, a frame of another pool arrives, or the thread flushes; then they reach the
// pool in one push, and the owner takes every one of them back.
TEST(FramePool, ARemoteBatchReturnsItsFramesInOnePushAtItsLimitOrFlush) {
  node_arenas arenas(virtual8());
  rt::memory::frame_pool a(128, arenas.arena(2));
  rt::memory::frame_pool b(128, arenas.arena(5));
  bool from_pool = true;
  std::vector<void*> frames;
  for (int i = 0; i < 5; ++i) frames.push_back(a.take(from_pool));
  void* other = b.take(from_pool);
  const auto drain = [](rt::memory::frame_pool& p) {
    std::vector<void*> got;
    bool pooled = true;
    for (;;) {
      void* f = p.take(pooled);
      if (!pooled) {
        rt::memory::frame_pool::release(f);
        return got;
      }
      got.push_back(f);
    }
  };
  std::vector<void*> first;
  std::vector<void*> second;
  std::vector<void*> third;
  std::vector<void*> fourth;
  rt::memory::frame_pool::remote_batch batch;
  std::thread([&] {
    batch.add(a, frames[0], 3);
    batch.add(a, frames[1], 3);
  }).join();
  first = drain(a);  // two frames held back: the pool has none of them
  std::thread([&] { batch.add(a, frames[2], 3); }).join();
  second = drain(a);  // the third reached the limit: all three in one push
  std::thread([&] {
    batch.add(a, frames[3], 3);
    batch.add(b, other, 3);  // another pool: a's frame goes back first
  }).join();
  third = drain(a);
  std::thread([&] {
    batch.add(a, frames[4], 3);
    batch.flush();  // b's frame and then a's
  }).join();
  fourth = drain(a);
  const std::vector<void*> from_b = drain(b);
  EXPECT_TRUE(first.empty());
  EXPECT_EQ(second.size(), 3u);
  EXPECT_EQ(third, std::vector<void*>{frames[3]});
  EXPECT_EQ(fourth, std::vector<void*>{frames[4]});
  EXPECT_EQ(from_b, std::vector<void*>{other});
  for (void* f : second) a.give(f);
  for (void* f : third) a.give(f);
  for (void* f : fourth) a.give(f);
  b.give(other);
}

// I-POOL-4's bookkeeping: the pool counts its free frames (those given back locally, and those
// taken whole from the remote list, as their pushes counted them), remembers the fewest it held
// since the last trim(), and trim() keeps the most recently freed frames and frees the rest.
TEST(FramePool, APoolCountsItsFramesAndItsLowWaterAndTrimsDownToTheKept) {
  node_arenas arenas(virtual8());
  const std::uint64_t before = arenas.bytes(4);
  {
    rt::memory::frame_pool pool(128, arenas.arena(4));
    bool from_pool = true;
    std::vector<void*> frames;
    for (int i = 0; i < 10; ++i) frames.push_back(pool.take(from_pool));
    EXPECT_FALSE(from_pool);
    EXPECT_EQ(pool.count(), 0u);
    EXPECT_EQ(pool.low_water(), 0u);
    for (void* f : frames) pool.give(f);
    EXPECT_EQ(pool.count(), 10u);
    EXPECT_EQ(pool.low_water(), 0u) << "the list was empty since the last trim";
    EXPECT_EQ(pool.takes(), 10u) << "takes from the arena count too";
    EXPECT_EQ(pool.trim(8, 0), 2u) << "two to free of ten, no walk allowed: freed from the head";
    EXPECT_EQ(pool.count(), 8u);
    EXPECT_EQ(pool.takes(), 0u) << "a trim starts a new period";
    EXPECT_EQ(pool.take(from_pool), frames[7]) << "frames[9] and frames[8], freed last, went back";
    pool.give(frames[7]);
    EXPECT_EQ(pool.trim(6, 6), 2u) << "six to keep, a walk of six allowed: the walk keeps the head";
    EXPECT_EQ(pool.take(from_pool), frames[7]) << "frames[1] and frames[0], freed first, went back";
    pool.give(frames[7]);
    EXPECT_EQ(pool.trim(4, 0), 2u) << "four to keep of six, no walk allowed: freed from the head";
    EXPECT_EQ(pool.count(), 4u);
    EXPECT_EQ(pool.low_water(), 4u) << "a trim starts a new period at the count it leaves";
    EXPECT_EQ(pool.take(from_pool), frames[5]) << "frames[5] to frames[2] are left";
    EXPECT_TRUE(from_pool);
    EXPECT_EQ(pool.low_water(), 3u);
    pool.give(frames[5]);
    EXPECT_EQ(pool.count(), 4u);
    EXPECT_EQ(pool.low_water(), 3u) << "a give does not raise the low-water mark";
    EXPECT_EQ(pool.trim(10, 0), 0u) << "keeping more than the pool holds frees nothing";
    // Remote frees: a batch of three in one push, and one frame alone, behind four local ones.
    std::vector<void*> remote;
    for (int i = 0; i < 4; ++i) remote.push_back(pool.allocate_local(128));
    std::thread([&] {
      rt::memory::frame_pool::remote_batch batch;
      for (int i = 0; i < 3; ++i) batch.add(pool, remote[static_cast<std::size_t>(i)], 8);
      batch.flush();
      pool.give_remote(remote[3]);
    }).join();
    std::vector<void*> held;
    for (int i = 0; i < 4; ++i) held.push_back(pool.take(from_pool));
    EXPECT_EQ(pool.count(), 0u);
    EXPECT_EQ(pool.low_water(), 0u);
    held.push_back(pool.take(from_pool));  // takes the remote list whole: two pushes, four frames
    EXPECT_TRUE(from_pool);
    EXPECT_EQ(pool.count(), 3u);
    EXPECT_EQ(pool.trim(0, 0), 3u);
    EXPECT_EQ(pool.count(), 0u);
    for (void* f : held) pool.give(f);  // freed with the pool
  }
  EXPECT_EQ(arenas.bytes(4), before) << "every frame, taken or trimmed, went back to the arena";
}

// I-POOL-3: a thread without a pool keeps one standard frame it freed and hands it out next;
// a second frame freed while the slot is full goes back to the process allocator.
TEST(FramePool, AThreadWithoutAPoolKeepsTheLastStandardFrameItFreed) {
  std::thread([] {
    constexpr std::size_t kBytes = 256;
    void* a = rt::memory::frame_pool::take_standard(kBytes);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % rt::memory::frame_pool::kFrameAlign, 0u);
    rt::memory::frame_pool::release_standard(a);
    void* b = rt::memory::frame_pool::take_standard(kBytes);
    EXPECT_EQ(b, a);
    void* c = rt::memory::frame_pool::take_standard(kBytes);  // the slot is empty: a new frame
    EXPECT_NE(c, b);
    rt::memory::frame_pool::release_standard(b);
    rt::memory::frame_pool::release_standard(c);  // the slot holds b: c is freed
    EXPECT_EQ(rt::memory::frame_pool::take_standard(kBytes), b);
    rt::memory::frame_pool::release_standard(b);  // kept until the thread exits
  }).join();
}

// I-POOL-3 at thread exit: a thread_local built before the slot's guard is destroyed after it,
// and a frame it releases then goes to the allocator (the slot is closed), not into a slot
// whose guard already ran. Under the sanitizer builds a frame freed twice, or one left behind,
// fails this test.
TEST(FramePool, AFrameReleasedAfterTheSlotClosedGoesToTheAllocator) {
  std::thread([] {
    struct late_release {
      void* frame = nullptr;
      late_release() = default;
      late_release(const late_release&) = delete;
      late_release& operator=(const late_release&) = delete;
      ~late_release() {
        if (frame != nullptr) rt::memory::frame_pool::release_standard(frame);
      }
    };
    thread_local late_release late;  // built first: destroyed after the slot's guard
    void* kept = rt::memory::frame_pool::take_standard(256);
    rt::memory::frame_pool::release_standard(kept);  // builds the guard, keeps the frame
    late.frame = rt::memory::frame_pool::take_standard(256);
    EXPECT_EQ(late.frame, kept);
    late.frame = rt::memory::frame_pool::take_standard(256);  // a second frame, held to the end
    rt::memory::frame_pool::release_standard(kept);
  }).join();
}

}  // namespace
