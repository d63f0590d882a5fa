#!/usr/bin/env python3
"""Issue 7's first bar, measured: examples/jbb on the virtual 8-node Opteron, 2 instances of
8 warehouses on 16 workers (4 nodes' worth each), scatter placement, for SEEDS seeds, with the
balancer on and off, side by side per seed.

  jbb_bars.py NUMART_JBB [SEEDS] [WARMUP_S] [SECONDS] [JBB_OPTION ...]   (defaults 10, 3, 3)

Options after SECONDS go to every run, e.g. `--local-cost 0 --remote-cost 12` for the emulation's
calibration before ADR 0024.

Per seed and instance: the local share after warm-up, the preferred node, the active nodes and
whether every active node is within distance 16 of the preferred node (an island: on this
matrix no two disjoint 4-node sets have every pair within 16, docs/design/numa-scoring.md);
then bops with the balancer over bops without. Prints a table and the verdicts; exit 0.
"""
import json
import statistics
import subprocess
import sys

TOPO = "xml:tests/data/topologies/64amd64-4p2n4ca2co.xml"
DIST = [[10, 16, 16, 22, 16, 22, 16, 22], [16, 10, 22, 16, 22, 16, 16, 22], [16, 22, 10, 16, 16, 22, 16, 22],
        [22, 16, 16, 10, 16, 22, 22, 16], [16, 22, 16, 16, 10, 16, 16, 16], [22, 16, 22, 22, 16, 10, 16, 16],
        [16, 16, 16, 22, 16, 16, 10, 16], [22, 22, 22, 16, 16, 16, 16, 10]]


def run(binary, seed, balancer, warmup, seconds, extra):
    cmd = [binary, "--runtime", "numart", "--topology", TOPO, "--workers", "16", "--instances", "2",
           "--warehouses", "8", "--placement", "scatter", "--warmup", str(warmup), "--seconds", str(seconds),
           "--seed", str(seed), "--balancer", balancer, "--json"] + extra
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary = argv[1]
    seeds = int(argv[2]) if len(argv) > 2 else 10
    warmup = float(argv[3]) if len(argv) > 3 else 3.0
    seconds = float(argv[4]) if len(argv) > 4 else 3.0
    extra = argv[5:]
    print("seed  inst  local  pref  active            island  | bops on      bops off     on/off")
    ok_local = ok_island = 0
    ratios = []
    for seed in range(1, seeds + 1):
        on = run(binary, seed, "on", warmup, seconds, extra)
        off = run(binary, seed, "off", warmup, seconds, extra)
        ratio = on["bops_total"] / off["bops_total"]
        ratios.append(ratio)
        seed_local = seed_island = True
        for i, inst in enumerate(on["instances"]):
            pref = inst.get("preferred_node")
            active = inst.get("active_nodes") or []
            island = isinstance(pref, int) and pref >= 0 and all(DIST[pref][a] <= 16 for a in active)
            seed_local = seed_local and inst["local_share"] >= 0.90
            seed_island = seed_island and island
            tail = "| %10.0f  %10.0f  %6.3f" % (on["bops_total"], off["bops_total"], ratio) if i == 0 else ""
            print("%4d  %4d  %5.3f  %4s  %-16s  %-6s  %s" % (seed, i, inst["local_share"], pref,
                                                              ",".join(map(str, active)), "yes" if island else "no", tail))
        ok_local += seed_local
        ok_island += seed_island
    print("local share >= 0.90 for both instances: %d of %d seeds (bar: 10 of 10)" % (ok_local, seeds))
    print("active nodes within 16 of the preferred node, both instances: %d of %d seeds (bar: 10 of 10)" % (ok_island, seeds))
    print("bops balancer on / off: median %.3f, range %.3f-%.3f (bar: >= 1.08)" % (statistics.median(ratios), min(ratios), max(ratios)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
