#!/usr/bin/env python3
"""The queueing model behind I-STEAL-15 (docs/design/stealing.md): numart_bench_locality's home
node as two FIFO servers with Poisson arrivals and fixed task times, where a task leaves for an
idle thief elsewhere by one of two rules:
  spill: when its wait at home would exceed W (a clairvoyant rule: the task waits nothing);
  age:   once it has waited W at home (it waits W, then runs elsewhere; the kernel's task_hot()
         with W = sysctl_sched_migration_cost; tried as a rule and not adopted, docs/status.md).
Prints, per load and W, the share of tasks run at home and the mean number of tasks waiting, as
a share of the benchmark's 16 workers: the idle-while-work-waits figure (ADR 0016) a scheduler
with that rule and an always idle thief would reach. A model, not a measurement: it leaves out
the benchmark's background tasks and the time a thief takes to notice a task.

  python3 scripts/report/locality_model.py [TASK_MS] [SECONDS]

TASK_MS: the task time (default 1.0: the benchmark shortens each sleep by its measured
oversleep, and prints the mean it reaches as task_us).
"""
import random
import sys

WORKERS = 16       # numart_bench_locality's workers
HOME_WORKERS = 2   # the home node's
NOMINAL_S = 1e-3   # the benchmark's load is arrival rate x 1 ms / home workers


def simulate(rate, task_s, limit_s, age_rule, seconds, seed=1):
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
        if wait > limit_s:
            spilled += 1
            if age_rule:
                waiting_time += limit_s
            continue
        waiting_time += wait
        free[i] = t + wait + task_s
    return 1 - spilled / arrived, waiting_time / seconds


def main():
    task_s = float(sys.argv[1]) / 1e3 if len(sys.argv) > 1 else 1.0e-3
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 200.0
    print(f"task {task_s * 1e3:.2f} ms, {HOME_WORKERS} home workers, {WORKERS} workers, {seconds:.0f} s simulated")
    print(f"{'load':>5} {'W':>8} {'spill: home%':>13} {'idle%':>7} {'age: home%':>11} {'idle%':>7}")
    for load in (0.25, 0.5, 1.0, 1.5):
        rate = load * HOME_WORKERS / NOMINAL_S
        for limit_us in (0, 100, 250, 300, 350, 500, 750, 1000, 1500, 2000, None):
            limit_s = float("inf") if limit_us is None else limit_us / 1e6
            row = f"{load * 100:4.0f}% {'never' if limit_us is None else f'{limit_us} us':>8}"
            for age_rule in (False, True):
                home, mean_waiting = simulate(rate, task_s, limit_s, age_rule, seconds)
                idle = 100 * mean_waiting / WORKERS
                row += f" {home * 100:12.2f} {idle:7.2f}" if not age_rule else f" {home * 100:10.2f} {idle:7.2f}"
            print(row + ("  (the queue grows)" if idle > 100 else ""))


if __name__ == "__main__":
    main()
