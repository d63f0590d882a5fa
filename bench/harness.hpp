// Side-by-side harness on Google Benchmark: each workload runs for numart and oneTBB in
// alternating rounds (numart, tbb, numart, tbb, ...) so that machine noise hits both alike;
// a reporter collects every round and prints medians and the ratio numart / oneTBB.
//
// Machine-readable output: with NUMART_BENCH_JSON=PATH in the environment, the reporter also
// writes PATH when the run ends (write_json below: every workload, every side's rounds, medians,
// counters, pooled percentiles, the ratios numart / onetbb, the topology source and the
// runtime's describe()). scripts/bench_report.sh turns those files into a report.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "rt/rt.hpp"

namespace bench {

struct sample_set {
  std::vector<double> seconds;                   // one per round (per-iteration real time)
  std::map<std::string, std::vector<double>> counters;
  std::vector<std::string> errors;               // rounds that failed (SkipWithError): no samples
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

// The side of a round that takes both sides' samples in pairs (register_interleaved).
inline constexpr const char* kPairsSide = "pairs";

// Benchmarks are named "workload/side/round". The reporter files each run under its workload
// and side; a pairs round's time and counters are both sides' at once and are not kept (its
// samples are pooled per side), only its errors.
class collecting_reporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      std::string name = run.benchmark_name();
      auto a = name.find('/');
      auto b = name.find('/', a + 1);
      if (a == std::string::npos || b == std::string::npos) continue;
      const std::string side = name.substr(a + 1, b - a - 1);
      if (side == kPairsSide && !run.error_occurred) continue;
      sample_set& s = results()[name.substr(0, a)][side];
      if (run.error_occurred) {  // a failed round's time and counters mean nothing
        s.errors.push_back(run.error_message);
        continue;
      }
      s.seconds.push_back(run.GetAdjustedRealTime() / 1e9 *
                          (run.time_unit == benchmark::kMillisecond   ? 1e6
                           : run.time_unit == benchmark::kMicrosecond ? 1e3
                           : run.time_unit == benchmark::kSecond      ? 1e9
                                                                      : 1.0));
      for (const auto& [k, c] : run.counters) s.counters[k].push_back(c.value);
    }
  }
  // Called once by RunSpecifiedBenchmarks after the last run: writes NUMART_BENCH_JSON.
  void Finalize() override;
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

// Registers `rounds` rounds of a workload whose sides take their samples in pairs inside one
// round (numart then oneTBB, oneTBB then numart, ...): each pair sees the same machine, where
// alternating whole rounds lets a slow stretch of a VM (seconds long, 2-3x every latency) fall
// on one side only. `fn` adds its samples per side with add_samples.
inline void register_interleaved(const std::string& workload, const std::function<void(benchmark::State&)>& fn,
                                 int rounds) {
  for (int r = 0; r < rounds; ++r) {
    benchmark::RegisterBenchmark((workload + "/" + kPairsSide + "/" + std::to_string(r)).c_str(), fn)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
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
      if (!s.errors.empty())
        std::fprintf(out, "%-28s %-*s FAILED in %zu round(s): %s\n", workload.c_str(), side_width, side.c_str(),
                     s.errors.size(), s.errors.front().c_str());
      if (s.seconds.empty()) continue;
      std::fprintf(out, "%-28s %-*s %11.3f ms ", workload.c_str(), side_width, side.c_str(),
                   median(s.seconds) * 1e3);
      for (const auto& [k, v] : s.counters) std::fprintf(out, " %s=%.4g", k.c_str(), median(v));
      std::fprintf(out, "\n");
    }
    auto t = sides.find("onetbb");
    if (t == sides.end()) continue;
    if (t->second.seconds.empty()) continue;  // every oneTBB round failed
    for (const auto& [side, n] : sides) {
      if (!is_numart_side(side) || n.seconds.empty()) continue;
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

namespace bench {

// ---- quick mode ----------------------------------------------------------------------------

// Removes --quick from argv; reads NUMART_BENCH_QUICK ("1" on, "0" or empty off). Throws
// std::invalid_argument for a value it does not understand.
inline bool& quick_seen() {  // quick_mode() answered true (recorded in the JSON)
  static bool seen = false;
  return seen;
}

inline bool quick_mode(int& argc, char** argv) {
  bool quick = false;
  if (const char* e = std::getenv("NUMART_BENCH_QUICK"); e != nullptr && *e != '\0') {
    if (std::strcmp(e, "1") == 0)
      quick = true;
    else if (std::strcmp(e, "0") != 0)
      throw std::invalid_argument(std::string("NUMART_BENCH_QUICK='") + e + "': expected 1 (quick run) or 0");
  }
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0)
      quick = true;
    else
      argv[out++] = argv[i];
  }
  argc = out;
  quick_seen() = quick;
  return quick;
}

// ---- the runtime the numbers came from -----------------------------------------------------

struct runtime_info {
  std::string origin;    // "benchmark" (note_runtime) or "environment" (built from the environment)
  std::string topology;  // rt::stats::topology: "host", "xml:...", "synthetic:..."
  bool virtual_topology = false;
  int workers = 0;
  int nodes = 0;
  std::string describe;  // rt::runtime::describe(): tunables and features in force
  std::string error;     // why the environment's runtime could not be built (then the rest is empty)
};

inline std::optional<runtime_info>& noted_runtime() {
  static std::optional<runtime_info> r;
  return r;
}

inline runtime_info info_of(const rt::runtime& rt, const char* origin) {
  runtime_info i;
  i.origin = origin;
  i.topology = rt.stats().topology;
  i.virtual_topology = rt.virtual_topology();
  i.workers = rt.workers();
  i.nodes = rt.nodes();
  i.describe = rt.describe();
  return i;
}

// A benchmark with one runtime names it here; without it the JSON describes a runtime built
// from the environment (rt::config::from_env(): RT_TOPOLOGY, RT_WORKERS, RT_TUNE) at the end.
inline void note_runtime(const rt::runtime& rt) { noted_runtime() = info_of(rt, "benchmark"); }

inline runtime_info runtime_for_json() {
  if (noted_runtime()) return *noted_runtime();
  try {
    const rt::runtime rt{rt::config::from_env()};
    return info_of(rt, "environment");
  } catch (const std::exception& e) {
    runtime_info i;
    i.origin = "environment";
    i.error = e.what();
    return i;
  }
}

// ---- JSON ------------------------------------------------------------------------------------

inline void json_string(std::string& out, const std::string& s) {
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  out += '"';
}

// JSON has no NaN or infinity: those become null.
inline void json_number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  out += buf;
}

inline void json_array(std::string& out, const std::vector<double>& v) {
  out += '[';
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    json_number(out, v[i]);
  }
  out += ']';
}

inline void json_key(std::string& out, bool& first, const std::string& key) {
  if (!first) out += ',';
  first = false;
  json_string(out, key);
  out += ':';
}

// The pooled percentiles written to JSON, with their keys (nearest rank, as print_percentiles).
struct percentile_key {
  const char* key;
  double p;
};
inline constexpr percentile_key kJsonPercentiles[] = {{"p50", 0.50}, {"p90", 0.90}, {"p99", 0.99}, {"p999", 0.999}};

// {"n":..,"min":..,"p50":..,..,"max":..} of one side's pooled samples (sorted here).
inline std::map<std::string, double> percentile_summary(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::map<std::string, double> out;
  out["n"] = static_cast<double>(v.size());
  if (v.empty()) return out;
  out["min"] = v.front();
  out["max"] = v.back();
  for (const auto& k : kJsonPercentiles) out[k.key] = sorted_percentile(v, k.p);
  return out;
}

inline void json_object(std::string& out, const std::map<std::string, double>& m) {
  out += '{';
  bool first = true;
  for (const auto& [k, v] : m) {
    json_key(out, first, k);
    json_number(out, v);
  }
  out += '}';
}

// numart / onetbb, or NaN (null in JSON) when oneTBB's value is not positive.
inline double ratio_of(double numart, double onetbb) { return onetbb > 0 ? numart / onetbb : std::nan(""); }

// The whole run as one JSON object:
// {"format":"numart-bench/1","quick":bool,"runtime":{...},
//  "workloads":{W:{"sides":{S:{"rounds":n,"seconds":[..],"median_s":x,"errors":[..],
//                              "counters":{C:{"median":x,"values":[..]}},
//                              "percentiles":{"n":..,"min":..,"p50":..,"p90":..,"p99":..,"p999":..,"max":..}}},
//                  "ratios":{NUMART_SIDE:{"time":r,"counters":{C:r},"percentiles":{P:r}}}}}}
// Times in seconds per iteration; counters and pooled samples in the benchmark's own units.
inline std::string results_json(bool quick, const runtime_info& rt) {
  std::string out = "{\"format\":\"numart-bench/1\",\"quick\":";
  out += quick ? "true" : "false";
  out += ",\"runtime\":{";
  bool f = true;
  json_key(out, f, "origin");
  json_string(out, rt.origin);
  json_key(out, f, "topology");
  json_string(out, rt.topology);
  json_key(out, f, "virtual_topology");
  out += rt.virtual_topology ? "true" : "false";
  json_key(out, f, "workers");
  json_number(out, rt.workers);
  json_key(out, f, "nodes");
  json_number(out, rt.nodes);
  json_key(out, f, "describe");
  json_string(out, rt.describe);
  json_key(out, f, "error");
  json_string(out, rt.error);
  out += "},\"workloads\":{";

  std::map<std::string, bool> names;  // every workload, timed or pooled
  for (const auto& [w, sides] : results()) names[w] = true;
  for (const auto& [w, sides] : pooled_samples()) names[w] = true;
  bool first_w = true;
  for (const auto& [workload, unused] : names) {
    static const std::map<std::string, sample_set> kNoSides;
    static const std::map<std::string, std::vector<double>> kNoPool;
    const auto r = results().find(workload);
    const auto& sides = r == results().end() ? kNoSides : r->second;
    const auto p = pooled_samples().find(workload);
    const auto& pooled = p == pooled_samples().end() ? kNoPool : p->second;
    std::map<std::string, bool> side_names;
    for (const auto& [s, unused2] : sides) side_names[s] = true;
    for (const auto& [s, unused2] : pooled) side_names[s] = true;

    json_key(out, first_w, workload);
    out += "{\"sides\":{";
    std::map<std::string, std::map<std::string, double>> pct;  // side -> summary
    bool first_s = true;
    for (const auto& [side, unused2] : side_names) {
      json_key(out, first_s, side);
      out += '{';
      bool fs = true;
      const auto s = sides.find(side);
      const sample_set empty;
      const sample_set& set = s == sides.end() ? empty : s->second;
      json_key(out, fs, "rounds");
      json_number(out, static_cast<double>(set.seconds.size()));
      json_key(out, fs, "seconds");
      json_array(out, set.seconds);
      json_key(out, fs, "median_s");
      json_number(out, set.seconds.empty() ? std::nan("") : median(set.seconds));
      json_key(out, fs, "errors");
      out += '[';
      for (std::size_t i = 0; i < set.errors.size(); ++i) {
        if (i) out += ',';
        json_string(out, set.errors[i]);
      }
      out += ']';
      json_key(out, fs, "counters");
      out += '{';
      bool fc = true;
      for (const auto& [k, v] : set.counters) {
        json_key(out, fc, k);
        out += "{\"median\":";
        json_number(out, median(v));
        out += ",\"values\":";
        json_array(out, v);
        out += '}';
      }
      out += '}';
      if (const auto ps = pooled.find(side); ps != pooled.end()) {
        pct[side] = percentile_summary(ps->second);
        json_key(out, fs, "percentiles");
        json_object(out, pct[side]);
      }
      out += '}';
    }
    out += "},\"ratios\":{";
    const auto t = sides.find("onetbb");
    const auto tp = pct.find("onetbb");
    bool first_r = true;
    for (const auto& [side, unused2] : side_names) {
      if (!is_numart_side(side) || (t == sides.end() && tp == pct.end())) continue;
      json_key(out, first_r, side);
      out += '{';
      bool fr = true;
      const auto n = sides.find(side);
      if (n != sides.end() && t != sides.end() && !n->second.seconds.empty() && !t->second.seconds.empty()) {
        json_key(out, fr, "time");
        json_number(out, ratio_of(median(n->second.seconds), median(t->second.seconds)));
      }
      if (n != sides.end() && t != sides.end()) {
        json_key(out, fr, "counters");
        std::map<std::string, double> rc;
        for (const auto& [k, v] : n->second.counters) {
          const auto tc = t->second.counters.find(k);
          if (tc != t->second.counters.end() && !v.empty() && !tc->second.empty())
            rc[k] = ratio_of(median(v), median(tc->second));
        }
        json_object(out, rc);
      }
      if (const auto np = pct.find(side); np != pct.end() && tp != pct.end()) {
        json_key(out, fr, "percentiles");
        std::map<std::string, double> rp;
        for (const auto& k : kJsonPercentiles) {
          const auto a = np->second.find(k.key);
          const auto b = tp->second.find(k.key);
          if (a != np->second.end() && b != tp->second.end()) rp[k.key] = ratio_of(a->second, b->second);
        }
        json_object(out, rp);
      }
      out += '}';
    }
    out += "}}";
  }
  out += "}}\n";
  return out;
}

// Writes results_json to NUMART_BENCH_JSON when it is set; a file that cannot be written is
// reported on stderr and makes json_failed() true (the benchmark binaries exit non-zero then).
inline bool& json_failed() {
  static bool failed = false;
  return failed;
}

inline void write_json() {
  const char* path = std::getenv("NUMART_BENCH_JSON");
  if (path == nullptr || *path == '\0') return;
  bool quick = quick_seen();
  if (const char* q = std::getenv("NUMART_BENCH_QUICK")) quick = quick || std::strcmp(q, "1") == 0;
  const std::string text = results_json(quick, runtime_for_json());
  FILE* f = std::fopen(path, "w");
  if (f == nullptr) {
    std::fprintf(stderr, "numart bench: cannot write NUMART_BENCH_JSON='%s': %s\n", path, std::strerror(errno));
    json_failed() = true;
    return;
  }
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) {
    std::fprintf(stderr, "numart bench: writing NUMART_BENCH_JSON='%s' failed: %s\n", path, std::strerror(errno));
    json_failed() = true;
  }
}

inline void collecting_reporter::Finalize() {
  ConsoleReporter::Finalize();
  write_json();
}

// True when some round of some workload failed its check (SkipWithError).
inline bool any_round_failed() {
  for (const auto& [w, sides] : results())
    for (const auto& [s, set] : sides)
      if (!set.errors.empty()) return true;
  return false;
}

}  // namespace bench
