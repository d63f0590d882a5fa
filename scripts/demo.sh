#!/usr/bin/env bash
# The main job: a SPECjbb-like server (examples/jbb) on numart with its NUMA balancer, side by
# side with the same server on oneTBB, on this machine's topology and, since a machine with one
# node cannot show placement, on a virtual 2-socket machine (emulated memory cost, said so in
# every output). Then the balancer's effect alone (numart with it on and off), and the report:
# a Markdown page with tables and plots whose path is printed at the end.
#   sudo bash scripts/demo.sh          (installs what is missing, builds, runs: see README)
# Environment: NUMART_JOBS (build jobs), NUMART_DEMO_OUT (report directory, default build/demo).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${NUMART_JOBS:-$(nproc)}
out=${NUMART_DEMO_OUT:-build/demo}
bin=build/release
virtual='synthetic:pack:2 [numa] core:2 pu:1;distances:10,20,20,10'
t0=$EPOCHREALTIME
since() { awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }'; }
step() { printf '[demo %s/5, %3ss] %s\n' "$1" "$(since)" "$2"; }

bash scripts/setup.sh
step 1 "building numart (release): library, numart tool, jbb server ..."
cmake --preset release >/dev/null
cmake --build "$bin" -j "$jobs" --target numart_cli numart_jbb >/dev/null

step 2 "the topology as the runtime sees it (this machine):"
"$bin/runtime/cli/numart" topo | sed -n '1,12p'

step 3 "jbb on this machine and on a virtual 2-socket machine, numart and oneTBB alternating (report: $out):"
NUMART_BUILD_DIR=$bin NUMART_BENCH_QUICK=1 NUMART_REPORT_SUITE=demo bash scripts/bench_report.sh "$out" |
  sed -n '/^\[bench_report/p'

step 4 "side by side (bops = business operations per second, higher is better; ratio numart/oneTBB):"
python3 - "$out" <<'EOF'
import json, sys, os
out = sys.argv[1]
rows = []
for name, where in (("jbb_host", "this machine"), ("jbb_virtual", "virtual 2-socket, scatter (emulated memory cost)")):
    path = os.path.join(out, name + ".json")
    try:
        doc = json.load(open(path))
    except (OSError, ValueError) as e:
        rows.append((where, "not run: %s" % e, "", "", ""))
        continue
    r = doc["runtime"]
    def median(side):
        return r[side]["bops_total"]
    def share(side):
        runs = r[side].get("runs") or [r[side]]
        inst = runs[-1].get("instances", [])
        return min(i["local_share"] for i in inst) if inst else float("nan")
    rows.append((where, "%.0f" % median("numart"), "%.0f" % median("onetbb"), "%.2f" % r["ratio_bops"],
                 "%.2f / %.2f" % (share("numart"), share("onetbb"))))
w = max(len(r[0]) for r in rows)
print("  %-*s %12s %12s %7s  %s" % (w, "where", "numart", "oneTBB", "ratio", "min local share numart / oneTBB"))
for r in rows:
    print("  %-*s %12s %12s %7s  %s" % (w, r[0], r[1], r[2], r[3], r[4]))
EOF

step 5 "the balancer alone: numart on the virtual 2-socket machine, data scattered, balancer on and off, after 6 s of warm-up:"
printf '  (it samples where each instance touches memory and moves the instance and its pages toward one node;\n'
printf '   one 2-second window of one seed; issue 7 measures ten seeds, docs/status.md)\n'
for b in on off; do
  "$bin/examples/jbb/numart_jbb" --runtime numart --topology "$virtual" --placement scatter --warmup 6 --seconds 2 \
    --balancer "$b" 2>/dev/null | grep -E '^(bops_total|instance)' | cut -c1-110 | sed "s/^/  balancer $b: /"
done
printf 'demo: done in %s s; report: %s/report.md (plots beside it), all figures: %s/results.json\n' "$(since)" "$out" "$out"
