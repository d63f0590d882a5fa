#!/usr/bin/env python3
"""Turns the outputs of scripts/bench_report.sh into OUTDIR/results.json and OUTDIR/report.md.

Inputs (all in OUTDIR, each optional: a missing one is reported as not run, with the reason
the step table gives):
  steps.tsv          one line per step: name, status (ok | failed | not run), seconds, detail
  core.json          NUMART_BENCH_JSON of numart_bench_core (bench/harness.hpp, numart-bench/1)
  wake.json          NUMART_BENCH_JSON of numart_bench_wake
  jbb_host.json      numart_jbb --runtime both --json on the host topology
  jbb_virtual.json   the same on the virtual 2-socket topology
  topo.txt           `numart topo` of the host
Plots are PNG files drawn by gnuplot into OUTDIR; report.md references each by file name.

  make_report.py OUTDIR [--quick] [--virtual-topology SPEC] [--command TEXT]
"""

import argparse
import datetime
import json
import math
import os
import platform
import re
import subprocess
import sys

# ---- what each workload's headline metrics are ------------------------------------------
#
# A metric: (label, kind, key, unit, scale, better, bar)
#   kind "time": the median seconds per iteration; "counter": a counter's median;
#   "pct": a pooled percentile (p50, p90, p99, p999).
#   bar: None (no bar known), ("ratio", x): numart / onetbb <= x, ("below", x): numart < x.
# The bars are the issues' (docs/status.md, "Measured"): issue 3 for the core workloads,
# issue 4 for the wake path. Workloads not listed get their time, lower is better, no bar.

TIME = ("time", "time", None, "ms", 1e3, "lower", None)

HEADLINES = [
    (r"^fib30$", [("time", "time", None, "ms", 1e3, "lower", ("ratio", 0.7))]),
    (r"^empty_spawn_1M$", [("time", "time", None, "ms", 1e3, "lower", ("ratio", 0.7))]),
    (r"^wake_latency$", [("wake-up p50", "pct", "p50", "us", 1, "lower", ("ratio", 1.0)),
                         ("wake-up p99", "pct", "p99", "us", 1, "lower", ("ratio", 1.0))]),
    (r"^idle_cpu$", [("idle cores", "counter", "idle_cores", "cores", 1, "lower", ("below", 0.005))]),
    (r"^hackbench_G\d+$", [("time", "time", None, "ms", 1e3, "lower", ("ratio", 1.0))]),
    (r"^schbench$", [("wake-up p99", "pct", "p99", "us", 1, "lower", ("ratio", 1.0)),
                     ("requests/s", "counter", "rps", "k/s", 1e-3, "higher", None)]),
    (r"^execl$", [("migrations/step", "counter", "migr_per_step", "/step", 1, "lower", ("below", 0.01)),
                  ("steps/s", "counter", "steps_per_s", "k/s", 1e-3, "higher", None)]),
]


def headline_metrics(workload):
    for pattern, metrics in HEADLINES:
        if re.match(pattern, workload):
            return metrics
    return [TIME]


def bar_text(bar, unit):
    if bar is None:
        return "-"
    kind, x = bar
    if kind == "ratio":
        return "ratio <= %g" % x
    return "< %g %s" % (x, unit)


def fmt(v, digits=4):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if v == 0:
        return "0"
    return "%.*g" % (digits, v)


def side_label(side):
    """numart.SIS_PROP -> numart [SIS_PROP]"""
    return side if "." not in side else "%s [%s]" % tuple(side.split(".", 1))


def safe_name(s):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", s)


def load_json(path):
    """(object, None) or (None, reason)."""
    if not os.path.exists(path):
        return None, "no output file"
    try:
        with open(path) as f:
            return json.load(f), None
    except (OSError, ValueError) as e:
        return None, "output is not valid JSON (%s)" % e


def read_steps(path):
    steps = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) == 4:
                    steps.append({"step": parts[0], "status": parts[1], "seconds": float(parts[2]),
                                  "detail": parts[3]})
    return steps


def step_of(steps, name):
    for s in steps:
        if s["step"] == name:
            return s
    return {"step": name, "status": "not run", "seconds": 0.0, "detail": "the step did not run"}


# ---- values out of a numart-bench/1 file ------------------------------------------------


def metric_value(side, kind, key):
    """The side's value of a metric in the benchmark's own unit, or None."""
    if side is None:
        return None
    if kind == "time":
        return side.get("median_s")
    if kind == "counter":
        c = side.get("counters", {}).get(key)
        return None if c is None else c.get("median")
    return side.get("percentiles", {}).get(key)


def summary_rows(source, bench):
    """One row per (workload, headline metric, numart side) of a numart-bench/1 file."""
    rows = []
    for workload, w in sorted(bench.get("workloads", {}).items()):
        sides = w.get("sides", {})
        tbb = sides.get("onetbb")
        for label, kind, key, unit, scale, better, bar in headline_metrics(workload):
            for name, side in sorted(sides.items()):
                if name != "numart" and not name.startswith("numart."):
                    continue
                # numart.NO_X turns a default feature off: an A/B reference, the bar is not for it
                ab = name.startswith("numart.NO_")
                nv = metric_value(side, kind, key)
                tv = metric_value(tbb, kind, key)
                if nv is None and tv is None and not side.get("errors"):
                    continue
                failed = bool(side.get("errors")) or bool(tbb and tbb.get("errors"))
                ratio = nv / tv if nv is not None and tv is not None and tv > 0 else None
                rows.append(verdict({
                    "source": source, "workload": workload, "metric": label, "side": name,
                    "numart": None if nv is None else nv * scale, "onetbb": None if tv is None else tv * scale,
                    "unit": unit, "ratio": ratio, "better": better,
                    "bar": "(A/B reference)" if ab and bar else bar_text(bar, unit),
                    "bar_spec": None if ab else bar, "failed": failed}))
    return rows


def verdict(row):
    bar = row.pop("bar_spec")
    if row["failed"]:
        row["verdict"] = "INVALID (check failed)"
    elif bar is None:
        row["verdict"] = "-"
    elif bar[0] == "ratio":
        row["verdict"] = "-" if row["ratio"] is None else ("met" if row["ratio"] <= bar[1] else "NOT met")
    else:
        row["verdict"] = "-" if row["numart"] is None else ("met" if row["numart"] < bar[1] else "NOT met")
    return row


# ---- jbb --------------------------------------------------------------------------------


def jbb_sides(obj, parent_key=None, out=None):
    """Every object holding a "bops_total", keyed by its runtime ("numart" / "onetbb")."""
    if out is None:
        out = {}
    if isinstance(obj, dict):
        if "bops_total" in obj:
            name = obj.get("runtime") if isinstance(obj.get("runtime"), str) else parent_key
            if name in ("numart", "onetbb") and name not in out:
                out[name] = obj
        for k, v in obj.items():
            jbb_sides(v, k, out)
    elif isinstance(obj, list):
        for v in obj:
            jbb_sides(v, parent_key, out)
    return out


def jbb_ratio(obj):
    if isinstance(obj, dict):
        if isinstance(obj.get("ratio_bops"), (int, float)):
            return float(obj["ratio_bops"])
        for v in obj.values():
            r = jbb_ratio(v)
            if r is not None:
                return r
    return None


def jbb_row(where, data):
    sides = jbb_sides(data)
    n = sides.get("numart", {}).get("bops_total")
    t = sides.get("onetbb", {}).get("bops_total")
    ratio = jbb_ratio(data)
    if ratio is None and isinstance(n, (int, float)) and isinstance(t, (int, float)) and t > 0:
        ratio = n / t
    row = {"source": "jbb", "workload": "jbb (%s)" % where, "metric": "bops", "side": "numart",
           "numart": n, "onetbb": t, "unit": "bops", "ratio": ratio, "better": "higher", "bar": "-",
           "bar_spec": None, "failed": False}
    return verdict(row)


# ---- gnuplot ----------------------------------------------------------------------------


class Plots:
    def __init__(self, out):
        self.out = out
        self.made = []  # (file, title)
        self.errors = []

    def draw(self, name, title, script, data, size="960,540"):
        """Writes NAME.dat and NAME.gp, runs gnuplot; returns the PNG file name or None."""
        png = safe_name(name) + ".png"
        dat = safe_name(name) + ".dat"
        gp = safe_name(name) + ".gp"
        with open(os.path.join(self.out, dat), "w") as f:
            f.write(data)
        text = ("set terminal pngcairo size %s noenhanced font 'sans,10'\n"
                "set output '%s'\nset title '%s'\nset grid ytics\nset key outside right top\n%s\n"
                % (size, png, title.replace("'", ""), script.replace("DATA", "'%s'" % dat)))
        with open(os.path.join(self.out, gp), "w") as f:
            f.write(text)
        r = subprocess.run(["gnuplot", gp], cwd=self.out, capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(os.path.join(self.out, png)):
            self.errors.append("%s: gnuplot failed: %s" % (png, r.stderr.strip()[-300:]))
            return None
        self.made.append((png, title))
        return png


def quote(s):
    return '"%s"' % s.replace('"', "'")


def plot_ratios(plots, rows):
    pts = [r for r in rows if r["ratio"] is not None and r["ratio"] > 0]
    if not pts:
        return None
    def label(r):
        variant = "" if r["side"] == "numart" else " " + side_label(r["side"])[len("numart "):]
        return "%s%s %s" % (r["workload"], variant, r["metric"])

    def colour(r):  # green: numart is better on this metric, red: oneTBB is
        good = r["ratio"] <= 1 if r["better"] == "lower" else r["ratio"] >= 1
        return 0x44AA77 if good else 0xCC6677

    data = "".join("%d %s %.6g %d\n" % (i, quote(label(r)), r["ratio"], colour(r)) for i, r in enumerate(pts))
    script = ("set logscale y 2\nset ylabel 'numart / oneTBB (log scale)'\nset xtics rotate by 60 right font ',9'\n"
              "set style fill solid 0.7\nset boxwidth 0.7\nset bmargin 17\nunset key\n"
              "set xrange [-1:%d]\n"
              "plot DATA using 1:3:4:xtic(2) with boxes lc rgb variable, 1 with lines lc rgb 'black' lw 2"
              % len(pts))
    return plots.draw("ratios", "numart / oneTBB per headline metric (green: numart better, red: oneTBB better; "
                      "line: parity)", script, data, size="1200,700")


def plot_rounds(plots, prefix, workload, w):
    sides = [(k, v) for k, v in sorted(w.get("sides", {}).items()) if v.get("seconds")]
    if not sides:
        return None
    blocks = []
    for name, s in sides:
        blocks.append("# %s\n" % name + "".join("%d %.6g\n" % (i, t * 1e3) for i, t in enumerate(s["seconds"])))
    data = "\n\n".join(blocks)
    plot = ", ".join("DATA index %d using 1:2 with linespoints title %s" % (i, quote(side_label(n)))
                     for i, (n, _) in enumerate(sides))
    script = "set xlabel 'round (sides alternate within a round)'\nset ylabel 'ms per iteration'\nset yrange [0:*]\nset xtics 1\nplot " + plot
    return plots.draw("%s_rounds_%s" % (prefix, workload), "%s: time per round, every side" % workload, script, data)


PCT_KEYS = [("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p999", "p99.9"), ("max", "max")]


def plot_percentiles(plots, prefix, workload, w):
    sides = [(k, v["percentiles"]) for k, v in sorted(w.get("sides", {}).items())
             if v.get("percentiles", {}).get("n", 0) > 0]
    if not sides:
        return None
    blocks = []
    for name, p in sides:
        blocks.append("# %s\n" % name + "".join("%d %s %.6g\n" % (i, label, max(p.get(k, 0), 1e-3))
                                                 for i, (k, label) in enumerate(PCT_KEYS)))
    data = "\n\n".join(blocks)
    plot = ", ".join("DATA index %d using 1:3:xtic(2) with linespoints title %s" % (i, quote(side_label(n)))
                     for i, (n, _) in enumerate(sides))
    script = "set logscale y 10\nset ylabel 'us (log scale)'\nset xrange [-0.3:%g]\nplot %s" % (len(PCT_KEYS) - 0.7, plot)
    return plots.draw("%s_pct_%s" % (prefix, workload), "%s: pooled latency percentiles" % workload, script, data)


def plot_hackbench(plots, wake):
    ws = sorted(((int(m.group(1)), w) for k, w in wake.get("workloads", {}).items()
                 for m in [re.match(r"^hackbench_G(\d+)$", k)] if m), key=lambda x: x[0])
    if not ws:
        return None
    names = sorted({s for _, w in ws for s, v in w.get("sides", {}).items() if v.get("median_s") is not None})
    blocks = []
    for name in names:
        lines = ["%d %.6g\n" % (g, w["sides"][name]["median_s"] * 1e3) for g, w in ws
                 if w.get("sides", {}).get(name, {}).get("median_s") is not None]
        blocks.append("# %s\n" % name + "".join(lines))
    plot = ", ".join("DATA index %d using 1:2 with linespoints title %s" % (i, quote(side_label(n)))
                     for i, n in enumerate(names))
    script = ("set logscale x 2\nset xlabel 'groups G (20 senders + 20 receivers each)'\n"
              "set ylabel 'ms per run (median over rounds)'\nset yrange [0:*]\nplot " + plot)
    return plots.draw("wake_hackbench", "hackbench-like: total time against groups", script, "\n\n".join(blocks))


def plot_jbb(plots, jbb):
    cols = []
    for where, data in jbb:
        sides = jbb_sides(data)
        n = sides.get("numart", {}).get("bops_total")
        t = sides.get("onetbb", {}).get("bops_total")
        if isinstance(n, (int, float)) or isinstance(t, (int, float)):
            cols.append((where, n or 0, t or 0))
    if not cols:
        return None
    data = "".join("%s %.6g %.6g\n" % (quote(w), n, t) for w, n, t in cols)
    script = ("set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.6\n"
              "set ylabel 'bops (transactions/s)'\nset yrange [0:*]\n"
              "plot DATA using 2:xtic(1) title 'numart', '' using 3 title 'oneTBB'")
    return plots.draw("jbb_bops", "jbb-like server: throughput, numart and oneTBB", script, data)


# ---- Markdown ---------------------------------------------------------------------------


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def summary_table(rows):
    body = []
    for r in rows:
        wl = r["workload"] + ("" if r["side"] == "numart" else " " + side_label(r["side"])[len("numart "):])
        unit = r["unit"]
        body.append([wl, r["metric"], "%s %s" % (fmt(r["numart"]), unit) if r["numart"] is not None else "-",
                     "%s %s" % (fmt(r["onetbb"]), unit) if r["onetbb"] is not None else "-",
                     fmt(r["ratio"], 3), r["better"], r["bar"], r["verdict"]])
    return md_table(["workload", "metric", "numart", "onetbb", "ratio numart/onetbb", "better", "bar", "verdict"], body)


def bench_detail(prefix, title, bench, plots, lines):
    lines.append("## %s\n" % title)
    rt = bench.get("runtime", {})
    lines.append("Runtime: %s workers, %s node(s), topology `%s`%s; describe() origin: %s; quick: %s.\n"
                 % (rt.get("workers"), rt.get("nodes"), rt.get("topology"),
                    " (virtual)" if rt.get("virtual_topology") else "", rt.get("origin"),
                    "yes" if bench.get("quick") else "no"))
    for workload, w in sorted(bench.get("workloads", {}).items()):
        lines.append("### %s\n" % workload)
        sides = w.get("sides", {})
        counters = sorted({c for s in sides.values() for c in s.get("counters", {})})
        body = []
        for name, s in sorted(sides.items()):
            sec = s.get("seconds", [])
            row = [side_label(name), str(s.get("rounds", 0)),
                   fmt(s["median_s"] * 1e3) if s.get("median_s") is not None else "-",
                   fmt(min(sec) * 1e3) if sec else "-", fmt(max(sec) * 1e3) if sec else "-"]
            row += [fmt(s.get("counters", {}).get(c, {}).get("median")) for c in counters]
            body.append(row)
        lines.append(md_table(["side", "rounds", "median ms", "min ms", "max ms"] + counters, body))
        ratios = w.get("ratios", {})
        for name, r in sorted(ratios.items()):
            parts = []
            if r.get("time") is not None:
                parts.append("time %s" % fmt(r["time"], 3))
            parts += ["%s %s" % (k, fmt(v, 3)) for k, v in sorted(r.get("counters", {}).items())]
            parts += ["%s %s" % (k, fmt(v, 3)) for k, v in sorted(r.get("percentiles", {}).items())]
            if parts:
                lines.append("Ratios %s / onetbb: %s.\n" % (side_label(name), ", ".join(parts)))
        pct_sides = [(n, s["percentiles"]) for n, s in sorted(sides.items()) if s.get("percentiles")]
        if pct_sides:
            lines.append("Pooled samples over every round (us):\n")
            lines.append(md_table(["side", "n", "min", "p50", "p90", "p99", "p99.9", "max"],
                                  [[side_label(n), fmt(p.get("n"), 9), fmt(p.get("min")), fmt(p.get("p50")),
                                    fmt(p.get("p90")), fmt(p.get("p99")), fmt(p.get("p999")), fmt(p.get("max"))]
                                   for n, p in pct_sides]))
        for name, s in sorted(sides.items()):
            if s.get("errors"):
                lines.append("**%s failed in %d round(s):** %s\n" % (side_label(name), len(s["errors"]), s["errors"][0]))
        for png in (plot_rounds(plots, prefix, workload, w), plot_percentiles(plots, prefix, workload, w)):
            if png:
                lines.append("![%s](%s)\n" % (png[:-4], png))


def text(v):
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return fmt(v)
    if isinstance(v, list):
        return ", ".join(text(x) for x in v) if v else "-"
    return "-" if v is None else str(v)


JBB_SETUP = ["topology", "nodes", "virtual_topology", "workers", "instances_count", "warehouses_per_instance",
             "warehouse_kib", "placement", "tbb_arenas", "emulated_remote_cost", "local_cost", "remote_cost", "seed",
             "deck_fingerprint"]


def jbb_detail(where, data, step, lines):
    lines.append("### jbb on %s\n" % where)
    if data is None:
        lines.append("jbb: not run (%s)\n" % step)
        return
    setup = ["%s %s" % (k, text(data[k])) for k in JBB_SETUP if k in data]
    if setup:
        lines.append("Setup: %s.\n" % "; ".join(setup))
    if data.get("emulated_remote_cost") is True:
        lines.append("Memory accesses carry **emulated** cost here (work per touched chunk, remote chunks more in "
                     "proportion to distance - 10): the figures show the scheduler's placement, not real memory "
                     "latency.\n")
    sides = jbb_sides(data)
    for name in ("numart", "onetbb"):
        s = sides.get(name)
        if s is None:
            lines.append("%s: no result in the output.\n" % name)
            continue
        runs = s.get("runs") if isinstance(s.get("runs"), list) else [s]
        lines.append("**%s**: %s bops in total (%s).\n"
                     % (name, fmt(s.get("bops_total")),
                        "median of %d runs" % len(runs) if len(runs) > 1 else "one run"))
        for n, run in enumerate(runs, 1):
            head = ["bops %s" % fmt(run.get("bops_total"))]
            head += ["%s %s" % (k, text(run[k])) for k in ("balancer", "detail", "seconds") if k in run]
            lines.append("%s run %d: %s.\n" % (name, n, "; ".join(head)))
            inst = run.get("instances", [])
            if inst:
                lines.append(md_table(["instance", "bops", "local share", "home node", "active nodes", "p99 us"],
                                      [[str(i), fmt(x.get("bops")), fmt(x.get("local_share"), 3),
                                        text(x.get("home_node")), text(x.get("active_nodes")), fmt(x.get("p99_us"))]
                                       for i, x in enumerate(inst)]))
            lat = run.get("latency", {})
            if isinstance(lat, dict) and lat:
                lines.append(md_table(["transaction", "count", "mean us", "stddev us", "min us", "p50 us", "p99 us",
                                       "max us"],
                                      [[t, fmt(v.get("count"), 9), fmt(v.get("mean_us")), fmt(v.get("stddev_us")),
                                        fmt(v.get("min_us")), fmt(v.get("p50_us")), fmt(v.get("p99_us")),
                                        fmt(v.get("max_us"))]
                                       for t, v in lat.items() if isinstance(v, dict)]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--virtual-topology", default="")
    ap.add_argument("--command", default="scripts/bench_report.sh")
    args = ap.parse_args()
    out = args.out

    steps = read_steps(os.path.join(out, "steps.tsv"))
    core, core_why = load_json(os.path.join(out, "core.json"))
    wake, wake_why = load_json(os.path.join(out, "wake.json"))
    jbb = []
    for where, step, f in (("host", "jbb_host", "jbb_host.json"), ("virtual 2-socket", "jbb_virtual", "jbb_virtual.json")):
        st = step_of(steps, step)
        data, why = load_json(os.path.join(out, f)) if st["status"] == "ok" else (None, None)
        jbb.append((where, data, st["detail"] if data is None and why is None else why))
    topo = ""
    if os.path.exists(os.path.join(out, "topo.txt")):
        with open(os.path.join(out, "topo.txt")) as f:
            topo = f.read()

    rows = []
    if core is not None:
        rows += summary_rows("core", core)
    if wake is not None:
        rows += summary_rows("wake", wake)
    for where, data, _ in jbb:
        if data is not None:
            rows.append(jbb_row(where, data))

    plots = Plots(out)
    lines = ["# numart vs oneTBB: benchmark report\n",
             "Generated %s on `%s` (%s, %d CPUs) by `%s`%s.\n"
             % (datetime.datetime.now().isoformat(timespec="seconds"), platform.node(), platform.platform(),
                os.cpu_count() or 0, args.command, " in quick mode (NUMART_BENCH_QUICK=1: fewer rounds)" if args.quick else ""),
             "Every ratio is numart / oneTBB of the same metric, measured in one process with the two runtimes "
             "alternating round by round. `better` says which direction is better for that metric. Bars are the "
             "issues' targets (docs/status.md); they are reported, never asserted. How to read this: docs/benchmarks.md.\n",
             "## Ratios numart / oneTBB\n"]
    if rows:
        lines.append(summary_table(rows))
    else:
        lines.append("No benchmark produced results (see Steps below).\n")
    for where, data, why in jbb:
        if data is None:
            lines.append("jbb (%s): not run (%s)\n" % (where, why))
    png = plot_ratios(plots, rows)
    if png:
        lines.append("![ratios](%s)\n" % png)

    if core is not None:
        bench_detail("core", "Core workloads (numart_bench_core)", core, plots, lines)
    else:
        lines.append("## Core workloads\n\nnumart_bench_core: not run (%s; %s)\n" % (core_why, step_of(steps, "core")["detail"]))
    if wake is not None:
        bench_detail("wake", "Wake-path workloads (numart_bench_wake)", wake, plots, lines)
        png = plot_hackbench(plots, wake)
        if png:
            lines.append("![hackbench](%s)\n" % png)
    else:
        lines.append("## Wake-path workloads\n\nnumart_bench_wake: not run (%s; %s)\n" % (wake_why, step_of(steps, "wake")["detail"]))

    lines.append("## jbb-like server (examples/jbb)\n")
    if args.virtual_topology:
        lines.append("The virtual topology is `%s`: virtual-topology mode (DESIGN.md §7); the memory cost there "
                     "is emulation, as the output's `emulated_remote_cost` says.\n" % args.virtual_topology)
    for where, data, why in jbb:
        jbb_detail(where, data, why, lines)
    png = plot_jbb(plots, [(w, d) for w, d, _ in jbb if d is not None])
    if png:
        lines.append("![jbb](%s)\n" % png)

    lines.append("## Host topology (`numart topo`)\n")
    lines.append("```\n%s```\n" % (topo if topo else "(not available: see Steps)\n"))
    describe = (core or wake or {}).get("runtime", {}).get("describe", "")
    lines.append("## Runtime settings (`rt::runtime::describe()`)\n")
    lines.append("From %s.\n" % ("numart_bench_core's runtime" if core else "a runtime built from the environment"))
    lines.append("```\n%s```\n" % (describe if describe else "(not available)\n"))

    lines.append("## Steps\n")
    lines.append(md_table(["step", "status", "seconds", "detail"],
                          [[s["step"], s["status"], "%.1f" % s["seconds"], s["detail"]] for s in steps]))
    if plots.errors:
        lines.append("Plots that failed: %s\n" % "; ".join(plots.errors))

    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(lines))
    results = {
        "format": "numart-report/1",
        "generated": datetime.datetime.now().isoformat(timespec="seconds"),
        "host": {"node": platform.node(), "platform": platform.platform(), "cpus": os.cpu_count(),
                 "topo": topo, "environment": {k: v for k, v in os.environ.items() if k.startswith("RT_")}},
        "quick": args.quick,
        "steps": steps,
        "summary": rows,
        "core": core,
        "wake": wake,
        "jbb": {w: {"result": d, "not_run": None if d is not None else why} for w, d, why in jbb},
        "virtual_topology": args.virtual_topology,
        "plots": [p for p, _ in plots.made],
    }
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
        f.write("\n")
    if plots.errors:
        for e in plots.errors:
            print("make_report: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
