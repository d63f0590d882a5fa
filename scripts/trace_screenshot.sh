#!/usr/bin/env bash
# The picture in docs/observability.md, made from a real trace: runs examples/jbb traced
# (RT_TRACE) with its stats file (RT_STATS) on the virtual 8-node Opteron for 0.15 s (short
# enough that no ring of 64 Ki events wraps), checks the trace
# against the counters of the same run (one track per worker, nothing dropped, every task
# ended, task slices, steals and hand-offs equal to the counters) and draws it with gnuplot.
#   bash scripts/trace_screenshot.sh [OUT.png]     (default docs/images/jbb-trace.png)
# Environment: NUMART_BUILD_DIR (default build/release), NUMART_JOBS.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${NUMART_BUILD_DIR:-build/release}
out=${1:-docs/images/jbb-trace.png}
jobs=${NUMART_JOBS:-$(nproc)}
[ -f "$build/CMakeCache.txt" ] || cmake --preset release >/dev/null
cmake --build "$build" -j "$jobs" --target numart_jbb >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
RT_TRACE="$tmp/trace.json" RT_STATS="$tmp/stats.json" "$build/examples/jbb/numart_jbb" --runtime numart \
  --topology xml:tests/data/topologies/64amd64-4p2n4ca2co.xml --workers 16 --placement scatter \
  --warmup 0 --seconds 0.15 >/dev/null 2>&1
echo "trace_screenshot: trace against the counters of the same run (trace, counters):"
mkdir -p "$(dirname "$out")"
python3 scripts/report/trace_png.py "$tmp/trace.json" "$tmp/stats.json" "$out"
