#!/usr/bin/env bash
# The main job: builds numart (release) and shows it working: the topology as the runtime sees
# it (this machine, and a real 8-node machine loaded from XML), a fork-join example, and the
# core benchmarks side by side with oneTBB (ratios numart / oneTBB).
#   sudo bash scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${NUMART_JOBS:-$(nproc)}
bash scripts/setup.sh
echo "[demo 1/4] building (release) ..."
cmake --preset release >/dev/null
cmake --build build/release -j "$jobs" --target numart_cli numart_example_fork_join numart_bench_core >/dev/null
bin=build/release
echo "[demo 2/4] topology of this machine, then of a 4-socket, 8-node Opteron (XML):"
"$bin/runtime/cli/numart" topo
"$bin/runtime/cli/numart" topo --xml tests/data/topologies/64amd64-4p2n4ca2co.xml
echo "[demo 3/4] fork-join example on this machine:"
"$bin/examples/numart_example_fork_join" 30
echo "[demo 4/4] numart vs oneTBB, alternating rounds in one process (about a minute):"
"$bin/bench/numart_bench_core" 2>&1 | sed -n '/^workload/,$p'
