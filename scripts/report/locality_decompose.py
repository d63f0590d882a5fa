#!/usr/bin/env python3
"""Splits numart_bench_locality's idle-while-work-waits figure (idlewt%, ADR 0016) into its parts,
from one run written by `numart_bench_locality --dump=PREFIX` (the file format is in the
benchmark's header comment).

  python3 scripts/report/locality_decompose.py DUMP_FILE [DUMP_FILE ...]

Per file:
* idlewt% recomputed the way rt::trace::summarize does (the integral of min(workers parked,
  tasks waiting that no woken worker is on its way to), of workers x span): it must equal the
  benchmark's figure for that run; a mismatch means the dump and the summary disagree.
* That integral attributed to the waiting tasks, by task kind (group, background) and by where
  the task stood at each instant, according to the worker that ran it in the end (its runner):
    queued: the runner was not parked (it ran a task, or searched): the task waited in a queue
            for a busy worker;
    to-wake: the runner parked and not yet woken (the spawn's own path, up to the waker's
            stamp);
    woken: the runner woken, not yet run by the OS;
    resumed: the runner running again after its last task or wake-up, not yet in this task
            (its search).
  Each instant's count is shared evenly among the waiting tasks not in the woken phase (the
  metric leaves out as many tasks as there are woken workers on their way), or among all of
  them when every one is: a split, not a measurement of which task a parked worker missed.
* The home node's work: tasks its workers ran, how many were background tasks (taken from
  other nodes), and its workers' busy share of the span.
* The group tasks' waits (spawn to start) at home and away, against a replay of the queueing
  model of scripts/report/locality_model.py on this run's own group arrivals and task times
  (the home node's workers as FIFO servers running nothing else): never spilling, and spilling
  each task whose wait would exceed 1000 us (the two-queued-ahead backlog rule).
A diagnosis aid, not a benchmark: it prints what one run did.
"""
import bisect
import collections
import math
import statistics
import sys


def load(path):
    span = workers = home = None
    node_of, parks, tasks = {}, [], []
    try:
        with open(path, encoding="ascii") as f:
            lines = f.readlines()
    except (OSError, UnicodeDecodeError) as e:
        sys.exit(f"{path}: cannot read a numart_bench_locality dump ({e})")
    for n, line in enumerate(lines, 1):
        p = line.split()
        try:
            if p[0] == "S":
                span, workers, home = int(p[1]), int(p[2]), int(p[3])
            elif p[0] == "W":
                node_of[int(p[1])] = int(p[2])
            elif p[0] == "P":
                w, ts, dur, runnable, join = (int(x) for x in p[1:6])
                parks.append((w, ts, dur, min(runnable, dur), join == 1))
            elif p[0] == "T":
                g, spawn, start, end, w = (int(x) for x in p[1:6])
                tasks.append((g == 1, spawn, start, end, w))
            else:
                raise ValueError(f"unknown record '{p[0]}'")
        except (IndexError, ValueError) as e:
            sys.exit(f"{path}:{n}: not a numart_bench_locality dump line ({e})")
    if span is None or not node_of:
        sys.exit(f"{path}: no S or W line: not a numart_bench_locality --dump file")
    if span <= 0 or workers <= 0:
        sys.exit(f"{path}: a span of {span} ns over {workers} workers: nothing to split")
    if not any(n == home for n in node_of.values()):
        sys.exit(f"{path}: no W line puts a worker on the home node {home}")
    if any(t[2] < t[1] or t[4] not in node_of for t in tasks):
        sys.exit(f"{path}: a task that never ran, started before its spawn, or ran on a worker with no W line")
    return span, workers, home, node_of, parks, tasks


def phases(parks, tasks):
    """Per task, the times that split its wait: (park start, wake, resume, busy until) of the park
    slice its runner left last before starting it, busy until = the end of the runner's last
    task before this one; None when that slice ended before the spawn (the runner was not parked
    during the wait)."""
    by_worker = collections.defaultdict(list)
    for w, ts, dur, runnable, join in parks:
        by_worker[w].append((ts + dur, ts, ts + dur - runnable))
    for slices in by_worker.values():
        slices.sort()
    ends = collections.defaultdict(list)
    for _, _, start, end, w in tasks:
        ends[w].append(end)
    for e in ends.values():
        e.sort()
    out = []
    for _, spawn, start, _, w in tasks:
        slices = by_worker.get(w, [])
        k = bisect.bisect_right(slices, (start, float("inf"), 0)) - 1
        if k < 0 or slices[k][0] <= spawn:
            out.append(None)
            continue
        resume, park_ts, wake = slices[k]
        e = ends[w]
        j = bisect.bisect_right(e, start) - 1
        out.append((park_ts, wake, resume, e[j] if j >= 0 else 0))
    return out


def phase_at(p, t):
    if p is None or t < p[0]:
        return "queued"
    if t < p[1]:
        return "to-wake"
    if t < p[2]:
        return "woken"
    return "queued" if t < p[3] else "resumed"


def decompose(parks, tasks, ph):
    edges = []  # (ts, task or None, d_waiting, d_parked, d_woken)
    for w, ts, dur, runnable, join in parks:
        wake = ts + dur - runnable
        if wake > ts:
            edges += [(ts, None, 0, 1, 0), (wake, None, 0, -1, 0)]
        if not join and wake < ts + dur:
            edges += [(wake, None, 0, 0, 1), (ts + dur, None, 0, 0, -1)]
    for i, (_, spawn, start, _, _) in enumerate(tasks):
        if start > spawn:
            edges += [(spawn, i, 1, 0, 0), (start, i, -1, 0, 0)]
    edges.sort(key=lambda e: e[0])
    waiting, parked, woken, last, total = set(), 0, 0, 0, 0.0
    parts = collections.Counter()
    for ts, i, dw, dp, dk in edges:
        dt = ts - last
        if waiting and dt > 0:
            counted = min(max(0, len(waiting) - woken), parked) * dt
            if counted > 0:
                total += counted
                mid = last + dt / 2
                where = {j: phase_at(ph[j], mid) for j in waiting}
                share = [j for j in waiting if where[j] != "woken"] or list(waiting)
                for j in share:
                    parts[("group" if tasks[j][0] else "background", where[j])] += counted / len(share)
        last = ts
        if i is not None:
            (waiting.add if dw > 0 else waiting.discard)(i)
        parked += dp
        woken += dk
    return total, parts


def replay(group_tasks, servers, limit_ns):
    free = [0] * servers
    waited = spilled = 0
    for _, spawn, start, end, _ in sorted(group_tasks, key=lambda t: t[1]):
        k = min(range(servers), key=lambda s: free[s])
        wait = max(0, free[k] - spawn)
        if wait > limit_ns:
            spilled += 1
            continue
        waited += wait
        free[k] = spawn + wait + (end - start)
    return waited, spilled


def rank(v, q):
    """Nearest rank: the ceil(q n)-th smallest of the sorted v."""
    return v[max(0, math.ceil(q * len(v)) - 1)]


def us(values):
    if not values:
        return "none"
    v = sorted(values)
    return (f"{len(v)} tasks, median {statistics.median(v) / 1e3:.0f} us, p90 {rank(v, 0.9) / 1e3:.0f} us, "
            f"max {v[-1] / 1e3:.0f} us, sum {sum(v) / 1e6:.1f} ms")


def report(path):
    span, workers, home, node_of, parks, tasks = load(path)
    worker_ns = workers * span
    ph = phases(parks, tasks)
    total, parts = decompose(parks, tasks, ph)
    print(f"{path}: {len(tasks)} tasks, {workers} workers, span {span / 1e6:.1f} ms, home node {home}")
    print(f"  idlewt% {100 * total / worker_ns:.3f}  (the benchmark's figure for this run, recomputed)")
    for (kind, where), ns in sorted(parts.items(), key=lambda kv: -kv[1]):
        print(f"    {kind:<10} {where:<8} {100 * ns / worker_ns:.3f}")
    home_workers = [w for w, n in node_of.items() if n == home]
    ran_home = [t for t in tasks if node_of[t[4]] == home]
    busy = sum(t[3] - t[2] for t in ran_home)
    print(f"  home node: {len(home_workers)} workers ran {len(ran_home)} tasks, "
          f"{sum(1 for t in ran_home if not t[0])} of them background; busy {100 * busy / (len(home_workers) * span):.1f} % "
          "of their time")
    group = [t for t in tasks if t[0]]
    print(f"  group waits at home: {us([t[2] - t[1] for t in group if node_of[t[4]] == home])}")
    print(f"  group waits away:    {us([t[2] - t[1] for t in group if node_of[t[4]] != home])}")
    for label, limit in (("never spilling", float("inf")), ("spilling waits over 1000 us", 1_000_000)):
        waited, spilled = replay(group, len(home_workers), limit)
        print(f"  model on these arrivals, {label}: waits sum {waited / 1e6:.1f} ms, {spilled} spilled")


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        report(path)


if __name__ == "__main__":
    main()
