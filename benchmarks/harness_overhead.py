"""Harness overhead of ``optsched bench`` per task, simulation and solving aside.

Protocol
--------
1. *Trivial tasks*: a suite on the KTH trace (consecutive 100-job windows,
   five policies and one back-end on two objectives) run through the real
   :func:`optsched.bench.run_suite` — suite parsing and sha256, trace
   reading, window selection and cutting, task ids, shipping tasks to
   workers, one SQLite transaction per row, resume check — with a task
   function that returns a fixed result at once. Wall time per task, for
   each executor. The fixed result carries a 100-job schedule JSON so that
   the rows weigh what real rows weigh.
2. *Policy tasks*: the same suite's policy tasks with the real task function,
   in this process; per task, the wall time minus the ``runtime`` column
   (the simulation itself), i.e. what the harness and the analysis around a
   simulation cost (schedule check, metrics, JSON).
3. *Store inserts*: ``Store.insert`` alone (``synchronous=FULL``).

Run: ``.venv/bin/python benchmarks/harness_overhead.py [--windows 40]
[--executors 1,2,dask2]``. Target (issue 5): under 50 ms per task.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from optsched.bench import Store, run_suite
from optsched.bench.suite import load_suite
from optsched.bench.tasks import Task, expand, to_json
from optsched.instance import Instance, Machine

TRACES = Path(__file__).resolve().parent.parent.parent / "shared" / "traces"
KTH = TRACES / "KTH-SP2-1996-2.1-cln.swf"
POLICIES = ["fcfs", "firstfit", "easy", "conservative", "best-package"]

_SCHEDULE = to_json(
    {
        "format": "optsched-schedule",
        "version": 1,
        "producer": "trivial",
        "placements": [
            {"job": j, "start": 10 * j, "end": 10 * j + 5, "processors": "0-3"}
            for j in range(100)
        ],
    }
)


def trivial(task: Task, instance: Instance) -> dict[str, Any]:
    """A task function that does no work (module level: workers import it)."""
    return {
        "status": "OK" if task.kind == "policy" else "OPTIMAL",
        "value": 1.0,
        "lower": None if task.kind == "policy" else 1.0,
        "lower_method": None if task.kind == "policy" else "trivial",
        "upper": 1.0,
        "upper_source": "trivial",
        "bounds": to_json({}),
        "metrics": to_json({"jobs": len(instance.jobs)}),
        "schedule": _SCHEDULE,
        "runtime": 0.0,
    }


def write_suite(folder: Path, windows: int, solvers: bool = True) -> Path:
    """A suite file in ``folder`` naming the KTH trace by absolute path."""
    solver = '[[solvers]]\nbackend = "cpsat"\ntime_limit = 1\n' if solvers else ""
    text = (
        f"policies = {POLICIES!r}\n".replace("'", '"')
        + 'objectives = ["cmax", "wct"]\n\n'
        + '[suite]\nname = "overhead"\n\n'
        + f'[[traces]]\npath = "{KTH}"\n\n'
        + f'[windows]\nkind = "consecutive"\njobs = 100\ncount = {windows}\n\n'
        + solver
    )
    path = folder / f"suite-{windows}-{'all' if solvers else 'policies'}.toml"
    path.write_text(text)
    return path


def trivial_runs(folder: Path, windows: int, executors: list[str]) -> list[str]:
    """Marginal cost per task: (big run - 1-window run) / (extra tasks)."""
    small, big = write_suite(folder, 1), write_suite(folder, windows)
    small_tasks = len(expand(load_suite(small)).tasks)
    big_tasks = len(expand(load_suite(big)).tasks)
    rows = []
    for executor in executors:
        options: dict[str, Any] = (
            {"dask_local": int(executor[4:])}
            if executor.startswith("dask")
            else {"workers": int(executor)}
        )
        seconds = {}
        for suite, tasks in ((small, small_tasks), (big, big_tasks)):
            store = folder / f"trivial-{executor}-{tasks}.sqlite"
            began = time.perf_counter()
            summary = run_suite(suite, store, task_function=trivial, **options)
            seconds[tasks] = time.perf_counter() - began
            assert summary.ran == tasks and summary.failed == 0
        began = time.perf_counter()
        assert run_suite(big, store, task_function=trivial, **options).ran == 0
        resume = time.perf_counter() - began
        marginal = (seconds[big_tasks] - seconds[small_tasks]) / (
            big_tasks - small_tasks
        )
        rows.append(
            f"| trivial tasks, {_name(executor)} | {big_tasks} | "
            f"{seconds[big_tasks]:.2f} | {1000 * marginal:.2f} "
            f"(fixed: {seconds[small_tasks]:.2f} s) | {resume:.2f} |"
        )
    return rows


def _name(executor: str) -> str:
    if executor.startswith("dask"):
        return f"Dask LocalCluster, {executor[4:]} workers"
    return "in-process" if executor == "1" else f"process pool, {executor} workers"


def policy_run(suite: Path, folder: Path) -> str:
    store = folder / "policies.sqlite"
    began = time.perf_counter()
    summary = run_suite(suite, store)
    wall = time.perf_counter() - began
    with Store(store) as results:
        simulated = float(results.rows()["runtime"].sum())
    # Failed tasks (a simulator error) still went through the whole harness.
    per_task = 1000 * (wall - simulated) / summary.ran
    return (
        f"| policy tasks, in-process, real task function | {summary.ran} | "
        f"{wall:.2f} | {per_task:.2f} (simulation: "
        f"{1000 * simulated / summary.ran:.2f}; {summary.failed} failed) | |"
    )


def insert_cost(folder: Path, count: int = 500) -> str:
    template = Task("", "s", "t", "0" * 64, "w", 0, "policy", "fcfs", "cmax", "{}")
    empty = Instance(Machine(4), ())
    rows = []
    for n in range(count):
        task = dataclasses.replace(template, task_id=f"id{n}")
        rows.append({**task.identity(), **trivial(task, empty)} | _NO_RUN)
    with Store(folder / "inserts.sqlite") as store:
        began = time.perf_counter()
        for row in rows:
            store.insert(row)
        seconds = time.perf_counter() - began
    return (
        f"| `Store.insert` alone (one transaction each) | {count} | "
        f"{seconds:.2f} | {1000 * seconds / count:.2f} | |"
    )


_NO_RUN = {"error": None, "versions": "{}", "started": "", "finished": "", "host": ""}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=40)
    parser.add_argument("--executors", default="1,2,dask2")
    args = parser.parse_args()
    if not KTH.exists():
        raise SystemExit(f"needs the KTH trace at {KTH}")
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows = trivial_runs(folder, args.windows, args.executors.split(","))
        rows.append(policy_run(write_suite(folder, args.windows, False), folder))
        rows.append(insert_cost(folder))
    print("| run | tasks | wall s | ms per task | re-run (all skipped) s |")
    print("|---|---:|---:|---:|---:|")
    print("\n".join(rows))
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
