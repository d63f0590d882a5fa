// A first numart program: fork-join with join handles and task groups, a parallel_for, an
// affinity group, and the counters the runtime kept while doing it.
//   numart_example_fork_join [n]      (RT_TOPOLOGY, RT_WORKERS, RT_TUNE are honoured)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <vector>

#include "rt/rt.hpp"

namespace {

long fib(int n) {
  if (n < 2) return n;
  auto left = rt::spawn([n] { return fib(n - 1); });
  long right = fib(n - 2);
  return left.join() + right;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const int n = argc > 1 ? std::atoi(argv[1]) : 30;
    if (n < 0 || n > 45) {
      std::fprintf(stderr, "usage: %s [n in 0..45]\n", argv[0]);
      return 2;
    }
    rt::runtime runtime{rt::config::from_env()};
    std::printf("numart: %d workers, %d NUMA node(s)%s\n", runtime.workers(), runtime.nodes(),
                runtime.virtual_topology() ? " (virtual topology: scheduling only, no real binding)" : "");

    auto t0 = std::chrono::steady_clock::now();
    long f = runtime.spawn([n] { return fib(n); }).join();
    auto t1 = std::chrono::steady_clock::now();
    std::printf("fib(%d) = %ld in %.1f ms\n", n, f, std::chrono::duration<double, std::milli>(t1 - t0).count());

    std::vector<double> v(1 << 20);
    runtime.spawn([&v] { rt::parallel_for(0, v.size(), [&v](std::size_t i) { v[i] = static_cast<double>(i) * 0.5; }); })
        .join();
    std::printf("parallel_for over %zu elements: v[last] = %.1f\n", v.size(), v.back());

    rt::group jvm{runtime, "jvm-1"};
    long sum = 0;
    for (int i = 0; i < 8; ++i) sum += runtime.spawn(jvm, [i] { return static_cast<long>(i); }).join();
    std::printf("group '%s': sum %ld, home worker %d (node %d)\n", jvm.name().c_str(), sum, jvm.home_worker(),
                jvm.home_node().value);

    runtime.shutdown();
    std::printf("\ncounters:\n");
    runtime.stats().print(std::cout);
    return 0;
  } catch (const rt::config_error& e) {
    std::fprintf(stderr, "numart: %s\n", e.what());
    return 2;
  }
}
