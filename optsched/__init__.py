"""optsched: how far HPC scheduling policies are from optimal.

Reads workload traces, cuts them into windows, computes optimal or provably
bounded schedules, simulates online policies and reports competitive gaps.

The Python API, for scripts and notebooks::

    import optsched

    instance = optsched.read("instances/kth_20.json")
    easy = optsched.simulate(instance, "easy").schedule
    best = optsched.solve(instance, "cmax", time_limit=5)
    assert optsched.check_schedule(instance, best.schedule) == []
    rows = optsched.competitive_gap("instances/kth_20.json", time_limit=5)

========================= =====================================================
:func:`read`              an instance file (SWF, native JSON, strip packing)
:func:`read_trace`        the same, with the header and provenance
:func:`cut_window`        a window of a trace (jobs, times, initial state)
:func:`simulate`          an online policy (``"easy"``, ``"fcfs"``, ...)
:func:`solve`             an optimal or bounded schedule (CP-SAT, MILP, ...)
:func:`bound`             closed-form lower bounds and the best heuristic
:func:`check_schedule`    every rule a schedule must obey, as violations
:func:`competitive_gap`   what ``optsched gap FILE`` prints, as a DataFrame
:func:`read_schedule`     a schedule file (CSV, Batsim, JSON)
:func:`write_schedule`    the same, written atomically
========================= =====================================================

``optsched.windows.window`` and ``optsched.analysis.gap`` are modules (of
the window rules and of the ratio arithmetic), hence the names
:func:`cut_window` and :func:`competitive_gap`. Everything but the core
types is imported on first use (PEP 562), so that ``import optsched`` and
the command line start fast.
"""

from __future__ import annotations

# First of all: when this process is the optsched command, Ctrl-C and
# SIGTERM during the slow imports that follow print one line, not a
# traceback (optsched.startup; nothing changes for a program importing us).
from optsched import startup as _startup  # noqa: F401  # isort: skip

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from optsched.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from optsched.bench.suite import Suite
    from optsched.check import Violation, check_schedule
    from optsched.heuristics import simulate
    from optsched.instance import BusyBlock, Instance, Job, Machine, Source, Window
    from optsched.io import read, read_trace
    from optsched.io.schedules import read_schedule, write_schedule
    from optsched.models import solve
    from optsched.objective import Objective
    from optsched.result import Result
    from optsched.schedule import Placement, Schedule
    from optsched.windows.window import cut_window

__version__ = "0.1.0"

__all__ = [
    "BusyBlock",
    "InputError",
    "Instance",
    "Job",
    "Machine",
    "Objective",
    "Placement",
    "Schedule",
    "Source",
    "Violation",
    "Window",
    "__version__",
    "bound",
    "check_schedule",
    "competitive_gap",
    "cut_window",
    "read",
    "read_schedule",
    "read_trace",
    "simulate",
    "solve",
    "write_schedule",
]

# Every name but InputError is imported on first use: the command line
# imports this package first, and installs its signal handlers only after it
# (a Ctrl-C during a slow import would print a traceback).
_LAZY = {
    "BusyBlock": "optsched.instance",
    "Instance": "optsched.instance",
    "Job": "optsched.instance",
    "Machine": "optsched.instance",
    "Source": "optsched.instance",
    "Window": "optsched.instance",
    "Placement": "optsched.schedule",
    "Schedule": "optsched.schedule",
    "Violation": "optsched.check",
    "check_schedule": "optsched.check",
    "read": "optsched.io",
    "read_trace": "optsched.io",
    "read_schedule": "optsched.io.schedules",
    "write_schedule": "optsched.io.schedules",
    "cut_window": "optsched.windows.window",
    "simulate": "optsched.heuristics",
    "solve": "optsched.models",
    "Objective": "optsched.objective",
}
"""Public names imported on first use, and the module that defines each."""


def __getattr__(name: str) -> Any:
    """Import a public name of :data:`_LAZY` on first use (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'optsched' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later uses skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def bound(
    instance: Instance, objective: str | Objective = "cmax", *, time_limit: float = 10.0
) -> Result:
    """Closed-form lower bounds and the best heuristic schedule of ``instance``.

    :func:`solve` with the ``bounds-only`` back-end: no solver runs, so the
    answer comes in well under a second on windows of hundreds of jobs.

    Parameters
    ----------
    instance
        The problem.
    objective
        ``"cmax"``, ``"wct"``, ``"wct:area"``, ... or an :class:`Objective`.
    time_limit
        Seconds for the whole call (the heuristics stop early when it ends).

    Returns
    -------
    Result
        ``lower_bound`` (the best proven bound, named by
        ``bounds``), ``objective`` and ``schedule`` (the best heuristic's).
    """
    from optsched.models import solve

    return solve(instance, objective, backend="bounds-only", time_limit=time_limit)


def competitive_gap(
    source: str | Path | Instance,
    *,
    policies: str | Sequence[str] = "fcfs,firstfit,easy,conservative,best-package",
    objectives: str | Sequence[str] = "cmax,wct",
    backend: str = "cpsat",
    time_limit: float = 10.0,
    workers: int = 2,
    window_jobs: int | None = None,
    windows: int | None = None,
    first_job: int = 0,
) -> pd.DataFrame:
    """Each policy's competitive ratio, window by window: ``optsched gap``.

    The same suite (:func:`optsched.bench.analysis.gap_suite`), run through
    the same task graph, as ``optsched gap FILE --policies ... --objective
    ... -o rows.csv``: the returned rows are those that command writes (one
    per window, policy and objective; see
    :func:`optsched.bench.store.gap_frame` for the columns: ``value``,
    ``lower``, ``upper``, ``optimal``, ``ratio_low``, ``ratio_high``,
    ``comparable``, ``defect``, ...).

    Parameters
    ----------
    source
        An instance or trace file, or an :class:`Instance` (written to a
        temporary native JSON file first, so that it is read as a file).
    policies
        Policy specs: one comma-separated string (``"fcfs,easy"``), or a
        list of specs (``["fcfs", "easy:order=spt,oracle"]``).
    objectives
        Objectives: one comma-separated string, or a list of them.
    backend
        Reference back-end: ``cpsat``, ``milp`` or ``bounds-only``.
    time_limit
        Seconds per window and objective.
    workers
        Solver threads per solve.
    window_jobs
        Windows of this many consecutive jobs; ``None``: the whole file.
    windows
        Number of windows (default: all that fit).
    first_job
        Index of the first job of the first window.

    Returns
    -------
    pandas.DataFrame
        One row per (window, policy, objective).

    Raises
    ------
    InputError
        Unreadable or malformed ``source``.
    ValueError
        A bad policy, objective or back-end.
    RuntimeError
        A task failed (the message is its error).
    KeyboardInterrupt
        Ctrl-C stopped the run.
    """
    from optsched.instance import Instance

    if isinstance(source, Instance):
        import tempfile

        from optsched.io.native import write_native

        with tempfile.TemporaryDirectory(prefix="optsched-gap-") as folder:
            path = Path(folder) / "instance.json"
            write_native(source, path)
            return competitive_gap(
                path, policies=policies, objectives=objectives, backend=backend,
                time_limit=time_limit, workers=workers, window_jobs=window_jobs,
                windows=windows, first_job=first_job,
            )  # fmt: skip
    from optsched.bench.analysis import gap_suite
    from optsched.bench.suite import SolverSpec
    from optsched.windows.selection import WindowRule

    if window_jobs is None:
        rule = WindowRule("whole")
    else:
        rule = WindowRule("consecutive", window_jobs, windows, 0, first_job)
    solver = SolverSpec(backend, time_limit, workers)
    suite = gap_suite(
        Path(source), rule=rule, policies=policies, objectives=objectives, solver=solver
    )
    return _gap_rows(suite)


def _gap_rows(suite: Suite) -> pd.DataFrame:
    """The rows of :func:`competitive_gap`: its suite analysed."""
    from optsched.bench.analysis import analyse

    found = analyse(suite)
    if found.interrupted:
        raise KeyboardInterrupt
    if found.failures:
        first = found.failures[0]
        raise RuntimeError(
            f"window {first['window']} {first['kind']} {first['name']}: "
            f"{first['error']}"
        )
    return found.rows
