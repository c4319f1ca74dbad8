"""Time native JSON instances, schedule files and the checker on whole traces.

Usage: ``.venv/bin/python benchmarks/native_io.py [--traces DIR] [--repeat R]``

For each trace with recorded wait times, the whole trace is written and read
back as a native JSON instance, its recorded schedule (start = submit + wait)
is written and read in each schedule format, and ``check_schedule`` judges
it. Best of ``R`` runs; wall and process CPU time.
"""

from __future__ import annotations

import argparse
import functools
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from optsched.check import check_schedule
from optsched.instance import Instance
from optsched.io import read_trace
from optsched.io.native import read_native, write_native
from optsched.io.schedules import read_schedule, write_schedule
from optsched.schedule import Placement, Schedule

TRACES = Path(__file__).resolve().parents[2] / "shared" / "traces"


def best(action: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Best wall and CPU seconds over ``repeat`` runs."""
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        action()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus)


def recorded_schedule(instance: Instance) -> Schedule:
    """The trace's own schedule: each job starts at submit + wait."""
    return Schedule(
        {
            job.id: Placement(
                job.release + (job.wait or 0),
                job.release + (job.wait or 0) + job.runtime,
            )
            for job in instance.jobs
        },
        "recorded",
    )


def steps(
    instance: Instance, schedule: Schedule, out: Path
) -> list[tuple[str, Callable[[], object]]]:
    """The timed operations on one trace, in order."""
    out_steps: list[tuple[str, Callable[[], object]]] = [
        ("write native JSON", lambda: write_native(instance, out / "i.json")),
        ("read native JSON", lambda: read_native(out / "i.json")),
    ]
    for fmt in ("csv", "json", "batsim"):
        target = out / f"s.{fmt}"
        out_steps += [
            (
                f"write schedule {fmt}",
                functools.partial(write_schedule, schedule, target, fmt, instance),
            ),
            (f"read schedule {fmt}", functools.partial(read_schedule, target)),
        ]
    out_steps.append(("check_schedule", lambda: check_schedule(instance, schedule)))
    return out_steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--traces", type=Path, default=TRACES)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print("| trace | jobs | operation | wall s | cpu s |")
    print("|---|---:|---|---:|---:|")
    with tempfile.TemporaryDirectory() as folder:
        for path in sorted(args.traces.glob("*.swf*")):
            instance = read_trace(path).instance
            if not any(job.wait is not None for job in instance.jobs):
                continue
            schedule = recorded_schedule(instance)
            for name, action in steps(instance, schedule, Path(folder)):
                wall, cpu = best(action, args.repeat)
                jobs = f"{len(instance.jobs):,}"
                print(f"| {path.name} | {jobs} | {name} | {wall:.3f} | {cpu:.3f} |")


if __name__ == "__main__":
    main()
