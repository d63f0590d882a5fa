// The ledger: every spawned task runs exactly once (DESIGN.md §8). Random trees of tasks,
// spawned from workers (join handles and task groups) and from 4 outside threads at once.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "rt/rt.hpp"

namespace {

struct ledger {
  explicit ledger(std::size_t n) : runs(n) {}
  std::vector<std::atomic<std::uint8_t>> runs;
  std::atomic<std::uint64_t> next{0};
  // Claims an id for a new task, or returns false when the budget is spent.
  bool claim(std::uint64_t& id) {
    id = next.fetch_add(1, std::memory_order_relaxed);
    return id < runs.size();
  }
  void ran(std::uint64_t id) { runs[id].fetch_add(1, std::memory_order_relaxed); }
};

// A task that records itself and spawns 0-3 children (none below kMaxDepth), by handle or by
// task_group at random. The depth bound keeps the trees like real fork-join code: without it a
// supercritical random tree explored depth-first is as deep as the budget is large.
constexpr int kMaxDepth = 24;
void node_task(ledger& l, std::uint64_t id, std::uint64_t seed, int depth) {
  l.ran(id);
  std::uint64_t state = seed;
  auto rng = [&state] {  // splitmix64: cheap, so the ledger measures the runtime, not the RNG
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  int kids = depth >= kMaxDepth ? 0 : static_cast<int>(rng() % 4);
  if (rng() % 2 == 0) {
    std::vector<rt::join_handle<void>> hs;
    for (int k = 0; k < kids; ++k) {
      std::uint64_t cid;
      if (!l.claim(cid)) break;
      std::uint64_t s = rng();
      hs.push_back(rt::spawn([&l, cid, s, depth] { node_task(l, cid, s, depth + 1); }));
    }
    for (auto& h : hs) h.join();
  } else {
    rt::task_group g;
    for (int k = 0; k < kids; ++k) {
      std::uint64_t cid;
      if (!l.claim(cid)) break;
      std::uint64_t s = rng();
      g.spawn([&l, cid, s, depth] { node_task(l, cid, s, depth + 1); });
    }
    g.wait();
  }
}

void run_ledger(const rt::config& cfg, std::size_t total) {
  auto l = std::make_unique<ledger>(total);
  {
    rt::runtime r{cfg};
    std::vector<std::thread> outside;
    for (int t = 0; t < 4; ++t) {
      outside.emplace_back([&r, &l, t] {
        std::mt19937_64 rng(static_cast<std::uint64_t>(t) * 7919u + 1u);
        std::vector<rt::join_handle<void>> roots;
        std::uint64_t id;
        while (l->claim(id)) {
          std::uint64_t s = rng();
          roots.push_back(r.spawn([&l, id, s] { node_task(*l, id, s, 0); }));
          if (roots.size() >= 64) {
            for (auto& h : roots) h.join();
            roots.clear();
          }
        }
        for (auto& h : roots) h.join();
      });
    }
    for (auto& t : outside) t.join();
    rt::stats s = r.stats();
    EXPECT_GT(s.total("tasks_run"), 0u);
  }
  std::size_t lost = 0, duplicated = 0;
  for (auto& c : l->runs) {
    lost += c.load() == 0;
    duplicated += c.load() > 1;
  }
  EXPECT_EQ(lost, 0u);
  EXPECT_EQ(duplicated, 0u);
}

TEST(Ledger, MillionTasksOnTwoRealWorkers) {
  rt::config c;
  c.workers = 2;
  run_ledger(c, 1000000);
}

TEST(Ledger, MillionTasksOn64VirtualWorkersOverTwoCores) {
  rt::config c;
  c.topology = rt::topology_source::synthetic("pack:4 group:2 [numa] core:8 pu:1",
                                              {10, 16, 16, 22, 16, 22, 22, 22,  //
                                               16, 10, 22, 16, 22, 16, 22, 22,  //
                                               16, 22, 10, 16, 22, 22, 16, 22,  //
                                               22, 16, 16, 10, 22, 22, 22, 16,  //
                                               16, 22, 22, 22, 10, 16, 16, 22,  //
                                               22, 16, 22, 22, 16, 10, 22, 16,  //
                                               22, 22, 16, 22, 16, 22, 10, 16,  //
                                               22, 22, 22, 16, 22, 16, 16, 10});
  rt::runtime probe{c};
  EXPECT_EQ(probe.workers(), 64);
  probe.shutdown();
  run_ledger(c, 1000000);
}

TEST(Ledger, ShutdownDuringASpawnStormLosesNothing) {
  for (int round = 0; round < 5; ++round) {
    std::atomic<std::uint64_t> accepted{0}, ran{0}, refused{0};
    auto r = std::make_unique<rt::runtime>([] {
      rt::config c;
      c.workers = 2;
      return c;
    }());
    // Each spawner spawns until the runtime refuses it: every one ends with exactly one
    // rt::runtime_stopped, whatever the interleaving (a spawner starved until after shutdown
    // is refused on its first try).
    std::vector<std::thread> spawners;
    for (int t = 0; t < 4; ++t) {
      spawners.emplace_back([&] {
        for (;;) {
          try {
            (void)r->spawn([&ran] { ran.fetch_add(1); });
            accepted.fetch_add(1);
          } catch (const rt::runtime_stopped&) {
            refused.fetch_add(1);
            return;
          }
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + 10 * round));
    r->shutdown();
    for (auto& t : spawners) t.join();
    EXPECT_EQ(ran.load(), accepted.load()) << "round " << round;
    EXPECT_EQ(refused.load(), 4u);
    r.reset();
  }
}

}  // namespace
