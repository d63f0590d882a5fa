// An idle pool burns no CPU; small closures are not allocated.
#include <gtest/gtest.h>
#include <jemalloc/jemalloc.h>
#include <sys/resource.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <cstdint>
#include <cstdlib>
#include <thread>

#include "rt/rt.hpp"

namespace {

double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// Worker threads (named "numart-N") whose state in /proc is S (sleeping).
int sleeping_workers() {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(e.path() / "comm");
    std::string name;
    std::getline(comm, name);
    if (name.rfind("numart-", 0) != 0) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    std::getline(stat, line);
    auto close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'S') ++n;
  }
  return n;
}

// The pool parks: after the last task, the workers all register as sleepers, and the process
// uses (almost) no CPU while it sits idle for 200 ms. The bound (5% of a core) is the issue's
// figure; an idle pool that spins uses 100-200%, so noise cannot flip this either way.
TEST(Idle, AnIdlePoolParksAndBurnsNoCpu) {
  rt::config c;
  c.workers = 2;
  rt::runtime r{c};
  for (int i = 0; i < 1000; ++i) (void)r.spawn([] {});
  auto h = r.spawn([] { return 1; });
  EXPECT_EQ(h.join(), 1);
  // Wait until every worker thread sleeps in the kernel (a liveness wait: it ends as soon as
  // they do; slow sanitizer builds need longer than the 100 ms the benchmark allows).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (sleeping_workers() < r.workers() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(sleeping_workers(), r.workers());
  const std::uint64_t parks_before = r.stats().total("parks");
  const double before = process_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const double used = process_cpu_seconds() - before;
  EXPECT_LT(used, 0.2 * 0.05) << "CPU seconds used by an idle pool in 200 ms";
  EXPECT_EQ(r.stats().total("parks"), parks_before) << "parked workers woke up while nothing happened";
}

std::uint64_t thread_allocated_bytes() {
  std::uint64_t v = 0;
  std::size_t len = sizeof(v);
  mallctl("thread.allocated", &v, &len, nullptr, 0);
  return v;
}

// Whether jemalloc counts this thread's allocations: sanitizer builds interpose malloc, and
// jemalloc then allocates nothing and counts nothing.
bool jemalloc_counts() {
  static void* volatile probe = nullptr;  // volatile: the malloc/free pair must not be elided
  const std::uint64_t before = thread_allocated_bytes();
  probe = std::malloc(4096);
  const bool counts = thread_allocated_bytes() > before;
  std::free(probe);
  return counts;
}

// Closures of up to 48 bytes live inline in pooled frames: once the pool is warm, spawning and
// joining allocates nothing on the spawning worker (jemalloc's per-thread byte counter).
TEST(Allocation, SmallClosuresDoNotAllocate) {
  if (!jemalloc_counts()) GTEST_SKIP() << "the process allocator is not jemalloc (sanitizer build)";
  rt::config c;
  c.workers = 1;
  rt::runtime r{c};
  auto h = r.spawn([] {
    struct forty_eight {
      char b[48];
    } blob{};
    blob.b[47] = 1;
    long sum = 0;
    for (int i = 0; i < 100; ++i) sum += rt::spawn([blob] { return blob.b[47]; }).join();  // warm-up
    const std::uint64_t before = thread_allocated_bytes();
    for (int i = 0; i < 10000; ++i) sum += rt::spawn([blob] { return blob.b[47]; }).join();
    const std::uint64_t after = thread_allocated_bytes();
    return std::pair<long, std::uint64_t>(sum, after - before);
  });
  auto [sum, bytes] = h.join();
  EXPECT_EQ(sum, 10100);
  EXPECT_EQ(bytes, 0u);
  // A closure larger than the pooled payload is allocated: the counter does move.
  auto big = r.spawn([] {
    struct big_closure {
      char b[256];
    } blob{};
    const std::uint64_t before = thread_allocated_bytes();
    for (int i = 0; i < 100; ++i) rt::spawn([blob] { return blob.b[0]; }).join();
    return thread_allocated_bytes() - before;
  });
  EXPECT_GT(big.join(), 0u);
}

// I-POOL-3: an outside thread has no pool, but it keeps the standard frame it freed last. A
// joined handle's frame is freed by its joiner (join() returns after the task is done), so a
// spawn-and-join loop from outside allocates at most one frame, its first.
TEST(Allocation, AnOutsideThreadsSpawnJoinLoopReusesItsFrame) {
  if (!jemalloc_counts()) GTEST_SKIP() << "the process allocator is not jemalloc (sanitizer build)";
  rt::config c;
  c.workers = 1;
  rt::runtime r{c};
  struct forty_eight {
    char b[48];
  } blob{};
  blob.b[47] = 1;
  long sum = 0;
  const std::uint64_t before = thread_allocated_bytes();
  for (int i = 0; i < 1000; ++i) sum += r.spawn([blob] { return blob.b[47]; }).join();
  const std::uint64_t after = thread_allocated_bytes();
  EXPECT_EQ(sum, 1000);
  EXPECT_LE(after - before, 1024u);  // one frame (the first spawn's) at most, not a thousand
  // A closure larger than the standard payload is allocated every time.
  struct big_closure {
    char b[256];
  } big{};
  const std::uint64_t big_before = thread_allocated_bytes();
  for (int i = 0; i < 100; ++i) r.spawn([big] { return big.b[0]; }).join();
  EXPECT_GE(thread_allocated_bytes() - big_before, 100u * sizeof(big_closure));
}

}  // namespace
