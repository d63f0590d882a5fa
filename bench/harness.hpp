// Side-by-side harness on Google Benchmark: each workload runs for numart and oneTBB in
// alternating rounds (numart, tbb, numart, tbb, ...) so that machine noise hits both alike;
// a reporter collects every round and prints medians and the ratio numart / oneTBB.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace bench {

struct sample_set {
  std::vector<double> seconds;                   // one per round (per-iteration real time)
  std::map<std::string, std::vector<double>> counters;
};

// workload -> side ("numart", "onetbb", ...) -> samples
inline std::map<std::string, std::map<std::string, sample_set>>& results() {
  static std::map<std::string, std::map<std::string, sample_set>> r;
  return r;
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Benchmarks are named "workload/side/round". The reporter files each run under its workload
// and side.
class collecting_reporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      std::string name = run.benchmark_name();
      auto a = name.find('/');
      auto b = name.find('/', a + 1);
      if (a == std::string::npos || b == std::string::npos) continue;
      sample_set& s = results()[name.substr(0, a)][name.substr(a + 1, b - a - 1)];
      s.seconds.push_back(run.GetAdjustedRealTime() / 1e9 *
                          (run.time_unit == benchmark::kMillisecond   ? 1e6
                           : run.time_unit == benchmark::kMicrosecond ? 1e3
                           : run.time_unit == benchmark::kSecond      ? 1e9
                                                                      : 1.0));
      for (const auto& [k, c] : run.counters) s.counters[k].push_back(c.value);
    }
  }
};

// Registers `rounds` alternating rounds of each side of a workload.
inline void register_side_by_side(const std::string& workload,
                                  const std::vector<std::pair<std::string, std::function<void(benchmark::State&)>>>& sides,
                                  int rounds, int iterations) {
  for (int r = 0; r < rounds; ++r) {
    for (const auto& [side, fn] : sides) {
      benchmark::RegisterBenchmark((workload + "/" + side + "/" + std::to_string(r)).c_str(), fn)
          ->Iterations(iterations)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
}

// Prints one block per workload: the median time and counters of each side, then the ratio
// numart / onetbb of the time and of every counter both sides report.
inline void print_summary(FILE* out) {
  std::fprintf(out, "\n%-28s %-14s %14s  %s\n", "workload", "side", "median", "counters (median)");
  for (const auto& [workload, sides] : results()) {
    for (const auto& [side, s] : sides) {
      std::fprintf(out, "%-28s %-14s %11.3f ms ", workload.c_str(), side.c_str(), median(s.seconds) * 1e3);
      for (const auto& [k, v] : s.counters) std::fprintf(out, " %s=%.4g", k.c_str(), median(v));
      std::fprintf(out, "\n");
    }
    auto n = sides.find("numart");
    auto t = sides.find("onetbb");
    if (n == sides.end() || t == sides.end()) continue;
    std::fprintf(out, "%-28s ratio numart/onetbb: time %.3f", workload.c_str(),
                 median(n->second.seconds) / median(t->second.seconds));
    for (const auto& [k, v] : n->second.counters) {
      auto tc = t->second.counters.find(k);
      if (tc == t->second.counters.end() || median(tc->second) == 0) continue;
      std::fprintf(out, ", %s %.3f", k.c_str(), median(v) / median(tc->second));
    }
    std::fprintf(out, "  (%zu rounds each)\n", n->second.seconds.size());
  }
}

}  // namespace bench
