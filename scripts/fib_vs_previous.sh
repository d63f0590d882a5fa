#!/usr/bin/env bash
# fib(30) now against a previous commit (docs/benchmarks.md): builds numart_bench_core of the
# working tree and of COMMIT (Release), runs the two binaries alternately, each run timing
# fib30 for numart and oneTBB (bench/core_bench.cpp), and prints the medians and the ratio
# current / previous. oneTBB runs in the same processes and does not change between the two
# builds, so the ratio of the numart/onetbb ratios is printed too: it cancels machine drift.
# Both binaries are built from the working tree's bench sources (core_bench.cpp, harness.hpp,
# copied over COMMIT's), so that only the runtime differs: the benchmark's own translation unit
# changes what g++ inlines into fib (a0c670d grew it, join() stopped being inlined there, and
# fib30 moved by about 25 % with the runtime library unchanged).
#
#   scripts/fib_vs_previous.sh COMMIT
# Environment:
#   NUMART_BUILD_DIR       the current build (default build/release; configured like the release
#                          preset when it has no CMakeCache.txt; must be a Release build)
#   NUMART_PREV_BUILD_DIR  an existing Release build of COMMIT to use instead of building one
#                          (its bench/numart_bench_core must exist and be built from the
#                          working tree's bench sources, see above); default: a temporary
#                          `git worktree add --detach` of COMMIT, built and removed at the end
#   FIB_ROUNDS             runs of each binary (default 5), alternating previous, current, ...
#   NUMART_JOBS            parallel build jobs (default: nproc)
#   RT_TOPOLOGY, RT_WORKERS, RT_TUNE apply to both binaries' runtimes as usual.
# Exit status: 0 when both ran; 1 on bad input or a failed build or run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

die() {
  echo "fib_vs_previous: $*" >&2
  exit 1
}
[ $# -eq 1 ] || die "usage: scripts/fib_vs_previous.sh COMMIT"
commit=$1
build=${NUMART_BUILD_DIR:-build/release}
prev_build=${NUMART_PREV_BUILD_DIR:-}
rounds=${FIB_ROUNDS:-5}
jobs=${NUMART_JOBS:-$(nproc)}
case "$rounds" in
  '' | *[!0-9]* | 0) die "FIB_ROUNDS='$rounds': expected a whole number from 1" ;;
esac
for tool in git cmake awk sort; do
  command -v "$tool" >/dev/null || die "needs '$tool'"
done
full=$(git -C "$root" rev-parse --verify --quiet "$commit^{commit}") || die "COMMIT '$commit' is not a commit of $root"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/numart-fib.XXXXXX")
worktree=""
cleanup() {
  if [ -n "$worktree" ]; then git -C "$root" worktree remove --force "$worktree" >/dev/null 2>&1 || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

release_build() {  # SRC BUILD: configure (when new) and build numart_bench_core, Release only
  local src=$1 dir=$2
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DNUMART_WERROR=ON >"$tmp/configure.log" 2>&1 ||
      { tail -20 "$tmp/configure.log" >&2; die "configuring $dir failed"; }
  fi
  local type
  type=$(awk -F= '/^CMAKE_BUILD_TYPE:/ {print $2}' "$dir/CMakeCache.txt")
  [ "$type" = Release ] || die "$dir is a '$type' build: fib times need Release"
  cmake --build "$dir" -j"$jobs" --target numart_bench_core >"$tmp/build.log" 2>&1 ||
    { tail -30 "$tmp/build.log" >&2; die "building numart_bench_core in $dir failed (for COMMIT: does the current bench compile against its runtime?)"; }
}

echo "fib_vs_previous: current = working tree ($build), previous = ${full:0:12}"
release_build "$root" "$build"
current_bin=$(cd "$build" && pwd)/bench/numart_bench_core
if [ -n "$prev_build" ]; then
  previous_bin=$(cd "$prev_build" && pwd)/bench/numart_bench_core
  [ -x "$previous_bin" ] || die "NUMART_PREV_BUILD_DIR='$prev_build' has no bench/numart_bench_core"
  echo "fib_vs_previous: using the existing build $prev_build for ${full:0:12}"
else
  worktree=$tmp/src
  git -C "$root" worktree add --detach "$worktree" "$full" >/dev/null 2>&1 || die "git worktree add of $commit failed"
  cp "$root/bench/core_bench.cpp" "$root/bench/harness.hpp" "$worktree/bench/" ||
    die "copying the current bench sources into the worktree of $commit failed"
  echo "fib_vs_previous: building ${full:0:12} in $tmp/build (a few minutes)"
  release_build "$worktree" "$tmp/build"
  previous_bin=$tmp/build/bench/numart_bench_core
fi

# One run: prints "NUMART ONETBB", the medians (ms) of fib30 from the binary's summary table.
fib_run() {
  local bin=$1 out
  out=$("$bin" --benchmark_filter='^fib30/' 2>&1) || { echo "$out" | tail -20 >&2; die "$bin failed"; }
  echo "$out" | awk '$1 == "fib30" && $2 == "numart" && $4 == "ms" {n = $3}
                     $1 == "fib30" && $2 == "onetbb" && $4 == "ms" {t = $3}
                     END {if (n == "" || t == "") exit 1; print n, t}' ||
    die "$bin printed no fib30 medians for numart and onetbb"
}

: >"$tmp/previous"
: >"$tmp/current"
for ((i = 1; i <= rounds; i++)); do
  read -r pn pt < <(fib_run "$previous_bin")
  echo "$pn $pt" >>"$tmp/previous"
  read -r cn ct < <(fib_run "$current_bin")
  echo "$cn $ct" >>"$tmp/current"
  printf 'round %d/%d: previous numart %s ms (onetbb %s), current numart %s ms (onetbb %s)\n' "$i" "$rounds" "$pn" "$pt" "$cn" "$ct"
done

median() {  # FILE WHAT: the median over FILE's runs of the numart time (WHAT=numart) or of numart/onetbb (WHAT=ratio)
  awk -v what="$2" '{print (what == "ratio") ? $1 / $2 : $1}' "$1" | sort -g |
    awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
pn=$(median "$tmp/previous" numart)
cn=$(median "$tmp/current" numart)
pr=$(median "$tmp/previous" ratio)
cr=$(median "$tmp/current" ratio)
echo
printf 'fib30 numart median over %d runs: previous (%s) %.3f ms, current %.3f ms\n' "$rounds" "${full:0:12}" "$pn" "$cn"
awk -v c="$cn" -v p="$pn" 'BEGIN {printf "ratio current/previous: %.3f (bar: <= 1.05)\n", c / p}'
awk -v c="$cr" -v p="$pr" 'BEGIN {printf "ratio of numart/onetbb ratios, current/previous: %.3f (median numart/onetbb: previous %.3f, current %.3f)\n", c / p, p, c}'
