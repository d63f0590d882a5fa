#!/usr/bin/env bash
# What the counters and the trace cost on the hot path (issue 9): fib(30) on numart, from
# bench/numart_bench_core, with counters compiled in (the release build) and compiled out
# (-DNUMART_COUNTERS=OFF, build/nocounters). Two measures (docs/design/counters.md §4):
#   * instructions, in/out: callgrind over one round of fib30/numart (3 iterations) with one
#     worker, collecting only inside the benchmark body. Deterministic: the number to compare
#     with the 3 % bar on a shared or noisy machine. Skipped when valgrind is missing.
#   * time, in/out: the two builds and the release build traced (RT_TRACE) run one after the
#     other, ROUNDS times each (default 5). The in and out runs swap order every round (the
#     first of two back-to-back runs measured ~0.7 % slower, the same binary twice), and the
#     figure is the median of the rounds' in/out ratios (a round's pair shares the machine's
#     state, which drifts by up to 50 % between rounds on a shared VM); the traced run's extra
#     time is divided by the events it recorded to give a cost per event.
#   bash scripts/counters_cost.sh [ROUNDS]
# COUNTERS_ON_DIR / COUNTERS_OFF_DIR name other build directories (default build/release and
# build/nocounters); the on directory is configured with the release preset's settings.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
jobs=${NUMART_JOBS:-$(nproc)}
on_dir=${COUNTERS_ON_DIR:-build/release}
off_dir=${COUNTERS_OFF_DIR:-build/nocounters}
if [ ! -f "$on_dir/CMakeCache.txt" ]; then
  if [ "$on_dir" = build/release ]; then
    cmake --preset release >/dev/null
  else
    cmake -S . -B "$on_dir" -DCMAKE_BUILD_TYPE=Release -DNUMART_WERROR=ON >/dev/null
  fi
fi
cmake --build "$on_dir" -j "$jobs" --target numart_bench_core >/dev/null
cmake -S . -B "$off_dir" -DCMAKE_BUILD_TYPE=Release -DNUMART_WERROR=ON -DNUMART_COUNTERS=OFF \
  -DNUMART_BUILD_TESTS=OFF -DNUMART_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$off_dir" -j "$jobs" --target numart_bench_core >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
instructions() {  # callgrind's collected instruction count for one round of fib30/numart
  RT_WORKERS=1 valgrind --tool=callgrind --toggle-collect='*bm_fib_numart*' --callgrind-out-file=/dev/null \
    "$1/bench/numart_bench_core" --benchmark_filter='^fib30/numart/0/' 2>&1 >/dev/null |
    awk '/Collected :/ { print $NF }'
}
ins_on=""; ins_off=""
if command -v valgrind >/dev/null; then
  ins_on=$(instructions "$on_dir")
  ins_off=$(instructions "$off_dir")
  echo "counters_cost: callgrind: on $ins_on, off $ins_off instructions"
fi
median_ms() {  # the numart median of fib30 from one bench run's summary
  awk '$1 == "fib30" && $2 == "numart" { print $3 }' "$1"
}
: >"$tmp/on"; : >"$tmp/off"; : >"$tmp/traced"; : >"$tmp/events"
timed() {  # appends the fib30 numart median of build directory $1 to file $2
  "$1/bench/numart_bench_core" --benchmark_filter='^fib30/' >"$tmp/run" 2>&1
  median_ms "$tmp/run" >>"$2"
}
for r in $(seq "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then
    timed "$on_dir" "$tmp/on"; timed "$off_dir" "$tmp/off"
  else
    timed "$off_dir" "$tmp/off"; timed "$on_dir" "$tmp/on"
  fi
  RT_TRACE="$tmp/trace.json" "$on_dir/bench/numart_bench_core" --benchmark_filter='^fib30/' >"$tmp/run" 2>&1
  median_ms "$tmp/run" >>"$tmp/traced"
  python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['otherData']['numart']['tracks']; print(sum(x['written'] for x in t))" \
    "$tmp/trace.json" >>"$tmp/events"
  echo "counters_cost: round $r of $rounds: on $(tail -1 "$tmp/on") ms, off $(tail -1 "$tmp/off") ms, traced $(tail -1 "$tmp/traced") ms"
done
python3 - "$tmp" "$ins_on" "$ins_off" <<'PY'
import statistics, sys, os
d = sys.argv[1]
if sys.argv[2] and sys.argv[3]:
    print("fib(30), numart, one worker, callgrind (deterministic):")
    print("  instructions in/out    %8.4f   (%s / %s; issue 9 bar: <= 1.03)" % (int(sys.argv[2]) / int(sys.argv[3]), sys.argv[2], sys.argv[3]))
read = lambda n: [float(x) for x in open(os.path.join(d, n)).read().split()]
ratio = statistics.median(a / b for a, b in zip(read("on"), read("off")))
on, off, traced, events = map(statistics.median, (read("on"), read("off"), read("traced"), read("events")))
# The bench's fib30 runs 3 iterations per round and 5 rounds per run: events were recorded over
# all of them, the medians are per iteration.
runs = 15
print("fib(30), numart, median of the runs' medians:")
print("  counters compiled in   %8.2f ms" % on)
print("  counters compiled out  %8.2f ms" % off)
print("  ratio in/out           %8.3f   (median of the rounds' ratios; issue 9 bar: within 3%%, <= 1.03)" % ratio)
print("  traced (RT_TRACE)      %8.2f ms, %d events per run of %d iterations" % (traced, events, runs))
print("  cost per event         %8.1f ns   ((traced - in) / (events / iterations))" % ((traced - on) * 1e6 / (events / runs)))
PY
