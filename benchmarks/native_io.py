"""Time native JSON instances, schedule files and the checker on whole traces.

Usage: ``.venv/bin/python benchmarks/native_io.py [--traces DIR] [--repeat R]
[--reader [--old-reader OLD_NATIVE_PY]]``

For each trace with recorded wait times, the whole trace is written and read
back as a native JSON instance, its recorded schedule (start = submit + wait)
is written and read in each schedule format, and ``check_schedule`` judges
it. Best of ``R`` runs; wall and process CPU time.

``--reader`` times the native reader's steps instead, on the largest trace
whole, on a 100,000-job document (that trace's jobs repeated, ids
renumbered) and on the first 5,000 jobs of the trace with the smallest
machine made moldable (``linear:max=8``): the JSON parse alone,
the whole read (schema step included), and what jsonschema would cost on
every job item; ``--old-reader`` adds the whole read by the ``native.py`` of
another commit.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import itertools
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from optsched.check import check_schedule
from optsched.instance import Instance
from optsched.io import read_trace
from optsched.io.native import _schema_validators, read_native, write_native
from optsched.io.schedules import read_schedule, write_schedule
from optsched.moldable.speedup import parse_model
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


def tiled(instance: Instance, jobs: int) -> Instance:
    """``instance``'s jobs repeated (ids renumbered) up to ``jobs`` jobs."""
    out = [
        job.replace(id=k + 1)
        for k, job in zip(range(jobs), itertools.cycle(instance.jobs), strict=False)
    ]
    return instance.replace(jobs=tuple(out), name=f"tiled-{jobs}")


def reader_steps(
    path: Path, old_reader: Callable[[Path], object] | None
) -> list[tuple[str, Callable[[], object]]]:
    """The native reader's parts on the file at ``path`` (and the old
    reader's whole read, when given)."""
    text = path.read_text(encoding="utf-8")
    _, job_validator = _schema_validators()
    items = json.loads(text)["jobs"]
    out: list[tuple[str, Callable[[], object]]] = [
        ("json.loads", lambda: json.loads(text)),
        ("read_native", lambda: read_native(path)),
    ]
    if old_reader is not None:
        out.append(("read_native, old reader", lambda: old_reader(path)))
    out.append(
        (
            "jsonschema on every job",
            lambda: all(job_validator.is_valid(item) for item in items),
        )
    )
    return out


def load_reader(path: Path) -> Callable[[Path], object]:
    """``read_native`` of a native.py of another commit (``git show
    REV:optsched/io/native.py > old.py``), loaded beside this one."""
    spec = importlib.util.spec_from_file_location("old_native", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    reader: Callable[[Path], object] = module.read_native
    return reader


def reader_table(
    traces: Path, repeat: int, old_reader: Callable[[Path], object] | None
) -> None:
    """The ``--reader`` table (module docstring)."""
    print("| document | jobs | step | wall s | cpu s |")
    print("|---|---:|---|---:|---:|")
    largest = max(traces.glob("*.swf*"), key=lambda p: p.stat().st_size)
    whole = read_trace(largest).instance
    # Moldable: the first 5,000 jobs of the smallest machine's trace (KTH:
    # about 14 modes a job; on a large machine a job has thousands).
    smallest = min(
        (read_trace(p).instance for p in traces.glob("*.swf*")),
        key=lambda instance: instance.machine.processors,
    )
    model = parse_model("linear:max=8")
    moldable = smallest.replace(
        jobs=tuple(
            job.replace(modes=model.modes(job, smallest.machine.processors))
            for job in smallest.jobs[:5000]
        )
    )
    documents = (
        (largest.name, whole),
        ("tiled", tiled(whole, 10**5)),
        ("moldable (linear:max=8)", moldable),
    )
    with tempfile.TemporaryDirectory() as folder:
        for name, instance in documents:
            path = Path(folder) / "i.json"
            write_native(instance, path)
            for step, action in reader_steps(path, old_reader):
                wall, cpu = best(action, repeat)
                jobs = f"{len(instance.jobs):,}"
                print(f"| {name} | {jobs} | {step} | {wall:.3f} | {cpu:.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--traces", type=Path, default=TRACES)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--reader", action="store_true")
    parser.add_argument("--old-reader", type=Path, default=None)
    args = parser.parse_args()
    if args.reader:
        old = None if args.old_reader is None else load_reader(args.old_reader)
        reader_table(args.traces, args.repeat, old)
        return
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
