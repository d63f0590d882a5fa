#!/usr/bin/env bash
# The benchmark suite and its report (docs/benchmarks.md): builds the release benchmarks, the
# numart tool and the jbb example, runs every benchmark (numart and oneTBB alternating in one
# process), and writes OUTDIR/results.json (everything), OUTDIR/report.md (ratios first, then
# per-workload detail, PNG plots, the host topology, the runtime's settings) and the plots.
#
#   scripts/bench_report.sh [OUTDIR]                 (default OUTDIR: build/report)
#   NUMART_BENCH_QUICK=1 scripts/bench_report.sh     (fewer rounds: about a minute of runs)
# Environment:
#   NUMART_BUILD_DIR  the build directory (default build/release; configured like the release
#                     preset when it has no CMakeCache.txt; must be a Release build)
#   NUMART_BENCH_QUICK 1 for the quick run, 0 or unset for the default one
#   NUMART_REPORT_SUITE full (default: every benchmark) or demo (the jbb server only, for
#                     scripts/demo.sh: the core and wake benchmarks are reported as not run)
#   NUMART_JOBS       parallel build jobs (default: nproc)
#   RT_TOPOLOGY, RT_WORKERS, RT_TUNE apply to the numart runtimes of the benchmarks as usual.
# Exit status: 0 when the core and wake benchmarks ran, their checks passed and the report
# renders; 1 otherwise (the report is still written). jbb that cannot run is reported, not fatal.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

build=${NUMART_BUILD_DIR:-build/release}
out=${1:-build/report}
quick=${NUMART_BENCH_QUICK:-0}
jobs=${NUMART_JOBS:-$(nproc)}
virtual_topology='synthetic:pack:2 [numa] core:2 pu:1;distances:10,20,20,10'

die() {
  echo "bench_report: $*" >&2
  exit 1
}
case "$quick" in
  0 | "") quick=0 ;;
  1) ;;
  *) die "NUMART_BENCH_QUICK='$quick': expected 1 (quick run) or 0" ;;
esac
suite=${NUMART_REPORT_SUITE:-full}
case "$suite" in
  full | demo) ;;
  *) die "NUMART_REPORT_SUITE='$suite': expected full or demo" ;;
esac
if [ "$quick" = 1 ]; then
  jbb_args=(--warmup 1 --seconds 2)
else
  jbb_args=(--warmup 1 --seconds 5)
fi
for tool in cmake python3 gnuplot timeout; do
  command -v "$tool" >/dev/null || die "needs '$tool' (scripts/setup.sh installs the packages)"
done

# OUTDIR is emptied of the previous report's files; refuse a directory that holds anything else.
if [ -d "$out" ] && [ -n "$(ls -A "$out")" ] && [ ! -f "$out/.numart-report" ]; then
  die "OUTDIR '$out' exists, is not empty and is not a previous report: choose another directory"
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
find "$out" -mindepth 1 -maxdepth 1 -delete
touch "$out/.numart-report"

total_steps=9
step_no=0
step_t0=0
t_start=$EPOCHREALTIME
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }
progress() {
  step_no=$((step_no + 1))
  printf '[bench_report %d/%d, %5ss] %s\n' "$step_no" "$total_steps" "$(since "$t_start")" "$*"
  step_t0=$EPOCHREALTIME
}
# record NAME STATUS DETAIL: one line of steps.tsv (status: ok | failed | not run)
record() {
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$(since "$step_t0")" "$(echo "$3" | tr '\t\n' '  ')" >>"$out/steps.tsv"
  if [ "$2" != ok ]; then echo "  $1: $2 ($3)"; fi
}
last_line() { grep -v '^\s*$' "$1" | tail -n 1 | cut -c1-200; }
# The first compiler or linker error of a build log, else its last line.
first_error() {
  local e
  e=$(grep -m1 -E 'error:|undefined reference|No rule to make target|CMake Error' "$1" | cut -c1-200 || true)
  if [ -n "$e" ]; then echo "$e"; else last_line "$1"; fi
}

# ---- 1. build ------------------------------------------------------------------------------
progress "building in $build (release): benchmarks, numart tool"
if [ ! -f "$build/CMakeCache.txt" ]; then
  if [ "$build" = build/release ]; then
    cmake --preset release >"$out/build.log" 2>&1 || die "configure failed: $(first_error "$out/build.log") (see $out/build.log)"
  else
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DNUMART_WERROR=ON >"$out/build.log" 2>&1 ||
      die "configure failed: $(first_error "$out/build.log") (see $out/build.log)"
  fi
fi
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
[ "$build_type" = Release ] || die "$build is a '$build_type' build: benchmarks need a Release build (NUMART_BUILD_DIR)"
targets=(numart_cli)
[ "$suite" = full ] && targets+=(numart_bench_core numart_bench_wake)
cmake --build "$build" -j "$jobs" --target "${targets[@]}" >>"$out/build.log" 2>&1 ||
  die "build failed: $(first_error "$out/build.log") (see $out/build.log)"
record build ok "${targets[*]}"

progress "building numart_jbb (examples/jbb)"
jbb_bin=$build/examples/jbb/numart_jbb
jbb_reason=""
if cmake --build "$build" -j "$jobs" --target numart_jbb >"$out/jbb_build.log" 2>&1; then
  [ -x "$jbb_bin" ] || jbb_reason="numart_jbb built but $jbb_bin is missing"
elif grep -q "No rule to make target 'numart_jbb'" "$out/jbb_build.log"; then
  jbb_reason="no numart_jbb target in $build (examples/jbb missing or NUMART_BUILD_EXAMPLES=OFF)"
else
  jbb_reason="numart_jbb did not build: $(first_error "$out/jbb_build.log")"
fi
if [ -z "$jbb_reason" ]; then record jbb_build ok "$jbb_bin"; else record jbb_build "not run" "$jbb_reason"; fi

# ---- 2. topology -----------------------------------------------------------------------------
progress "host topology (numart topo)"
if "$build/runtime/cli/numart" topo >"$out/topo.txt" 2>&1; then
  record topo ok "numart topo"
else
  record topo failed "numart topo exited $?: $(last_line "$out/topo.txt")"
fi

# ---- 3. benchmarks ---------------------------------------------------------------------------
bench_failed=0
# run_bench NAME BINARY: NUMART_BENCH_JSON=OUTDIR/NAME.json, output in OUTDIR/NAME.log
run_bench() {
  local name=$1 bin=$2 rc=0
  NUMART_BENCH_QUICK=$quick NUMART_BENCH_JSON="$out/$name.json" timeout 1800 "$bin" >"$out/$name.log" 2>&1 || rc=$?
  if [ "$rc" -eq 0 ] && [ -s "$out/$name.json" ]; then
    record "$name" ok "$(basename "$bin"), log $name.log"
  elif [ "$rc" -eq 124 ]; then
    record "$name" failed "$(basename "$bin") timed out after 1800 s (log $name.log)"
    bench_failed=1
  else
    record "$name" failed "$(basename "$bin") exited $rc: $(grep -m1 -E 'numart_bench|ERROR|error' "$out/$name.log" | cut -c1-200) (log $name.log)"
    bench_failed=1
  fi
}
progress "core benchmarks: fib, spawn storms, parallel_for, nqueens, wake latency, idle CPU"
if [ "$suite" = full ]; then
  run_bench core "$build/bench/numart_bench_core"
else
  record core "not run" "demo suite: scripts/bench_report.sh runs every benchmark"
fi
progress "wake-path benchmarks: hackbench-, schbench-, execl-like"
if [ "$suite" = full ]; then
  run_bench wake "$build/bench/numart_bench_wake"
else
  record wake "not run" "demo suite: scripts/bench_report.sh runs every benchmark"
fi

# run_jbb NAME [--topology SPEC]: one JSON object on stdout into OUTDIR/NAME.json
run_jbb() {
  local name=$1 rc=0
  shift
  if [ -n "$jbb_reason" ]; then
    record "$name" "not run" "$jbb_reason"
    return
  fi
  timeout 600 "$jbb_bin" --runtime both --json "${jbb_args[@]}" "$@" >"$out/$name.json" 2>"$out/$name.log" || rc=$?
  if [ "$rc" -ne 0 ]; then
    record "$name" "not run" "numart_jbb exited $rc: $(last_line "$out/$name.log")"
  elif ! python3 -m json.tool "$out/$name.json" >/dev/null 2>&1; then
    record "$name" "not run" "numart_jbb printed no valid JSON (see $name.json)"
  else
    record "$name" ok "numart_jbb --runtime both ${jbb_args[*]} $*"
  fi
}
progress "jbb-like server on the host topology"
run_jbb jbb_host
progress "jbb-like server on a virtual 2-socket topology, data scattered, balancer on"
run_jbb jbb_virtual --topology "$virtual_topology" --placement scatter

# ---- 4. report -------------------------------------------------------------------------------
progress "report: results.json, report.md, plots (gnuplot)"
report_args=("$out" --virtual-topology "$virtual_topology" --command "$(basename "$0")")
[ "$quick" = 1 ] && report_args+=(--quick)
report_rc=0
python3 "$root/scripts/report/make_report.py" "${report_args[@]}" || report_rc=$?

progress "checking that report.md renders"
check_rc=0
bash "$root/scripts/report/check.sh" "$out/report.md" || check_rc=$?

printf 'bench_report: %s/report.md, %s/results.json (%s s)\n' "$out" "$out" "$(since "$t_start")"
sed -n '/^## Ratios/,/^## Core/p' "$out/report.md" | grep '^|' || true
jbb_missing=0
[ "$suite" = demo ] && [ -n "$jbb_reason" ] && jbb_missing=1
if [ "$bench_failed" -ne 0 ] || [ "$report_rc" -ne 0 ] || [ "$check_rc" -ne 0 ] || [ "$jbb_missing" -ne 0 ]; then
  echo "bench_report: FAILED (benchmarks: $bench_failed, report: $report_rc, check: $check_rc); see $out/steps.tsv" >&2
  exit 1
fi
