"""Simulator speed: jobs per second of FCFS, EASY and conservative.

Usage::

    .venv/bin/python benchmarks/simulate_speed.py [--traces DIR]
        [--policies fcfs,easy,conservative] [--repeat R] [--tiles 1,4,16]
        [--tiled-policies fcfs,easy] [--check]

Runs :func:`optsched.heuristics.simulate` (the whole call: setup, event
loop, schedule construction) on every full trace of ``--traces`` and on
synthetic traces made of ``k`` copies of the KTH log (each copy shifted by
the span of the log plus one day, jobs renumbered), ``k`` from ``--tiles``;
16 copies are 455,600 jobs. The time per job staying flat as ``k`` grows
shows that the cost per event does not grow with the number of finished
jobs. Best of ``--repeat`` runs; wall time and process CPU time (the two
differ when other programs compete for the cores). ``--check`` also runs
the checker on each schedule (not timed).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from optsched.check import check_schedule
from optsched.heuristics import simulate
from optsched.instance import Instance, Job
from optsched.io import read

TRACES = Path(__file__).resolve().parent.parent.parent / "shared" / "traces"
KTH = "KTH-SP2-1996-2.1-cln.swf"
DAY = 86_400


def tiled(instance: Instance, copies: int) -> Instance:
    """``copies`` copies of ``instance``'s jobs, one after the other in time."""
    jobs = sorted(instance.jobs, key=lambda j: (j.release, j.id))
    first = jobs[0].release
    span = max(j.release for j in jobs) - first + DAY
    top = max(j.id for j in jobs) + 1
    out: list[Job] = []
    for k in range(copies):
        shift = k * span - first
        out += [j.replace(id=j.id + k * top, release=j.release + shift) for j in jobs]
    return instance.replace(jobs=tuple(out), name=f"{instance.name}x{copies}")


def measure(
    instance: Instance, policy: str, repeat: int, check: bool
) -> dict[str, float]:
    """Best wall and CPU seconds of ``repeat`` simulations."""
    best_wall = best_cpu = float("inf")
    result = None
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = simulate(instance, policy)
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    assert result is not None
    if check:
        violations = check_schedule(instance, result.schedule)
        assert not violations, f"{policy}: {violations[0]}"
    return {
        "wall": best_wall,
        "cpu": best_cpu,
        "events": result.stats.events,
        "queue": result.stats.max_queue,
    }


def row(name: str, instance: Instance, policy: str, numbers: dict[str, float]) -> str:
    jobs = len(instance.jobs)
    rate = jobs / numbers["cpu"] if numbers["cpu"] > 0 else float("inf")
    return (
        f"| {name} | {jobs:,} | {instance.processors} | {policy} | "
        f"{numbers['wall']:.2f} | {numbers['cpu']:.2f} | {rate:,.0f} | "
        f"{int(numbers['queue']):,} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--traces", type=Path, default=TRACES)
    parser.add_argument("--policies", default="fcfs,easy,conservative")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tiles", default="1,4,16")
    parser.add_argument("--tiled-policies", default="fcfs,easy")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    policies = args.policies.split(",")
    print("| trace | jobs | m | policy | wall s | cpu s | jobs/s (cpu) | max queue |")
    print("|---|---:|---:|---|---:|---:|---:|---:|")
    kth = None
    for path in sorted(args.traces.glob("*.swf*")):
        instance = read(path)
        if path.name == KTH:
            kth = instance
        for policy in policies:
            numbers = measure(instance, policy, args.repeat, args.check)
            print(row(path.name, instance, policy, numbers), flush=True)
    if kth is None:
        return
    for copies in (int(k) for k in args.tiles.split(",") if k):
        instance = tiled(kth, copies)
        for policy in args.tiled_policies.split(","):
            repeat = 1 if copies > 4 else args.repeat
            numbers = measure(instance, policy, repeat, args.check and copies == 1)
            print(row(f"KTH x{copies}", instance, policy, numbers), flush=True)


if __name__ == "__main__":
    main()
