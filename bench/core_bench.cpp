// Core runtime benchmarks (issue 3): fib(30) fork-join, one million empty spawns from one
// worker, parallel_for over 10^7 trivial iterations, wake latency from an idle pool, CPU burnt
// by an idle pool. numart and oneTBB alternate round by round in this one process.
#include <sys/resource.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "rt/rt.hpp"

namespace {

using clk = std::chrono::steady_clock;

rt::runtime* g_rt = nullptr;
tbb::task_arena* g_arena = nullptr;
int g_fib_n = 30;

// ---- fib ---------------------------------------------------------------------------------
long fib_numart_handle(int n) {
  if (n < 2) return n;
  auto h = rt::spawn([n] { return fib_numart_handle(n - 1); });
  long b = fib_numart_handle(n - 2);
  return h.join() + b;
}
long fib_numart_group(int n) {
  if (n < 2) return n;
  long a = 0;
  rt::task_group g;
  g.spawn([&a, n] { a = fib_numart_group(n - 1); });
  long b = fib_numart_group(n - 2);
  g.wait();
  return a + b;
}
long fib_tbb(int n) {
  if (n < 2) return n;
  long a = 0;
  tbb::task_group g;
  g.run([&a, n] { a = fib_tbb(n - 1); });
  long b = fib_tbb(n - 2);
  g.wait();
  return a + b;
}

void check(long got, long want, benchmark::State& st) {
  if (got != want) st.SkipWithError("wrong result");
}

const long kFib30 = 832040;

void bm_fib_numart(benchmark::State& st) {
  for (auto _ : st) check(g_rt->spawn([] { return fib_numart_handle(g_fib_n); }).join(), kFib30, st);
}
void bm_fib_numart_group(benchmark::State& st) {
  for (auto _ : st) check(g_rt->spawn([] { return fib_numart_group(g_fib_n); }).join(), kFib30, st);
}
void bm_fib_tbb(benchmark::State& st) {
  for (auto _ : st) {
    long r = 0;
    g_arena->execute([&] { r = fib_tbb(g_fib_n); });
    check(r, kFib30, st);
  }
}

// ---- empty spawns: one million from one worker, then wait --------------------------------
constexpr int kEmpty = 1000000;
void bm_empty_numart(benchmark::State& st) {
  for (auto _ : st) {
    g_rt->spawn([] {
          rt::task_group g;
          for (int i = 0; i < kEmpty; ++i) g.spawn([] {});
          g.wait();
        })
        .join();
  }
}
void bm_empty_tbb(benchmark::State& st) {
  for (auto _ : st) {
    g_arena->execute([] {
      tbb::task_group g;
      for (int i = 0; i < kEmpty; ++i) g.run([] {});
      g.wait();
    });
  }
}

// ---- parallel_for over 10^7 trivial iterations ------------------------------------------
constexpr std::size_t kPf = 10000000;
std::vector<std::uint8_t> g_pf(kPf);
void bm_pf_numart(benchmark::State& st) {
  for (auto _ : st) {
    g_rt->spawn([] { rt::parallel_for(0, kPf, [](std::size_t i) { g_pf[i] = static_cast<std::uint8_t>(i); }); })
        .join();
  }
}
void bm_pf_tbb(benchmark::State& st) {
  for (auto _ : st) {
    g_arena->execute([] {
      tbb::parallel_for(std::size_t{0}, kPf, [](std::size_t i) { g_pf[i] = static_cast<std::uint8_t>(i); });
    });
  }
}

// ---- wake latency: spawn from an outside thread into an idle pool -> task start ----------
constexpr int kWakeSamples = 1000;
double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}
void report_latency(benchmark::State& st, std::vector<double>& us) {
  st.counters["p50_us"] = percentile(us, 0.50);
  st.counters["p99_us"] = percentile(us, 0.99);
  st.counters["p999_us"] = percentile(us, 0.999);
}
// The pool is idle when the spawn happens: each sample waits 2 ms after the previous task so
// that the workers have gone through their search rounds and parked (TBB's likewise sleep).
void bm_wake_numart(benchmark::State& st) {
  std::vector<double> us;
  for (auto _ : st) {
    us.clear();
    for (int i = 0; i < kWakeSamples; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      std::atomic<long> started{0};
      auto t0 = clk::now();
      auto h = g_rt->spawn([&started] { started.store(clk::now().time_since_epoch().count()); });
      h.join();
      us.push_back(static_cast<double>(started.load() - t0.time_since_epoch().count()) / 1e3);
    }
  }
  report_latency(st, us);
}
void bm_wake_tbb(benchmark::State& st) {
  std::vector<double> us;
  for (auto _ : st) {
    us.clear();
    for (int i = 0; i < kWakeSamples; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      std::atomic<long> started{0};
      auto t0 = clk::now();
      g_arena->enqueue([&started] { started.store(clk::now().time_since_epoch().count()); });
      while (started.load() == 0) std::this_thread::yield();
      us.push_back(static_cast<double>(started.load() - t0.time_since_epoch().count()) / 1e3);
    }
  }
  report_latency(st, us);
}

// ---- CPU burnt by an idle pool: process CPU time over 200 ms, 100 ms after the last task ----
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}
template <class Work>
void idle_cpu(benchmark::State& st, Work work) {
  double cores = 0;
  for (auto _ : st) {
    work();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    double c0 = cpu_seconds();
    auto t0 = clk::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cores = (cpu_seconds() - c0) / std::chrono::duration<double>(clk::now() - t0).count();
  }
  st.counters["idle_cores"] = cores;
}
void bm_idle_numart(benchmark::State& st) {
  idle_cpu(st, [] { g_rt->spawn([] { return fib_numart_handle(20); }).join(); });
}
void bm_idle_tbb(benchmark::State& st) {
  idle_cpu(st, [] { g_arena->execute([] { return fib_tbb(20); }); });
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  rt::config cfg = rt::config::from_env();
  rt::runtime runtime{cfg};
  tbb::task_arena arena;  // the default arena: one slot per hardware thread
  arena.initialize();
  g_rt = &runtime;
  g_arena = &arena;
  std::printf("numart: %d workers on %s; oneTBB default arena: %d threads\n", runtime.workers(),
              runtime.stats().topology.c_str(), arena.max_concurrency());
  const int rounds = 5;
  bench::register_side_by_side("fib30", {{"numart", bm_fib_numart}, {"onetbb", bm_fib_tbb}}, rounds, 3);
  bench::register_side_by_side("fib30_task_group", {{"numart", bm_fib_numart_group}, {"onetbb", bm_fib_tbb}}, rounds,
                               3);
  bench::register_side_by_side("empty_spawn_1M", {{"numart", bm_empty_numart}, {"onetbb", bm_empty_tbb}}, rounds, 2);
  bench::register_side_by_side("parallel_for_1e7", {{"numart", bm_pf_numart}, {"onetbb", bm_pf_tbb}}, rounds, 3);
  bench::register_side_by_side("wake_latency", {{"numart", bm_wake_numart}, {"onetbb", bm_wake_tbb}}, 2, 1);
  bench::register_side_by_side("idle_cpu", {{"numart", bm_idle_numart}, {"onetbb", bm_idle_tbb}}, 2, 1);
  bench::collecting_reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  bench::print_summary(stdout);
  benchmark::Shutdown();
  return 0;
}
