// I-BAL-8: the NUMA balancer's thread survives passes that cannot allocate. This binary
// replaces the global unaligned operator new family; while `g_refuse` is set it throws
// std::bad_alloc on the thread named "<runtime>-bal" (every other thread, and that one
// otherwise, gets malloc; over-aligned allocations keep the library's operator new).
#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <thread>

#include "rt/numa.hpp"
#include "rt/rt.hpp"

namespace {

// Written by the test's main thread, read by every allocation (relaxed: a switch, the test
// polls the counters for its effect).
std::atomic<bool> g_refuse{false};
// Incremented by the refused allocations on the balancer's thread, read by the main thread.
std::atomic<std::uint64_t> g_refused{0};

// Read once per thread: the balancer names its thread before its first allocation there.
bool on_balancer_thread() noexcept {
  thread_local const bool is = [] {
    char name[16] = {};
    if (pthread_getname_np(pthread_self(), name, sizeof name) != 0) return false;
    const std::size_t n = std::strlen(name);
    return n >= 4 && std::strcmp(name + n - 4, "-bal") == 0;
  }();
  return is;
}

void* allocate(std::size_t n) {
  if (g_refuse.load(std::memory_order_relaxed) && on_balancer_thread()) {
    g_refused.fetch_add(1, std::memory_order_relaxed);
    throw std::bad_alloc();
  }
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}

}  // namespace

// The whole unaligned family, so that every delete meets the allocator of its new (the
// sanitizers check); the aligned family stays the library's, new and delete alike.
void* operator new(std::size_t n) { return allocate(n); }
void* operator new[](std::size_t n) { return allocate(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return allocate(n);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

std::uint64_t total(const rt::runtime& r, const char* counter) { return r.stats().total(counter); }

// Polls `pred` every 2 ms for up to 60 s (a sanitizer build on a loaded machine is slow).
template <class P>
bool within_a_minute(P pred) {
  for (int i = 0; i < 30000; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

// Two virtual nodes, one worker each, and a balancer period of 1-2 ms; `tune` adds to it.
rt::config fast_balancer(const std::string& tune) {
  rt::config c;
  c.name = "allocfail";
  c.topology = rt::topology_source::synthetic("pack:2 [numa] core:1 pu:1");
  c.tune = "numa_scan_period_min_ms=1,numa_scan_period_max_ms=2" + tune;
  return c;
}

TEST(BalancerAllocation, PassesThatCannotAllocateAreSkippedAndTheBalancerLivesOn) {
  rt::runtime r{fast_balancer("")};
  rt::group g{r, "g"};
  ASSERT_TRUE(within_a_minute([&] { return total(r, "numa_passes") >= 3; })) << "the balancer never ran";

  const std::uint64_t skipped = total(r, "numa_periods_skipped");
  g_refuse.store(true);
  const bool refused = within_a_minute(
      [&] { return g_refused.load() >= 5 && total(r, "numa_periods_skipped") >= skipped + 5; });
  const std::uint64_t passes = total(r, "numa_passes");
  g_refuse.store(false);
  EXPECT_TRUE(refused) << g_refused.load() << " allocations refused, "
                       << total(r, "numa_periods_skipped") - skipped << " periods skipped";
  EXPECT_TRUE(within_a_minute([&] { return total(r, "numa_passes") >= passes + 3; }))
      << "the balancer made no pass after its allocations succeeded again";
  // And the runtime around it works: a group's tasks run and join.
  int sum = 0;
  for (int i = 0; i < 100; ++i) sum += r.spawn(g, [i] { return i; }).join();
  EXPECT_EQ(sum, 4950);
}

// What a failed pass must not repeat (I-BAL-8): every sample the rings hold is drained and
// counted once. Explicit samples (FAULT_SAMPLING off) of a group whose memory is on node 1,
// taken while every allocation on the balancer's thread fails: the filter's page table cannot
// grow (note_sample catches that, so the ring's batch is not drained again) and every pass
// after the drain is abandoned. Once allocations succeed again, the group's sample count and
// the drained-samples counter both equal the samples taken, none dropped.
TEST(BalancerAllocation, SamplesDrainedByFailingPassesAreCountedOnce) {
  constexpr int kTasks = 40;
  constexpr int kSamplesPerTask = 50;  // 2000 in all, under one ring's capacity
  constexpr std::size_t kBytes = 64 * 4096;
  rt::runtime r{fast_balancer(",NO_FAULT_SAMPLING")};
  rt::group g{r, "g"};
  char* data = nullptr;
  r.spawn([&] { data = static_cast<char*>(rt::numa_alloc(kBytes, rt::node_id{1})); }).join();
  ASSERT_NE(data, nullptr);
  rt::register_region(g, data, kBytes);
  ASSERT_TRUE(within_a_minute([&] { return total(r, "numa_passes") >= 3; })) << "the balancer never ran";

  const std::uint64_t skipped = total(r, "numa_periods_skipped");
  const std::uint64_t drained_before = total(r, "numa_samples");
  g_refuse.store(true);
  for (int t = 0; t < kTasks; ++t) {
    r.spawn(g, [data, t] {
       for (int i = 0; i < kSamplesPerTask; ++i)
         rt::note_access(data + static_cast<std::size_t>((t * kSamplesPerTask + i) % 64) * 4096);
     }).join();
  }
  const bool refused = within_a_minute([&] {
    return total(r, "numa_samples") - drained_before == kTasks * kSamplesPerTask &&
           total(r, "numa_periods_skipped") >= skipped + 3;
  });
  g_refuse.store(false);
  EXPECT_TRUE(refused) << total(r, "numa_samples") - drained_before << " samples drained, "
                       << total(r, "numa_periods_skipped") - skipped << " periods skipped while refusing";
  const std::uint64_t passes = total(r, "numa_passes");
  EXPECT_TRUE(within_a_minute([&] { return total(r, "numa_passes") >= passes + 3; }))
      << "the balancer made no pass after its allocations succeeded again";
  const rt::stats st = r.stats();
  EXPECT_EQ(st.total("numa_samples") - drained_before, std::uint64_t{kTasks * kSamplesPerTask});
  EXPECT_EQ(st.total("numa_samples_dropped"), 0u);
  std::uint64_t group_samples = 0;
  for (const auto& row : st.groups)
    if (row.name == "g") group_samples = row.samples;
  EXPECT_EQ(group_samples, std::uint64_t{kTasks * kSamplesPerTask}) << "a sample was counted twice or lost";
  rt::unregister_region(g, data);
  rt::numa_free(data);
}

}  // namespace
