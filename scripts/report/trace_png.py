#!/usr/bin/env python3
"""Checks a numart trace against the stats file of the same run, and draws it as a PNG.

  trace_png.py TRACE.json STATS.json OUT.png [--window-ms MS]

Checks (issue 9's bar for the jbb trace), each printed, exit 1 when one fails:
  the trace is valid JSON with one track per worker; no event was dropped; every task that
  started has an end and every park an unpark (no unmatched events); the trace's task slices,
  steals and mailbox hand-offs of workers equal the stats file's tasks_run, steals and
  mailbox_handoffs.
The picture: one row per worker (grouped by node, as Perfetto groups its tracks), task slices
coloured by group over a window of the run (the busiest WINDOW ms by default 20), parks in
grey. Drawn with gnuplot (Debian gnuplot-nox), so the screenshot comes from the trace itself.
"""
import json
import subprocess
import sys
import tempfile
import os


def main(argv):
    if len(argv) < 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    trace_path, stats_path, out_png = argv[1], argv[2], argv[3]
    window_ms = 20.0
    if len(argv) == 6 and argv[4] == "--window-ms":
        window_ms = float(argv[5])
    try:
        trace = json.load(open(trace_path))
        stats = json.load(open(stats_path))
    except (OSError, ValueError) as e:
        print("trace_png: %s" % e, file=sys.stderr)
        return 2
    meta = trace["otherData"]["numart"]
    events = trace["traceEvents"]
    workers = [t for t in meta["tracks"] if t["worker"] >= 0]
    tid_row = {t["tid"]: i for i, t in enumerate(workers)}
    total = lambda name: sum(w["counters"][name] for w in stats["workers"]) + stats["outside"]["counters"].get(name, 0) \
        if isinstance(stats.get("outside"), dict) else sum(w["counters"][name] for w in stats["workers"])
    worker_total = lambda name: sum(w["counters"][name] for w in stats["workers"])

    tasks = [e for e in events if e.get("ph") == "X" and e.get("args", {}).get("event") == "task"]
    steals = [e for e in events if e.get("ph") == "X" and e.get("cat") == "steal"]
    handoffs = [e for e in events if e.get("ph") == "X" and e.get("args", {}).get("event") == "mailbox_handoff"]
    checks = [
        ("one track per worker", len(workers), len(stats["workers"])),
        ("events dropped", sum(t["dropped"] for t in meta["tracks"]), 0),
        ("unmatched ends and unparks", sum(t["unmatched"] for t in meta["tracks"]), 0),
        ("task slices = tasks_run", len(tasks), worker_total("tasks_run")),
        ("steals = steals", len(steals), worker_total("steals")),
        ("worker hand-offs = mailbox_handoffs", len(handoffs), worker_total("mailbox_handoffs")),
    ]
    ok = True
    for name, got, want in checks:
        good = got == want
        ok = ok and good
        print("  %-40s %10d %10d  %s" % (name, got, want, "ok" if good else "MISMATCH"))

    # The busiest window: the one with most task time, on a 1 ms grid.
    if tasks:
        end = max(e["ts"] + e.get("dur", 0.0) for e in tasks)
        width = window_ms * 1000.0
        buckets = {}
        for e in tasks:
            b = int(e["ts"] // 1000)
            buckets[b] = buckets.get(b, 0.0) + e.get("dur", 0.0)
        best, best_load = 0, -1.0
        for b in sorted(buckets):
            load = sum(buckets.get(b + k, 0.0) for k in range(int(window_ms)))
            if load > best_load:
                best, best_load = b, load
        t0 = best * 1000.0
        t1 = min(t0 + width, end)
    else:
        t0, t1 = 0.0, 1.0
    groups = {g["id"]: g["name"] for g in meta["groups"]}
    tops = sorted({n.split("/")[0] for n in groups.values()})
    colour = {name: i + 1 for i, name in enumerate(tops)}
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "slices.dat")
        with open(data, "w") as f:
            for e in events:
                if e.get("ph") != "X" or e.get("tid") not in tid_row:
                    continue
                a = e.get("args", {})
                if a.get("event") not in ("task", "park"):
                    continue
                s, d = e["ts"], e.get("dur", 0.0)
                if s + d < t0 or s > t1:
                    continue
                s, d = max(s, t0), min(s + d, t1) - max(s, t0)
                row = tid_row[e["tid"]]
                c = 0 if a["event"] == "park" else colour.get(groups.get(a.get("group"), "?").split("/")[0], len(tops) + 1)
                f.write("%.3f %d %.3f %d\n" % ((s - t0) / 1000.0, row, d / 1000.0, c))
        labels = ", ".join('"w%d n%d" %d' % (t["worker"], t["node"], i) for i, t in enumerate(workers))
        keys = "\n".join("set label %d '%s' at graph 1.01, graph %.2f textcolor lt %d" %
                         (i + 1, name, 0.95 - 0.05 * i, colour[name]) for i, name in enumerate(tops))
        script = f"""
set terminal pngcairo size 1400,{200 + 28 * len(workers)} font ',10'
set output '{out_png}'
set title 'examples/jbb, traced (RT_TRACE): {meta["runtime"]} on {len(workers)} workers, {len(meta["nodes"])} nodes; {t1 / 1000.0 - t0 / 1000.0:.0f} ms from {t0 / 1000.0:.0f} ms; parks in black' noenhanced
set xlabel 'ms'
set yrange [-0.5:{len(workers) - 0.5}] reverse
set ytics ({labels})
set xrange [0:{(t1 - t0) / 1000.0:.3f}]
set rmargin 14
unset key
{keys}
set palette maxcolors 8
set style fill solid 1.0 noborder
plot '{data}' using ($1 + $3 / 2):2:($3 / 2):(0.38):($4 == 0 ? 0 : $4) with boxxyerror lc variable
"""
        r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
        if r.returncode != 0:
            print("trace_png: gnuplot failed: %s" % r.stderr.strip().splitlines()[-1:], file=sys.stderr)
            return 1
    print("trace_png: %s (%d tasks in the trace, window %.0f-%.0f ms)" % (out_png, len(tasks), t0 / 1000.0, t1 / 1000.0))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
