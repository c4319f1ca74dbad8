"""Speed and tightness of the closed-form bounds and the offline heuristics.

Usage::

    .venv/bin/python benchmarks/offline_bounds.py [--trace FILE] [--windows 5]
        [--sizes 50,100,200,500,1000] [--seed 1] [--initial-state none]

For each window size, ``--windows`` windows of consecutive jobs are cut at
seeded random positions of the trace (KTH by default). For each window,
allocation (``any``, ``contiguous``) and objective (``cmax``, ``wct``) it
records the time of every bound of :func:`optsched.models.rigid.bounds.lower_bounds`,
the time of :func:`optsched.heuristics.rigid.offline.best_heuristic`, and the
relative gap ``(UB - LB) / UB`` between them. Prints one Markdown table of
means (and maxima for times); nothing is asserted.

``--exact`` instead times :func:`optsched.models.rigid.enumerate.solve_exact` on
seeded random instances of 6, 7 and 8 jobs (releases in ``[0, 10]``, sizes in
``[1, 8]``, runtimes in ``[1, 10]``, ``m = 8``), 10 per cell.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import defaultdict
from pathlib import Path

from optsched.check import check_schedule
from optsched.heuristics.rigid.offline import best_heuristic
from optsched.instance import Instance, Job, Machine
from optsched.io import read_trace
from optsched.models.rigid import bounds
from optsched.objective import Objective
from optsched.windows.window import cut_window

TRACES = Path(__file__).resolve().parent.parent.parent / "shared" / "traces"


def measure(instance: Instance, objective: Objective) -> dict[str, float]:
    """Bound times, heuristic time and gap of one instance."""
    bounds._context.cache_clear()  # time the shared preprocessing too
    began = time.process_time()
    found = bounds.lower_bounds(instance, objective)
    bound_time = time.process_time() - began
    began = time.process_time()
    schedule = best_heuristic(instance, objective)
    heuristic_time = time.process_time() - began
    assert check_schedule(instance, schedule) == []
    upper = objective.value(instance, schedule)
    lower = max(b.value for b in found)
    row = {f"t:{b.method}": b.runtime for b in found}
    row |= {
        "bounds s": bound_time,
        "heuristic s": heuristic_time,
        "gap": (upper - lower) / upper if upper else 0.0,
    }
    return row


def exact_times(seed: int) -> None:
    """Mean / max CPU seconds of the enumerator on random tiny instances."""
    from optsched.models.rigid.enumerate import solve_exact

    rng = random.Random(seed)
    print("| jobs | allocation | objective | mean s | max s | max nodes |")
    print("|---:|---|---|---:|---:|---:|")
    for n in (6, 7, 8):
        for allocation in ("any", "contiguous"):
            if allocation == "contiguous" and n == 8:
                continue  # minutes in the worst case: not a test-time size
            for label in ("cmax", "wct"):
                times, nodes = [], []
                for _ in range(10):
                    jobs = [
                        Job(
                            k, rng.randint(0, 10), rng.randint(1, 8), rng.randint(1, 10)
                        )
                        for k in range(n)
                    ]
                    instance = Instance(Machine(8, allocation), jobs)
                    began = time.process_time()
                    result = solve_exact(instance, label)
                    times.append(time.process_time() - began)
                    nodes.append(result.params["nodes"])
                print(
                    f"| {n} | {allocation} | {label} | {statistics.mean(times):.3f} "
                    f"| {max(times):.3f} | {max(nodes)} |",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--trace", type=Path, default=TRACES / "KTH-SP2-1996-2.1-cln.swf"
    )
    parser.add_argument("--windows", type=int, default=5)
    parser.add_argument("--sizes", default="50,100,200,500,1000")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--initial-state", default="none")
    parser.add_argument("--exact", action="store_true")
    args = parser.parse_args()
    if args.exact:
        exact_times(args.seed)
        return
    trace = read_trace(args.trace)
    n_jobs = len(trace.instance.jobs)
    rng = random.Random(args.seed)
    print(
        "| jobs | allocation | objective | bounds s (mean / max) | heuristic s "
        "(mean / max) | gap mean | gap max |"
    )
    print("|---:|---|---|---:|---:|---:|---:|")
    for size in (int(s) for s in args.sizes.split(",")):
        firsts = [rng.randrange(0, n_jobs - size) for _ in range(args.windows)]
        windows = [
            cut_window(trace, first_job=f, jobs=size, initial_state=args.initial_state)
            for f in firsts
        ]
        for allocation in ("any", "contiguous"):
            if allocation == "contiguous" and any(
                b.offset is None for w in windows for b in w.machine.unavailable
            ):
                continue  # recorded busy blocks carry no processor offsets
            for label in ("cmax", "wct"):
                rows: dict[str, list[float]] = defaultdict(list)
                for window in windows:
                    machine = window.machine.with_allocation(allocation)
                    for key, value in measure(
                        window.replace(machine=machine), Objective.parse(label)
                    ).items():
                        rows[key].append(value)
                print(
                    f"| {size} | {allocation} | {label} | "
                    f"{statistics.mean(rows['bounds s']):.3f} / "
                    f"{max(rows['bounds s']):.3f} | "
                    f"{statistics.mean(rows['heuristic s']):.3f} / "
                    f"{max(rows['heuristic s']):.3f} | "
                    f"{statistics.mean(rows['gap']):.2%} | {max(rows['gap']):.2%} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
