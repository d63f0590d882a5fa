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

// A numart side is "numart" or a named variant of it, "numart.VARIANT" (one runtime per
// variant, e.g. a feature A/B); every numart side is compared with the "onetbb" side.
inline bool is_numart_side(const std::string& side) {
  return side == "numart" || side.rfind("numart.", 0) == 0;
}

// Prints one block per workload: the median time and counters of each side, then for every
// numart side the ratio numart / onetbb of the time and of every counter both sides report.
inline void print_summary(FILE* out) {
  int side_width = 14;
  for (const auto& [workload, sides] : results())
    for (const auto& [side, s] : sides) side_width = std::max(side_width, static_cast<int>(side.size()));
  std::fprintf(out, "\n%-28s %-*s %14s  %s\n", "workload", side_width, "side", "median", "counters (median)");
  for (const auto& [workload, sides] : results()) {
    for (const auto& [side, s] : sides) {
      std::fprintf(out, "%-28s %-*s %11.3f ms ", workload.c_str(), side_width, side.c_str(),
                   median(s.seconds) * 1e3);
      for (const auto& [k, v] : s.counters) std::fprintf(out, " %s=%.4g", k.c_str(), median(v));
      std::fprintf(out, "\n");
    }
    auto t = sides.find("onetbb");
    if (t == sides.end()) continue;
    for (const auto& [side, n] : sides) {
      if (!is_numart_side(side)) continue;
      std::fprintf(out, "%-28s ratio %s/onetbb: time %.3f", workload.c_str(), side.c_str(),
                   median(n.seconds) / median(t->second.seconds));
      for (const auto& [k, v] : n.counters) {
        auto tc = t->second.counters.find(k);
        if (tc == t->second.counters.end() || median(tc->second) == 0) continue;
        std::fprintf(out, ", %s %.3f", k.c_str(), median(v) / median(tc->second));
      }
      std::fprintf(out, "  (%zu rounds each)\n", n.seconds.size());
    }
  }
}

// Raw per-event samples (e.g. wake-up latencies), pooled over every round of a workload's side,
// so that a percentile is taken over all events, not as a median of per-round percentiles.
// workload -> side -> samples
inline std::map<std::string, std::map<std::string, std::vector<double>>>& pooled_samples() {
  static std::map<std::string, std::map<std::string, std::vector<double>>> r;
  return r;
}

inline void add_samples(const std::string& workload, const std::string& side, const std::vector<double>& v) {
  auto& dst = pooled_samples()[workload][side];
  dst.insert(dst.end(), v.begin(), v.end());
}

// Nearest-rank percentile (p in [0, 1]) of an ascending vector; 0 for an empty one.
inline double sorted_percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto last = static_cast<double>(sorted.size() - 1);
  return sorted[static_cast<std::size_t>(p * last + 0.5)];
}

// The percentile p of a workload side's pooled samples, or -1 when it has none.
inline double pooled_percentile(const std::string& workload, const std::string& side, double p) {
  auto w = pooled_samples().find(workload);
  if (w == pooled_samples().end()) return -1;
  auto s = w->second.find(side);
  if (s == w->second.end() || s->second.empty()) return -1;
  std::vector<double> v = s->second;
  std::sort(v.begin(), v.end());
  return sorted_percentile(v, p);
}

// Prints, per workload, the percentiles of every side's pooled samples, then for every numart
// side the ratio numart / onetbb at each percentile.
inline void print_percentiles(FILE* out, const char* unit) {
  static const double ps[] = {0.50, 0.90, 0.99, 0.999};
  for (const auto& [workload, sides] : pooled_samples()) {
    std::fprintf(out, "\n%s: pooled samples (%s)\n%-24s %9s %10s %10s %10s %10s %10s %10s\n", workload.c_str(), unit,
                 "side", "n", "min", "p50", "p90", "p99", "p99.9", "max");
    std::map<std::string, std::vector<double>> at;  // side -> value at each of ps
    for (const auto& [side, samples] : sides) {
      std::vector<double> v = samples;
      std::sort(v.begin(), v.end());
      std::fprintf(out, "%-24s %9zu %10.2f", side.c_str(), v.size(), v.empty() ? 0.0 : v.front());
      for (double p : ps) {
        at[side].push_back(sorted_percentile(v, p));
        std::fprintf(out, " %10.2f", at[side].back());
      }
      std::fprintf(out, " %10.2f\n", v.empty() ? 0.0 : v.back());
    }
    auto t = at.find("onetbb");
    if (t == at.end()) continue;
    for (const auto& [side, vals] : at) {
      if (!is_numart_side(side)) continue;
      std::fprintf(out, "%-24s %9s %10s", ("ratio " + side + "/onetbb").c_str(), "", "");
      for (std::size_t i = 0; i < vals.size(); ++i)
        std::fprintf(out, " %10.3f", t->second[i] > 0 ? vals[i] / t->second[i] : 0.0);
      std::fprintf(out, "\n");
    }
  }
}

}  // namespace bench
