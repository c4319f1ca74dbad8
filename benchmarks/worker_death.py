"""A worker that dies mid-solve: the local pool's recovery beside Dask's.

Issue 31 asks that the executor's pool use a library that respawns dead
workers unless ours is measured better. The local pool is
``concurrent.futures.ProcessPoolExecutor``: a dead worker breaks it and
fails every task in flight with ``BrokenProcessPool``; ``_LocalPool``
(optsched/bench/executor.py) then starts a fresh pool and runs the lost
tasks again one at a time in a one-worker pool, so that only the task that
kills its worker alone is recorded as failed. loky behaves as
concurrent.futures does here (``TerminatedWorkerError`` is a
``BrokenProcessPool`` and breaks the executor) and is not an allowed
dependency; the library among ours that respawns dead workers and re-runs
only their tasks is Dask (a nanny per worker, ``KilledWorker`` after
``distributed.scheduler.allowed-failures`` retries), the ``--dask-local``
back-end.

Protocol
--------
The harness suite of ``harness_overhead.py`` (KTH, consecutive 100-job
windows, 5 policies and CP-SAT on 2 objectives: 12 tasks a window) run
through the real :func:`optsched.bench.run_suite` with a task function that
sleeps ``--solve`` seconds (a solve, without the CPU load) and returns a
fixed result. In the "death" runs the easy task of window 1 kills its
worker (``os._exit``) half-way through its sleep, every time it runs. Each
run is timed, every execution of a task is logged (task id, one line a
start), and the resident memory of this process and of all its
descendants is sampled every 0.1 s. Checked after each run: one row per
task, no task id twice, the failed rows.

Run: ``.venv/bin/python benchmarks/worker_death.py [--windows 2]
[--solve 2] [--executors 2,dask2]``.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from optsched.bench import Store, run_suite
from optsched.bench.suite import load_suite
from optsched.bench.tasks import Task, expand
from optsched.instance import Instance

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness_overhead import KTH, trivial, write_suite

LOG = "OPTSCHED_DEATH_LOG"
SOLVE = "OPTSCHED_DEATH_SOLVE"
KILL = "OPTSCHED_DEATH_KILL"
"""Environment of the workers (inherited): the execution log, the sleep, and
whether the killer kills."""


def _is_killer(task: Task) -> bool:
    return task.kind == "policy" and task.name == "easy" and task.window_index == 1


def sleeper(task: Task, instance: Instance) -> dict[str, Any]:
    """Sleep like a solve; the killer task dies half-way (module level:
    workers import it)."""
    with open(os.environ[LOG], "a", encoding="utf-8") as log:
        log.write(f"{task.task_id}\n")
    solve = float(os.environ[SOLVE])
    if os.environ[KILL] == "1" and _is_killer(task):
        time.sleep(solve / 2)
        os._exit(3)
    time.sleep(solve)
    return trivial(task, instance)


class MemoryPeak:
    """Peak resident memory (MB) of this process plus its descendants."""

    def __init__(self, period: float = 0.1) -> None:
        self.period = period
        self.total = 0.0
        self.children = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> MemoryPeak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        me = psutil.Process()
        while not self._stop.wait(self.period):
            children = 0
            for child in me.children(recursive=True):
                with contextlib.suppress(psutil.Error):  # it may have ended
                    children += child.memory_info().rss
            self.children = max(self.children, children / 2**20)
            total = children + me.memory_info().rss
            self.total = max(self.total, total / 2**20)


def one_run(suite: Path, folder: Path, executor: str, kill: bool) -> str:
    """One timed run into a fresh store; one row of the result table."""
    tag = f"{executor}-{'death' if kill else 'clean'}"
    log = folder / f"{tag}.log"
    os.environ.update({LOG: str(log), KILL: "1" if kill else "0"})
    options: dict[str, Any] = (
        {"dask_local": int(executor[4:])}
        if executor.startswith("dask")
        else {"workers": int(executor)}
    )
    store = folder / f"{tag}.sqlite"
    with MemoryPeak() as memory:
        began = time.perf_counter()
        run_suite(suite, store, task_function=sleeper, **options)
        wall = time.perf_counter() - began
    with Store(store) as results:
        rows = results.rows()
    runs = collections.Counter(log.read_text().split())
    plan = {t.task_id: t for t in expand(load_suite(suite)).tasks}
    killers = [i for i, t in plan.items() if _is_killer(t)] if kill else []
    failed = set(rows.loc[rows["status"] == "ERROR", "task_id"])
    wrong = len(failed - set(killers))
    extra = sum(runs.values()) - len(plan) - sum(runs[k] - 1 for k in killers)
    assert rows["task_id"].is_unique and set(rows["task_id"]) == set(plan)
    return (
        f"| {_name(executor)} | {'yes' if kill else 'no'} | {len(plan)} | "
        f"{wall:.1f} | {len(failed & set(killers))} + {wrong} | "
        f"{sum(runs[k] for k in killers) if kill else ''} | {extra} | "
        f"{memory.children:.0f} | {memory.total:.0f} |"
    )


def _name(executor: str) -> str:
    if executor.startswith("dask"):
        return f"Dask LocalCluster, {executor[4:]} workers"
    return f"process pool, {executor} workers"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=2)
    parser.add_argument("--solve", type=float, default=2.0)
    parser.add_argument("--executors", default="2,dask2")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--one", nargs=3, metavar=("FOLDER", "EXECUTOR", "KILL"),
                        help=argparse.SUPPRESS)  # fmt: skip
    args = parser.parse_args()
    if not KTH.exists():
        raise SystemExit(f"needs the KTH trace at {KTH}")
    os.environ[SOLVE] = str(args.solve)
    if args.one:
        folder, executor, kill = args.one
        suite = write_suite(Path(folder), args.windows)
        print(one_run(suite, Path(folder), executor, kill == "1"))
        return
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for executor in args.executors.split(","):
            for kill in ("0", "1"):
                rows.append(_in_child(args, tmp, executor, kill))
    print(
        "| executor | a worker dies | tasks | wall s | failed: killer + others | "
        "killer runs | "
        "innocent re-runs | peak MB, workers | peak MB, all |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    print(f"load average after: {os.getloadavg()[0]:.1f}")


def _in_child(args: argparse.Namespace, folder: str, executor: str, kill: str) -> str:
    """One run in a process of its own: a run that hangs is stopped and said."""
    command = [sys.executable, __file__, "--windows", str(args.windows), "--solve",
               str(args.solve), "--one", folder, executor, kill]  # fmt: skip
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=args.timeout
        )
    except subprocess.TimeoutExpired:
        tag = f"{executor}-{'death' if kill == '1' else 'clean'}"
        with Store(Path(folder) / f"{tag}.sqlite") as results:
            rows = results.rows()
        errors = rows.loc[rows["status"] == "ERROR"]
        named = zip(errors["name"], errors["window_index"], strict=True)
        failed = ", ".join(f"{name} of window {window}" for name, window in named)
        return (
            f"| {_name(executor)} | {'yes' if kill == '1' else 'no'} | | hung, "
            f"stopped after {args.timeout:.0f} s with {len(rows)} rows stored | "
            f"failed: {failed or 'none'} | | | | |"
        )
    lines = [line for line in done.stdout.splitlines() if line.startswith("|")]
    if done.returncode != 0 or not lines:
        return f"| {_name(executor)} | {kill} | failed: {done.stderr[-300:]!r} |"
    return lines[-1]


if __name__ == "__main__":
    main()
