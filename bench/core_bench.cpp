// Core runtime benchmarks (issue 3): fib(30) fork-join, one million empty spawns from one
// worker, parallel_for over 10^7 trivial iterations, N-queens by recursive fork-join, wake
// latency from an idle pool, CPU burnt by an idle pool. numart and oneTBB alternate round by
// round in this one process.
//
//   numart_bench_core [--quick] [--nqueens=N] [--benchmark_filter=REGEX ...]
//     --nqueens=N: the N-queens board size, one of 8, 10, 11, 12, 13 (default 13)
//   NUMART_BENCH_QUICK=1 numart_bench_core       (the same as --quick: fewer rounds and samples)
//   NUMART_BENCH_JSON=PATH numart_bench_core     (also writes every result to PATH: harness.hpp)
// Exit status: 0, or 1 when a round failed its result check (or the JSON could not be written),
// 2 for bad arguments.
#include <sys/resource.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
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

// ---- N-queens: solutions counted by recursive fork-join --------------------------------
// A partial board as bitmasks over the N columns (bit c = column c): columns taken and the
// squares of the next row attacked along either diagonal. Row by row, each free square of the
// next row is a child; the top kQueensSpawnDepth rows spawn one task per child and the rows
// below run sequentially in the task. Counted for this cutoff: N = 11, 12, 13 spawn 637, 878,
// 1175 tasks whose sequential subtrees have 146-549, 519-1931, 1871-7492 nodes: enough tasks
// to keep every worker busy, each still large against the cost of a spawn.
struct board {
  std::uint32_t all;   // N low bits set
  std::uint32_t cols;  // columns holding a queen
  std::uint32_t left;  // next row's squares attacked along down-left diagonals
  std::uint32_t right; // next row's squares attacked along down-right diagonals
  std::uint32_t free_squares() const { return all & ~(cols | left | right); }
  board place(std::uint32_t bit) const {
    return {all, cols | bit, ((left | bit) << 1) & all, (right | bit) >> 1};
  }
};
constexpr int kQueensSpawnDepth = 3;
constexpr int kMaxQueens = 13;

// The published counts (OEIS A000170) for the board sizes this benchmark accepts.
long queens_known(int n) {
  switch (n) {
    case 8: return 92;
    case 10: return 724;
    case 11: return 2680;
    case 12: return 14200;
    case 13: return 73712;
    default: return -1;
  }
}

long queens_seq(const board& b) {
  if (b.cols == b.all) return 1;
  long count = 0;
  for (std::uint32_t avail = b.free_squares(); avail != 0; avail &= avail - 1)
    count += queens_seq(b.place(avail & (~avail + 1)));
  return count;
}

long queens_numart(const board& b, int depth) {
  if (depth >= kQueensSpawnDepth) return queens_seq(b);
  std::array<long, kMaxQueens> part{};
  std::size_t children = 0;
  rt::task_group g;
  for (std::uint32_t avail = b.free_squares(); avail != 0; avail &= avail - 1) {
    long* out = &part[children++];
    const board c = b.place(avail & (~avail + 1));
    g.spawn([c, out, depth] { *out = queens_numart(c, depth + 1); });
  }
  g.wait();
  long sum = 0;
  for (std::size_t i = 0; i < children; ++i) sum += part[i];
  return sum;
}

long queens_tbb(const board& b, int depth) {
  if (depth >= kQueensSpawnDepth) return queens_seq(b);
  std::array<long, kMaxQueens> part{};
  std::size_t children = 0;
  tbb::task_group g;
  for (std::uint32_t avail = b.free_squares(); avail != 0; avail &= avail - 1) {
    long* out = &part[children++];
    const board c = b.place(avail & (~avail + 1));
    g.run([c, out, depth] { *out = queens_tbb(c, depth + 1); });
  }
  g.wait();
  long sum = 0;
  for (std::size_t i = 0; i < children; ++i) sum += part[i];
  return sum;
}

int g_queens_n = 13;
board queens_empty_board() { return {(std::uint32_t{1} << g_queens_n) - 1, 0, 0, 0}; }

void check_queens(long got, benchmark::State& st) {
  if (got == queens_known(g_queens_n)) return;
  const std::string why = "nqueens(" + std::to_string(g_queens_n) + ") counted " + std::to_string(got) +
                          " solutions, expected " + std::to_string(queens_known(g_queens_n));
  std::fprintf(stderr, "numart_bench_core: %s\n", why.c_str());
  st.SkipWithError(why.c_str());
}
void bm_queens_numart(benchmark::State& st) {
  for (auto _ : st) check_queens(g_rt->spawn([] { return queens_numart(queens_empty_board(), 0); }).join(), st);
}
void bm_queens_tbb(benchmark::State& st) {
  for (auto _ : st) {
    long r = 0;
    g_arena->execute([&] { r = queens_tbb(queens_empty_board(), 0); });
    check_queens(r, st);
  }
}

// ---- wake latency: spawn from an outside thread into an idle pool -> task start ----------
int g_wake_samples = 1000;
// The pool is idle when the spawn happens: each sample waits 2 ms after the previous task so
// that the workers have gone through their search rounds and parked (TBB's likewise sleep).
// The sides take their samples in pairs, in alternating order (register_interleaved).
double wake_sample_numart() {
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  std::atomic<long> started{0};
  auto t0 = clk::now();
  auto h = g_rt->spawn([&started] { started.store(clk::now().time_since_epoch().count()); });
  h.join();
  return static_cast<double>(started.load() - t0.time_since_epoch().count()) / 1e3;
}
double wake_sample_tbb() {
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  std::atomic<long> started{0};
  auto t0 = clk::now();
  g_arena->enqueue([&started] { started.store(clk::now().time_since_epoch().count()); });
  while (started.load() == 0) std::this_thread::yield();
  return static_cast<double>(started.load() - t0.time_since_epoch().count()) / 1e3;
}
void bm_wake_pairs(benchmark::State& st) {
  std::vector<double> numart, tbb;
  for (auto _ : st) {
    for (int i = 0; i < g_wake_samples; ++i) {
      if (i % 2 == 0) {
        numart.push_back(wake_sample_numart());
        tbb.push_back(wake_sample_tbb());
      } else {
        tbb.push_back(wake_sample_tbb());
        numart.push_back(wake_sample_numart());
      }
    }
  }
  bench::add_samples("wake_latency", "numart", numart);
  bench::add_samples("wake_latency", "onetbb", tbb);
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

struct params {
  int rounds;        // alternating rounds per side of the compute workloads
  int wake_rounds;   // rounds of wake_latency and idle_cpu
  int wake_samples;  // wake-ups per side per wake_latency round
};
constexpr params kDefault{5, 2, 1000};
constexpr params kQuick{3, 1, 500};

// Removes --nqueens=N from argv into g_queens_n; throws std::invalid_argument for a board size
// without a known count.
void take_queens(int& argc, char** argv) {
  constexpr std::string_view kFlag = "--nqueens=";
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.substr(0, kFlag.size()) != kFlag) {
      argv[out++] = argv[i];
      continue;
    }
    const std::string value(arg.substr(kFlag.size()));
    const int n = value.size() == 1 || value.size() == 2 ? std::atoi(value.c_str()) : 0;
    if (std::to_string(n) != value || queens_known(n) < 0)
      throw std::invalid_argument("--nqueens='" + value + "': expected one of 8, 10, 11, 12, 13 (known counts)");
    g_queens_n = n;
  }
  argc = out;
}

int run(int argc, char** argv) {
  const bool quick = bench::quick_mode(argc, argv);
  take_queens(argc, argv);
  const params p = quick ? kQuick : kDefault;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  g_wake_samples = p.wake_samples;
  rt::config cfg = rt::config::from_env();
  rt::runtime runtime{cfg};
  tbb::task_arena arena;  // the default arena: one slot per hardware thread
  arena.initialize();
  g_rt = &runtime;
  g_arena = &arena;
  bench::note_runtime(runtime);
  std::printf("numart_bench_core%s: numart %d workers on %s; oneTBB default arena: %d threads\n",
              quick ? " (quick)" : "", runtime.workers(), runtime.stats().topology.c_str(), arena.max_concurrency());
  std::printf("  nqueens: N = %d (known count %ld), one task per free square in the top %d rows, sequential below\n",
              g_queens_n, queens_known(g_queens_n), kQueensSpawnDepth);
  std::fflush(stdout);
  const int rounds = p.rounds;
  bench::register_side_by_side("fib30", {{"numart", bm_fib_numart}, {"onetbb", bm_fib_tbb}}, rounds, 3);
  bench::register_side_by_side("fib30_task_group", {{"numart", bm_fib_numart_group}, {"onetbb", bm_fib_tbb}}, rounds,
                               3);
  bench::register_side_by_side("empty_spawn_1M", {{"numart", bm_empty_numart}, {"onetbb", bm_empty_tbb}}, rounds, 2);
  bench::register_side_by_side("parallel_for_1e7", {{"numart", bm_pf_numart}, {"onetbb", bm_pf_tbb}}, rounds, 3);
  bench::register_side_by_side("nqueens" + std::to_string(g_queens_n),
                               {{"numart", bm_queens_numart}, {"onetbb", bm_queens_tbb}}, rounds, 3);
  bench::register_interleaved("wake_latency", bm_wake_pairs, p.wake_rounds);
  bench::register_side_by_side("idle_cpu", {{"numart", bm_idle_numart}, {"onetbb", bm_idle_tbb}}, p.wake_rounds, 1);
  bench::collecting_reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  bench::print_summary(stdout);
  bench::print_percentiles(stdout, "wake-up latency, us");
  benchmark::Shutdown();
  return bench::any_round_failed() || bench::json_failed() ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "numart_bench_core: %s\n", e.what());
    return 2;
  }
}
