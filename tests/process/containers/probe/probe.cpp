// numart_container_probe: starts an rt::runtime from the environment (rt::config::from_env())
// and prints, one JSON object per line, what the containers test checks:
//   {"allowed":[cpus]}                           the process's affinity at start
//   {"workers":N}
//   {"worker":i,"cpu":c,"affinity":[cpus]}       for each worker i: the CPU one of its tasks
//                                                ran on and the worker thread's affinity mask
//   {"idle_cpu_us":t,"idle_window_us":w}         CPU time the process used while the runtime
//                                                sat idle for w microseconds
// Exit 0 on success; 1 with one line on stderr when the runtime cannot start or a worker never
// ran a task (no hang: every wait is bounded).
#include <sched.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "rt/rt.hpp"

namespace {

std::string cpu_list(const cpu_set_t& set) {
  std::string s = "[";
  bool first = true;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    s += (first ? "" : ",") + std::to_string(c);
    first = false;
  }
  return s + "]";
}

std::int64_t process_cpu_us() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return (static_cast<std::int64_t>(u.ru_utime.tv_sec) + u.ru_stime.tv_sec) * 1000000 + u.ru_utime.tv_usec +
         u.ru_stime.tv_usec;
}

struct sighting {
  std::atomic<bool> seen{false};
  int cpu = -1;
  cpu_set_t affinity{};
};

int run() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    std::fprintf(stderr, "numart_container_probe: sched_getaffinity failed\n");
    return 1;
  }
  std::printf("{\"allowed\":%s}\n", cpu_list(allowed).c_str());

  rt::runtime r{rt::config::from_env()};
  const int n = r.workers();
  std::printf("{\"workers\":%d}\n", n);

  // One task per worker: each records where it runs, then holds its worker until every worker
  // has been seen (so that no worker can take two of them), or until the deadline.
  std::vector<sighting> seen(static_cast<std::size_t>(n));
  std::atomic<int> distinct{0};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::vector<rt::join_handle<void>> hs;
  for (int i = 0; i < n; ++i) {
    hs.push_back(r.spawn([&] {
      const int w = rt::runtime::current_worker();
      if (w >= 0 && w < n) {
        sighting& s = seen[static_cast<std::size_t>(w)];
        if (!s.seen.load()) {
          s.cpu = ::sched_getcpu();
          CPU_ZERO(&s.affinity);
          ::sched_getaffinity(0, sizeof s.affinity, &s.affinity);
          s.seen.store(true);
          distinct.fetch_add(1);
        }
      }
      while (distinct.load() < n && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    }));
  }
  for (auto& h : hs) h.join();
  if (distinct.load() < n) {
    std::fprintf(stderr, "numart_container_probe: only %d of %d workers ran a task within 10 s\n", distinct.load(), n);
    return 1;
  }
  for (int i = 0; i < n; ++i) {
    const sighting& s = seen[static_cast<std::size_t>(i)];
    std::printf("{\"worker\":%d,\"cpu\":%d,\"affinity\":%s}\n", i, s.cpu, cpu_list(s.affinity).c_str());
  }

  // Idle: let the workers finish searching and park, then measure.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto t0 = std::chrono::steady_clock::now();
  const std::int64_t c0 = process_cpu_us();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::int64_t c1 = process_cpu_us();
  const auto window = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0);
  std::printf("{\"idle_cpu_us\":%lld,\"idle_window_us\":%lld}\n", static_cast<long long>(c1 - c0),
              static_cast<long long>(window.count()));
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "numart_container_probe: %s\n", e.what());
    return 1;
  }
}
