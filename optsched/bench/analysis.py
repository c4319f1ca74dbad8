"""``optsched gap`` as a library call: a suite run in memory, rows to ratios.

:func:`analyse` runs the same task graph as ``optsched bench``
(:func:`optsched.bench.run.run_plan`) into a results store, in memory unless
a file is given, and returns the ratios (:func:`optsched.bench.store.gap_frame`)
of the windows that finished. Ctrl-C (or SIGTERM) stops the run: the
finished windows are kept and the analysis says it was interrupted, and by
which signal. A window whose solve was cut short by the signal (a
provisional row) is not finished.
"""

from __future__ import annotations

import json
import re
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from optsched.bench.run import RunSummary, run_plan
from optsched.bench.store import Store, decode_rows, gap_frame
from optsched.bench.suite import (
    DEFAULT_SOLVER_WORKERS,
    DEFAULT_TIME_LIMIT,
    SolverSpec,
    Suite,
    TraceRef,
)
from optsched.bench.tasks import Plan, Task
from optsched.gap import GapRow, Reference
from optsched.instance import Instance
from optsched.schedule import Schedule
from optsched.selection import WindowRule

MEMORY = ":memory:"


@dataclass
class WindowLines:
    """Progress as one line per finished window (for logs and pipes).

    ``tasks_per_window`` is the number of tasks of a complete window.
    """

    tasks_per_window: int
    write: Callable[[str], None] = field(
        default=lambda text: print(text, file=sys.stderr, flush=True)
    )
    _seen: dict[tuple[str, str], int] = field(default_factory=dict)
    _began: float = field(default_factory=time.perf_counter)

    def advance(self, failed: bool, row: dict[str, Any] | None = None) -> None:
        """Count a finished task; print its window when the window is done."""
        if row is None:
            return
        key = (str(row["trace_sha256"]), str(row["window"]))
        self._seen[key] = self._seen.get(key, 0) + 1
        if self._seen[key] == self.tasks_per_window:
            elapsed = time.perf_counter() - self._began
            self.write(
                f"window {row['window_index']} ({row['window']}) done, "
                f"{len(self._seen)} window(s) in {elapsed:.1f} s"
            )


@dataclass(frozen=True, slots=True)
class Analysis:
    """What an analysis run found.

    Attributes
    ----------
    rows
        :func:`~optsched.bench.store.gap_frame` rows of the finished windows.
    summary
        The run's task counts (``None`` when interrupted before any).
    interrupted
        Ctrl-C stopped the run; ``rows`` holds the windows finished by then.
    windows, finished
        Windows planned, and windows whose every task is stored.
    failures
        Failed tasks: window, kind, name, objective and error.
    defects
        Windows where a schedule beats a lower bound, with the file each was
        saved to for a bug report.
    """

    rows: pd.DataFrame
    summary: RunSummary | None
    interrupted: bool
    windows: int
    finished: int
    failures: list[dict[str, str]]
    defects: list[tuple[str, Path | None]]
    stop_signal: int | None = None
    """The signal that interrupted the run (SIGINT for a plain Ctrl-C)."""


def analyse(
    suite: Suite,
    *,
    store: str | Path = MEMORY,
    progress: bool | Any = False,
    defect_dir: Path | None = None,
    plan: Plan | None = None,
    deterministic: bool = False,
) -> Analysis:
    """Run ``suite`` into ``store`` and return the ratios of its windows.

    Parameters
    ----------
    suite
        The analysis (traces, window rule, policies, objectives, back-ends).
    store
        A results store file to keep (and resume), or :data:`MEMORY`.
    progress
        As :func:`~optsched.bench.run.run_plan` takes it.
    defect_dir
        Folder where windows with a defect are saved (default: the working
        directory).
    plan
        ``expand(suite)`` when the caller has it already.
    deterministic
        Without ``plan``: CP-SAT in deterministic mode (see
        :func:`~optsched.bench.tasks.expand`).
    """
    from optsched.bench.tasks import expand

    stop_signal: int | None = None
    summary = None
    plan = plan if plan is not None else expand(suite, deterministic=deterministic)
    plan_ids = {t.task_id: (t.trace_sha256, t.window) for t in plan.tasks}
    with Store(store) as results:
        try:
            summary = run_plan(suite, results, progress=progress, plan=plan)
        except KeyboardInterrupt as error:
            stop_signal = int(getattr(error, "signum", signal.SIGINT))
        rows = results.rows(suite.name)
        rows = rows[rows["task_id"].isin(plan_ids) & (rows["interrupted"] == 0)]
        complete = _complete_windows(rows, plan_ids)
        keys = zip(rows["trace_sha256"], rows["window"], strict=True)
        rows = rows[[key in complete for key in keys]]
        frame = _in_plan_order(gap_frame(rows), suite)
        failures = results.failures(suite.name)
        defects = _save_defects(results, frame, rows, defect_dir or Path.cwd())
    return Analysis(
        rows=frame,
        summary=summary,
        interrupted=stop_signal is not None,
        windows=len(set(plan_ids.values())),
        finished=len(complete),
        failures=failures,
        defects=defects,
        stop_signal=stop_signal,
    )


def _in_plan_order(frame: pd.DataFrame, suite: Suite) -> pd.DataFrame:
    """Rows window by window, objectives and policies in the suite's order."""
    if frame.empty:
        return frame
    rank_objective = {o: i for i, o in enumerate(suite.objectives)}
    rank_policy = {p: i for i, p in enumerate(suite.policies)}
    order = frame.assign(
        _o=frame["objective"].map(rank_objective),
        _p=frame["policy"].map(rank_policy),
    ).sort_values(["trace_sha256", "window_index", "_o", "_p"], kind="stable")
    return order.drop(columns=["_o", "_p"]).reset_index(drop=True)


def _complete_windows(
    rows: pd.DataFrame, planned: dict[str, tuple[str, str]]
) -> set[tuple[str, str]]:
    """(trace sha256, window) of the windows whose every planned task is stored."""
    expected: dict[tuple[str, str], int] = {}
    for window in planned.values():
        expected[window] = expected.get(window, 0) + 1
    stored: dict[tuple[str, str], int] = {}
    for key in zip(rows["trace_sha256"], rows["window"], strict=True):
        stored[key] = stored.get(key, 0) + 1
    return {w for w, n in expected.items() if stored.get(w, 0) == n}


def _save_defects(
    store: Store, frame: pd.DataFrame, rows: pd.DataFrame, folder: Path
) -> list[tuple[str, Path | None]]:
    """Save each window with a defect (instance, rows, message) as JSON."""
    from optsched.io.atomic import atomic_write
    from optsched.io.native import instance_to_dict

    if frame.empty:
        return []
    defective = frame[frame["defect"].notna()].drop_duplicates(["window", "objective"])
    out: list[tuple[str, Path | None]] = []
    for record in defective.to_dict("records"):
        message = f"window {record['window']}: {record['defect']}"
        window_rows = decode_rows(rows[rows["window"] == record["window"]])
        name = re.sub(r"[^A-Za-z0-9]+", "_", record["window"])
        sha = record["instance_sha256"]
        report = {
            "defect": message,
            "instance": instance_to_dict(store.instance(sha)) if sha else None,
            "rows": [
                {
                    "kind": r.kind,
                    "name": r.name,
                    "objective": r.objective,
                    "values": dict(r.values),
                    "lower": r.lower,
                    "bounds": dict(r.bounds),
                    "schedule": json.loads(r.schedule_json)
                    if r.schedule_json
                    else None,
                }
                for r in window_rows
            ],
        }
        path = folder / f"optsched-defect-{name}.json"
        try:
            with atomic_write(path) as handle:
                json.dump(report, handle, indent=1)
        except OSError:
            # The message is still printed; only the saved file is lost.
            out.append((message, None))
            continue
        out.append((message, path))
    return out


@dataclass(frozen=True, slots=True)
class WindowAnalysis:
    """The analysis of one instance (:func:`analyse_instance`).

    ``rows`` are its gap rows, ``references`` the reference by objective,
    ``schedules`` each policy's checked schedule by canonical spec.
    """

    rows: list[GapRow]
    references: dict[str, Reference]
    schedules: dict[str, Schedule]

    def row(self, policy: str, objective: str) -> GapRow:
        """The row of one policy and objective."""
        return next(
            r for r in self.rows if r.policy == policy and r.objective == objective
        )


class _Source:
    def __init__(self, instance: Instance) -> None:
        self._instance = instance

    def instance(self, task: Task) -> Instance:
        return self._instance


def analyse_instance(
    instance: Instance,
    policies: Sequence[str],
    objectives: Sequence[str],
    *,
    backend: str = "cpsat",
    time_limit: float = DEFAULT_TIME_LIMIT,
    workers: int = DEFAULT_SOLVER_WORKERS,
) -> WindowAnalysis:
    """Every policy and the reference on one instance, for every objective.

    The same task graph as a suite window (:func:`optsched.bench.tasks.
    window_tasks`) run in this process into an in-memory store, so the
    numbers are those ``optsched gap`` and ``optsched bench`` give.
    """
    from optsched.bench.executor import run_tasks
    from optsched.bench.store import references as window_references
    from optsched.bench.tasks import window_tasks
    from optsched.gap import canonical_policy, gap_row
    from optsched.io.schedules import schedule_from_json
    from optsched.objective import Objective
    from optsched.selection import WindowSpec

    labels = tuple(dict.fromkeys(Objective.parse(o).label for o in objectives))
    if not labels:
        raise ValueError("no objective given")
    suite = Suite(
        name="instance",
        file=Path(instance.name or "instance"),
        traces=(),
        windows=WindowRule("whole"),
        policies=tuple(dict.fromkeys(canonical_policy(p) for p in policies)),
        objectives=labels,
        solvers=(SolverSpec(backend, time_limit, workers),),
    )
    ref = TraceRef(instance.name or "instance", Path("."), "", False)
    tasks = window_tasks(suite, ref, WindowSpec(whole=True), 0)
    with Store(MEMORY) as store:
        run_tasks(tasks, _Source(instance), store)
        decoded = store.task_rows()
    failed = [r for r in decoded if r.failed]
    if failed:
        raise RuntimeError(f"{failed[0].kind} {failed[0].name}: {failed[0].error}")
    known = window_references(decoded)
    refs = {key[3]: reference for key, reference in known.items()}
    rows = [
        gap_row("whole", r.name, r.values[label], refs[label], killed=r.killed,
                lost=int(r.lost_work))
        for label in labels
        for r in decoded
        if r.kind == "policy"
    ]  # fmt: skip
    schedules = {
        r.name: schedule_from_json(r.schedule_json, r.name)
        for r in decoded
        if r.kind == "policy" and r.schedule_json
    }
    order = {p: i for i, p in enumerate(suite.policies)}
    rows.sort(key=lambda g: (labels.index(g.objective), order[g.policy]))
    return WindowAnalysis(rows, refs, schedules)
