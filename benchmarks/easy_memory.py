"""Where EASY's memory goes at archive scale (issues 30 and 31).

Usage::

    .venv/bin/python benchmarks/easy_memory.py [--copies 11.5] [--top 15]
        [--policy easy] [--group lineno|filename]
    .venv/bin/python benchmarks/easy_memory.py --check [--copies 11.5]

Builds the "Atlas/4 saturated" trace of ``benchmarks/sim_scale.py`` (not
traced), then runs :func:`optsched.heuristics.simulate` under
:mod:`tracemalloc` and takes one snapshot right after the simulator has
built its schedule, while the simulator's own per-job lists are still alive:
the moment of the run's peak. Prints the traced total and peak, the bytes
per job, and the largest allocation sites (``--group``), so that the
benchmark's README can say what dominates. Tracing slows the run down
several times: the CPU times of ``sim_scale.py run`` are the benchmark's,
not this script's.

``--check`` instead times :func:`optsched.check.check_schedule` on the
simulated schedule (no tracing): its process CPU time, the resident memory
before it (the instance and the schedule) and the peak during it
(``VmHWM``, reset just before). Run it with ``PYTHONPATH`` set to another
tree to compare.
"""

from __future__ import annotations

import argparse
import linecache
import sys
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim_scale import saturated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=float, default=11.5)
    parser.add_argument("--policy", default="easy")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--group", default="lineno", choices=("lineno", "filename"))
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    if args.check:
        _check(args)
        return

    from optsched.heuristics import simulate
    from optsched.heuristics.engine import core

    instance = saturated(args.copies)
    jobs = len(instance.jobs)
    snapshots: list[tracemalloc.Snapshot] = []
    build = core.Simulator.schedule

    def schedule_then_snapshot(self, producer):  # type: ignore[no-untyped-def]
        schedule = build(self, producer)
        snapshots.append(tracemalloc.take_snapshot())
        return schedule

    core.Simulator.schedule = schedule_then_snapshot  # type: ignore[method-assign]
    tracemalloc.start()
    result = simulate(instance, args.policy)
    after, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    snapshot = snapshots[0]
    stats = snapshot.statistics(args.group)
    at_schedule = sum(s.size for s in stats)
    mb = 1024 * 1024
    print(f"{args.policy}, {jobs:,} jobs ({len(result.schedule):,} placed)")
    print(
        f"traced during the run: peak {peak / mb:.0f} MB "
        f"({peak / jobs:.0f} B/job); at the schedule's creation "
        f"{at_schedule / mb:.0f} MB; kept after it {after / mb:.0f} MB "
        f"({after / jobs:.0f} B/job)"
    )
    print()
    print("| allocation site | code | MB | B/job | blocks |")
    print("|---|---|---:|---:|---:|")
    root = str(Path(__file__).resolve().parent.parent)
    for stat in stats[: args.top]:
        frame = stat.traceback[0]
        where = frame.filename.replace(root + "/", "")
        site = f"{where}:{frame.lineno}" if args.group == "lineno" else where
        code = linecache.getline(frame.filename, frame.lineno).strip()
        code = f"`{code}`" if args.group == "lineno" and code else ""
        print(
            f"| `{site}` | {code} | {stat.size / mb:.1f} | {stat.size / jobs:.0f} "
            f"| {stat.count:,} |"
        )


def _check(args: argparse.Namespace) -> None:
    import time

    from sim_scale import _reset_peak, _status_mb

    from optsched.check import check_schedule
    from optsched.heuristics import simulate

    instance = saturated(args.copies)
    schedule = simulate(instance, args.policy).schedule
    before = _status_mb("VmRSS")
    _reset_peak()
    cpu = time.process_time()
    violations = check_schedule(instance, schedule)
    cpu = time.process_time() - cpu
    print(
        f"| {len(instance.jobs):,} | {len(violations)} | {cpu:.1f} | "
        f"{before:.0f} | {_status_mb('VmHWM'):.0f} |"
    )


if __name__ == "__main__":
    main()
