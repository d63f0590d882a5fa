#!/usr/bin/env python3
"""The queueing model behind I-STEAL-15 (docs/design/stealing.md): numart_bench_locality's home
node as two FIFO servers with Poisson arrivals and fixed task times, where a task is spilled to an
idle thief elsewhere (zero wait) when its wait at home would exceed W. Prints, per load and W, the
share of tasks run at home and the mean number of tasks waiting, as a share of the benchmark's 16
workers: the idle-while-work-waits figure (ADR 0016) a scheduler with that rule and an always
idle thief would reach. A model, not a measurement.

  python3 scripts/report/locality_model.py [TASK_MS] [SECONDS]

TASK_MS: the task time (default 1.13, the benchmark's 1 ms sleep as measured in its traces).
"""
import random
import sys

WORKERS = 16       # numart_bench_locality's workers
HOME_WORKERS = 2   # the home node's
NOMINAL_S = 1e-3   # the benchmark's load is arrival rate x 1 ms / home workers


def simulate(rate, task_s, spill_s, seconds, seed=1):
    rng = random.Random(seed)
    t = 0.0
    free = [0.0] * HOME_WORKERS
    arrived = spilled = 0
    waiting_time = 0.0
    while t < seconds:
        t += rng.expovariate(rate)
        arrived += 1
        i = min(range(HOME_WORKERS), key=lambda k: free[k])
        wait = max(0.0, free[i] - t)
        if wait > spill_s:
            spilled += 1
            continue
        waiting_time += wait
        free[i] = t + wait + task_s
    return 1 - spilled / arrived, waiting_time / seconds


def main():
    task_s = float(sys.argv[1]) / 1e3 if len(sys.argv) > 1 else 1.13e-3
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 200.0
    print(f"task {task_s * 1e3:.2f} ms, {HOME_WORKERS} home workers, {WORKERS} workers, {seconds:.0f} s simulated")
    print(f"{'load':>5} {'spill if wait >':>16} {'home%':>7} {'idle%':>7}")
    for load in (0.25, 0.5, 1.0, 1.5):
        rate = load * HOME_WORKERS / NOMINAL_S
        for spill_us in (0, 100, 250, 300, 350, 500, 1000, 2000, None):
            spill_s = float("inf") if spill_us is None else spill_us / 1e6
            home, mean_waiting = simulate(rate, task_s, spill_s, seconds)
            label = "never" if spill_us is None else f"{spill_us} us"
            idle = 100 * mean_waiting / WORKERS
            print(f"{load * 100:4.0f}% {label:>16} {home * 100:7.2f} {idle:7.2f}" + ("  (the queue grows)" if idle > 100 else ""))


if __name__ == "__main__":
    main()
