#!/usr/bin/env bash
# The main job: builds numart (release) and shows it working: the topology as the runtime sees
# it (this machine, and a real 8-node machine loaded from XML), a fork-join example traced
# and summarized, the core benchmarks and the wake-path workloads (hackbench-, schbench- and
# execl-like) side by side with oneTBB (ratios numart / oneTBB).
#   sudo bash scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${NUMART_JOBS:-$(nproc)}
bash scripts/setup.sh
echo "[demo 1/5] building (release) ..."
cmake --preset release >/dev/null
cmake --build build/release -j "$jobs" --target numart_cli numart_example_fork_join numart_bench_core numart_bench_wake >/dev/null
bin=build/release
echo "[demo 2/5] topology of this machine, then of a 4-socket, 8-node Opteron (XML):"
"$bin/runtime/cli/numart" topo
"$bin/runtime/cli/numart" topo --xml tests/data/topologies/64amd64-4p2n4ca2co.xml
echo "[demo 3/5] fork-join example on a virtual 2-node machine, traced (RT_TRACE) and summarized:"
trace=$(mktemp --suffix=.json)
RT_TOPOLOGY="synthetic:pack:2 [numa] core:2 pu:1" RT_TRACE="$trace" "$bin/examples/numart_example_fork_join" 24
"$bin/runtime/cli/numart" trace summarize "$trace" --top 5
rm -f "$trace"
echo "[demo 4/5] numart vs oneTBB, alternating rounds in one process (about a minute):"
"$bin/bench/numart_bench_core" 2>&1 | sed -n '/^workload/,$p'
echo "[demo 5/5] wake-path workloads, numart idle-scan variants vs oneTBB (quick rounds):"
NUMART_BENCH_QUICK=1 "$bin/bench/numart_bench_wake" 2>&1 | sed -n '/^== summary/,$p'
