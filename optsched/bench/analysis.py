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

import dataclasses
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

from optsched.analysis.gap import GapRow, Reference
from optsched.bench.run import RunSummary, run_plan
from optsched.bench.store import Store, decode_rows, gap_frame
from optsched.bench.suite import (
    DEFAULT_SOLVER_WORKERS,
    DEFAULT_TIME_LIMIT,
    SolverSpec,
    Suite,
    TraceRef,
    sha256_of,
)
from optsched.bench.tasks import Plan, Task
from optsched.errors import shown
from optsched.instance import Instance
from optsched.moldable.speedup import SpeedupModel
from optsched.schedule import Schedule
from optsched.simulation import RunOptions
from optsched.topology.machines import MachineShape
from optsched.windows.prepare import OptionError
from optsched.windows.selection import WindowRule

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
        """Count a finished task; print its window when the window is done.

        A provisional row (a solve cut short by Ctrl-C, ``incomplete``) does
        not finish its window: the next run computes it again.
        """
        if row is None or row.get("incomplete"):
            return
        key = (str(row["trace_sha256"]), str(row["window"]))
        self._seen[key] = self._seen.get(key, 0) + 1
        if self._seen[key] == self.tasks_per_window:
            elapsed = time.perf_counter() - self._began
            done = sum(n == self.tasks_per_window for n in self._seen.values())
            self.write(
                f"window {row['window_index']} ({row['window']}) done, "
                f"{done} window(s) in {elapsed:.1f} s"
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
    from optsched.analysis.gap import canonical_policy, gap_row
    from optsched.bench.executor import run_tasks
    from optsched.bench.store import references as window_references
    from optsched.bench.tasks import window_tasks
    from optsched.io.schedules import schedule_from_json
    from optsched.objective import Objective
    from optsched.windows.selection import WindowSpec

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


def gap_suite(
    path: Path,
    *,
    rule: WindowRule,
    policies: str | Sequence[str],
    objectives: str | Sequence[str],
    solver: SolverSpec,
    input_format: str | None = None,
    processors: int | None = None,
    allocation: str | None = None,
    shelves: bool = False,
    moldable: SpeedupModel | None = None,
    malleable: bool = False,
    machine: MachineShape | None = None,
    site: Path | None = None,
    arrivals: str = "recorded",
    run: RunOptions | None = None,
) -> Suite:
    """The in-memory suite of one ``optsched gap`` call (and of
    :func:`optsched.competitive_gap`): one trace, one window rule.

    Parameters
    ----------
    path
        The instance or trace file.
    rule
        The windows to cut.
    policies, objectives
        Policy specs and objective labels: one comma-separated string
        (``--policies``, ``--objective``), or a list of them.
    solver
        The reference back-end and its settings; with ``shelves`` the shelf
        back-end is added, and the preemptive one when a policy preempts.
    input_format, processors, allocation, moldable, malleable, machine, site, arrivals
        The trace's options (:class:`~optsched.bench.suite.TraceRef`).
    run
        How the policies are simulated (kill at estimate, allocation rule,
        migration).

    Raises
    ------
    InputError
        ``path`` or ``site`` is not a file, or a bad site file.
    OptionError
        No policy, one policy named twice, no objective, an unknown
        back-end, ``malleable`` without ``moldable``.
    ValueError
        A policy spec or objective label that does not parse.
    """
    from optsched.errors import InputError
    from optsched.heuristics import parse_policy
    from optsched.heuristics.preempt.policies import preempts
    from optsched.io.archive import resolve_trace_path
    from optsched.models import BACKENDS

    given = str(path)  # a pwa: name stays the trace's name in rows and notes
    path = resolve_trace_path(path)  # ... once fetched
    if not path.is_file():
        raise InputError("no such file", path)
    canonical: dict[str, str] = {}
    for spec in _policy_specs(policies):
        name = parse_policy(spec).spec
        if name in canonical:
            raise OptionError(
                f"--policies: {canonical[name]!r} and {spec!r} are one policy ({name})"
            )
        canonical[name] = spec
    labels = _objective_labels(objectives)
    if solver.backend not in BACKENDS:
        raise OptionError(
            f"unknown back-end {solver.backend!r}; valid back-ends: "
            f"{', '.join(BACKENDS)}"
        )
    if malleable and moldable is None:
        raise OptionError("--malleable needs --moldable MODEL")
    trace = TraceRef(
        given, path.resolve(), sha256_of(path), False,
        input_format, processors, allocation,
        None if moldable is None else moldable.spec, malleable,
        None if machine is None else machine.spec,
        *_site_fields(site),
        None if arrivals == "recorded" else arrivals,
    )  # fmt: skip
    extra = [SolverSpec("shelf", solver.time_limit, solver.workers)] if shelves else []
    if solver.backend != "preemptive" and any(map(preempts, canonical)):
        # A preemptive policy is rated against the preemptive optimum.
        extra.append(SolverSpec("preemptive", solver.time_limit, solver.workers))
    return Suite(
        name="gap",
        file=path,
        traces=(trace,),
        windows=rule,
        policies=tuple(canonical),
        objectives=labels,
        solvers=(solver, *extra),
        run=run or RunOptions(),
    )


def _listed(given: str | Sequence[str], option: str) -> list[str]:
    """The entries of a comma-separated string, or of a list of strings
    (each one entry: a policy spec's own parameters hold commas)."""
    if isinstance(given, str):
        return [piece.strip() for piece in given.split(",") if piece.strip()]
    if not isinstance(given, Sequence):
        raise OptionError(
            f"{option}: expected a comma-separated string or a list of strings, "
            f"got {shown(given)}"
        )
    for entry in given:
        if not isinstance(entry, str):
            raise OptionError(f"{option}: {shown(entry)} is not a string")
    return [entry.strip() for entry in given if entry.strip()]


def _policy_specs(policies: str | Sequence[str]) -> list[str]:
    from optsched.heuristics import split_policy_specs

    # One string splits between specs, not inside one ("easy:order=spt,oracle");
    # a list holds one spec per entry.
    if isinstance(policies, str):
        specs = split_policy_specs(policies)
    elif isinstance(policies, Sequence):
        # A policy object (a plug-in given directly) stands for its spec.
        specs = _listed([_spec_of(p) for p in policies], "--policies")
    else:
        specs = _listed(policies, "--policies")
    if not specs:
        raise OptionError("--policies: no policy given")
    return specs


def _spec_of(policy: Any) -> Any:
    from optsched.heuristics import parse_policy

    if isinstance(policy, str) or not hasattr(policy, "select"):
        return policy  # a spec, or what _listed refuses
    return parse_policy(policy).spec


def _objective_labels(objectives: str | Sequence[str]) -> tuple[str, ...]:
    from optsched.objective import Objective

    given = _listed(objectives, "--objective")
    labels = tuple(dict.fromkeys(Objective.parse(text).label for text in given))
    if not labels:
        raise OptionError("--objective: no objective given")
    return labels


def _site_fields(site: Path | None) -> tuple[str | None, str | None]:
    """The ``TraceRef`` fields of ``--site``, the file and its sha256 (read
    here: a bad site file stops the command in one line)."""
    from optsched.errors import InputError
    from optsched.site.files import read_site

    if site is None:
        return None, None
    if not site.is_file():
        raise InputError("no such file", site)
    read_site(site)
    return str(site.resolve()), sha256_of(site)


def policies_that_run(
    plan: Plan,
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The suite's policies that run on its first window, and those that do
    not with the one-line reason :func:`optsched.heuristics.simulate` would
    give (:func:`optsched.heuristics.engine.runner.refusal`), before any
    work: e.g. ``conservative`` on a machine with speeds, a policy that
    builds its own schedule on a machine with outages.

    Every window of a suite shares its machine and its features, so the
    first window answers for all (a window that cannot be cut answers for
    nothing: every policy is kept and the window's own error follows).
    """
    from optsched.heuristics.engine.runner import refusal

    first = next((t for t in plan.tasks if t.kind == "policy"), None)
    if first is None:
        return plan.suite.policies, ()
    try:
        instance = plan.instance(first)
    except ValueError:
        return plan.suite.policies, ()
    kept: list[str] = []
    left_out: list[tuple[str, str]] = []
    options = dataclasses.asdict(plan.suite.run)
    for spec in plan.suite.policies:
        why = refusal(instance, spec, **options)
        if why is None:
            kept.append(spec)
        else:
            left_out.append((spec, why))
    return tuple(kept), tuple(left_out)
